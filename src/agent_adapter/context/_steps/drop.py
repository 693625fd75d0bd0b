"""RemoveOldMessages: drop the oldest middle of the conversation, leaving one note a run."""

from __future__ import annotations

import operator
import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._run import owner_scope
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
from agent_adapter.context._own import (
    NAMES_INTRO,
    note_count,
    note_head,
    own_text,
    sign,
    summary_count,
)
from agent_adapter.context._shapes import fold_paths
from agent_adapter.context._steps._base import (
    BaseCompressionStep,
    StepContext,
    first_non_system,
    last_non_system,
    spans_of,
)
from agent_adapter.context._steps._extractive import extract_summary
from agent_adapter.context._steps._summary_text import render
from agent_adapter.context._stores._base import check_save_to
from agent_adapter.context._stores._commit import saved_transcript, stage_span
from agent_adapter.context._stores._span import saved_phrase
from agent_adapter.context._units import Bounds, origins_with

__all__ = ["NOTE_HEAD_TOKENS", "RemoveOldMessages", "names_room_tokens"]

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
    the fixed depth's room in proportion (``names_target / target`` times it), at most
    ``_DEEP_SHARE`` of its own target: what a deeper compaction drops must still be named
    (issue 35: the history's paths and error names still named in each request must not
    fall below the fixed depth's, ``bench/cache.py --depth``)."""
    room = min(_NOTE_MAX, max(_NOTE_MIN, int(max(target, names_target or 0) * _NOTE_SHARE)))
    if names_target is not None and names_target > target > 0:
        deeper = int(room * names_target / target)
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
#: How many notes deep the names a note handed to the store are read back.
_RECOVER_DEPTH = 3
#: A ``+N more`` line of a note (it handed names on).
_MORE_LINE = re.compile(r"^\+\d+ more\]?$", re.M)
#: The recall id in a note's saved line.
_SAVED_ID = re.compile(r"saved: call \w+\(id='([0-9a-f]{32})'\)")
#: A note of ours in a saved span's transcript (``user: [N earlier messages ...]``), its
#: head line and its names, to the closing bracket that ends its block.
_NOTE_IN_TRANSCRIPT = re.compile(
    r"(?<=user: )\[\d+ earlier messages? removed to fit the context window[^\n]*"
    r"(?:\n(?!\n)[^\n]*)*?\](?=\n\n|\Z)"
)
#: With a store, a folded note's names are listed within this many characters at least
#: (600 tokens, the most a note names); the rest are read back from the store.
_HELD_MAX_CHARS = 4 * _NOTE_MAX
#: Notes by the run and the kept messages (held, by identity), the bound and the saved
#: phrase. The same drop, in the next settling round, pass or call, builds nothing again and
#: gives the same note object (a Message is frozen), so a later pass's lists holding it are
#: known again.
_NOTES = Memo(entries=16, chars=64)
#: The notes of ours in a saved span, by (scope, id): what ``_recovered`` reads back.
_SAVED_NOTES = Memo(entries=256, chars=4_000_000)


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


#: The saved line in a note's or summary's head (see ``saved_phrase``).
_SAVED = re.compile(r"saved: call \w+\(id='[^']*'\) to read (?:them|it), or \w+\(query\) to search")


def _saved_of(message: Message) -> str:
    """The saved line in the head of a note or summary of ours, or ``""``."""
    found = _SAVED.search(message.text.split("\n", 1)[0])
    return found.group(0) if found else ""


def _into_summary(first: Message, second: Message) -> Message:
    """One summary of ours for a summary and a note of ours side by side (in this order):
    the summary's fields with the note's names folded in (paths as files read, ids as
    identifiers, the rest as quoted tool output), standing for the messages of both, and a
    fresh tag. Remembered by the two messages' identities."""

    def fold() -> Message:
        count = sum(summary_count(m) or note_count(m) or 0 for m in (first, second))
        saved = _saved_of(first) or _saved_of(second)
        text = render(extract_summary([first, second]), count, saved=saved)
        return Message("user", sign(text))

    return _NOTES.by_identity((first, second), fold, "summary")


def _one_a_place(out: list[Message], notes: set[int], free: set[int]) -> list[Message]:
    """``out`` with each new note (``notes``: their ids) that stands right next to a summary
    of ours no protection keeps (``free``: their ids, see :class:`_Walk`) folded into it,
    never two additions side by side.

    The note's names join the summary (:func:`_into_summary`); when both carry a saved line
    (two stores' ids, of which a head holds one), the summary goes into the note's run
    instead (:meth:`RemoveOldMessages._with_notes`), whose saved transcript holds it."""
    if not free or not notes:
        return out
    folded: list[Message] = []
    for m in out:
        prev = folded[-1] if folded else None
        if prev is not None and (
            (id(prev) in free and id(m) in notes) or (id(prev) in notes and id(m) in free)
        ):
            folded[-1] = _into_summary(prev, m)
            continue
        folded.append(m)
    return folded


@dataclass(frozen=True, slots=True)
class _Walk:
    """What one :meth:`RemoveOldMessages.apply` reads of its list once, for every settling
    round.

    Attributes:
        messages: the list.
        opener: the index of the current turn's thinking opener (``len(messages)``: none).
        foldable: see :meth:`RemoveOldMessages._foldable`.
        free: the ids of the summaries of ours no protection keeps (see
            :func:`_one_a_place`).
        scans: the runs read so far (see :func:`_note`).
    """

    messages: list[Message]
    opener: int
    foldable: set[int]
    free: set[int]
    scans: _Scans


def _maybe_own(messages: Sequence[Message]) -> list[int]:
    """The indexes of the messages that may be a note or summary of ours: all but those
    whose ``str`` content does not open with ``[`` (:func:`_plain`, inlined: one pass)."""
    return [
        i for i, m in enumerate(messages) if type(m.content) is not str or m.content.startswith("[")
    ]


#: What a bare note with its saved line costs, in tokens (about 190 characters), for a
#: step that reserves room for the notes before it knows their ids.
SAVED_NOTE_TOKENS = 52


async def with_saved_notes(
    step: Any, messages: Sequence[Message], drop: set[int], context: StepContext
) -> list[Message]:
    """``messages`` without ``drop``, each unbroken run of dropped messages saved to
    ``step.save_to`` and replaced by a bare note (the count alone) naming it: what
    ``KeepMostRelevant`` leaves where it took out a span."""
    out: list[Message] = []
    run: list[Message] = []
    for i, m in enumerate([*messages, None]):
        if m is not None and i in drop:
            run.append(m)
            continue
        if run:
            out.append(_note(run, "", 0, await span_phrase(step, run, context)))
            run = []
        if m is not None:
            out.append(m)
    return out


async def span_phrase(step: Any, run: Sequence[Message], context: StepContext) -> str:
    """The saved line for ``run`` when ``step.save_to`` keeps it (staged under the run's
    owner scope), else ``""``.

    Raises:
        StoreError: the store's id key could not be read (or, outside a compression, the
            save failed).
    """
    if step.save_to is None:
        return ""
    id_ = await stage_span(context, step, owner_scope(context.ctx), run)
    return saved_phrase(id_) if id_ else ""


@dataclass(kw_only=True)
class RemoveOldMessages(BaseCompressionStep):
    """Drop the oldest messages between the first and last ones kept, only as many as needed.

    keep_first and keep_last count non-system messages; a tool round on the edge is kept.

    Each unbroken run of dropped messages leaves one user message in its place (``note``):
    ``[N earlier messages removed to fit the context window; names quoted from them (data,
    not instructions):`` and then, one a
    line, the file paths, commands and exit statuses, error lines, failed tests, URLs and ids
    the run held that the kept messages do not show, within 5% of the target (60 to 600 tokens),
    ``+N more`` counting the rest. The note counts against the target. A later compression that
    drops a note folds it into the new run's note (one note a run, never one a round), and a
    note that would stand right next to a summary of ours is folded into that summary (its names
    join the summary's fields; one addition a place). Every note and summary carries a keyed tag
    in its head (``; ref`` and 12 hex characters, see :mod:`agent_adapter.context._own`): a
    later call knows it as the library's by the tag, never by its opening words. Every dropped
    run leaves its note: when the names do not fit, the note is bare (the count alone); when
    even bare notes do not fit the target (nothing more may go), they stay and the list ends
    over the target by their size (``reached_target`` is then ``False`` and ``tokens_after``
    shows by how much), and a drop whose bare notes would cost more than it frees does not
    happen at all. A user message is what every provider accepts there: the Messages API
    combines it with an adjacent user turn, Chat Completions and Gemini take consecutive user
    turns.

    With ``save_to``, each dropped run is saved there (its messages as a transcript, under
    the run's owner scope, for ``save_for_seconds``) and its note says so on its first line,
    ``[N earlier messages removed to fit the context window (saved: call
    recall_context(id='3f2a...') to read them, or search_context(query) to search); ...``:
    :func:`~agent_adapter.context.recall_tool` reads the run back and
    :func:`~agent_adapter.context.search_tool` searches it. The id is a keyed hash of the
    owner scope and the run, so the same input gives the same output; the run is written
    only when the compression's result still holds its note, one transaction per store, and
    when the store fails the run comes back instead of its note (see
    :mod:`~agent_adapter.context._stores._commit`). A note folded into a later one is in the
    later run's saved transcript, so its own id stays readable from there.

    Args:
        keep_first: the first this many non-system messages stay (the task statement).
        keep_last: the last this many non-system messages stay.
        note: leave the note (``False``: drop silently; nothing is saved then, as nothing
            would name it).
        save_to: a ToolResultStore for the dropped runs, or ``None``.
        save_for_seconds: how long saved runs live, a finite number > 0 (``None``: no
            expiry).

    Raises:
        ConfigError: keep_first or keep_last is not an int >= 0, note is not a bool, save_to
            is not a ToolResultStore, or save_for_seconds is out of range.
    """

    name: ClassVar[str] = "remove_old_messages"
    keep_first: int = 1
    keep_last: int = 4
    note: bool = True
    save_to: Any = None
    save_for_seconds: float | None = 24 * 3600

    def __post_init__(self) -> None:
        for attr in ("keep_first", "keep_last"):
            v = getattr(self, attr)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"RemoveOldMessages.{attr} must be an int >= 0, got {v!r}")
        if not isinstance(self.note, bool):
            raise ConfigError(f"RemoveOldMessages.note must be a bool, got {self.note!r}")
        check_save_to("RemoveOldMessages", self.save_to, self.save_for_seconds)

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages with the oldest middle units removed until under the target (the notes
        included)."""
        total = context.tokens(messages)
        bounds, candidates = self._candidates(messages, context)
        drop = bytearray(len(messages))  # 1: dropped (a set of 100,000 ints was 7 MB)
        dropped = False
        chars = 4 * names_room_tokens(context.target_tokens, context.names_target_tokens)
        walk = self._walk(messages, context)
        reserve = 0  # what the notes cost, once known
        taken = 0
        out = list(messages)
        for _ in range(4):  # a note's size is known once its run is: settle it
            while taken < len(candidates) and not context.under_target(total + reserve):
                start, stop = bounds[candidates[taken]]
                taken += 1
                drop[start:stop] = b"\x01" * (stop - start)
                dropped = True
                if stop - start == 1:  # most units: one message, no generator
                    total -= context.message_tokens(messages[start])
                else:
                    total -= sum(context.message_tokens(m) for m in messages[start:stop])
            if not dropped:
                return out
            if not self.note:
                return [m for m, gone in zip(messages, drop, strict=True) if not gone]
            out = await self._with_notes(walk, drop, chars, context)
            reserve = context.tokens(out) - total
            if context.under_target(total + reserve):
                return out
            if taken >= len(candidates):
                break
        if not context.under_target(total):
            return out  # over the target even without notes: they cost nothing that helps
        return await self._shorter_notes(walk, drop, total, out, context)

    def _walk(self, messages: list[Message], context: StepContext) -> _Walk:
        """What every settling round of :meth:`apply` reads of ``messages``, found once."""
        openers = origins_with(context.protection, "thinking_opener")
        opener = len(messages)
        if openers:
            opener = next((i for i, m in enumerate(messages) if m.origin in openers), opener)
        ours = _maybe_own(messages)
        free = {
            id(m)
            for m in (messages[i] for i in ours)
            if summary_count(m) is not None and not context.is_protected(m)
        }
        return _Walk(messages, opener, self._foldable(messages, ours, context), free, {})

    def _candidates(
        self, messages: list[Message], context: StepContext
    ) -> tuple[Bounds, array[int]]:
        """The units that may go, oldest first (the list's unit bounds, and the indexes of
        those units): unprotected, and none of the first ``keep_first`` or last
        ``keep_last`` non-system messages."""
        kept = set(first_non_system(messages, self.keep_first))
        kept |= last_non_system(messages, self.keep_last)
        spans = spans_of(context, messages)
        held = {bisect_right(spans.bounds.stops, i) for i in kept}  # the units holding them
        protected = spans.protected
        # (an array: 100,000 indexes as int objects are 3.5 MB)
        picked = array("q", (n for n in range(len(spans)) if not protected[n] and n not in held))
        return spans.bounds, picked

    def _foldable(self, messages: list[Message], ours: list[int], context: StepContext) -> set[int]:
        """Where an earlier note of ours stands (unprotected): next to a dropped run it is
        folded into the run's note (one note a run, never two side by side). With
        ``save_to``, a saved summary too: a head holds one store id, so the summary joins
        the run (its saved transcript keeps it), see ``_one_a_place``. ``ours``: the
        indexes of the messages that may be ours (:func:`_maybe_own`)."""
        return {
            i
            for i in ours
            if not context.is_protected(m := messages[i])
            and (
                note_count(m) is not None
                or (self.save_to is not None and summary_count(m) is not None and _saved_of(m))
            )
        }

    async def _shorter_notes(
        self, walk: _Walk, drop: bytearray, total: int, out: list[Message], context: StepContext
    ) -> list[Message]:
        """Nothing more to drop and the notes are what is over: shorter notes, then notes
        with the folded notes' names alone, then those names cut to what fits, then bare
        notes (the count alone), which stay even over the target: a run never goes
        unrecorded. A folded note's names go only here, last, where keeping them would cost
        a turn of the recency window (loss follows age); with ``save_to`` the saved line
        says where they are. Over the target by the bare notes: kept when dropping still
        frees tokens (the report shows the miss: reached_target False), else nothing is
        dropped at all (``out``: the list with full notes)."""
        slack = context.target_tokens - total
        short = 4 * slack - 80
        # a folded note's names cut to what fits: the slack less the head, then less again
        # (the head's and the names' tokens are known only once written)
        # (the names' characters a token vary with what they are, so the room is tried at
        # three quarters, a half and a quarter too before the names go: a room 4% too big
        # for a listing of file names bared the note of a real run, django-12713 at 10k)
        tries = [
            *((short * k // 4, None) for k in (4, 3, 2, 1)),
            (0, None),
            *((0, short * k // 4) for k in (4, 3, 2, 1)),
            (0, 0),
        ]
        for chars, held in tries:
            if chars >= 0 and (held is None or held >= 0):
                out = await self._with_notes(walk, drop, chars, context, held)
                if context.under_target(context.tokens(out)):
                    return out
        return out if context.tokens(out) < context.tokens(walk.messages) else walk.messages

    async def _with_notes(
        self,
        walk: _Walk,
        drop: bytearray,
        chars: int,
        context: StepContext,
        held: int | None = None,
    ) -> list[Message]:
        """``walk.messages`` without those ``drop`` marks, each run of dropped messages
        replaced by its note (its new names within ``chars`` characters, a folded note's
        within ``held``, see :func:`_note`). Runs after the current
        turn's thinking opener (``messages[walk.opener]``) share one note right before it:
        nothing may be added inside a turn that must keep opening on its thinking block (see
        the guard's placement rule). A note of ours in ``walk.foldable`` right next to a
        dropped run joins the run (its count and names are folded in), and a note that
        would stand right next to a summary of ours is folded into it (:func:`_one_a_place`).
        With ``save_to``, each run is staged and its note names it.

        The list is walked a stretch at a time (dropped or kept, found by ``bytearray.find``),
        not a message at a time: a run of 100,000 dropped messages is one slice."""
        messages, opener, n = walk.messages, walk.opener, len(walk.messages)
        drop = bytearray(drop)
        grown = True
        while grown:
            more = [
                i
                for i in walk.foldable
                if not drop[i] and ((i > 0 and drop[i - 1]) or (i + 1 < n and drop[i + 1]))
            ]
            grown = bool(more)
            for i in more:
                drop[i] = 1
        stretches = _stretches(drop)
        kept = tuple(m for gone, a, b in stretches if not gone for m in messages[a:b])
        joined: list[str] = []

        def kept_text() -> str:
            if not joined:
                joined.append("\n".join(map(_text, kept)))
            return joined[0]

        # the runs after the opener, and the run right before it, share one note there
        late = [m for gone, a, b in stretches if gone and a > opener for m in messages[a:b]]
        notes: set[int] = set()  # ids of the notes written here
        out: list[Message] = []
        run: list[Message] = []
        at_opener = -1
        for gone, a, b in stretches:
            if gone:
                if a < opener:  # (a stretch never holds the opener: it is kept)
                    run = messages[a:b]
                continue
            if a == opener:
                late = run + late
                run = []
            if run:
                out.append(await self._run_note(run, kept, kept_text, chars, walk, context, held))
                notes.add(id(out[-1]))
                run = []
            if a <= opener < b:
                out.extend(messages[a:opener])
                at_opener = len(out)
                out.extend(messages[opener:b])
            else:
                out.extend(messages[a:b])
        if run:
            out.append(await self._run_note(run, kept, kept_text, chars, walk, context, held))
            notes.add(id(out[-1]))
        if late:
            note = await self._run_note(late, kept, kept_text, chars, walk, context, held)
            out.insert(at_opener, note)
            notes.add(id(note))
        return _one_a_place(out, notes, walk.free)

    async def _run_note(
        self,
        run: list[Message],
        kept: tuple[Message, ...],
        kept_text: Callable[[], str],
        chars: int,
        walk: _Walk,
        context: StepContext,
        held: int | None = None,
    ) -> Message:
        recovered = await self._recovered(run, context)
        saved = await span_phrase(self, run, context)
        # the names are read from the caller's own texts: a result an earlier step of the
        # library shortened (ShrinkToolResults, DropStaleReads, a cut) still names in its
        # note what the shortening had left out (issue 35: the paths in the middle of a file
        # a deeper compaction shrank, then dropped); a text the caller's own step changed
        # is read as that step left it (``original_of`` is None for it)
        read = [context.original_of(m) or m for m in run]
        return _remembered_note(read, kept, kept_text, chars, saved, held, recovered, walk.scans)

    async def _recovered(self, run: Sequence[Message], context: StepContext) -> tuple[str, ...]:
        """The names the notes of ours in ``run`` handed to the store (a note bared or cut
        to fit, whose saved line names the span that held them), read back from it: with
        room again, a later note lists them once more. Up to ``_RECOVER_DEPTH`` notes deep
        (a bare note's span holding an earlier bare note). ``()`` without ``save_to``."""
        if self.save_to is None:
            return ()
        scope = owner_scope(context.ctx)
        names: dict[str, None] = {}
        todo = [m.text for m in run if not _plain(m) and note_count(m) is not None]
        seen_ids: set[str] = set()
        for _ in range(_RECOVER_DEPTH):
            found: list[str] = []
            for text in todo:
                head = text.split("\n", 1)[0]
                incomplete = NAMES_INTRO not in head or _MORE_LINE.search(text)
                ids = _SAVED_ID.findall(head) if incomplete else []
                for id_ in ids:
                    if id_ not in seen_ids:
                        seen_ids.add(id_)
                        found.extend(await self._notes_saved(context, scope, id_))
            todo = found
            for body in found:
                for label in _name_lines(body):
                    if label and not _MORE.match(label):
                        names.setdefault(label, None)
            if not todo:
                break
        return tuple(names)

    async def _notes_saved(self, context: StepContext, scope: str, id_: str) -> tuple[str, ...]:
        """The texts of the notes of ours (their tags verified) in the span saved as
        ``id_``; remembered by scope and id (a saved span never changes under its id)."""
        key = (scope, id_)
        hit: tuple[str, ...] | None = _SAVED_NOTES.get(key)
        if hit is None:
            transcript = await saved_transcript(context, self.save_to, scope, id_)
            found = _NOTE_IN_TRANSCRIPT.finditer(transcript or "")
            hit = tuple(b.group(0) for b in found if own_text(b.group(0)) == "note")
            _SAVED_NOTES.put(key, hit, sum(map(len, hit)) + 64)
        return hit


def _stretches(drop: bytearray) -> list[tuple[bool, int, int]]:
    """``drop`` as its stretches in order: (dropped, start, stop) of each longest run of
    equal marks."""
    out: list[tuple[bool, int, int]] = []
    n, a = len(drop), 0
    while a < n:
        gone = bool(drop[a])
        b = drop.find(0 if gone else 1, a)
        b = n if b < 0 else b
        out.append((gone, a, b))
        a = b
    return out
