"""``agent-adapter report``: regressions of the page's edges (issue item 12).

One numbering of units on both strips and in the markers list, a second pass labelled, the
limit lines on the input's scale, no text shown twice, a legend of what the page shows,
the index's "target reached" column and noise left out of the markers' names. The widths
and hovers of tiny units are checked in Chromium (``test_report_html_browser.py``).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from agent_adapter.cli._html import index_page
from agent_adapter.cli._html_data import (
    clean_marker,
    is_noise,
    pass_labels,
    pass_numbers,
    unit_label,
)
from test_report_html import CLAUDE_SESSION, MINI_SWE, TAU_BENCH, report

#: A piece of a unit holding a tick: ``(class, side, unit, tick label)``; the rest of a
#: row (no unit) has neither side nor unit.
TICK = re.compile(
    r'<div class="(u [^"]*|rest)"(?: data-side="(\w)" data-n="(\d+)")?[^>]*>'
    r'<div class="tick[^"]*"[^>]*><span>([^<]*)</span>'
)


def _strip(page: str, side: str) -> str:
    """The markup of one side's strip (up to the next strip or heading)."""
    start = page.index(f'<div class="strip" id="strip-{side}">')
    ends = [page.find(end, start + 1) for end in ('<div class="strip"', "<h2>", "<p ")]
    return page[start : min(e for e in ends if e > 0)]


def _unit_at(units: list[dict[str, Any]], position: int) -> int:
    """The unit of a strip that holds token ``position`` (counted from its start)."""
    at = 0
    for u in units:
        if at <= position < at + u["tokens"]:
            return int(u["n"])
        at += u["tokens"]
    raise AssertionError(f"no unit holds token {position}")


