"""Test runs, tracebacks, compiler and linter output: every error and summary line stays.

**Recognizes** a text holding at least one line that only a test runner, an interpreter, a
compiler or a linter prints, at the start of a line: ``Traceback (most recent call
last):``, pytest's ``=== test session starts ===`` / ``=== FAILURES ===`` / ``short test
summary info``, unittest's ``Ran 12 tests in 0.3s``, ``FAILED ...``, ``FAIL: ...``,
``ERROR: ...``, pytest's ``E   SomeError`` lines, ``error: ...`` / ``error[E0425]: ...``,
``path:12:3: error: ...`` / ``warning:``, linter findings (``path:12:1: F401 ...``,
pylint's ``path:12:0: C0114: ...``), ``test result: FAILED`` (cargo), ``--- FAIL:`` (go),
ExUnit's ``** (ArgumentError)`` and ``12 tests, 2 failures``, mocha's ``3 passing``, jest's
``Tests:``, ``npm ERR!``. Never by the tool's name.

**Keeps**, verbatim, in this order of need: every error line (an exception's last line,
``E   ...``, ``error...:`` lines, ``FAILED``/``FAIL:``/``ERROR:`` lines, Elixir's ``**
(X)``; pytest's other ``E`` lines come after them), every summary line (pytest's ``=== 2
failed, 3 passed in 1.2s ===``, ``Ran N tests``, ``FAILED (errors=2, skipped=2)``,
``OK``, ``N failed, M passed``, ``Found 3 errors``, pylint's rating), the last frame of
each traceback (its ``File ...`` line and the code line under it), the first line (the
command or exit status); then section headers, linter findings, locations (``path.py:42:
in test_x``, ``--> src/main.rs:3:5``) and the other frames; the noise between them
(passing tests, progress, captured output, platform lines) goes first, head and tail last,
and runs of near-repeated noise lines are one line with a count (findings never are: only
their exact repeats).
"""

from __future__ import annotations

import re

from agent_adapter.context._shapes._lines import MUST, Ranked, ends_first, repeats

#: A line only a test runner, interpreter, compiler or linter prints (``re.M``: at a line
#: start; every branch opens with a literal or a short class, so a scan is linear).
_SIGNAL = re.compile(
    r"^(?:Traceback \(most recent call last\):"
    r"|=+ (?:test session starts|FAILURES|ERRORS|short test summary info)"
    r"|Ran \d+ tests? in "
    r"|FAILED |FAIL: |ERROR: |E {2,}\S"
    r"|(?:fatal )?error(?:\[\w+\])?: "
    r"|[^\s:]+:\d+(?::\d+)?: (?:fatal )?(?:error|warning)\b"
    r"|[^\s:]+:\d+:\d+: [A-Z]+\d+\b"
    r"|test result: |--- FAIL: "
    r"|\s+\*\* \([A-Z]\w*|\d+ tests?, \d+ failures?|Finished in \d"
    r"|\s*\d+ (?:passing|failing)\b|Tests:\s+\d|npm ERR! )",
    re.M,
)

