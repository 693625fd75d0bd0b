"""Listings (find, ls, ls -R, git status, grep hits): every path stays, contents go first.

**Recognizes** a text whose non-blank lines are mostly (60%) entries of a listing: a bare
path (``./src/a.py``, ``django/forms/models.py``, ``src/``), a grep hit
(``path:12:content``, ``path-12-context``, ``path:content``), an ``ls -l`` row
(``-rw-r--r-- 1 root root 782 Oct 24 2024 setup.py``), an ``ls -R`` header (``./src:``),
a ``git status`` entry (``modified:   src/a.py``, `` M src/a.py``, ``?? new.py``).

**Keeps** every path, in a compact form, before anything else: grep hits of one file are
one line, the path with its line numbers (``src/a.py: 12, 40, 77``), their contents
(clipped) after it at a lower rank; ``ls -l`` rows and names alone on their line (``ls``,
``ls -R``) are names, several to a line; a bare path stays as it is. Other lines (``total
172``, git's prose, grep's ``--``) go first, error lines never. When the paths alone do not
fit, paths of one directory are folded into
one line (``src/pkg/{a.py,b.py,c.py}``: their common prefix once), and when even that does
not fit, the last go. What went is counted in one line at the end (``[212 lines cut]``),
not where it went: the paths stay one a line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_adapter.context._shapes._diagnostics import is_outcome
from agent_adapter.context._shapes._lines import MUST, Ranked, sample

_P = r"(?:\./|/|~/)?[\w.@+-]+(?:/[\w.@+-]+)*"
_BARE = re.compile(rf"({_P})/?\Z")
_GREP = re.compile(rf"({_P}\.\w+)(?:([:-])(\d+)[:-]|:)(.*)\Z")
_LS_L = re.compile(
    r"[dlcbps-][rwxsStT-]{9}[.@+]?\s+\d+\s+\S+\s+\S+\s+[\d,]+\s+\w{3}\s+\d+\s+[\d:]+\s+(.+)\Z"
)
#: A file or directory name alone on its line (``ls``, ``ls -R``).
_NAME = re.compile(r"[\w@+-][\w.@+-]*/?\Z")
_LS_R = re.compile(rf"({_P}):\Z")
_GIT = re.compile(
    rf"\s*(?:(?:modified|new file|deleted|renamed|both modified|typechange):\s+|[ MADRCU?!]{{2}} )"
    rf"({_P}(?: -> {_P})?)\Z"
)
#: Names packed on one line, at most this long.
_PACK = 100
#: Ranks of this shape.
_CONTENT, _OTHER = 2, 3


def _is_path(p: str) -> bool:
    return "/" in p or ("." in p.lstrip(".") and not p.replace(".", "").isdigit())


def _entry(line: str) -> str | None:
    """The path of a listing's line, or ``None``."""
    s = line.strip()
    if not s:
        return None
    m = _BARE.match(s)
    if m and _is_path(m[1]):
        return m[1]
    m = _GREP.match(s)
    if m:
        return m[1]
    m = _LS_L.match(s)
    if m:
        return m[1]
    m = _LS_R.match(s) or _GIT.match(line)
    return m[1] if m else None


def looks_like(lines: list[str]) -> bool:
    """Whether most non-blank lines (60%, and at least 5) are entries of a listing."""
    seen = entries = 0
    for line in sample(lines):
        if not line.strip() or line.startswith("<"):
            continue
        seen += 1
        if len(line) < 400 and _entry(line) is not None:
            entries += 1
        elif seen >= 40 and entries < 0.4 * seen:
            return False  # far from a listing already
    return entries >= 5 and entries >= 0.6 * seen


def _names(rows: list[str]) -> list[str]:
    """``rows`` (names) packed into lines of at most ``_PACK`` characters."""
    out: list[str] = []
    line = ""
    for name in rows:
        if line and len(line) + 2 + len(name) > _PACK:
            out.append(line)
            line = ""
        line = f"{line}  {name}" if line else name
    if line:
        out.append(line)
    return out


