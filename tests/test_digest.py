"""What is cut leaves its names behind: the digest in a cut's one marker."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from _convo import calls, result
from agent_adapter._messages import Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MemoryStore,
    ShrinkToolResults,
    compress,
    compress_for_sync,
    estimate_tokens,
    recall_tool,
)
from agent_adapter.context._digest import (
    DIGEST_MAX_CHARS,
    clip_ends,
    digest,
    leading_status,
    names_in,
    names_room,
)
from agent_adapter.context._text import cut_text, fit_message

MARKER = re.compile(
    r"\[\.\.\. (\d+) characters cut(?:; names: (.*?))?(?:; (full text: .*?))? \.\.\.\]"
)
PLAIN = re.compile(r"\[\.\.\. \d+ characters cut \.\.\.\]")
PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.\w+")

# A mini-swe-agent result (`cd /testbed && python -m pytest testing/test_main.py -q; git
# status --short`): the exit status first, a failing run, then the worktree's state.
PYTEST_RUN = (
    """<returncode>1</returncode>
<output>
..F.F                                                                    [100%]
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(1, "2") == 3

testing/test_main.py:12:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

a = 1, b = '2'

    def add(a, b):
>       return a + b
E       TypeError: unsupported operand type(s) for +: 'int' and 'str'

src/_pytest/main.py:88: TypeError
_________________________________ test_collect _________________________________
----------------------------- Captured stderr call -----------------------------
Traceback (most recent call last):
  File "/testbed/src/_pytest/python.py", line 501, in _importtestmodule
    mod = self.fspath.pyimport(ensuresyspath=importmode)
  File "/testbed/src/_pytest/main.py", line 12, in <module>
    from _pytest.nodes import Session
ImportError: cannot import name 'Session' from '_pytest.nodes'
"""
    + "".join(
        f"DEBUG collect: visiting node {i} of the session tree, nothing to report\n"
        for i in range(40)
    )
    + """=========================== short test summary info ============================
FAILED testing/test_main.py::test_add - TypeError: unsupported operand type(s) fo...
FAILED testing/test_main.py::test_collect - ImportError: cannot import name 'Sess...
2 failed, 2 passed in 0.31s
?? reproduce_issue.py
 M src/_pytest/main.py
