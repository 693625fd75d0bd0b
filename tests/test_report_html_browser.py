"""``agent-adapter report`` pages opened in a real headless Chromium (the Debian package).

The browser is Debian's ``chromium`` with its ``chromium-driver``, driven by selenium; no
browser is downloaded at run time (selenium is given both paths, so Selenium Manager never
runs). ``.ci/run`` installs both when missing. Without them the tests skip with the reason,
except under ``CI=true``, where they fail.

Each page is checked for: no console message at all (errors, CSP violations, warnings), no
resource fetched, the unit count and token totals it shows equal to the report's, a hover
that shows a unit's first lines, tokens and file index, and hostile text shown as text.
A screenshot of each page goes to ``$AGENT_ADAPTER_ARTIFACTS`` (CI keeps it as an artifact;
``out/`` is git-ignored) or the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from agent_adapter.cli import main
from agent_adapter.cli._loaders import load_trace
from test_report_html import CLAUDE_SESSION, HOSTILE, MINI_SWE, page_data

#: one worker runs the whole module (pytest -n with --dist loadgroup, .ci/run), so its
#: module fixture (the browser one, the slow part) is set up once, not once a worker
pytestmark = pytest.mark.xdist_group("browser")

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run; see .ci/run)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium through chromedriver, for the whole module."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed (the dev extra)")
    binary = next((p for p in map(shutil.which, CHROMIUM) if p), None)
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        _missing("no chromium / chromedriver on PATH (apt-get install chromium chromium-driver)")
    assert binary is not None and driver_path is not None
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in (
        "--headless=new",
        "--no-sandbox",  # root in a container has no user namespace sandbox
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--window-size=1400,1000",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _artifacts(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("AGENT_ADAPTER_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _report(file: Path, out: Path, *options: str) -> dict[str, Any]:
    code = main(["report", str(file), "-o", str(out), *options])
    assert code == 0
    return page_data(out.read_text(encoding="utf-8"))


def _open(browser: Any, page: Path) -> list[dict[str, Any]]:
    """Load ``page``, wait for its script, and return the console messages it logged."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get_log("browser")  # drop what an earlier page left
    browser.get(page.resolve().as_uri())
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "1"
    )
    logs: list[dict[str, Any]] = browser.get_log("browser")
    return logs


def _shown(browser: Any, ident: str) -> tuple[str, int]:
    element = browser.find_element("id", ident)
    return element.text, int(element.get_attribute("data-value"))


def _hover(browser: Any, side: str, n: int) -> str:
    from selenium.webdriver import ActionChains

    piece = browser.find_element("css selector", f'.u[data-side="{side}"][data-n="{n}"]')
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", piece)
    ActionChains(browser).move_to_element(piece).perform()
    tip = browser.find_element("id", "tip")
    assert tip.is_displayed()
    text: str = tip.text
    return text


def _check_page(browser: Any, page: Path, data: dict[str, Any], shot: Path) -> None:
    logs = _open(browser, page)
    assert logs == [], logs
    fetched = browser.execute_script("return performance.getEntriesByType('resource').length")
    assert fetched == 0
    before = data["before"]
    for ident, value in (
        ("units-before", len(before["units"])),
        ("tokens-before", before["tokens"]),
        ("messages-before", before["messages"]),
    ):
        assert _shown(browser, ident) == (f"{value:,}", value), ident
    drawn = browser.execute_script(
        "var s = new Set(); document.querySelectorAll('#strip-b .u')"
        ".forEach(function (e) { s.add(e.getAttribute('data-n')); }); return s.size;"
    )
    assert drawn == len(before["units"])
    report = data["report"]
    if report is not None:
        assert _shown(browser, "tokens-before")[1] == report["tokens_before"]
        assert _shown(browser, "tokens-after") == (
            f"{report['tokens_after']:,}",
            report["tokens_after"],
        )
        assert _shown(browser, "units-after")[1] == len(data["after"]["units"])
        assert _shown(browser, "tokens-saved")[1] == report["tokens_saved"]
        assert browser.find_element("id", "explain").text == report["explain"]
        rows = browser.find_elements("css selector", "#steps tr")
        assert len(rows) == 1 + len(report["steps"])
    # hover the biggest unit: its header, tokens and the file index of its first message
    biggest = max(before["units"], key=lambda u: u["tokens"])
    tip = _hover(browser, "b", biggest["n"])
    assert f"unit {biggest['n']} " in tip and f"{biggest['tokens']:,} tokens" in tip
    first = biggest["messages"][0]
    assert f"message {first['index']} in the file" in tip
    if first["preview"]:
        assert first["preview"].splitlines()[0][:60] in tip
    browser.set_window_size(
        1400, min(4000, browser.execute_script("return document.body.scrollHeight") + 40)
    )
    assert browser.save_screenshot(str(shot))
    browser.set_window_size(1400, 1000)