#: An error line (see the module), read from the line's start.
_ERROR = re.compile(
    r"""
      (?:E\ +)?(?:[A-Za-z_]\w*\.)*[A-Za-z_]*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?$
    | (?:[^\s:]+:\d+(?::\d+)?:\ )?(?:fatal\ )?(?:error|Error|ERROR)(?:\[[\w-]+\])?:\s.*
    | \*\*\ \((?:[A-Za-z_]\w*\.)*[A-Z]\w*\)\ .*
    | FAILED\b.* | [^\s:]+::\S+\ (?:FAILED|ERROR)\b.* | (?:FAIL|ERROR):\ .*
    | ---\ FAIL:.* | panic:\ .*
    """,
    re.VERBOSE,
)
#: An indented error line of a tool's own (``    error: ...``, ``  ** (RuntimeError) ...``).
_INDENTED = re.compile(r"\s+(?:(?:fatal )?error(?:\[[\w-]+\])?: |\*\* \()\S")
#: A summary line (see the module).
_SUMMARY = re.compile(
    r"""
      =+\ .*\b(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|no\ tests\ ran)\b.*=+$
    | Ran\ \d+\ tests?\ in\ .*
    | OK(?:\ \(.*\))?$
    | FAILED\ \(.*\)$
    | \d+\ (?:failed|passed|errors?|skipped)\b.*
    | \d+\ (?:tests?|doctests?|propert(?:y|ies)),\ .*\d+\ failures?\b.*
    | \d+\ (?:passing|failing|pending)\b.*
    | Finished\ in\ \d.*
    | test\ result:\ .*
    | Tests?:\ .*\d+\ (?:failed|passed)\b.*
    | Found\ \d+\ errors?\b.*
    | Success:\ .*
    | Your\ code\ has\ been\ rated\ .*
    | System\ check\ identified\ .*
    | \d+\ (?:errors?|warnings?|problems?)\ (?:found|generated|emitted)\b.*
    | <returncode>.*
    """,
    re.VERBOSE,
)
#: Headers, findings and locations: kept after the errors (see the module).
_SECOND = re.compile(
    r"""
      E\ {2,}\S.*
    | </?(?:output|warning|output_head|output_tail|elided_chars)>.*
    | Traceback\ \(most\ recent\ call\ last\):$
    | \s+\d+\)\ .*
    | [=_-]{3,}\ .*\ [=_-]{3,}$
    | [^\s:]+:\d+(?::\d+)?:\ ?\S.*
    | \s*-->\ .*
    | \s+\^+\s*$
    | (?:warning|Warning|WARNING)(?:\[[\w-]+\])?:\ .*
    """,
    re.VERBOSE,
)
_FRAME = re.compile(r'\s+File "[^"\n]*", line \d+')
#: A line that is the source (cat -n, grep -n hit), not an error a run printed.
_NUMBERED = re.compile(r"\s*\d+(?:\t|→|:)")

#: Ranks of this shape.
_HEADER, _FRAMES, _NOISE = 1, 2, 3


def looks_like(text: str) -> bool:
    """Whether ``text`` holds a line only a runner, interpreter, compiler or linter prints."""
    return _SIGNAL.search(text) is not None


def is_outcome(line: str) -> bool:
    """Whether ``line`` is an error or summary line a run printed (what every shape keeps
    first): at the line's start (indented only a tool's own ``error:`` / ``** (X)``), never
    a numbered source line."""
    if not line or len(line) > 500:
        return False
    if line[0].isspace():
        return _INDENTED.match(line) is not None
    if line[0].isdigit() and _NUMBERED.match(line):
        return False
    return _ERROR.match(line) is not None or _SUMMARY.match(line) is not None


def _finding(line: str) -> bool:
    """Whether ``line`` is an error, summary, finding or location: near-repeats of it are
    each kept (a linter's 200 warnings differ by their line and code)."""
    return is_outcome(line) or _SECOND.match(line) is not None


def rank(lines: list[str]) -> Ranked:
    """``lines`` of a test run, traceback, compiler or linter output, ranked (see the
    module)."""
    n = len(lines)
    ranks = [_NOISE] * n
    subs = [-2 * i for i in range(n)]  # errors: the later first (the last one matters most)
    last_frame = -1
    first = next((i for i, t in enumerate(lines) if t.strip()), -1)
    for i, text in enumerate(lines):
        if is_outcome(text):
            ranks[i] = MUST
            if last_frame >= 0 and not text[:1].isspace() and _ERROR.match(text):
                ranks[last_frame] = MUST  # the last frame of the traceback ended here
                subs[last_frame] = 1 - 2 * i  # right after its exception, before the code line
                if last_frame + 1 < i:
                    ranks[last_frame + 1] = MUST
                    subs[last_frame + 1] = 1 - 2 * i
                last_frame = -1
        elif text.startswith("  File ") and _FRAME.match(text):
            ranks[i] = _FRAMES
            last_frame = i
        elif _SECOND.match(text):
            ranks[i] = _HEADER
    if first >= 0 and len(lines[first]) <= 200:
        ranks[first] = MUST
    again = repeats(lines, _finding)
    out = Ranked()
    for i, text in enumerate(lines):
        # errors: the first line (the command, the exit status), then the later first; the
        # rest: the ends first
        sub = (-2 * n - 2 if i == first else subs[i]) if ranks[i] == MUST else ends_first(i, n)
        out.add(text, ranks[i], sub, repeat=bool(again[i]))
    return out
