"""RemoveOldMessages: drop the oldest middle of the conversation, leaving one note a run."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._run import owner_scope
from agent_adapter.context._lru import Memo
from agent_adapter.context._own import (
    NAMES_INTRO,
    note_count,
    own_text,
    sign,
    summary_count,
)
from agent_adapter.context._steps._base import (
    BaseCompressionStep,
    StepContext,
    first_non_system,
    last_non_system,
    spans_of,
)
from agent_adapter.context._steps._drop_note import (
    _MORE,
    _NOTES,
    _name_lines,
    _note,
    _plain,
    _remembered_note,
    _Scans,
    _text,
    names_room_tokens,
)
from agent_adapter.context._steps._extractive import extract_summary
from agent_adapter.context._steps._summary_text import render
from agent_adapter.context._stores._base import check_save_to
from agent_adapter.context._stores._commit import saved_transcript, stage_span
from agent_adapter.context._stores._span import saved_phrase
from agent_adapter.context._units import Bounds, origins_with

__all__ = ["RemoveOldMessages"]

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
#: The notes of ours in a saved span, by (scope, id): what ``_recovered`` reads back.
_SAVED_NOTES = Memo(entries=256, chars=4_000_000)


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