</output>"""
)


def _names(text: str) -> str:
    """The names field of the one marker in ``text``."""
    markers = MARKER.findall(text)
    assert len(markers) == 1, text
    return str(markers[0][1])


def _shrink_run(text: str) -> list[Message]:
    return [
        Message("user", "fix the collection bug"),
        calls("c1"),
        result("c1", text),
        Message("assistant", "a"),
        Message("user", "q"),
        Message("assistant", "b"),
        Message("user", "q3"),
        Message("assistant", "c"),
    ]


async def test_shrink_keeps_exit_status_failed_tests_exception_and_paths_in_its_marker() -> None:
    # issue 34: a test run is shortened as one (its error, summary and last-frame lines kept
    # verbatim, the noise between them counted); before, head and tail stayed and these
    # lines were only named in the marker
    msgs = _shrink_run(PYTEST_RUN)
    step = ShrinkToolResults(bigger_than_tokens=200, older_than_turns=2)  # once, to keep_chars
    out, report = await compress(msgs, CompressionPolicy(target_tokens=10, steps=[step]))
    short = out[2].text
    assert report.messages_changed == 1 and out[2].tool_call_id == "c1"
    assert len(short) < len(PYTEST_RUN) // 3
    lines = short.split("\n")
    for line in (
        "<returncode>1</returncode>",  # the exit status
        "E       TypeError: unsupported operand type(s) for +: 'int' and 'str'",
        "ImportError: cannot import name 'Session' from '_pytest.nodes'",
        '  File "/testbed/src/_pytest/main.py", line 12, in <module>',  # the last frame
        "FAILED testing/test_main.py::test_add - TypeError: unsupported operand type(s) fo...",
        "FAILED testing/test_main.py::test_collect - ImportError: cannot import name 'Sess...",
        "2 failed, 2 passed in 0.31s",
    ):
        assert line in lines, short
    # one marker, first; what went is counted and named (the frame's path that went)
    assert short.startswith("[... ") and short.count("characters cut") == 1
    assert "/testbed/src/_pytest/python.py" in _names(short)
    assert "lines cut]" in short and "captured" not in short.lower()
    keep = ShrinkToolResults().keep_chars
    assert len(short) <= keep + 80 + names_room(len(PYTEST_RUN) - keep)


def test_names_the_kept_part_shows_are_not_repeated() -> None:
    out = cut_text(PYTEST_RUN, 400, "both")
    head, _, rest = out.partition("\n[... ")
    tail = rest.split(" ...]\n", 1)[1]
    names = _names(out)
    assert "src/_pytest/main.py" in tail  # in the git status the tail keeps
    # neither that path nor another spelling of it (/testbed/src/_pytest/main.py) is named
    assert "_pytest/main.py" not in names
    for name in names.split(", ")[1:]:  # the exit status is given though the head shows it
        assert name not in head and name not in tail
    assert digest("see src/a.py and src/b.py", "kept: src/a.py") == "src/b.py"
    assert digest("File /testbed/src/a.py failed", "M src/a.py") == ""


def test_the_digest_is_bounded_and_counts_what_it_leaves_out() -> None:
    removed = "\n".join(f"  File /testbed/pkg/module_{i}/core.py, line {i}" for i in range(120))
    names = digest(removed)
    assert len(names) <= DIGEST_MAX_CHARS
    *shown, more = names.split(", ")
    assert shown[:2] == ["/testbed/pkg/module_0/core.py", "/testbed/pkg/module_1/core.py"]
    assert more == f"+{120 - len(shown)} more"
    for limit in (40, 100, 500):
        assert len(digest(removed, max_chars=limit)) <= limit
    assert digest(removed, max_chars=10) == ""  # not even one name fits
    # one huge text: only its two ends are scanned, and the digest is still bounded
    huge = "error: boom\n" + "x/" * 400_000 + "src/middle.py\n" + "x/" * 400_000 + "\nsrc/last.py\n"
    assert digest(huge) == "error: boom, src/last.py"


def test_a_result_with_no_names_gets_the_plain_marker() -> None:
    text = "line of output\n" * 300
    for keep in ("start", "end", "both"):
        out = cut_text(text, 400, keep)  # type: ignore[arg-type]
        assert PLAIN.search(out) and "names" not in out
    # the exit status alone is no digest: the kept head shows it
    assert PLAIN.search(cut_text("<returncode>0</returncode>\n" + text, 400, "both"))


async def test_a_result_with_no_names_when_shrunk_with_a_store() -> None:
    store = MemoryStore()
    msgs = _shrink_run("line of output\n" * 300)
    step = ShrinkToolResults(bigger_than_tokens=200, older_than_turns=2, save_to=store)
    out, _ = await compress(msgs, CompressionPolicy(target_tokens=10, steps=[step]))
    (marker,) = MARKER.findall(out[2].text)
    assert marker[1] == "" and marker[2].startswith("full text: call recall_context(id='")


async def test_the_recall_id_is_in_the_marker_with_a_store() -> None:
    store = MemoryStore()
    step = ShrinkToolResults(bigger_than_tokens=200, older_than_turns=2, save_to=store)
    msgs = _shrink_run(PYTEST_RUN)
    out, _ = await compress(msgs, CompressionPolicy(target_tokens=10, steps=[step]))
    short = out[2].text
    (marker,) = MARKER.findall(short)
    # issue 34: the exit status and the failed tests stay as lines (no longer named only)
    assert (
        "<returncode>1</returncode>\n" in short and "FAILED testing/test_main.py::test_add" in short
    )
    id_ = re.search(r"recall_context\(id='(\w+)'\)", marker[2])
    assert id_ is not None and short.count("[") == short.count("]")
    assert await recall_tool(store)({"id": id_[1]}, None) == PYTEST_RUN  # type: ignore[arg-type]


async def test_cut_long_messages_keeps_the_paths_it_cut() -> None:
    thought = (
        "THOUGHT: The collection starts in src/_pytest/main.py, where `_collect` walks the "
        "arguments. "
        + "I need to trace how each argument becomes a node. "
        * 60
        + "The package case is handled in src/_pytest/python.py by `Package.collect`, and "
        "the regression test should live in testing/test_collection.py next to "
        "test_collect_init_tests; the fixture data is in ./testing/example_scripts/"
        "collect/package_init_given_as_arg/pkg/__init__.py and the config in "
        "/testbed/tox.ini (issue #6197).\n\n```bash\nsed -n 600,700p src/_pytest/python.py\n```"
    )
    msgs = [
        Message("user", "task"),
        Message("assistant", thought),
        Message("user", "q"),
        Message("assistant", "ok"),
    ]
    step = CutLongMessages(max_tokens_per_message=150)
    out, report = await compress(msgs, CompressionPolicy(target_tokens=200, steps=[step]))
    cut = out[1]
    assert cut is not msgs[1] and cut.text.startswith("THOUGHT: The collection starts")
    assert estimate_tokens([cut]) <= 150 + estimate_tokens([Message("assistant", "")])
    names = _names(cut.text)
    assert "src/_pytest/main.py" not in names  # the kept head shows it
    for name in ("src/_pytest/python.py", "testing/test_collection.py", "/testbed/tox.ini"):
        assert name in names
    assert names.startswith("src/_pytest/python.py, testing/test_collection.py")
    assert report.reached_target


def test_a_marker_never_makes_the_message_longer_than_the_cut_allows() -> None:
    def count(m: Message) -> int:
        return estimate_tokens([m])

    msg = Message("tool", PYTEST_RUN, tool_call_id="c1")
    for budget in (30, 60, 120, 300):
        out = fit_message(msg, budget, count, "both")
        assert count(out) <= budget, (budget, out.text)
    for keep in (0, 10, 40, 100, 400, 1000):
        out = cut_text(PYTEST_RUN, keep, "both")
        plain = len(cut_text("x" * len(PYTEST_RUN), keep, "both"))
        assert len(out) <= plain + 1, keep  # the names take the kept text's room, no more
    # with a tiny budget the digest gives way first
    assert "names" not in cut_text(PYTEST_RUN, 40, "both")
    assert "names" in cut_text(PYTEST_RUN, 200, "both")


def test_digest_kinds_order_and_merges() -> None:
    removed = (
        "$ git log --oneline -2\n"
        "3f2a9c1 Fix collection of __init__.py (#6197)\n"
        "commit 0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c\n"
        "See https://github.com/pytest-dev/pytest/issues/6197.\n"
        "error: pathspec 'nope.py' did not match any file(s) known to git\n"
        "FAIL: test_parse (tests.test_utils.ParseTests)\n"
        "Exit code 128\n"
        "==================== 1 failed, 3 passed in 0.10s ====================\n"
    )
    assert digest(removed, max_chars=1000) == (
        "$ git log --oneline -2, #6197, 0b1c2d3e4f5a, "
        "https://github.com/pytest-dev/pytest/issues/6197, "
        "error: pathspec 'nope.py' did not match any file(s) known to git, "
        "test_parse (tests.test_utils.ParseTests) FAILED, exit 128, 1 failed, 3 passed"
    )
    # when not all fit, the outcome goes in first (then what still fits), each in its place
    assert digest(removed, max_chars=140) == (
        "#6197, error: pathspec 'nope.py' did not match any file(s) known to git, "
        "test_parse (tests.test_utils.ParseTests) FAILED, exit 128, +4 more"
    )
    # each name once: spellings of a path, a header and the summary line of one test
    again = "./src/a.py\n/testbed/src/a.py\nsrc/a.py\n___ test_x ___\nFAILED t/b.py::test_x\n"
    assert digest(again) == "./src/a.py, t/b.py::test_x FAILED"
    assert digest("", "anything") == ""
    assert leading_status("<returncode>2</returncode>\n<output>") == "2"
    assert leading_status("Exit code 1\nfatal: not a git repository") == "1"
    assert leading_status("no status") is None
    assert digest("x src/a.py", exit_status="1") == "exit 1, src/a.py"
    assert digest("nothing here", exit_status="1") == ""


def test_mini_swe_agent_paths_survive_compression_better(data_dir: Path) -> None:
    """The share of the paths named in a real trace that the compressed trace still names.

    Before the digest (b697802 and d737b8f, the same policy) it was 50 of 115 paths."""
    path = data_dir / "mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-6197.traj.json"
    msgs = load_trace(path).messages
    out, report = compress_for_sync(msgs, CompressionPolicy(target_tokens=32000))
    assert report.reached_target

    def named(ms: list[dict[str, object]]) -> set[str]:
        return {p for m in ms for p in PATH.findall(str(m["content"]))}

    before = named(msgs)
    share = len(before & named(out)) / len(before)
    assert len(before) == 115
    assert share > 50 / 115


def test_indented_tool_errors_and_elixir_exceptions_are_names() -> None:
    # mix test output (a real Claude Code session's): the compiler's and the runner's error
    # lines are indented, and an Elixir exception reads "** (Name) message"
    removed = (
        "Compiling 3 files (.ex)\n"
        "    error: undefined function get/2 (expected SpotterWeb.LiveTest to define it)\n"
        "    │\n"
        "  1) test renders the page (SpotterWeb.LiveTest)\n"
        "     ** (RuntimeError) no :secret_key_base configuration found in SpotterWeb.Endpoint.\n"
        "** (CompileError) test/live_test.exs: cannot compile module SpotterWeb.LiveTest\n"
    )
    names = digest(removed, max_chars=400)
    assert "error: undefined function get/2" in names
    assert "** (RuntimeError) no :secret_key_base configuration" in names
    assert "** (CompileError) test/live_test.exs: cannot compile module" in names
    # source that mentions an error is no error line: an indented raise, a docstring's Raises:
    source = "    raise ArgumentError, 'bad'\n    Raises:\n        ValueError if bad\n"
    assert digest(source) == ""


async def test_shrink_names_more_of_a_long_listing_but_keeps_no_more_text() -> None:
    # issue 24: a 100-file listing shrunk to keep_chars named 2-3 of its paths (the field had
    # at most 200 characters); a cut that removes much may now name up to a fifth of it
    listing = "\n".join(f"src/app/styles/theme_{i:03d}/index.css" for i in range(100))
    prose = "the quick brown fox jumps over the lazy dog " * 100
    for text, named in ((listing, 15), (prose, 0)):  # was 9 of the listing
        msgs = _shrink_run(text)
        step = ShrinkToolResults(bigger_than_tokens=200, older_than_turns=2)
        out, _ = await compress(msgs, CompressionPolicy(target_tokens=10, steps=[step]))
        short = out[2].text
        kept = re.findall(r"src/app/styles/theme_\d+/index\.css", short)
        assert len(set(kept)) >= named, short
        head_tail = re.sub(r"\[\.\.\. \d+ characters cut[^\n]*\.\.\.\]", "", short)
        assert len(head_tail) <= step.keep_chars + 2  # the names are on top, not the text
        assert len(short) <= step.keep_chars + 80 + names_room(len(text) - step.keep_chars)


def test_a_huge_middle_is_read_for_names_in_bounded_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a break test's 20 MB tool output of "#1 " took 8.7 s to compress once every digest read
    # the middle of what it cut for names (0.14 s before): the middle is now read in windows
    # of 128,000 characters in all, spread along it, each from a word's start to a word's end
    import agent_adapter.context._digest as digest_module

    read: list[int] = []
    scan = digest_module._scan

    def counting(text: str) -> list[Any]:
        read.append(len(text))
        return scan(text)

    monkeypatch.setattr(digest_module, "_scan", counting)
    paths = [f"/repo/pkg/mod_{k}.py" for k in range(1_200)]
    text = "".join(("#1 " * 1_300) + path + " " for path in paths)  # 4.7 MB, one line
    clipped = clip_ends(text, middle_names=True)
    assert sum(read) <= 128_000
    middle = clipped.splitlines()[1:-1]
    assert all(len(line) < 40 for line in middle)  # names, none cut in two
    named = {int(line[len("/repo/pkg/mod_") : -3]) for line in middle if line.startswith("/")}
    assert len({k * 8 // len(paths) for k in named}) == 8  # from all along the middle


@pytest.mark.parametrize(
    "path",
    [
        # found by a break test, each named cut at its first character outside [\w.-]
        "/testbed/src/_pytest/__pycache__/pytester.cpython-39-pytest-5.2.4.dev6+ge856638ba.pyc",
        "/app/node_modules/@babel/core/lib/transformation/index.js",
        "~/projects/app/src/main.py",
        "/home/user/My%20Documents/report_final.py",
        "/Users/me/re\u0301sume\u0301/cv.pdf",  # a decomposed accent, as macOS writes it
    ],
)
def test_a_path_is_named_whole_whatever_its_characters(path: str) -> None:
    names, _ = names_in(f"$ ls\n{path}\nexit 0\n" + "x " * 5_000)
    paths = [name[0] for name in names if "/" in name[0]]
    assert paths == [path]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("ran with --file=/repo/a.py", "/repo/a.py"),
        # found by a second break test once + @ % ~ were path characters
        ("postgres://admin:s3cret@db.internal/prod.sql", "db.internal/prod.sql"),  # no password
        ("+src/widget/static/app_bundle.js", "src/widget/static/app_bundle.js"),  # a diff's +
        ("~~docs/old_guide_page.md~~", "docs/old_guide_page.md"),  # a strikethrough
        ("git clone ssh://git@github.com/acme/widget.git", "/git@github.com/acme/widget.git"),
    ],
)
def test_what_joins_a_path_is_not_read_as_part_of_it(text: str, named: str) -> None:
    names, _ = names_in(text)
    assert [name[0] for name in names] == [named]


def test_a_failure_anywhere_in_a_huge_middle_is_read() -> None:
    # found by a second break test: with the middle read in windows only, one FAILED line
    # in a 1 MB pytest log was named at 3 of 20 positions (20 of 20 when all was read)
    lines = [f"tests/unit/test_module_{k % 50}.py::test_case_{k} PASSED" for k in range(20_000)]
    failure = "FAILED tests/unit/test_billing.py::test_refund_rounding - AssertionError: 0.01"
    for at in (2_000, 7_777, 10_000, 15_555):
        text = "\n".join([*lines[:at], failure, *lines[at:]])
        assert failure in clip_ends(text, middle_names=True)


def test_the_last_window_reads_to_the_middles_end() -> None:
    # found by a second break test: the last window ended up to 14 characters short of the
    # middle, so a path where the tail starts was missed or named cut
    path = "/srv/app/billing/refund_rounding_handler.py"
    for pad in range(15):
        text = "x " * (100_000 + pad) + path + " " + "y " * 1_490
        names, _ = names_in(text, whole_lines=True)
        paths = [name[0] for name in names if "/" in name[0]]
        assert paths == [path], pad


def test_a_one_line_middle_is_read_all_along() -> None:
    # found by a second break test: a 268 kB one-line JSON reply was read in its first
    # window only (each later window began after its first "word": the whole window)
    records = [{"id": k, "file": f"src/pkg/mod_{k}/handler_{k}.py"} for k in range(4_000)]
    text = json.dumps({"results": records}, separators=(",", ":"))
    clipped = clip_ends(text, middle_names=True)
    ids = [int(m) for m in re.findall(r"handler_(\d+)\.py", clipped)]
    assert max(ids) > 3_500 and len({k * 8 // 4_000 for k in ids}) == 8
