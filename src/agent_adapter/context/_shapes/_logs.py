"""Logs: repeated and near-repeated lines are one line with a count.

**Recognizes** a text of at least 8 non-blank lines of which 30% or more repeat the line
before them but for numbers and ids (:func:`~._lines.near_key`: timestamps, counters, hex
ids), e.g. a progress log, a retry loop, a warning printed once a test.

**Keeps** the first line of each run of near-repeats before its repeats, which go first
(counted: ``[41 more like the line above]``); error and summary lines first, then
warnings, then the other lines, the head and the tail before the middle.
"""

from __future__ import annotations

import re

from agent_adapter.context._shapes._diagnostics import is_outcome
from agent_adapter.context._shapes._lines import MUST, Ranked, ends_first, near_key, repeats, sample

_WARN = re.compile(r"\b(?:WARN(?:ING)?|[Ww]arning|CRITICAL|FATAL)\b")
#: Ranks of this shape.
_WARNINGS, _OTHER = 1, 2


def looks_like(lines: list[str]) -> bool:
    """Whether 30% of ``lines`` (at least 8 non-blank) repeat the one before but for
    numbers and ids."""
    seen = repeats = 0
    before = None
    for line in sample(lines):
        if not line.strip():
            continue
        seen += 1
        key = near_key(line)
        repeats += key == before
        before = key
    return seen >= 8 and repeats >= 0.3 * seen


def rank(lines: list[str]) -> Ranked:
    """``lines`` of a log ranked (see the module)."""
    again = repeats(lines)
    n = len(lines)
    out = Ranked()
    for i, text in enumerate(lines):
        if is_outcome(text):
            r = MUST
        elif _WARN.search(text, 0, 300):
            r = _WARNINGS
        else:
            r = _OTHER
        out.add(text, r, -i if r == MUST else ends_first(i, n), repeat=bool(again[i]))
    return out
