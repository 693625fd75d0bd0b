"""``agent-adapter report``: the page's data equals the compression's report, nothing leaks.

The page is checked as a file here (counts, provenance, escaping, what text it holds); the
tests in ``test_report_html_browser.py`` open it in headless Chromium.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_adapter.cli import main
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import Protection, estimate_tokens, split_units
from agent_adapter.context.formats import convert

CLAUDE_SESSION = "claude-code-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
MINI_SWE = "mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-6197.traj.json"
TAU_BENCH = "tau-bench/gpt-4o-airline.json"
#: Text that must never run in the page, nor end the data's script element.
HOSTILE = (
    '</script><script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> '
    "&amp; <!-- \u2028"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def page_data(page: str) -> dict[str, Any]:
    """The JSON the page's script reads."""
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, file: Path, *options: str
) -> tuple[str, dict[str, Any]]:
    out = tmp_path / "report.html"
    code, stdout, err = run(capsys, "report", file, "-o", out, *options)
    assert code == 0, err
    assert f"wrote {out}" in stdout
    page = out.read_text(encoding="utf-8")
    return page, page_data(page)


def messages_of(side: dict[str, Any], status: str) -> int:
    return sum(m["status"] == status for u in side["units"] for m in u["messages"])


def test_claude_code_report_equals_compress_report(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = data_dir / CLAUDE_SESSION
    code, stdout, _ = run(capsys, "compress", file, "--target", "40k", "--json")
    assert code == 0
    expected = json.loads(stdout)
    page, data = report(capsys, tmp_path, file, "--target", "40k")
    got = data["report"]

    for key in (
        "tokens_before",
        "tokens_after",
        "threshold_tokens",
        "target_tokens",
        "messages_before",
        "messages_after",
        "messages_removed",
        "messages_changed",
        "messages_added",
        "protected_tokens",
        "explain",
    ):
        assert got[key] == expected[key], key
    assert got["natives_after"] == expected["native_messages_after"]
    assert [(s["step"], s["tokens_saved"]) for s in got["steps"]] == [
        (s["step"], s["tokens_before"] - s["tokens_after"]) for s in expected["steps"]
    ]
    # the strips add up to the report's totals, unit by unit
    assert data["before"]["tokens"] == expected["tokens_before"]
    assert data["after"]["tokens"] == expected["tokens_after"]
    assert data["before"]["messages"] == expected["messages_before"]
    # what each message shows is the provenance the report counts
    assert messages_of(data["before"], "dropped") == expected["messages_removed"]
    assert messages_of(data["before"], "changed") == expected["messages_changed"]
    assert messages_of(data["after"], "changed") == expected["messages_changed"]
    assert messages_of(data["after"], "added") == expected["messages_added"]
    # ... and by which step: the steps that removed, changed and added messages in the report
    by_step = {s["step"]: s for s in expected["steps"]}
    for side, status, field in (
        ("before", "dropped", "messages_removed"),
        ("after", "added", "messages_added"),
    ):
        for u in data[side]["units"]:
            for m in u["messages"]:
                if m["status"] == status:
                    assert len(m["steps"]) == 1 and by_step[m["steps"][0]][field] > 0
    changers = {s for s, r in by_step.items() if r["messages_changed"] > 0}
    for u in data["after"]["units"]:
        for m in u["messages"]:
            if m["status"] == "changed":
                assert m["steps"] and set(m["steps"]) <= changers
                assert m["markers"], "a changed message shows the marker its step left"
            if m["status"] == "added":
                assert (
                    m["markers"][0].startswith("[")
                    and "earlier messages removed" in (m["markers"][0])
                )
            assert (m["index"] is None) == (m["status"] == "added")
    # the newest turn and the latest user message are protected, with their reasons
    reasons = {r for u in data["before"]["units"] for r in u["reasons"]}
    assert {"latest_user", "newest_turn"} <= reasons
    assert all(bool(u["reasons"]) == u["protected"] for u in data["before"]["units"])
    # the page shows the counts and the limits
    for text in ("tokens-before", "tokens-after", "threshold = target 40,000", "Steps"):
        assert text in page


def test_without_policy_the_page_is_inspect(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = data_dir / MINI_SWE
    _, data = report(capsys, tmp_path, file)
    trace = load_trace(file)
    messages = convert(trace.messages, trace.format).messages
    units = split_units(messages, Protection(messages))

    assert data["after"] is None and data["report"] is None
    assert len(data["before"]["units"]) == len(units)
    assert data["before"]["tokens"] == estimate_tokens(messages)
    assert [u["tokens"] for u in data["before"]["units"]] == [
        sum(estimate_tokens([m]) for m in u.messages) for u in units
    ]
    assert [u["protected"] for u in data["before"]["units"]] == [u.protected for u in units]
    kinds = {k for u in data["before"]["units"] for k, _ in u["kinds"]}
    assert {"system", "user", "assistant", "tool_call", "tool_result"} <= kinds
    for u in data["before"]["units"]:
        assert sum(size for _, size in u["kinds"]) == u["tokens"]
        assert all(m["status"] == "kept" for m in u["messages"])
    # native indexes: the mini-swe-agent natives are one message each
    indexes = [m["index"] for u in data["before"]["units"] for m in u["messages"]]
    assert indexes == list(range(len(trace.messages)))


def test_page_is_self_contained(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, _ = report(capsys, tmp_path, data_dir / MINI_SWE, "--compress")
    markup = re.sub(r'<script type="application/json".*?</script>', "", page, flags=re.S)
    for forbidden in (
        "<link",
        "<img",
        "<iframe",
        " src=",
        "@import",
        "url(",
        "http://",
        "https://",
    ):
        assert forbidden not in markup, forbidden
    assert "default-src 'none'" in page  # the page may fetch nothing, even if told to


def test_text_shown_is_only_the_first_lines(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = data_dir / MINI_SWE
    trace = load_trace(file)
    messages = convert(trace.messages, trace.format).messages
    long_one = max(messages, key=lambda m: len(m.text.splitlines()))
    lines = [line for line in long_one.text.splitlines() if len(line.strip()) > 40]
    deep = lines[-1]  # a line far below the first ones
    assert len(long_one.text.splitlines()) > 20

    page, data = report(capsys, tmp_path, file, "--preview-lines", "2")
    assert deep not in page
    for u in data["before"]["units"]:
        for m in u["messages"]:
            assert len(m["preview"].splitlines()) <= 2

    page, data = report(capsys, tmp_path, file, "--preview-lines", "0", "--compress")
    first_user = next(m for m in messages if m.role == "user").text.splitlines()[0]
    assert first_user.strip() and first_user not in page
    for side in ("before", "after"):
        for u in data[side]["units"]:
            for m in u["messages"]:
                assert m["preview"] == "" and m["markers"] == []
    assert "No conversation text is in this page" in page


def test_hostile_text_is_escaped(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "hostile.json"
    natives = [*load_trace(data_dir / MINI_SWE).messages, {"role": "user", "content": HOSTILE}]
    file.write_text(json.dumps(natives), encoding="utf-8")
    page, data = report(capsys, tmp_path, file, "--compress")

    assert page.count("<script") == 2  # the data and the page's own script, nothing else
    assert "window.__pwned" not in page.split('id="report-data">', 1)[0]
    assert "<img" not in page
    last = data["before"]["units"][-1]["messages"][-1]
    assert last["preview"].startswith("</script><script>window.__pwned = 1</script>")


def test_tau_bench_and_json_summary(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tau.html"
    code, stdout, _ = run(
        capsys,
        "report",
        data_dir / TAU_BENCH,
        "--index",
        "3",
        "-o",
        out,
        "--target",
        "1k",
        "--json",
    )
    assert code == 0
    summary = json.loads(stdout)
    data = page_data(out.read_text(encoding="utf-8"))
    assert summary["output"] == str(out) and summary["bytes"] == out.stat().st_size
    assert summary["units_before"] == len(data["before"]["units"])
    assert summary["tokens_after"] == data["report"]["tokens_after"]
    assert summary["report"]["tokens_before"] == summary["tokens_before"]


def test_bad_input_is_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "report", tmp_path / "missing.json", "-o", tmp_path / "r.html")
    assert code == 2
    assert err.startswith("agent-adapter: error: ") and "no such file" in err
    assert not (tmp_path / "r.html").exists()
