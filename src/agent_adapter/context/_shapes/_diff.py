"""Diffs (``git diff``, ``diff -u``, a patch): file and hunk headers stay, context goes first.

**Recognizes** a text with a unified diff in it: a ``diff --git`` line, or a ``--- `` line
followed by a ``+++ `` line, and an ``@@ -a,b +c,d @@`` hunk header.

**Keeps** every file header (``diff --git``, ``--- a/...``, ``+++ b/...``, ``new file
mode``, ``rename from``...) and every hunk header first, with the error and summary lines
printed around the diff; then the changed lines (``+``/``-``); the unchanged context lines
go first.
"""

from __future__ import annotations

import re

from agent_adapter.context._shapes._diagnostics import is_outcome
from agent_adapter.context._shapes._lines import MUST, Ranked

_SIGNAL = re.compile(r"^(?:diff --git |--- \S.*\n\+\+\+ \S)", re.M)
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.M)
_HEADER = (
    "diff ",
    "--- ",
    "+++ ",
    "@@ ",
    "index ",
    "new file mode",
    "deleted file mode",
    "old mode",
    "new mode",
    "rename from",
    "rename to",
    "similarity index",
    "Binary files",
)
#: Ranks of this shape.
_CHANGED, _OTHER, _CONTEXT = 1, 2, 3


def looks_like(text: str) -> bool:
    """Whether ``text`` holds a unified diff (see the module)."""
    return _SIGNAL.search(text) is not None and _HUNK.search(text) is not None


def rank(lines: list[str]) -> Ranked:
    """``lines`` of a diff ranked (see the module)."""
    out = Ranked()
    n = len(lines)
    for i, line in enumerate(lines):
        if line.startswith(_HEADER) or is_outcome(line):
            r = MUST
        elif line[:1] in ("+", "-"):
            r = _CHANGED
        elif line[:1] == " ":
            r = _CONTEXT
        else:
            r = _OTHER
        out.add(line, r, i if r == MUST else min(i, n - 1 - i))
    return out
