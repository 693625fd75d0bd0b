"""What bench/quality.py counts: error lines a run printed (not source that names one), the
tuning / held-out split by run, and the agent-loop replay (several compressions in a row)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from _quality_facts import error_lines, is_error_line, split
from _quality_loop import replay, round_ends
from agent_adapter._messages import Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import estimate_tokens
from agent_adapter.context.formats import convert, strip_reserved

PRINTED = [
    "ValueError: invalid literal for int() with base 10: 'x'",
    "django.core.exceptions.ValidationError: ['bad']",
    "E       TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    "FAILED tests/test_a.py::test_add - AssertionError",
    "tests/test_a.py::test_add FAILED",
    "FAIL: test_x (pkg.tests.T)",
    "error: pathspec 'x' did not match any file(s) known to git",
    "src/a.c:3:5: error: expected ';' before '}' token",
    "    error: undefined function get/2",
    "     ** (RuntimeError) no :secret_key_base configuration found",
]
SOURCE = [
    "    raise ValueError('x')",  # indented code
    "    ValueError: if the input is bad",  # a docstring's Raises: section
    "   12\tclass FooError(Exception):",  # cat -n
    "    27→      assert_raise Ash.Error.Invalid, fn ->",  # Claude Code Read
    "12:class FooError(Exception):",  # SWE-agent open
    "src/a.py:12:    raise KeyError(key)",  # grep -n
    "+        raise TypeError('no')",  # a diff
    "Traceback (most recent call last):",  # the header, not the error
]


def test_printed_errors_count_and_source_that_names_one_does_not() -> None:
    assert [line for line in PRINTED if not is_error_line(line)] == []
    assert [line for line in SOURCE if is_error_line(line)] == []


def test_error_lines_are_read_from_tool_results_only() -> None:
    said = "\n".join(PRINTED)
    messages = [
        Message("user", said),  # the task quoting an error is no output
        Message("assistant", said),
        Message("tool", "\n".join([*SOURCE, PRINTED[0], PRINTED[3]]), tool_call_id="c1"),
    ]
    assert error_lines(messages) == {PRINTED[0], "tests/test_a.py::test_add"}
    # pytest's E prefix is decoration, whitespace runs count as one space
    pytest_e = Message("tool", PRINTED[2], tool_call_id="c2")
    (head,) = error_lines([pytest_e])
    assert (
        head == "TypeError: unsupported operand type(s) for +: 'int' and 'str" and len(head) == 60
    )


def test_the_split_is_by_run_disjoint_and_fixed_by_names() -> None:
    runs = [f"run-{i}" for i in range(11)]
    parts = split("mini-swe-agent", runs, str)
    assert sorted(parts["tuning"] + parts["held-out"]) == sorted(runs)
    assert len(parts["tuning"]) == 5 and len(parts["held-out"]) == 6
    assert split("mini-swe-agent", list(reversed(runs)), str)["tuning"] == list(
        reversed(parts["tuning"])
    )
    # another data set's name orders its runs anew
    assert split("tau-bench", runs, str) != parts


def test_the_agent_loop_compresses_again_and_keeps_the_newest_turns(data_dir: Path) -> None:
    path = data_dir / "mini-swe-agent-gemini3pro" / "trajs" / "sympy__sympy-19637.traj.json"
    trace = load_trace(path)
    messages = convert(trace.messages, trace.format).messages
    target = estimate_tokens(messages) // 2
    ends = round_ends(trace.messages)
    assert ends[-1] == len(trace.messages) and ends == sorted(set(ends))
    run = replay(trace.messages, trace.format, target, "test/sympy-19637")
    assert run.calls == len(ends) and run.compressions >= 2
    out = convert(strip_reserved(run.out), trace.format).messages
    assert estimate_tokens(out) <= target
    # the newest three assistant turns and what follows them, verbatim
    start = [i for i, m in enumerate(messages) if m.role == "assistant"][-3]
    tail = [(m.role, m.text, m.tool_call_id) for m in messages[start:]]
    assert [(m.role, m.text, m.tool_call_id) for m in out[-len(tail) :]] == tail
    assert out[1].text == messages[1].text  # the task