def rank(lines: list[str]) -> tuple[Ranked, Ranked]:
    """``lines`` of a listing ranked (see the module): the compact form, and the same with
    paths of one directory folded (for a budget the paths alone do not fit)."""
    items: list[tuple[str, int]] = []  # (text, rank)
    names: list[str] = []  # ls -l names waiting to be packed
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        s = line.strip()
        m = _LS_L.match(s) if s[:1] in "dlcbps-" else None
        if m:
            names.append(m[1] + ("/" if s[0] == "d" else ""))
            i += 1
            continue
        if _NAME.match(line):  # a name alone (ls, ls -R): packed with its neighbours
            names.append(line)
            i += 1
            continue
        if names:
            items += [(t, MUST) for t in _names(names)]
            names = []
        g = _GREP.match(s) if not _BARE.match(s) else None
        if g and (g[3] or ":" in s):
            path, hits, contents = g[1], [], []
            while i < n:
                h = _GREP.match(lines[i].strip())
                if h is None or h[1] != path:
                    break
                if h[3]:
                    hits.append(h[3])
                contents.append(f"  {h[3] + ': ' if h[3] else ''}{h[4].strip()}")
                i += 1
            head = f"{path}: {', '.join(hits)}" if hits else path
            items.append((head, MUST))
            items += [(c, _CONTENT) for c in contents]
            continue
        if is_outcome(line) or (s and not s.startswith("<") and _entry(line) is not None):
            items.append((line, MUST))
        elif s == "--" or s.startswith("total ") or not s:
            items.append((line, _OTHER + 1))
        else:
            items.append((line, _OTHER))
        i += 1
    items += [(t, MUST) for t in _names(names)]
    folded = _folded(items)
    return _ranked(items), _ranked([(t, r) for t, r, _ in folded], [w for _, _, w in folded])


def _ranked(items: list[tuple[str, int]], weights: list[int] | None = None) -> Ranked:
    out = Ranked(quiet=True)
    n = len(items)
    for i, (text, r) in enumerate(items):
        sub = i if r == MUST else min(i, n - 1 - i)
        out.add(text, r, sub, weight=weights[i] if weights else 1)
    return out


def _folded(items: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """``items`` with each run of bare paths folded by directory: ``dir/{a.py,b.py}`` once a
    directory, in order of first appearance; ``(text, rank, source lines)``."""
    out: list[tuple[str, int, int]] = []
    run: dict[str, list[str]] = {}
    for text, r in items:
        m = _BARE.match(text.strip()) if r == MUST else None
        if m and "/" in m[1].rstrip("/"):
            head, _, tail = m[1].rstrip("/").rpartition("/")
            run.setdefault(head, []).append(tail)
            continue
        out += _fold(run)
        run = {}
        out.append((text, r, 1))
    out += _fold(run)
    return out


def fold_paths(paths: Sequence[str]) -> list[tuple[str, int]]:
    """``paths`` folded by directory as a listing's are when they do not fit
    (``src/pkg/{a.py,b.py}``: their common prefix once, :func:`_fold`), one entry a
    directory in order of first appearance: ``(text, how many paths it holds)``. A path
    without a directory stays as it is."""
    run: dict[str, list[str]] = {}
    alone: dict[str, None] = {}
    order: list[tuple[bool, str]] = []  # (a directory, its name or the path)
    for path in paths:
        head, _, tail = path.rstrip("/").rpartition("/")
        if not head:
            if path not in alone:
                alone[path] = None
                order.append((False, path))
            continue
        if head not in run:
            run[head] = []
            order.append((True, head))
        if tail not in run[head]:
            run[head].append(tail)
    folded = {d: (text, n) for d, (text, _, n) in zip(run, _fold(run), strict=True)}
    return [folded[key] if is_dir else (key, 1) for is_dir, key in order]


def _fold(run: dict[str, list[str]]) -> list[tuple[str, int, int]]:
    return [
        (
            f"{d}/{tails[0]}" if len(tails) == 1 else f"{d}/{{{','.join(tails)}}}",
            MUST,
            len(tails),
        )
        for d, tails in run.items()
    ]