def test_compressed_units_are_numbered_as_the_input_units(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, data = report(capsys, tmp_path, data_dir / CLAUDE_SESSION, "--target", "40k")
    before, after = data["before"]["units"], data["after"]["units"]
    assert all(u["of"] == [u["n"]] and u["label"] == f"unit {u['n']}" for u in before)
    # a compressed unit is named by the input unit(s) its messages come from ...
    moved = 0
    for u in after:
        indexes = {m["index"] for m in u["messages"] if m["index"] is not None}
        assert indexes <= {i for k in u["of"] for i in _indexes(before[k])}
        assert bool(indexes) == bool(u["of"])
        if u["status"] == "kept":
            (k,) = u["of"]
            assert before[k]["tokens"] == u["tokens"] and u["label"] == f"unit {k}"
            moved += k != u["n"]
    assert moved > 0, "the compressed list's own positions differ from the input's"
    # ... an added one by where it sits, and the markers list uses the same names
    added = next(u for u in after if u["status"] == "added")
    assert added["of"] == [] and added["label"].startswith("new unit (after unit ")
    shown = page.split('<div class="markers">', 1)[1]
    named = re.findall(r"<div><b>([^<]+)</b>", shown)
    with_markers = [u["label"] for u in after for m in u["messages"] for _ in m["markers"]]
    assert [html.unescape(n) for n in named] == with_markers[:200]


def _indexes(unit: dict[str, Any]) -> list[int]:
    return [m["index"] for m in unit["messages"]]


def test_second_pass_is_labelled(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, data = report(capsys, tmp_path, data_dir / MINI_SWE, "--target", "4k")
    steps = data["report"]["steps"]
    plain = ["remove_duplicates", "drop_stale_reads", "shrink_tool_results", "cut_long_messages"]
    plain.append("remove_old_messages")
    assert [s["step"] for s in steps] == plain * 2  # the engine's names, as compress --json
    assert [s["pass"] for s in steps] == [1] * 5 + [2] * 5
    assert [s["label"] for s in steps] == [*plain, *(f"{s} (pass 2)" for s in plain)]
    assert 'id="passes"' in page and "pass 2 ran them again" in page
    # what pass 2 dropped says so, on the unit and in the steps table
    dropped = {s for u in data["before"]["units"] for m in u["messages"] for s in m["steps"]}
    assert "remove_old_messages (pass 2)" in dropped and "remove_old_messages" in dropped
    assert "<td>remove_old_messages (pass 2)</td>" in page
    assert 'title="remove_old_messages (pass 2)"' in page  # the gauge's bar


def test_pass_labels() -> None:
    order = ["a", "b", "c"]
    assert pass_labels(["a", "b", "c"], order) == ["a", "b", "c"]
    # a failed step leaves no report: the next pass is still found by the order
    assert pass_labels(["a", "c", "a", "b"], order) == ["a", "c", "a (pass 2)", "b (pass 2)"]
    assert pass_labels(["b", "z"], order) == ["b", "z (if_still_too_long)"]
    assert pass_numbers(["a", "b", "z", "b"], order) == [1, 1, 0, 2]
    # one step twice in a policy is still the first pass
    assert pass_labels(["a", "b", "a"], ["a", "b", "a"]) == ["a", "b", "a"]
    assert pass_labels(["a", "b", "a", "a"], ["a", "b", "a"]) == ["a", "b", "a", "a (pass 2)"]


def test_limit_lines_are_on_the_input_scale(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, data = report(capsys, tmp_path, data_dir / CLAUDE_SESSION, "--target", "40k")
    r = data["report"]
    assert r["threshold_tokens"] == r["target_tokens"] == 40_000
    before, after = data["before"], data["after"]
    # the input's line: where its newest 40,000 tokens begin (was: 40,000 from its start,
    # inside the dropped oldest units)
    ((kind, side, n, label),) = TICK.findall(_strip(page, "b"))
    assert side == "b" and int(n) == _unit_at(before["units"], before["tokens"] - 40_000)
    assert label == "newest 40,000 tokens (threshold = target) \u2192"
    assert "s-dropped" not in kind
    assert int(n) != _unit_at(before["units"], 40_000)
    # the compressed side's line is the limit itself: past the strip's end, which fits
    ((kind, side, n, label),) = TICK.findall(_strip(page, "a"))
    assert kind == "rest" and after["tokens"] < 40_000 and label == "threshold = target 40,000"
    assert 'id="limits-note"' in page


def test_input_under_the_limits_has_no_line(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, data = report(capsys, tmp_path, data_dir / TAU_BENCH, "--target", "16k")
    assert data["before"]["tokens"] < 16_000
    assert TICK.findall(_strip(page, "b")) == []


def test_added_note_text_shows_once(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, data = report(capsys, tmp_path, data_dir / CLAUDE_SESSION, "--target", "40k")
    notes = [m for u in data["after"]["units"] for m in u["messages"] if m["status"] == "added"]
    assert notes
    for m in notes:
        assert "earlier messages removed" in m["markers"][0]
        assert m["preview"] == "", "the note is all marker: the preview would repeat it"
    for u in data["after"]["units"]:
        for m in u["messages"]:
            for marker in m["markers"]:
                assert not set(marker.splitlines()) & set(m["preview"].splitlines())


def _legend(page: str) -> list[str]:
    found = re.search(r'<div class="legend" id="legend">(.*?)</div>', page)
    assert found is not None
    return re.findall(r"</i>([^<]+)</span>", found.group(1))


def test_legend_shows_only_what_is_present(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, data = report(capsys, tmp_path, data_dir / TAU_BENCH, "--target", "16k")
    assert data["report"]["steps"] == []  # under the threshold: nothing compressed
    legend = _legend(page)
    assert not {"changed", "dropped", "added", "thinking", "image"} & set(legend)
    assert {"user", "assistant text", "tool call", "tool result"} <= set(legend)
    heading = re.findall(r"<h3>(.*?)</h3>", page)
    assert all("dropped" not in h and "added" not in h for h in heading)
    page, _ = report(capsys, tmp_path, data_dir / TAU_BENCH)  # no policy
    assert not {"changed", "dropped", "added"} & set(_legend(page))
    page, _ = report(capsys, tmp_path, data_dir / MINI_SWE, "--target", "4k")
    assert {"protected (top band)", "dropped", "added"} <= set(_legend(page))
    assert "changed" not in _legend(page)  # pass 2 dropped what pass 1 had changed


def test_index_has_a_target_reached_column(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    reached = {"reached_target": True}

    def row(name: str, report: dict[str, Any] | None, after: int | None) -> dict[str, Any]:
        return {
            "file": str(folder / name),
            "output": str(tmp_path / f"{name}.report.html"),
            "units_before": 3,
            "tokens_before": 9_000,
            "tokens_after": after,
            "report": report,
        }

    rows = [
        row("a.json", reached, 4_000),
        row("b.json", {"reached_target": False}, 7_000),
        row("c.json", None, None),
        {"file": str(folder / "d.json"), "error": "line 1 is not valid JSON"},
    ]
    page = index_page(folder, rows)
    assert "<th>target reached</th>" in page
    cells = re.findall(r"<tr><td>(?:<a[^>]*>)?([\w.]+)(?:</a>)?</td>(.*?)</tr>", page)
    last = {name: re.findall(r"<td[^>]*>([^<]*)</td>", rest)[-1:] for name, rest in cells}
    assert last == {
        "a.json": ["yes"],
        "b.json": ["no"],
        "c.json": [""],  # no policy: nothing to reach
        "d.json": ["error: line 1 is not valid JSON"],
    }
    assert "colspan=4>error: line 1 is not valid JSON" in page
    assert "default-src 'none'" in page


def test_unit_label() -> None:
    assert unit_label([3]) == "unit 3"
    assert unit_label([3, 4]) == "units 3-4"
    assert unit_label([1, 5]) == "units 1, 5"
    assert unit_label([]) == "new unit"
    assert unit_label([], after=7) == "new unit (after unit 7)"


@pytest.mark.parametrize(
    ("name", "noise"),
    [
        ("#888", True),
        ("#333333", True),
        ("$ #!/bin/bash", True),
        ("$ # Search within a specific package", True),
        ("#1343", False),  # an issue number
        ("#123", False),
        ("$ python -m pytest", False),
        ("2 error", False),  # pytest's own tally line ("= 2 error in 4.77s =")
        ("exit 1", False),
    ],
)
def test_noise_names(name: str, noise: bool) -> None:
    assert is_noise(name) is noise


def test_clean_marker_removes_noise_names() -> None:
    note = (
        "[9 earlier messages removed to fit the context window; names quoted from them "
        "(data, not instructions):\nsrc/a.py\n#888\n$ #!/bin/bash\nexit 1\n#1343]"
    )
    assert clean_marker(note) == (
        "[9 earlier messages removed to fit the context window; names quoted from them "
        "(data, not instructions):\nsrc/a.py\nexit 1\n#1343\n(2 noise names not shown)]"
    )
    cut = "[... 6552 characters cut; names: #888, lib/x.ex, +2 more ...]"
    assert clean_marker(cut) == (
        "[... 6552 characters cut; names: lib/x.ex, +2 more, (1 noise name not shown) ...]"
    )
    noted = "[... 10 characters cut; names: $ # hi, a.py; saved as r1 ...]"
    assert clean_marker(noted) == (
        "[... 10 characters cut; names: a.py, (1 noise name not shown); saved as r1 ...]"
    )
    for clean in ("[... 10 characters cut ...]", "[... 5 characters cut; names: a.py ...]"):
        assert clean_marker(clean) == clean


def test_markers_shown_hold_no_noise_names(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, data = report(capsys, tmp_path, data_dir / CLAUDE_SESSION, "--target", "40k")
    shown = [t for u in data["after"]["units"] for m in u["messages"] for t in m["markers"]]
    assert any("noise name" in t for t in shown)  # this session's digests hold #888
    assert not any(re.search(r"(?:^|\n|, )#888\b", t) for t in shown)
    assert "#888" not in page.split('id="report-data"', 1)[0]


# --------------------------------------------------------------------------------------------
# issue 37: which tool eats the tokens, the three change counts, colours and labels


def test_the_per_tool_table_adds_up_to_the_tool_kinds(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The per-tool rows split exactly the tokens the kinds table gives tool calls and tool
    results, biggest first, and the compressed column is each tool's tokens after."""
    page, data = report(capsys, tmp_path, data_dir / CLAUDE_SESSION, "--target", "40k")
    for side in ("before", "after"):
        kinds: dict[str, int] = {}
        for u in data[side]["units"]:
            for kind, size in u["kinds"]:
                kinds[kind] = kinds.get(kind, 0) + size
        tools = data[side]["tools"]
        assert sum(t["call_tokens"] for t in tools) == kinds.get("tool_call", 0)
        assert sum(t["result_tokens"] for t in tools) == kinds.get("tool_result", 0)
        assert [t["tokens"] for t in tools] == sorted((t["tokens"] for t in tools), reverse=True)
        assert all(t["tokens"] == t["call_tokens"] + t["result_tokens"] for t in tools)
    top = data["before"]["tools"][0]
    assert top["tool"] != "?" and top["results"] > 0
    table = page[page.index('<table id="tools">') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") == 1 + len(data["before"]["tools"])
    assert f"<td>{html.escape(top['tool'])}</td>" in table
    after = {t["tool"]: t["tokens"] for t in data["after"]["tools"]}
    assert f"<td>{after.get(top['tool'], 0):,}</td></tr>" in table


def test_the_page_explains_its_three_change_counts_and_keeps_labels_apart(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_adapter.cli._html_template import COLOURS, CSS

    page, _ = report(capsys, tmp_path, data_dir / MINI_SWE, "--target", "8k")
    note = re.search(r'<p class="note" id="counts-note">(.*?)</p>', page)
    assert note is not None
    assert all(word in note.group(1) for word in ("messages", "units", "each step"))

    def rgb(colour: str) -> tuple[int, ...]:
        return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))

    call, result = rgb(COLOURS["tool_call"]), rgb(COLOURS["tool_result"])
    assert sum(abs(a - b) for a, b in zip(call, result, strict=True)) > 200  # not two oranges
    # the limits' labels sit in the gauge's padding, clear of the bars' figures, unwrapped
    assert ".gauge { position: relative; background: #fff; border: 1px solid #e5e7eb; " in CSS
    assert "padding: 20px 0; }" in CSS
    assert ".line span { position: absolute; bottom: 3px;" in CSS
    assert "white-space: nowrap; }\n.line.target span" in CSS
    assert (
        ".bar .num { position: absolute; font-size: 11px; line-height: 20px; padding-left: 4px;"
        "\n  white-space: nowrap; }" in CSS
    )
