"""Source code (a file read, numbered or not): signatures stay, bodies go first.

**Recognizes** a text most of whose non-blank lines (60%, at least 8) are numbered source
lines (``cat -n``'s ``   12\\t``, Claude Code's ``    12→``, SWE-agent's ``12:``), or code:
indented, or opening with a keyword (``def``, ``class``, ``import``, ``return``,
``function``, ``fn``...), or ending in ``:``, ``{``, ``}``, ``;``, ``)`` or ``,``; with at
least one signature among them.

**Keeps** the signatures first (``def``/``class``/``async def``, decorators, Elixir's
``def``/``defp``/``defmodule``, ``function``, ``fn``/``struct``/``impl``/``enum``/``trait``,
``func``, ``interface``, Java/C# ``public ... (``), with their line numbers when numbered, and
the error and summary lines
a run printed around the code; then top-level statements, then bodies (the shallowest
first), then comments, docstrings and blank lines. A body line's own text is never changed:
what goes is counted in a gap line.

**Named lines** (``keep_lines``): the line numbers that an error, traceback, linter or diff
elsewhere in the conversation names in this file (the caller finds them, see
:func:`~agent_adapter.context._shapes._refs.line_refs`; the text alone cannot know them)
are kept verbatim first, before the signatures, and one line either side of each next,
before the bodies. Only a numbered read's lines are matched (by the number in front: an
unnumbered text does not say which line of the file it starts at).
"""

from __future__ import annotations

import re

from agent_adapter.context._shapes._diagnostics import is_outcome
from agent_adapter.context._shapes._lines import MUST, Ranked, sample

#: A line number in front of a source line (cat -n, Claude Code's Read, SWE-agent's open).
_NUMBER = re.compile(r"\s*\d+(?:\t|→|:)")
_SIGNATURE = re.compile(
    r"\s*(?:@[\w.]+|(?:async\s+)?def\s|defp?\s|def(?:module|macro|impl|protocol)\s|class\s|(?:export\s+)?(?:async\s+)?function\b"
    r"|(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:fn|struct|enum|trait|impl|mod)\s"
    r"|func\s|interface\s|(?:public|private|protected|internal|static)\s[^=;]*\()"
)
_KEYWORD = re.compile(
    r"\s*(?:def|class|import|from|return|if|elif|else|for|while|try|except|raise|with"
    r"|function|const|let|var|fn|pub|use|struct|impl|func|package|public|private|#include)\b"
)
_COMMENT = re.compile(r'\s*(?:#|//|/\*|\*|"""|\'\'\'|--)')
_CODE_END = (":", "{", "}", ";", ")", ",", "(", "[", "]")
#: Ranks of this shape.
_TOP, _BODY, _DEEP, _COMMENTS, _BLANK = 1, 2, 3, 4, 5


def _source(line: str) -> str:
    m = _NUMBER.match(line)
    return line[m.end() :] if m else line


def looks_like(lines: list[str]) -> bool:
    """Whether ``lines`` are mostly numbered source lines or code (see the module)."""
    seen = numbered = code = signatures = 0
    for line in sample(lines):
        if not line.strip() or line.startswith("<"):
            continue
        seen += 1
        m = _NUMBER.match(line)
        src = line[m.end() :] if m else line
        numbered += m is not None
        s = src.rstrip()
        if (
            src[:1] in (" ", "\t")
            or s.endswith(_CODE_END)
            or _KEYWORD.match(src)
            or _COMMENT.match(src)
        ):
            code += 1
        if _SIGNATURE.match(src):
            signatures += 1
        if seen == 60 and code < 0.3 * seen and numbered < 0.3 * seen:
            return False  # far from code already
    if seen < 8:
        return False
    return numbered >= 0.6 * seen or (code >= 0.6 * seen and signatures > 0)


def _number(line: str) -> int | None:
    m = _NUMBER.match(line)
    return int(line[: m.end() - 1]) if m else None


def rank(lines: list[str], keep_lines: frozenset[int] = frozenset()) -> Ranked:
    """``lines`` of source code ranked (see the module); ``keep_lines``: the line numbers
    named elsewhere, kept first."""
    out = Ranked()
    n = len(lines)
    near = {k + d for k in keep_lines for d in (-1, 1)} - keep_lines
    for i, line in enumerate(lines):
        src = _source(line)
        s = src.strip()
        number = _number(line) if keep_lines else None
        if number is not None and number in keep_lines:
            out.add(line, MUST, i - n)  # before every signature (theirs: i >= 0)
            continue
        if number is not None and number in near and s:
            out.add(line, _TOP, i - n)  # its context: before every other top-level line
            continue
        # a docstring's quotes are comments; its lines are read as any body's (a read may
        # start inside one: which quote opens and which closes is not known)
        if '"""' in s or "'''" in s:
            r = _COMMENTS
        elif not s:
            r = _BLANK
        elif _SIGNATURE.match(src) or is_outcome(line):
            r = MUST
        elif _COMMENT.match(src):
            r = _COMMENTS
        else:
            depth = len(src) - len(src.lstrip())
            r = _TOP if depth == 0 else _BODY if depth <= 8 else _DEEP
        out.add(line, r, i if r == MUST else min(i, n - 1 - i))
    return out
