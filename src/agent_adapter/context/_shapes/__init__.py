"""Shortening that knows what it shortens: a text is read for what it is, then cut to keep
what matters of that kind (issue 34).

:func:`shorten_text` is :func:`~agent_adapter.context._text.cut_text`'s counterpart for old
tool results (``ShrinkToolResults``) and long messages (``CutLongMessages``). It tells what a
text is by its content alone, never by the tool that printed it, trying in this order:

1. JSON (:mod:`._json`): one JSON document;
2. a diff (:mod:`._diff`);
3. a test run, traceback, compiler or linter output (:mod:`._diagnostics`);
4. source code (:mod:`._code`);
5. a listing: find, ls, git status, grep hits (:mod:`._listing`);
6. a log of near-repeated lines (:mod:`._logs`);

and anything else (prose, a shape not known) is cut as before: head and tail
(:func:`~agent_adapter.context._text.cut_text`). Each kind ranks the text's lines (the
error and summary lines a run printed are kept first in every kind) and
:func:`~._lines.select` keeps the best that fit, a gap line counting each run that went.

**The marker** is the same as a plain cut's, on the first line: ``[... N characters cut;
names: ...; <note> ...]``: ``N`` the characters that went (an earlier cut's count
included), the names (paths, error lines, failed tests, ids; see
:mod:`~agent_adapter.context._digest`) of the lines that went that the kept lines do not
show, then ``note`` (``ShrinkToolResults``' recall call, kept last, so the recall id is
read as before). Gap lines (``[37 lines cut]``, ``[12 more like the line above]``) never
open with ``[...``: the one marker is what the library's other readers (the stores'
already-shortened test, a later cut's count) look for. A text shortened again (no store
kept its original) has its earlier markers merged into the new one: their count and names
carry over (the recall calls the caller's note holds: known by the store, never read off
the text), so it still holds one marker.

**The budget**: the output is at most what a plain cut of the same call would be: about
``keep_chars`` plus its marker (the names and the note), plus what a cut removing much may
add for its names (``names_chars`` past a digest's usual room; see
:func:`~agent_adapter.context._digest.names_room`). A kind whose must-keep lines take more
keeps them best first (the last errors, the first paths) and counts the rest.

Deterministic (a function of its arguments) and remembered by content like
:func:`~agent_adapter.context._text.cut_text` (a result cut again in a later pass or call is
not read again). Fast: every test is a linear regex from a literal or a line start, a line
is read by at most a few anchored matches, and the choice of lines is ``O(n log n)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent_adapter.context._digest import (
    DIGEST_MAX_CHARS,
    Name,
    join_names,
    names_in,
    names_room,
    shown_by,
)
from agent_adapter.context._lru import Memo
from agent_adapter.context._shapes import _code, _diagnostics, _diff, _json, _listing, _logs
from agent_adapter.context._shapes._lines import (
    GAP,
    MUST,
    Ranked,
    clip_limit,
    ends_first,
    select,
)
from agent_adapter.context._shapes._listing import fold_paths
from agent_adapter.context._shapes._refs import line_refs
from agent_adapter.context._text import _MARKER, Keep, _valid_unicode, cut_text

__all__ = ["classify", "fold_paths", "line_refs", "shorten_text"]

#: A text of fewer lines than this is cut as prose: there is nothing to choose between.
_MIN_LINES = 6
#: A text longer than this is read line by line only in its first and last this many
#: characters (the lines between are one gap, counted): a shortening of a huge output keeps
#: a small part of it, and its two ends are where a run's command and outcome are.
_WINDOW_CHARS = 200_000
_HEAD_CHARS, _TAIL_CHARS = 120_000, 80_000


def classify(text: str, lines: list[str] | None = None) -> str:
    """What ``text`` is: ``"json"``, ``"diff"``, ``"diagnostics"``, ``"listing"``,
    ``"code"``, ``"log"`` or ``"prose"`` (see the module)."""
    lines = text.split("\n") if lines is None else lines
    if _json.parse(text) is not None:
        return "json"
    if len(lines) < _MIN_LINES:
        return "prose"
    if _diff.looks_like(text):
        return "diff"
    if _diagnostics.looks_like(text):
        return "diagnostics"
    if _code.looks_like(lines):  # before listings: most reads are numbered, found at once
        return "code"
    if _listing.looks_like(lines):
        return "listing"
    if _logs.looks_like(lines):
        return "log"
    return "prose"


def shorten_text(
    text: str,
    keep_chars: int,
    keep: Keep = "both",
    *,
    note: str = "",
    names_chars: int = 0,
    keep_lines: frozenset[int] = frozenset(),
) -> str:
    """``text`` shortened to about ``keep_chars`` characters by what it is (see the module),
    or cut at its ends (``keep``) like :func:`~agent_adapter.context._text.cut_text` when it
    is prose or of no known shape. Returns ``text`` itself when it is short enough.
    ``keep_lines``: the line numbers of a numbered code read that the conversation names
    elsewhere (an error, a traceback, a diff hunk: see :func:`line_refs`), kept first (see
    :mod:`._code`); other kinds ignore them."""
    keep_chars = max(0, keep_chars)
    if len(text) <= keep_chars:
        return text
    key = (text, keep_chars, keep, note, names_chars, keep_lines)
    hit: str | None = _SHAPED.get(key)
    if hit is None:
        hit = _shorten(text, keep_chars, keep, note, names_chars, keep_lines)
        _SHAPED.put(key, hit, len(text))
    return hit


_SHAPED = Memo(entries=2048, chars=16_000_000)


def _budget(keep_chars: int, note: str, names_chars: int) -> int:
    """The longest output: what a plain cut of the same call may be (see the module)."""
    room = min(DIGEST_MAX_CHARS, keep_chars // 2)
    return (
        keep_chars + len("[...  characters cut ...]") + 8 + len(note) + max(0, names_chars - room)
    )


def _shorten(
    text: str,
    keep_chars: int,
    keep: Keep,
    note: str,
    names_chars: int,
    keep_lines: frozenset[int] = frozenset(),
) -> str:
    text = _valid_unicode(text)
    lines = text.split("\n")
    if len(text) > _WINDOW_CHARS:
        lines = _window(lines)
    kind = classify(text, lines)
    if kind == "prose" and _MARKER.fullmatch(lines[0]) and len(lines) > 1:
        kind = "shortened"  # shaped before (its marker first): its lines, under one marker
    earlier = _Earlier.of(lines, note) if kind != "prose" else None
    if earlier is not None and names_chars and earlier.chars > 0:
        # shortened before: what the earlier cuts removed counts as removed by this one
        names_chars = max(names_chars, names_room(len(text) + earlier.chars - keep_chars))
    budget = _budget(keep_chars, note, names_chars)
    plain = _budget(keep_chars, note, 0)
    ranked = None if earlier is None else _ranked(kind, text, earlier.lines, budget, keep_lines)
    if ranked is None or earlier is None:
        return cut_text(text, keep_chars, keep, note=note, names_chars=names_chars)
    floor = keep_chars - min(DIGEST_MAX_CHARS, keep_chars // 2)
    shaped = _fit(text, ranked, (plain, budget), floor, earlier, names_chars)
    if shaped is None or len(shaped) >= len(text):
        return cut_text(text, keep_chars, keep, note=note, names_chars=names_chars)
    return shaped


def _window(lines: list[str]) -> list[str]:
    """``lines`` of a huge text: its first and last lines (``_HEAD_CHARS`` and
    ``_TAIL_CHARS`` of them) and one gap line counting those between."""
    head = tail = 0
    size = 0
    while head < len(lines) and size < _HEAD_CHARS:
        size += len(lines[head]) + 1
        head += 1
    size = 0
    while tail < len(lines) - head and size < _TAIL_CHARS:
        size += len(lines[-1 - tail]) + 1
        tail += 1
    middle = len(lines) - head - tail
    if middle <= 0:
        return lines
    return [*lines[:head], GAP.format(middle), *lines[len(lines) - tail :]]


def _ranked(
    kind: str, text: str, lines: list[str], budget: int, keep_lines: frozenset[int] = frozenset()
) -> list[Ranked] | None:
    """The rankings to try, most detail first, or ``None`` for a plain cut."""
    if kind == "json":
        return [_json.rank(_json.parse(text), budget)]
    if kind == "diff":
        return [_diff.rank(lines)]
    if kind == "diagnostics":
        return [_diagnostics.rank(lines)]
    if kind == "listing":
        return list(_listing.rank(lines))
    if kind == "code":
        return [_code.rank(lines, keep_lines)]
    if kind == "log":
        return [_logs.rank(lines)]
    if kind == "shortened":
        out = Ranked()
        for i, line in enumerate(lines):
            out.add(line, 1, ends_first(i, len(lines)))
        return [out]
    return None


#: The recall call of a marker (see ``_stores._commit``): where its names field ends.
_RECALL_NOTE = re.compile(
    r"; ((?:full text|saved as sent \(already shortened\)): call \w+\(id='[0-9a-f]{32}'\))"
)


@dataclass
class _Earlier:
    """What a text shortened before holds of its cuts: its lines less the markers (each on
    its own line, read as ``cut_text`` reads an earlier cut's marker), the characters they
    stood for beyond their length, the names they gave, and the note the new marker gives
    (the caller's: a recall call is known by the store, never by a marker's text)."""

    lines: list[str]
    chars: int = 0
    names: list[Name] = field(default_factory=list)
    extra: int = 0
    note: str = ""

    @classmethod
    def of(cls, lines: list[str], note: str) -> _Earlier:
        """``lines`` read for earlier markers (see the class)."""
        out = cls(lines, note=note)
        if not any(line.startswith("[... ") for line in lines):
            return out
        out.lines = []
        for line in lines:
            m = _MARKER.fullmatch(line) if line.startswith("[... ") else None
            if m is None:
                out.lines.append(line)
                continue
            out.chars += int(m[1]) - len(line) - 1
            inner = line[len(f"[... {m[1]} characters cut") : -len(" ...]")]
            # a recall call is never carried from the text: the caller's note holds the
            # ones known to be ours (by the store, see ``_stores._commit.shortened_source``)
            cut = _RECALL_NOTE.search(inner)
            names = inner[: cut.start()] if cut else inner
            if names.startswith("; names: "):
                for label in names[len("; names: ") :].split(", "):
                    more = _MORE.fullmatch(label)
                    if more:
                        out.extra += int(more[1])
                    elif label:
                        out.names.append((label, 0, (label,), False))
        return out


_MORE = re.compile(r"\+(\d+) more")


def _fit(
    text: str,
    tries: list[Ranked],
    budgets: tuple[int, int],
    floor: int,
    earlier: _Earlier,
    names_chars: int,
) -> str | None:
    """The first ranking of ``tries`` whose must-keep lines all fit (else the first),
    rendered under one marker; ``None`` when nothing fits. ``budgets``: what a plain cut of
    the call may take without names past a digest's room, and with them: the larger
    holds only the must-keep lines and the names (what a cut removing much may add for its
    names; the rest of the text never grows by it).

    The names of the lines that went share the budget as a plain cut's do: the kept lines
    first take all but a little, and when the names need more, the lines give way down to
    ``floor`` characters (what a plain cut's kept text keeps at the least)."""
    plain, budget = budgets
    note = earlier.note
    skeleton = len("[... 0000000 characters cut; names:  ...]\n") + (len(note) + 2 if note else 0)
    names_cap = max(names_chars, DIGEST_MAX_CHARS)
    # the names an earlier marker gave keep their room (a text shortened again names what
    # the first cut named); else a little is kept for names
    held = sum(len(n[0]) + 2 for n in earlier.names)
    reserve = max(min(DIGEST_MAX_CHARS // 2, plain // 5), min(names_cap, held))
    room, must_room = plain - skeleton - reserve, budget - skeleton - reserve
    if room <= 0:
        return None
    body, removed, whole = _select(tries, room, must_room)
    if not removed.strip() and len(body) >= len(text):
        return None
    names, extra = _names(removed, body, earlier)
    found = join_names(names, extra, min(names_cap, max(0, budget - skeleton - len(body))))
    wanted = join_names(names, extra, names_cap)
    if whole and len(wanted) > len(found) and must_room > floor:
        # every must-keep line stayed and the names need more: the other lines give way
        must_room = max(floor, budget - skeleton - len(wanted))
        room = min(room, must_room)
        body, removed, _ = _select(tries, room, must_room)
        names, extra = _names(removed, body, earlier)
        found = join_names(names, extra, min(names_cap, max(0, budget - skeleton - len(body))))
    if len(found) < 24:
        found = ""
    count = max(0, len(text) - len(body) + max(0, earlier.chars))
    parts = [f"{count} characters cut"]
    if found:
        parts.append(f"names: {found}")
    if note:
        parts.append(note)
    return f"[... {'; '.join(parts)} ...]\n{body}"


def _select(tries: list[Ranked], room: int, must_room: int) -> tuple[str, str, bool]:
    """The kept lines of the first ranking of ``tries`` whose must-keep lines all fit
    (else the first: the most detail), joined, the lines that went, joined (see :func:`select`), and
    whether every must-keep line stayed."""
    chosen: tuple[list[str], bytearray, Ranked] | None = None
    whole = False
    share = 1.0  # of the must-keep lines the first ranking keeps
    for ranked in tries:
        lines, kept = select(ranked, room, must_room)
        must = [k for k, r in zip(kept, ranked.ranks, strict=True) if r == MUST]
        whole = all(must)
        if chosen is None:
            chosen = (lines, kept, ranked)
            share = sum(must) / len(must) if must else 1.0
        elif whole and share < 1 / 3:
            # a later, coarser ranking (paths folded) only when it keeps every must-keep line
            # and the first keeps under a third of them: a path kept whole is worth more
            chosen = (lines, kept, ranked)
        if whole:
            break
    assert chosen is not None
    lines, kept, ranked = chosen
    # what went: the lines left out, and the kept lines shown clipped (whole: a name the
    # clip cut in two is named, one the kept part shows is not; a break test found a
    # 142-character path cut at a kept log line's 200th character, named nowhere)
    removed = "\n".join(
        t
        for t, k, r in zip(ranked.texts, kept, ranked.ranks, strict=True)
        if not k or len(t) > clip_limit(r)
    )
    return "\n".join(lines), removed, whole


def _names(removed: str, body: str, earlier: _Earlier) -> tuple[list[Name], int]:
    """The names of ``removed`` that ``body`` does not show, an earlier marker's first."""
    names, extra = names_in(removed, body)
    if earlier.names or earlier.extra:
        shown = shown_by(body)
        names = [n for n in earlier.names if not shown(n)] + names
        extra += earlier.extra
    return names, extra
