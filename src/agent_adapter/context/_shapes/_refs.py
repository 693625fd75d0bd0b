"""The source lines a conversation's errors and diffs name: ``(path, line)`` references.

A code read shortened by :func:`~agent_adapter.context._shapes.shorten_text` keeps the
lines these name (``keep_lines``, see :mod:`._code`): the line a traceback, a failed test, a
linter or a diff points at is what the agent reads the file for. Found by content, never by
the tool that printed it:

- a Python traceback frame: ``File "/testbed/django/db/models/query.py", line 1234, in f``;
- a runner's, compiler's or linter's location: ``src/a.py:42: AssertionError``,
  ``a.py:10:5: E501 line too long``, ``a.c:3:1: error: ...``, ``a.py:7: error: ...`` (a
  location followed by a capitalized word or ``error`` / ``warning`` / ``note``: a grep
  hit's source text usually is not);
- a unified diff's hunk (``@@ -40,7 +40,8 @@`` under ``--- a/f`` / ``+++ b/f``): the old
  file's lines it removes, and the line an insertion goes after (a read before the edit
  shows the old numbering).

Deterministic, linear in the text, and remembered by text (a conversation is read again
on every call).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from agent_adapter.context._digest import _same_file
from agent_adapter.context._lru import Memo

__all__ = ["line_refs", "lines_of"]

_FRAME = re.compile(r'File "(?P<p>[^"\n]+)", line (?P<n>\d+)')
#: A location's line number and what follows it, from its colon (a literal: fast to find);
#: the path is read going back from there (:data:`_PATH_BACK`).
_LOCATION = re.compile(r":(?P<n>\d+)(?::\d+)?: ?(?=[A-Z]\w*|error\b|warning\b|note\b|fatal\b)")
_PATH_BACK = re.compile(r"(?:^|(?<=\s))(?P<p>[\w./~-]+)\Z")
_PATH_MAX = 300
#: A path's file name with an extension (the location's path is read as one run of path
#: characters first: no backtracking inside a long token).
_FILE_NAME = re.compile(r"\w\.\w+\Z")
_DIFF_FILE = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(?P<p>[^\s]+)", re.M)
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
#: Lines one hunk may name at most (a rewrite of a whole file names none of them well).
_HUNK_MAX = 40
#: Line numbers one text may name for one file at most.
_PER_FILE_MAX = 200

_MEMO = Memo(entries=4096, chars=32_000_000)
_LISTS = Memo(entries=64, chars=64_000_000)


def line_refs(texts: Iterable[str]) -> dict[str, frozenset[int]]:
    """The ``(path, line)`` references of ``texts`` (see the module), by path as written.
    Remembered for the list of texts as a whole (a step reads the same conversation on
    every call) and for each text (a conversation grows by a few texts a call)."""
    key = tuple(texts)
    hit: dict[str, frozenset[int]] | None = _LISTS.get(key)
    if hit is None:
        hit = _line_refs(key)
        _LISTS.put(key, hit, sum(map(len, key)))
    return hit


def _line_refs(texts: tuple[str, ...]) -> dict[str, frozenset[int]]:
    out: dict[str, set[int]] = {}
    for text in texts:
        for path, lines in _refs(text).items():
            out.setdefault(path, set()).update(lines)
    return {path: frozenset(lines) for path, lines in out.items()}


def lines_of(refs: Mapping[str, frozenset[int]], path: str) -> frozenset[int]:
    """The lines ``refs`` names in the file ``path``: a path written another way (relative,
    absolute, ``./``) is the same file when one ends with the other at a ``/`` (the digest's
    test, :func:`~agent_adapter.context._digest._same_file`)."""
    out: set[int] = set()
    for p, lines in refs.items():
        if _same_file(p, path):
            out.update(lines)
    return frozenset(out)


def _refs(text: str) -> dict[str, frozenset[int]]:
    if "line " not in text and ":" not in text:
        return {}
    hit: dict[str, frozenset[int]] | None = _MEMO.get(text)
    if hit is None:
        hit = _scan(text)
        _MEMO.put(text, hit, len(text))
    return hit


def _scan(text: str) -> dict[str, frozenset[int]]:
    out: dict[str, set[int]] = {}

    def add(path: str, line: int) -> None:
        got = out.setdefault(path, set())
        if len(got) < _PER_FILE_MAX and line > 0:
            got.add(line)

    if 'File "' in text:
        for m in _FRAME.finditer(text):
            add(m["p"], int(m["n"]))
    for m in _LOCATION.finditer(text):
        start = m.start()
        back = _PATH_BACK.search(text, max(0, start - _PATH_MAX), start)
        if back is not None and _FILE_NAME.search(back["p"]):
            add(back["p"], int(m["n"]))
    if "@@ -" in text:
        _hunks(text, add)
    return {p: frozenset(lines) for p, lines in out.items() if lines}


def _hunks(text: str, add: Callable[[str, int], None]) -> None:
    """The old lines each hunk of a unified diff in ``text`` removes or inserts after."""
    path: str | None = None
    old = 0  # the old file's line the next hunk line stands at
    left = 0  # lines of the hunk still to read
    named = 0
    for line in text.split("\n"):
        trailing = left <= 0 and path is not None and line[:1] == "+" and line[:4] != "+++ "
        if left <= 0 and not (trailing and named):
            f = _DIFF_FILE.match(line)
            if f is not None and f["p"] != "/dev/null":
                path = f["p"] if line.startswith("+++") or path is None else path
                continue
            h = _HUNK.match(line)
            if h is not None and path is not None:
                old = int(h[1])
                left = int(h[2]) if h[2] is not None else 1
                named = 0
                left = left or 1  # a pure insertion at the top: one line to read
            continue
        assert path is not None
        if line.startswith("-"):
            if named < _HUNK_MAX:
                add(path, old)
                named += 1
            old += 1
            left -= 1
        elif line.startswith("+"):
            if named < _HUNK_MAX and old > 1:  # after the line before (none: a new file)
                add(path, old - 1)
                named += 1
        else:
            old += 1
            left -= 1
