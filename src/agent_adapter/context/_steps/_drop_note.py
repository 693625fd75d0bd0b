"""What a drop note says: the names of the messages ``RemoveOldMessages`` drops, within a
room of names, and the folding of earlier notes into it.

One note stands for each run of dropped messages. Its text is the count of what went (and,
with a store, the line that reads it back), then the names the run held that the kept text
does not show: error and failure lines whole, paths by their whole spelling, folded by
directory when they do not all fit. Where the note stands and which runs get one is the
step's (:mod:`~agent_adapter.context._steps.drop`); what it says is this module's.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_adapter._messages import Message
from agent_adapter.context._digest import (
    Name,
    clip_ends,
    is_path,
    join_names,
    names_in,
    newest_error,
    shown_by,
)
from agent_adapter.context._lru import Memo
from agent_adapter.context._own import NAMES_INTRO, note_count, note_head, sign, summary_count
from agent_adapter.context._shapes import fold_paths

__all__ = ["NOTE_HEAD_TOKENS", "names_room_tokens"]

#: Bounds of a note's names, in tokens: 5% of the target, at least 60, at most 600.
_NOTE_SHARE, _NOTE_MIN, _NOTE_MAX = 0.05, 60, 600
#: A deeper compaction's note may name in up to this share of its target.
_DEEP_SHARE = 0.2
#: What a note's head takes besides its names, in tokens, at most: its count, its tag, the
#: saved line of a store (``saved: call recall_context(id='...') ...``) and the names clause
#: (about 230 characters).
NOTE_HEAD_TOKENS = 80


def names_room_tokens(target: int, names_target: int | None = None) -> int:
    """The room for one note's names, in tokens, under a ``target`` (see ``_NOTE_SHARE``).

    ``names_target``: with a cost-aware depth (``CompressionPolicy(depth="cost")``), the fixed
    depth's target. A compaction deeper than it drops more of the history, so its note gets
    more than the fixed depth's room: ``(names_target / target) ** 1.5`` times it, at most
    ``_DEEP_SHARE`` of its own target. What a deeper compaction drops must still be named
    (issue 35: the history's paths and error names still named in each request must not
    fall below the fixed depth's, ``bench/cache.py --depth``), and the fixed depth keeps
    more of them verbatim besides its note: in proportion alone (the power 1), a Claude
    Code session at 60k named 1.0 point fewer of its paths than the fixed depth; with the
    power 1.5, 1.2 points more at the same cost (0.62x the reference, median)."""
    room = min(_NOTE_MAX, max(_NOTE_MIN, int(max(target, names_target or 0) * _NOTE_SHARE)))
    if names_target is not None and names_target > target > 0:
        deeper = int(room * (names_target / target) ** 1.5)
        room = max(room, min(deeper, int(target * _DEEP_SHARE)))
    return room


#: What is read of each dropped message: its first and last that many characters (a run
#: can hold hundreds; a command and its first lines, the outcome at the end), and of the
#: middle between them only the names (``clip_ends(middle_names=True)``).
_NOTE_SCAN = (2_000, 1_000)
_NO_CLIP = (1 << 62, 0)
#: Distinct names a note's scan collects at most (the rest are counted).
_NOTE_NAMES = 256
_MORE = re.compile(r"\A\+(\d+) more\Z")
#: When a note's names do not all fit, up to one in this many of its characters may go to
#: the left-out paths folded by directory (``src/pkg/{a.py,b.py}``), when that leaves fewer
#: names out than listing whole paths alone.
_FOLD_SHARE = 4

#: With a store, a folded note's names are listed within this many characters at least
#: (600 tokens, the most a note names); the rest are read back from the store.
_HELD_MAX_CHARS = 4 * _NOTE_MAX
#: Notes by the run and the kept messages (held, by identity), the bound and the saved
#: phrase. The same drop, in the next settling round, pass or call, builds nothing again and
#: gives the same note object (a Message is frozen), so a later pass's lists holding it are
#: known again.
_NOTES = Memo(entries=16, chars=64)


def _plain(m: Message) -> bool:
    """True for a message of ``str`` content that does not open with ``[``: no note or
    summary of ours (both heads do), known without their lookups."""
    return type(m.content) is str and not m.content.startswith("[")


def _text(m: Message) -> str:
    """What a message names: its text and its tool calls' names and arguments."""
    if not m.tool_calls:
        return m.text
    calls = "\n".join(f"{c.name} {c.arguments}" for c in m.tool_calls)
    return f"{m.text}\n{calls}" if m.text else calls


def _name_lines(note: str) -> list[str]:
    """The names a note of ours lists, one a line after its head, less the note's closing
    bracket on the last line (and only that one: a name may end with ``]`` itself, as
    ``FAIL: Migration files were created: ['0001_initial.py']`` does; stripping every
    trailing bracket lost it from the folded note, and its error name from the request)."""
    lines = note.split("\n")[1:]
    if lines and lines[-1].endswith("]"):
        lines[-1] = lines[-1][:-1]
    return lines


def _remembered_note(
    run: Sequence[Message],
    kept: tuple[Message, ...],
    kept_text: Callable[[], str],
    max_chars: int,
    saved: str = "",
    held_chars: int | None = None,
    recovered: tuple[str, ...] = (),
    scans: _Scans | None = None,
) -> Message:
    """:func:`_note` of ``run`` against the ``kept`` messages (``kept_text()``: their text,
    joined only when the note is not remembered; ``scans``: see :func:`_note`)."""
    return _NOTES.by_identity(
        (*run, *kept),
        lambda: _note(run, kept_text(), max_chars, saved, held_chars, recovered, scans),
        (len(run), max_chars, saved, held_chars, recovered),
    )


@dataclass(frozen=True, slots=True)
class _Scan:
    """What :func:`_note` has read of a run's first ``len(run)`` messages: the messages they
    stand for, the names of earlier notes folded in (and their ``+N more``), and each other
    message's text clipped to its two ends."""

    run: tuple[Message, ...]
    count: int
    held: tuple[Name, ...]
    held_extra: int
    texts: tuple[str, ...]


#: The run scans of one ``RemoveOldMessages.apply``, by the identity of the run's first
#: message: its settling rounds drop more units after a run's end, so the next round's run
#: starts with the one read before and only its new messages are read.
_Scans = dict[int, _Scan]

_SCAN_WHOLE = sum(_NOTE_SCAN)  # a text this long or shorter is read whole (clip_ends)


def _scan(run: Sequence[Message], scans: _Scans | None) -> _Scan:
    """The :class:`_Scan` of ``run``, from the one in ``scans`` that ``run`` starts with
    (the very same messages), if any."""
    count, held_extra, start = 0, 0, 0
    held: list[Name] = []  # the folded notes' names: never dropped
    texts: list[str] = []
    before = scans.get(id(run[0])) if scans and run else None
    if (
        before is not None
        and len(before.run) <= len(run)
        and all(map(operator.is_, before.run, run))
    ):
        count, held_extra, start = before.count, before.held_extra, len(before.run)
        held, texts = list(before.held), list(before.texts)
    seen = {name[0] for name in held}
    for i in range(start, len(run)):
        m = run[i]
        content = m.content
        if type(content) is str and not m.tool_calls and not content.startswith("["):
            # no note or summary of ours (their heads open with "["), no calls: most of a
            # run, its text read as it is
            count += 1
            texts.append(
                content
                if len(content) <= _SCAN_WHOLE
                else clip_ends(content, *_NOTE_SCAN, middle_names=True)
            )
            continue
        plain = _plain(m)
        folded = None if plain else note_count(m)
        if folded is None:
            # a summary of ours folded in stands for its count; its names are read like text
            count += (None if plain else summary_count(m)) or 1
            texts.append(clip_ends(_text(m), *_NOTE_SCAN, middle_names=True))
            continue
        count += folded
        for label in _name_lines(m.text):
            more = _MORE.match(label)
            if more:
                held_extra += int(more.group(1))
            elif label and label not in seen:
                seen.add(label)
                held.append((label, 1, (label,), False))
    scan = _Scan(tuple(run), count, tuple(held), held_extra, tuple(texts))
    if scans is not None and run:
        scans[id(run[0])] = scan
    return scan


def _note(
    run: Sequence[Message],
    kept: str,
    max_chars: int,
    saved: str = "",
    held_chars: int | None = None,
    recovered: Sequence[str] = (),
    scans: _Scans | None = None,
) -> Message:
    """One user message standing for the dropped ``run``: how many messages went (and, with
    ``saved``, the line that says how to read them back) and the names they held that the
    kept text does not show (see :mod:`agent_adapter.context._digest`). An earlier note in
    the run is folded in: its count is added and its names come first, as they are older.
    The run's messages are read as one text (each clipped to its two ends), in one scan.

    A folded note's names are never dropped (issue 34, item 4: an agent loop folds its
    notes again and again, and a bound on each fold lost the oldest names, a bare note all
    of them): they are all listed, ``max_chars`` bounding only the new names, even in a bare
    note, and even when the kept text shows them (a later step may still cut it). Only
    ``held_chars`` bounds them (the last resort of ``_shorter_notes``, before a turn of the
    recency window goes: loss follows age); with ``saved`` (the store holds the run, the
    folded note in it) they are listed within ``max(max_chars, _HELD_MAX_CHARS)`` at most.
    The names past a bound are counted in ``+N more`` (with ``saved``, the saved line says
    how to read them back). ``recovered``: names a folded note had handed to the store
    (read back from it by :meth:`RemoveOldMessages._recovered`), held like its own. With
    ``scans``, a run that starts with one read before reads only its new messages
    (:func:`_scan`).

    What the run's messages name (issue 34, item 5): its error and failure lines whole, as
    they were printed (``names_in(whole_lines=True)``), the newest of them before every
    other name, and listed even when the folded notes' names fill the room (within
    ``max_chars`` still: a bare note, ``max_chars == 0``, names nothing); its paths by their
    whole spelling (``/testbed/src/a.py`` is listed though the kept text shows ``src/a.py``:
    ``shown_by(exact=True)``). When not all fit, the paths left out are folded by directory
    as a listing's are (:func:`_with_folds`), in up to a quarter of the room when that
    leaves fewer names out, never at the cost of the newest error line."""
    scan = _scan(run, scans)
    count, held_extra, texts = scan.count, scan.held_extra, scan.texts
    held = list(scan.held)
    seen = {name[0] for name in held}
    names: list[Name] = []
    extra = 0
    for label in recovered:
        if label not in seen:
            seen.add(label)
            held.append((label, 1, (label,), False))
    if recovered:
        held_extra = 0  # the names it counted are listed again
    if texts:
        found, more_names = names_in(
            "\n".join(texts), scan=_NO_CLIP, max_names=_NOTE_NAMES, whole_lines=True
        )
        extra += more_names
        names += [name for name in found if name[0] not in seen]
    # a held name is listed even when the kept text shows it: a later step of the same
    # compression may still cut that text
    bound = held_chars
    if saved:  # the store keeps the run: the names past a bound are read back from there
        bound = max(max_chars, _HELD_MAX_CHARS) if bound is None else bound
    hidden = shown_by(kept, exact=True)
    if bound is not None:
        held = [name for name in held if not hidden(name)]  # bounded: shown ones go first
        kept_held: list[Name] = []
        used = 0
        for name in held:
            if used + len(name[0]) + 1 > bound:
                held_extra += 1
                continue
            kept_held.append(name)
            used += len(name[0]) + 1
        held = kept_held
    held_text = "\n".join(name[0] for name in held)
    room = max(0, max_chars - len(held_text) - 1) if held_text else max_chars
    newest = newest_error(names)
    if newest is not None and room < max_chars and not hidden(newest):
        # the newest error line the run dropped is listed even when the folded notes' names
        # fill the room (an agent loop folds a note each call): within max_chars still
        need = len(newest[0]) + len(f"\n+{len(names) + extra + held_extra} more")
        room = max(room, min(max_chars, need))
    listed = _with_folds(
        join_names(names, extra + held_extra, room, sep="\n", hidden=hidden), names, room, hidden
    )
    if _more_of(listed) > 1:  # names left out: a share of the room for folded paths
        share = room - room // _FOLD_SHARE
        folded = join_names(names, extra + held_extra, share, sep="\n", hidden=hidden)
        folded = _with_folds(folded, names, room, hidden)
        keeps = newest is None or (newest[0] in folded.split("\n")) >= (
            newest[0] in listed.split("\n")
        )
        if keeps and _more_of(folded) < _more_of(listed):
            listed = folded  # (never at the cost of the newest error line)
    if not listed and held_text and (names or extra or held_extra):
        listed = f"+{len(names) + extra + held_extra} more"  # none of the new ones fits
    listed = "\n".join(part for part in (held_text, listed) if part)
    head = note_head(count) + (f" ({saved})" if saved else "")
    text = f"{head}; {NAMES_INTRO}\n{listed}]" if listed else f"{head}]"
    return Message("user", sign(text))  # tagged: known as ours on the next call


def _more_of(listed: str) -> int:
    """How many names ``listed`` (joined one a line) counts as left out (its ``+N more``)."""
    more = _MORE.match(listed[listed.rfind("\n") + 1 :])
    return int(more.group(1)) if more else 0


def _with_folds(listed: str, names: list[Name], room: int, hidden: Callable[[Name], bool]) -> str:
    """``listed`` (:func:`join_names` of ``names`` within ``room`` characters, one a line)
    with the paths it left out folded by directory as a listing's are when they do not fit
    (:func:`~agent_adapter.context._shapes.fold_paths`: ``src/pkg/{a.py,b.py}``, their
    common prefix once) in the room that is left, before its ``+N more``, which then counts
    the names still left out. The paths that fitted whole stay whole: a fold is added, never
    put in a whole path's place."""
    if not listed:
        return listed
    lines = listed.split("\n")
    more = _MORE.match(lines[-1])
    if more is None:
        return listed
    body = lines[:-1]
    shown = set(body)
    left = [name for name in names if name[0] not in shown]
    paths = [name[0] for name in left if is_path(name) and not hidden(name)]
    if not paths:
        return listed
    gone = int(more.group(1)) - sum(1 for name in left if hidden(name))
    free = room - len("\n".join(body)) - (1 if body else 0)
    by_dir: dict[str, list[str]] = {}
    for path in paths:
        by_dir.setdefault(path.rpartition("/")[0], []).append(path)
    for group in by_dir.values():
        k = len(group)
        while k:  # a directory's first k paths, the most that fit (the last go first)
            [(text, n)] = fold_paths(group[:k])
            if len(text) + 1 + (len(f"\n+{gone} more") if gone > n else 0) <= free:
                body.append(text)
                free -= len(text) + 1
                gone -= n
                break
            k = min(k - 1, k * free // (len(text) + 1))
    if gone > 0:
        body.append(f"+{gone} more")
    return "\n".join(body)
