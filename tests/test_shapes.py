"""Shortening that knows what it shortens (issue 34): each detector on real tool outputs of
``../shared/data`` (read from the folder, found by what they hold, never by index), and small
exact regression inputs."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from agent_adapter.cli._loaders import load_trace
from agent_adapter.context._digest import names_room
from agent_adapter.context._shapes import classify, shorten_text
from agent_adapter.context._shapes._diagnostics import is_outcome
from agent_adapter.context.formats import convert

MARKER = re.compile(r"\[\.\.\. (\d+) characters cut[^\n]*? \.\.\.\]")
PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.\w+")
KEEP = 400  # ShrinkToolResults' default keep_chars


def _short(text: str, keep: int = KEEP, note: str = "") -> str:
    """``text`` shortened as ShrinkToolResults shortens it."""
    return shorten_text(text, keep, note=note, names_chars=names_room(len(text) - keep))


def _bound(text: str, keep: int = KEEP, note: str = "") -> int:
    """The most a shortening of ``text`` may take: a plain cut's (see test_digest)."""
    return keep + 80 + len(note) + names_room(len(text) - keep)


@cache
def _outputs(data: Path) -> tuple[str, ...]:
    """Every tool result over 800 characters of the coding-agent traces."""
    out: list[str] = []
    folders = (
        sorted((data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json")),
        sorted((data / "claude-code-spotter").glob("*.jsonl")),
        sorted((data / "swe-agent").rglob("*.traj")),
    )
    for path in (p for paths in folders for p in paths):
        try:
            trace = load_trace(path)
        except Exception:  # a subagent transcript or demo the loader does not read
            continue
        for m in convert(trace.messages, trace.format).messages:
            if m.role == "tool" and len(m.text) > 800:
                out.append(m.text)
    return tuple(out)


def _first(data: Path, test: object) -> str:
    found = [t for t in _outputs(data) if test(t)]  # type: ignore[operator]
    assert found, "no such output in the shared data"
    return found[0]


# --------------------------------------------------------------------------------------------
# every real output: one marker first, within the budget, deterministic


def test_every_real_output_is_shortened_within_budget_under_one_marker(data_dir: Path) -> None:
    outputs = _outputs(data_dir)
    assert len(outputs) > 300
    kinds: dict[str, int] = {}
    note = "full text: call recall_context(id='0123456789abcdef0123456789abcdef')"
    for text in outputs:
        kind = classify(text)
        kinds[kind] = kinds.get(kind, 0) + 1
        out = _short(text, note=note)
        assert len(out) <= _bound(text, note=note), (kind, text[:200])
        assert len(out) < len(text)
        assert out.count("characters cut") - text.count("characters cut") <= 1
        assert note in out and out.count(note) == 1
        if kind != "prose":
            assert MARKER.match(out), out[:200]  # the marker is the first line
    # every kind is met in real data (JSON is tau-bench's, below)
    assert {"diagnostics", "listing", "code", "diff", "prose"} <= set(kinds), kinds


def test_real_outputs_give_the_same_shortening_every_time(data_dir: Path) -> None:
    from agent_adapter.context._lru import clear

    outputs = _outputs(data_dir)[::7]
    first = [_short(t) for t in outputs]
    clear()  # not the memo's answer: a fresh computation
    assert [_short(t) for t in outputs] == first


# --------------------------------------------------------------------------------------------
# test runs and tracebacks


def _error_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if is_outcome(line) and len(line) <= 200]


def test_a_pytest_run_keeps_its_failures_and_tally_verbatim(data_dir: Path) -> None:
    text = _first(data_dir, lambda t: "short test summary info" in t and "FAILED " in t)
    assert classify(text) == "diagnostics"
    out = _short(text)
    lines = out.split("\n")
    summary = [ln for ln in text.split("\n") if ln.startswith("FAILED ") or " failed" in ln]
    assert summary and all(ln in lines for ln in summary[-3:]), out
    assert re.search(r"\[\d+ lines? cut\]", out)  # the noise between them, counted


def test_a_unittest_run_keeps_its_errors_and_the_last_frame(data_dir: Path) -> None:
    # a Django/unittest run: ERROR: lines, tracebacks, FAILED (errors=N)
    text = _first(data_dir, lambda t: "FAILED (errors=" in t or ("Ran " in t and "ERROR: " in t))
    assert classify(text) == "diagnostics"
    out = _short(text, keep=2000)
    lines = out.split("\n")
    errors = _error_lines(text)
    # the last error lines verbatim (the budget keeps the latest first)
    assert errors[-1] in lines and errors[-2] in lines, out
    exception = next(ln for ln in reversed(text.split("\n")) if re.match(r"\w+Error: ", ln))
    at = text.split("\n").index(exception)
    frame = next(ln for ln in reversed(text.split("\n")[:at]) if ln.startswith("  File "))
    assert exception in lines and frame in lines


def test_a_traceback_keeps_its_exception_and_last_frame(data_dir: Path) -> None:
    text = _first(
        data_dir,
        lambda t: (
            t.startswith("<returncode>1</returncode>")
            and "Traceback (most recent call last):" in t
            and len(t) > 1500
        ),
    )
    out = _short(text, keep=600)
    src = text.rstrip().split("\n")
    exc_at = max(i for i, ln in enumerate(src) if re.match(r"[\w.]*(?:Error|Exception)\b", ln))
    frame_at = max(i for i in range(exc_at) if src[i].startswith("  File "))
    lines = out.split("\n")
    assert src[exc_at] in lines and src[frame_at] in lines and src[frame_at + 1] in lines, out
    assert "<returncode>1</returncode>" in lines


def test_an_exunit_run_keeps_its_errors_and_tally(data_dir: Path) -> None:
    text = _first(data_dir, lambda t: "** (ArgumentError)" in t and " failures" in t)
    assert classify(text) == "diagnostics"
    lines = _short(text).split("\n")
    assert any(ln.strip().startswith("** (ArgumentError)") for ln in lines)
    assert any(re.fullmatch(r"\d+ tests, \d+ failures?", ln) for ln in lines)


# --------------------------------------------------------------------------------------------
# listings, code, diffs, JSON, logs


def test_a_find_listing_keeps_its_paths_first(data_dir: Path) -> None:
    text = _first(data_dir, lambda t: classify(t) == "listing" and len(PATH.findall(t)) > 100)
    paths = set(PATH.findall(text))
    # at ShrinkToolResults' default, the first paths stay whole (the rest counted, and named
    # as far as the names' room goes); a plain head+tail cut kept 9 whole paths here
    short = _short(text)
    assert len(set(PATH.findall(short)) & paths) >= 40, short
    assert re.search(r"\[\d+ lines cut\]$", short)
    # with room for half the text, more than half the paths stay whole
    out = shorten_text(text, len(text) // 2)
    assert len(set(PATH.findall(out)) & paths) > len(paths) // 2


def test_grep_hits_keep_every_file_with_its_line_numbers() -> None:
    hits = "\n".join(
        f"src/pkg/mod{i // 3}.py:{10 * i + 1}:    value = compute_something_long(x, {i})"
        for i in range(60)
    )
    assert classify(hits) == "listing"
    out = shorten_text(hits, 400, names_chars=names_room(len(hits) - 400))
    for f in range(20):
        assert f"src/pkg/mod{f}.py: " in out  # each file once, with its hit lines
    assert "src/pkg/mod0.py: 1, 11, 21" in out


def test_ls_long_rows_are_names_and_git_status_paths_stay() -> None:
    rows = "\n".join(
        f"-rw-r--r--  1 root root  {100 + i} Oct 24  2024 file_{i:02d}.py" for i in range(40)
    )
    assert classify(rows) == "listing"
    out = shorten_text(rows, 700)
    assert all(f"file_{i:02d}.py" in out for i in range(40)) and "rw-r--r--" not in out
    status = "\n".join(f" M src/app/module_{i}.py" for i in range(60))
    assert classify(status) == "listing"
    out = shorten_text(status, 600, names_chars=names_room(len(status) - 600))
    assert sum(f"src/app/module_{i}.py" in out for i in range(60)) >= 20


def test_a_code_read_keeps_its_signatures_with_their_line_numbers(data_dir: Path) -> None:
    text = _first(
        data_dir,
        lambda t: classify(t) == "code" and len(re.findall(r"^\s*\d+\t\s*def ", t, re.M)) >= 4,
    )
    defs = re.findall(r"^\s*\d+\t\s*def .*$", text, re.M)
    out = shorten_text(text, 1200)
    assert sum(d in out.split("\n") for d in defs) >= min(len(defs), 4), out


def test_a_diff_keeps_its_file_and_hunk_headers(data_dir: Path) -> None:
    text = _first(data_dir, lambda t: classify(t) == "diff" and t.count("\n@@ ") >= 2)
    heads = [
        ln for ln in text.split("\n") if ln.startswith(("diff --git", "--- a/", "+++ b/", "@@ "))
    ]
    structure = [ln for ln in text.split("\n") if ln.startswith(("diff ", "index ", "<"))]
    out = shorten_text(text, sum(len(h) + 1 for h in heads + structure) + 400)
    lines = out.split("\n")
    assert all(h[:500] in lines for h in heads), out


def test_a_json_result_keeps_its_structure_and_every_key(data_dir: Path) -> None:
    dialogs = json.loads((data_dir / "tau-bench" / "gpt-4o-airline.json").read_text())
    results = [
        m["content"]
        for d in dialogs[:40]
        for m in d["traj"]
        if m.get("role") == "tool" and len(m.get("content") or "") > 1500
    ]
    text = max(results, key=len)
    assert classify(text) == "json"
    value = json.loads(text)

    def keys(v: object) -> set[str]:
        if isinstance(v, dict):
            return set(v) | {k for x in v.values() for k in keys(x)}
        if isinstance(v, list):
            return {k for x in v for k in keys(x)}
        return set()

    out = shorten_text(text, 1200)
    body = out.split("\n", 1)[1]
    assert all(f'"{k}"' in body or f" {k}" in body for k in keys(value)), out
    assert out.split("\n")[1] in ("{", "[")


def test_repeated_log_lines_become_one_with_a_count() -> None:
    log = "\n".join(
        [
            f"2026-12-06 10:{i:02d}:00 INFO retrying connection to db (attempt {i})"
            for i in range(50)
        ]
        + ["2026-12-06 10:51:00 ERROR: connection refused"]
    )
    assert classify(log) == "log"
    out = shorten_text(log, 300)
    assert re.search(r"\n\[4\d more like the line above\]\n", out), out
    assert out.count("INFO retrying") <= 3
    assert "2026-12-06 10:51:00 ERROR: connection refused" in out
    # the budget decides how many go: with room for all, all stay
    assert shorten_text(log, len(log) - 50).count("INFO retrying") > 40


def test_prose_is_cut_at_its_ends_as_before() -> None:
    from agent_adapter.context._text import cut_text

    prose = "The collection starts in main, where the arguments are walked. " * 80
    assert classify(prose) == "prose"
    assert shorten_text(prose, 400) == cut_text(prose, 400, "both")


# --------------------------------------------------------------------------------------------
# exact regressions


def test_a_shaped_text_shortened_again_holds_one_marker_counting_everything() -> None:
    run = "\n".join(
        ["<returncode>1</returncode>"]
        + [f"tests/test_m.py::test_{i} PASSED" for i in range(80)]
        + ["FAILED tests/test_m.py::test_x - ValueError: bad", "1 failed, 80 passed in 0.5s"]
    )
    note = "full text: call recall_context(id='0123456789abcdef0123456789abcdef')"
    once = shorten_text(run, 600, note=note)
    twice = shorten_text(once, 200, note=note)
    for out in (once, twice):
        (count,) = MARKER.findall(out)
        kept = len(out) - len(out.split("\n", 1)[0]) - 1
        assert abs(int(count) - (len(run) - kept)) <= 2
        assert out.count(note) == 1
        assert "FAILED tests/test_m.py::test_x - ValueError: bad" in out
        assert "1 failed, 80 passed in 0.5s" in out


def test_the_exact_shape_of_a_small_failing_run() -> None:
    run = "\n".join(
        ["$ pytest -q"]
        + [f"tests/test_a.py::test_{i} PASSED" for i in range(30)]
        + [
            "E   AssertionError: assert 1 == 2",
            "FAILED tests/test_a.py::test_z - AssertionError: assert 1 == 2",
            "1 failed, 30 passed in 0.1s",
        ]
    )
    assert shorten_text(run, 240) == (
        "[... 935 characters cut ...]\n"
        "$ pytest -q\n"
        "[30 lines cut]\n"
        "E   AssertionError: assert 1 == 2\n"
        "FAILED tests/test_a.py::test_z - AssertionError: assert 1 == 2\n"
        "1 failed, 30 passed in 0.1s"
    )
    # with room for one passing line more, the passes are one line and a count
    assert "tests/test_a.py::test_0 PASSED\n[29 more like the line above]\n" in shorten_text(
        run, 280
    )


def test_a_short_text_comes_back_as_it_is() -> None:
    text = "FAILED x\n" * 3
    assert shorten_text(text, 1000) is text


@pytest.mark.parametrize("n", [10_000, 50_000])
def test_a_huge_output_is_shortened_to_its_budget(n: int) -> None:
    text = "\n".join(f"tests/t.py::test_{i} PASSED" for i in range(n)) + "\nFAILED t - E\n1 failed"
    out = _short(text)
    assert len(out) <= _bound(text) and "FAILED t - E" in out and "1 failed" in out


def test_a_path_in_a_kept_line_shown_clipped_is_named() -> None:
    # found by a break test: a kept log line of 238 characters is shown clipped at 200,
    # inside the 142-character path it ends with, and the marker named nothing: the path
    # was named whole nowhere
    path = (
        "/home/user/projects/monorepo/services/payments-gateway/src/main/java/com/example/"
        "payments/gateway/adapters/outbound/PaymentProviderClient.java"
    )
    line = f"2024-01-01 12:00:00,123 WARNING [com.example.payments] compilation failed in {path}"
    text = "filler line\n" * 2000 + line + "\n" + "other filler line\n" * 2000
    out = shorten_text(text, 2_000)
    assert len(out) < len(text) // 4
    assert "...(+" in out and path in out