def test_claude_code_session_in_chromium(browser: Any, data_dir: Path, tmp_path: Path) -> None:
    page = tmp_path / "claude-code.html"
    data = _report(data_dir / CLAUDE_SESSION, page, "--target", "40k")
    assert data["report"]["steps"] and data["after"]["counts"]["dropped"] == 0
    _check_page(browser, page, data, _artifacts(tmp_path) / "report-claude-code.png")
    # the compressed side: an added note shows its marker when hovered
    added = next(u for u in data["after"]["units"] if u["status"] == "added")
    tip = _hover(browser, "a", added["n"])
    assert "new message" in tip and "earlier messages removed" in tip


def test_mini_swe_agent_trace_in_chromium(browser: Any, data_dir: Path, tmp_path: Path) -> None:
    page = tmp_path / "mini-swe-agent.html"
    data = _report(data_dir / MINI_SWE, page, "--target", "16k")
    _check_page(browser, page, data, _artifacts(tmp_path) / "report-mini-swe-agent.png")


def test_script_in_a_message_shows_as_text(browser: Any, data_dir: Path, tmp_path: Path) -> None:
    file = tmp_path / "hostile.json"
    natives = [*load_trace(data_dir / MINI_SWE).messages, {"role": "user", "content": HOSTILE}]
    file.write_text(json.dumps(natives), encoding="utf-8")
    page = tmp_path / "hostile.html"
    data = _report(file, page, "--compress")
    logs = _open(browser, page)
    assert logs == [], logs
    assert browser.execute_script("return window.__pwned === undefined") is True
    assert browser.find_elements("css selector", "main img, main script") == []
    last = data["before"]["units"][-1]
    tip = _hover(browser, "b", last["n"])
    assert "</script><script>window.__pwned = 1</script>" in tip
    assert '<img src=x onerror="window.__pwned = 2">' in tip
    assert browser.execute_script("return window.__pwned === undefined") is True
    assert browser.save_screenshot(str(_artifacts(tmp_path) / "report-hostile.png"))


#: Each row's pieces as ``[left, right]`` pixel pairs, and each strip's inner width.
_ROWS_JS = """
var out = [];
document.querySelectorAll('.strip .row').forEach(function (row) {
  var box = row.getBoundingClientRect();
  out.push({left: box.left, right: box.right, pieces: Array.from(row.children).map(
    function (p) { var r = p.getBoundingClientRect(); return [r.left, r.right]; })});
});
return out;
"""


def test_tiny_units_can_be_seen_and_hovered(browser: Any, data_dir: Path, tmp_path: Path) -> None:
    from agent_adapter.cli._html import MIN_PX

    page = tmp_path / "tiny.html"
    data = _report(data_dir / CLAUDE_SESSION, page, "--target", "40k")
    assert _open(browser, page) == []
    before = data["before"]["units"]
    per_row = -(-data["before"]["tokens"] // 24)
    task = before[0]
    latest = next(u for u in before if "latest_user" in u["reasons"])
    for u in (task, latest):  # a few tokens of thousands a row: under 1 px by area
        assert u["tokens"] * 700 / per_row < 2
        widths = browser.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0]))"
            ".map(function (e) { return e.getBoundingClientRect().width; });",
            f'#strip-b .u[data-n="{u["n"]}"]',
        )
        assert widths and min(widths) >= MIN_PX - 0.01, (u["n"], widths)
        tip = _hover(browser, "b", u["n"])
        assert tip.startswith(f"unit {u['n']} ") and f"{u['tokens']:,} tokens" in tip
    # the minimum width takes room from the neighbours: no piece covers another
    for row in browser.execute_script(_ROWS_JS):
        edges = row["pieces"]
        assert edges[0][0] >= row["left"] - 0.5 and edges[-1][1] <= row["right"] + 0.5
        for (_, right), (left, _) in pairwise(edges):
            assert left >= right - 0.5
    # the compressed side names units as the input does, and a note's text shows once
    after = data["after"]["units"]
    kept = next(u for u in after if u["status"] == "kept" and u["of"] != [u["n"]])
    assert _hover(browser, "a", kept["n"]).startswith(f"unit {kept['of'][0]} ")
    note = next(u for u in after if u["status"] == "added")
    tip = _hover(browser, "a", note["n"])
    assert tip.startswith("new unit (after unit ") and tip.count("earlier messages removed") == 1
