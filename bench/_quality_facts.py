"""What ``quality.py`` counts as an error line, and how it splits the traces into two parts.

**Error lines** are what a run *printed* as an error, never source code that mentions one:
only the text of tool results (``role == "tool"`` after conversion: mini-swe-agent
observations, Claude Code ``tool_result`` blocks, SWE-agent and tau-bench tool messages) is
read, one line at a time, and a line counts when

* it does not look like a source listing: no leading whitespace (code, docstrings and
  ``Raises:`` sections are indented; only a tool's own indented ``error: ...`` and Elixir's
  ``** (RuntimeError) ...`` lines count indented), no line number in front
  (``cat -n``'s ``   12\\t``, Claude Code's ``   12→``, SWE-agent's ``12:``), no ``grep -n``
  hit (``path:12:...``) unless it is a compiler's ``path:12:3: error: ...``, no diff line
  (``+``/``-``/``@@``), and
* it is one of: a traceback's final exception line (``ValueError: bad``,
  ``pkg.mod.FooError``, pytest's ``E   TypeError: ...``, Elixir's ``** (CompileError) ...``),
  an ``error:`` / ``Error:`` /
  ``ERROR:`` / ``fatal error:`` line (``path:1:2: error: ...`` too), a failed test
  (``FAILED tests/x.py::t``, ``tests/x.py::t FAILED``, ``FAIL: t (m.C)``, ``FAILED
  (failures=1)``).

Three measures read an output for each error line (the last two since issue 34):

* **named**: its first 60 characters (whitespace runs as one space,
  pytest's ``E`` prefix left out; a pytest ``FAILED`` line by its test id, ``tests/x.py::t``,
  however it is spelled around it) occur in the output's text (whitespace runs as one space too);
* **by name**: its name occurs in the output's text: a failed test's name (the part of a
  pytest id after its last ``::``, the test of ``FAIL: test_x (m.C)``), an exception's class
  (``ValueError``, the last part of ``pkg.mod.FooError``, Elixir's ``** (CompileError)``),
  a compiler's error code (``E0425`` of ``error[E0425]: ...``), else its first 60 characters;
* **verbatim**: the whole line (whitespace runs as one space, stripped, pytest's ``E``
  prefix left out) occurs in the output's text.

The *last* error line of a run is the last one of its last tool result that prints any.


**The split** is by run, fixed by names alone: within each data set the runs are ordered by
the SHA-256 of ``"<data set>/<run name>"``, the first half (rounded down) is the *tuning*
part, the rest the *held-out* part. Settings are chosen on the tuning part only; the README
quotes the held-out part.
"""

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agent_adapter import Message

ERROR_PREFIX = 60
PARTS = ("tuning", "held-out")

#: A line that looks like a source listing: numbered (cat -n, Claude Code Read, SWE-agent
#: open), a grep -n hit, a diff line.
_SOURCE = re.compile(r"\d+(?:\t|→|:)|[+-](?![-+]{2})|@@|[\w./-]+:\d+:(?!\d+: (?:fatal )?error)")
_ERROR = re.compile(
    r"""
      (?:E\s+)?(?:[A-Za-z_]\w*\.)*[A-Za-z_]*(?:Error|Exception)(?::\s.*)?$
    | (?:[\w./-]+:\d+(?::\d+)?:\ )?(?:fatal\ )?(?:error|Error|ERROR)(?:\[[\w-]+\])?:\s.*
    | \*\*\ \((?:[A-Za-z_]\w*\.)*[A-Z]\w*\)\ .*
    | FAILED\b.* | \S+::\S+\ FAILED\b.* | (?:FAIL|ERROR):\ .*
    """,
    re.VERBOSE,
)
#: What an indented error line may be: ``error: ...``, ``** (SomeError) ...``.
_INDENTED = re.compile(r"\s+(?:(?:fatal )?error: |\*\* \((?:[A-Za-z_]\w*\.)*[A-Z]\w*\) )\S")
_SPACES = re.compile(r"\s+")
#: pytest's ``E   `` in front of an exception line: decoration, not the error's words.
_PYTEST_E = re.compile(r"\AE ")
#: A failed test's id in its FAILED line: the line is known by it.
_TEST_ID = re.compile(r"[^\s:]+\.py::[^\s]+")


def flat(text: str) -> str:
    """``text`` with every whitespace run as one space."""
    return _SPACES.sub(" ", text)


def is_error_line(line: str) -> bool:
    """Whether one line of tool output is an error the run printed (see the module)."""
    if not line:
        return False
    if line[0].isspace():
        # indented: only a compiler's or test runner's own (mix: "    error: ...",
        # "     ** (RuntimeError) ..."), never an exception name alone (a docstring's Raises:)
        return _INDENTED.match(line) is not None
    if line.startswith("E ") and not line.startswith("E  "):
        return False  # "E something" prose, not pytest's "E   " prefix
    if _SOURCE.match(line):
        return False
    return _ERROR.match(line) is not None


def error_lines(messages: Sequence[Message]) -> set[str]:
    """The first 60 characters (whitespace runs as one space, stripped) of every error line
    in the tool results of ``messages``."""
    return {e.head for e in error_records(messages)}


@dataclass(frozen=True)
class ErrorLine:
    """One error line a run printed, as the three measures read it (see the module)."""

    head: str  # the first 60 characters (a FAILED line: its test id)
    name: str  # the test, exception class or error code it names
    line: str  # the whole line, whitespace runs as one space, stripped, no ``E`` prefix


#: An exception's class in an error line (after pytest's ``E``), an Elixir ``** (X)``, a
#: compiler's error code, a unittest ``FAIL: test (m.C)``.
_EXC_NAME = re.compile(r"(?:E\s+)?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*(?:Error|Exception))\b")
_ELIXIR = re.compile(r"\s*\*\* \((?:[A-Za-z_]\w*\.)*([A-Z]\w*)\)")
_CODE = re.compile(r"(?:fatal )?(?:error|Error|ERROR)\[([\w-]+)\]")
_UNIT = re.compile(r"(?:FAIL|ERROR): (\w+) \(")


def _name_of(line: str, head: str, test: re.Match[str] | None) -> str:
    """The name of error line ``line`` (see :class:`ErrorLine`)."""
    if test is not None:
        return test[0].rsplit("::", 1)[-1]
    for pattern in (_UNIT, _ELIXIR, _CODE):
        m = pattern.match(line.strip())
        if m:
            return m[1]
    m = _EXC_NAME.match(line)
    if m:
        return m[1]
    m = _CODE.search(line)
    return m[1] if m else head


def error_records(messages: Sequence[Message]) -> list[ErrorLine]:
    """Every error line in the tool results of ``messages``, in order (repeats included)."""
    out: list[ErrorLine] = []
    for m in messages:
        if m.role != "tool":
            continue
        for line in m.text.splitlines():
            if len(line) <= 400 and is_error_line(line):
                test = _TEST_ID.search(line) if "FAIL" in line else None
                whole = _PYTEST_E.sub("", flat(line).strip())
                head = (test[0] if test else whole)[:ERROR_PREFIX]
                out.append(ErrorLine(head, _name_of(line, head, test), whole))
    return out


T = TypeVar("T")


def split(group: str, runs: Sequence[T], name: Any) -> dict[str, list[T]]:
    """``runs`` of one data set as ``{"tuning": [...], "held-out": [...]}`` (see the module);
    ``name(run)`` is a run's name."""

    def rank(run: T) -> str:
        return hashlib.sha256(f"{group}/{name(run)}".encode()).hexdigest()

    ordered = sorted(runs, key=rank)
    half = len(ordered) // 2
    tuning = {id(r) for r in ordered[:half]}
    return {
        "tuning": [r for r in runs if id(r) in tuning],
        "held-out": [r for r in runs if id(r) not in tuning],
    }
