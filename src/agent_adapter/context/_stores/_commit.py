"""Saves staged during one compression, written only for what the returned list references.

``ShrinkToolResults`` stages each full text with :func:`stage_save` (no I/O but the store's
id key, read once per store): its id is :func:`derive_id` of the owner scope, the tool call
id and the text, keyed with the store's secret, so the same input gives the same output.
``RemoveOldMessages``, ``Summarize`` and ``KeepMostRelevant`` stage each span they take out
with :func:`stage_span` (its sealed transcript, see :mod:`._span`), ``SummarizeLongMessage``
each text it summarizes with :func:`stage_save`; their note or summary names the id. The
engine calls :func:`open_saves` when a compression starts and :func:`commit_saves` on its
final list, which writes the staged texts whose recall call (``recall_context(id=...)``)
that list still holds, one transaction per store. A text whose note a later step dropped
(or cut past its recall call) is never written. A span holds what the caller gave: a
message of the span that names a text staged in the same compression (a note, a shortened
result) stands in it for what that text replaced.

What is saved is always the caller's text (issue 32): a step that keeps no copy
(``CutLongMessages``, ``if_still_too_long="cut"``, ``SummarizeLongMessage`` without a store)
may shorten a message before a saving step offloads it, so every saving step reads the
caller's message off the step context (:func:`original_text`, see
:meth:`~agent_adapter.context._steps._base.StepContext.original_of`) and saves that; a span
holds each of its messages as the caller gave it. A text that arrived already shortened (a
cut marker or a ``SummarizeLongMessage`` header of ours in it, from an earlier call whose
original is not in the request) is saved as it came, and its note says so (``saved as sent
(already shortened)``), never "full text".

A result that is already a shortened one of ours (:func:`shortened_source`: its marker
names a recall id staged in this compression or held by the step's store for the owner) is
never saved again: one staged in this compression (the first of the two passes) is cut anew
from its staged original under the same id; one from an earlier compression keeps the id it
names, which leads to the original. A marker whose ids no store holds is the tool's own
text (a log of an earlier session printed again): saved and cut like any other.

When a store fails, ``on_step_error="raise"`` raises its error (nothing of that store was
written); ``"skip"`` records a :class:`StepFailure`, and every result whose text could not
be saved comes back as it was before the step cut it (the caller's own message object when
the compression changed nothing else in it), and every note or summary whose span could
not be saved gives way to the span's messages again: nothing is removed without its copy,
and no message names an id that was not written.

Under :func:`compress_for_sync` (which marks its task with :func:`use_sync_face`) the
stores' sync methods run instead of the async ones: that call's event loop is its own, and
an async client that belongs to another loop could not serve it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agent_adapter._messages import Message
from agent_adapter.context._report import StepFailure
from agent_adapter.context._stores._base import (
    StoreEntry,
    ToolResultStore,
    derive_id,
)
from agent_adapter.context._stores._keys import store_id_key, sync_face, use_sync_face
from agent_adapter.context._stores._span import (
    RECALL_TOOL_NAME,
    encode_span,
    encode_transcript,
    read_saved,
)

if TYPE_CHECKING:
    from agent_adapter.context._steps._base import StepContext

__all__ = [
    "commit_saves",
    "is_shortened",
    "open_saves",
    "original_text",
    "saved_transcript",
    "shortened_source",
    "stage_original",
    "stage_save",
    "stage_span",
    "stage_text",
    "use_sync_face",
]

_ATTR = "_agent_adapter_staged_saves"
#: The recall call a note holds; a staged text is referenced while the list still holds it
#: (a literal scan: ~20x faster than looking for any 32-hex-digit run).
_RECALL_CALL = re.compile(re.escape(RECALL_TOOL_NAME) + r"\(id='([0-9a-f]{32})'\)")
#: A shortening marker of ours that names a recall id (the note is the marker's last field;
#: see :func:`~agent_adapter.context._text.cut_text`), on its own line.
_OUR_MARKER = re.compile(
    r"\[\.\.\. \d+ characters cut(?:(?! \.\.\.\])[^\n])*?; "
    r"(full text|saved as sent \(already shortened\)): call "
    + re.escape(RECALL_TOOL_NAME)
    + r"\(id='([0-9a-f]{32})'\) \.\.\.\]"
)
#: What the library leaves in a text it shortened: a cut's marker (``CutLongMessages``,
#: ``if_still_too_long="cut"``, ``ShrinkToolResults``; see
#: :func:`~agent_adapter.context._text.cut_text`), or the first line of a
#: ``SummarizeLongMessage`` summary. A text that arrives holding one was shortened before
#: this compression: its original is not here, and what is saved of it is said to be so.
_SHORTENED = re.compile(
    r"\[\.\.\. \d+ characters cut[^\n]*? \.\.\.\]|\A\s*\[Summary of a \d+-character text"
)


class _Saving(Protocol):
    """What stage_save reads off the step: its name, store and expiry."""

    @property
    def name(self) -> str:
        """The step's name, for a StepFailure."""
        ...

    save_to: Any
    save_for_seconds: float | None


@dataclass(frozen=True, slots=True)
class _Staged:
    """One staged save: ``span`` holds the messages a note or summary replaced (they come
    back if the store fails); ``before`` the text a summarized message had (``None``: the
    entry's text, as for a tool result)."""

    store: ToolResultStore
    entry: StoreEntry
    note: str
    step: str
    span: tuple[Message, ...] | None = None
    before: str | None = None


@dataclass(slots=True)
class _Pending:
    staged: dict[str, _Staged] = field(default_factory=dict)
    #: each store's id key, read once per compression (a shared store reads it from the
    #: server every time: that is how workers find out it was lost or replaced)
    keys: dict[int, bytes] = field(default_factory=dict)


def _root(context: Any) -> Any:
    """The compression's own context (a pass's or the last resort's context wraps it)."""
    while (parent := getattr(context, "_parent", None)) is not None:
        context = parent
    return context


def open_saves(context: StepContext) -> None:
    """Start staging saves for the compression ``context`` belongs to."""
    setattr(_root(context), _ATTR, _Pending())


async def _key(context: StepContext, store: ToolResultStore) -> bytes:
    """``store``'s id key: read once per compression (see :class:`_Pending`)."""
    pending: _Pending | None = getattr(_root(context), _ATTR, None)
    if pending is None:
        return await store_id_key(store)
    key = pending.keys.get(id(store))
    if key is None:
        key = pending.keys[id(store)] = await store_id_key(store)
    return key


def is_shortened(text: str) -> bool:
    """True when ``text`` holds what the library leaves in a text it shortened (a cut's
    marker, a ``SummarizeLongMessage`` header): a copy of it is no full text."""
    return ("characters cut" in text or "[Summary of a " in text) and bool(_SHORTENED.search(text))


def original_text(context: StepContext, message: Message) -> str:
    """The text a saving step saves for ``message``: the caller's, as the compression got it
    (see :meth:`~agent_adapter.context._steps._base.StepContext.original_of`), even when an
    earlier step (``CutLongMessages``, ``if_still_too_long="cut"``, ``SummarizeLongMessage``
    without a store) shortened it since; ``message``'s own text when that is unknown."""
    original = context.original_of(message)
    return message.text if original is None else original.text


def _note(id_: str, as_sent: bool = False) -> str:
    """The recall note of a saved text; ``as_sent``: the text was shortened before the
    compression got it, and the note says that the copy holds it so, not the full text."""
    held = "saved as sent (already shortened)" if as_sent else "full text"
    return f"{held}: call {RECALL_TOOL_NAME}(id={id_!r})"


async def stage_save(
    context: StepContext,
    step: _Saving,
    scope: str,
    text: str,
    *,
    call_id: str = "",
    before: str | None = None,
) -> str:
    """The recall note for ``text`` (the result of tool call ``call_id``) saved by ``step``
    under ``scope``: staged until the compression commits; written at once when the step
    runs outside a compression (a direct ``apply``). ``""`` (no recall) for a text over the
    store's ``max_text_chars``. The id is the same for the same store, scope, call id and
    text. ``before``: the whole text of the message when ``text`` is a part of it (a
    ``<reference>`` block), what it gets back if the store fails.

    Raises:
        StoreError: the store's id key could not be read, or written at once and the store
            failed.
    """
    return (await _stage(context, step, scope, text, call_id, None, before))[1]


async def stage_original(
    context: StepContext, step: _Saving, scope: str, message: Message
) -> tuple[str, str]:
    """``message``'s caller's text (:func:`original_text`) saved by ``step`` as
    :func:`stage_save` saves a tool result: that text and its recall note (``""``: none).
    The one way a step that shortens or replaces a whole message saves what it takes."""
    source = original_text(context, message)
    note = await stage_save(
        context,
        step,
        scope,
        source,
        call_id=message.tool_call_id or "",
        before=message.text if source != message.text else None,
    )
    return source, note


async def stage_text(
    context: StepContext, step: _Saving, scope: str, text: str, *, before: str | None = None
) -> str:
    """The id of ``text`` (a message's text that ``step`` summarizes) staged as
    :func:`stage_save` stages it, or ``""`` (over the store's ``max_text_chars``); the
    summary must name it with :func:`~._span.saved_phrase`. ``before``: see
    :func:`stage_save`.

    Raises:
        StoreError: as for :func:`stage_save`.
    """
    return (await _stage(context, step, scope, text, "", None, before))[0]


async def stage_span(
    context: StepContext, step: _Saving, scope: str, messages: Sequence[Message]
) -> str:
    """The id of the span ``messages`` saved by ``step`` under ``scope`` (its sealed
    transcript, see :mod:`._span`), staged as :func:`stage_save` stages a text; ``""`` (no
    recall) for a span over the store's ``max_text_chars``. Each message is saved as the
    caller gave it (not as an earlier step cut it); a note or summary added in this
    compression stands for the span it replaced. The note or summary
    that replaces the span must name the id with :func:`saved_phrase` for it to be written.

    Raises:
        StoreError: the store's id key could not be read, or written at once and the store
            failed.
    """
    span = tuple(_expanded(context, messages))
    key = await _key(context, step.save_to)
    return (await _stage(context, step, scope, encode_span(key, span), "", span, None))[0]


async def _stage(
    context: StepContext,
    step: _Saving,
    scope: str,
    text: str,
    call_id: str,
    span: tuple[Message, ...] | None,
    before: str | None,
) -> tuple[str, str]:
    """``(id, recall note)`` of ``text`` staged (``("", "")`` when over the store's limit)."""
    store: ToolResultStore = step.save_to
    limit = getattr(store, "max_text_chars", None)
    if isinstance(limit, int) and len(text) > limit:
        return "", ""
    key = await _key(context, store)
    entry = StoreEntry(scope, derive_id(key, scope, call_id, text), text, step.save_for_seconds)
    note = _note(entry.id, span is None and is_shortened(text))
    pending: _Pending | None = getattr(_root(context), _ATTR, None)
    if pending is None:
        await store.save_many([entry])
    else:
        pending.staged[entry.id] = _Staged(store, entry, note, step.name, span, before)
    return entry.id, note


def _expanded(context: StepContext, messages: Sequence[Message]) -> list[Message]:
    """``messages`` as the caller gave them: each one the compression got (or a step changed
    since) as the caller's message (see ``StepContext.original_of``); any other that names a
    text staged in this compression by what it stands for: a note or summary by its span, a
    shortened or summarized message by its text before."""
    pending: _Pending | None = getattr(_root(context), _ATTR, None)
    staged = pending.staged if pending is not None else {}
    out: list[Message] = []
    for m in messages:
        original = context.original_of(m)
        if original is not None:  # the caller's message, as it was before any step changed it
            out.append(original)
            continue
        text = m.text
        hit = None
        if text and RECALL_TOOL_NAME in text:
            hit = next((staged[i] for i in _RECALL_CALL.findall(text) if i in staged), None)
        if hit is None:
            out.append(m)
        elif hit.span is not None:
            out.extend(hit.span)
        else:
            out.append(m.with_text(hit.before if hit.before is not None else hit.entry.text))
    return out


async def shortened_source(
    context: StepContext, text: str, store: ToolResultStore | None, scope: str
) -> tuple[str, tuple[str, ...]] | None:
    """For ``text`` that is already a shortened result of ours (a marker names a recall id
    that is ours): ``(what to cut, the notes the new cut keeps)``, else ``None``. Known by
    the id alone, never by likeness, and never by the marker's text: an id staged in this
    compression gives its staged original and note (the cut is made anew from the whole
    text, under the same id); ids ``store`` holds under ``scope`` (saved by an earlier
    compression) give ``text`` itself and their notes (the original is there, not here). A
    marker whose ids the store does not hold (a tool that printed a log of an earlier
    session, an expired save) or with no store to read them from is the tool's text like
    any other: it is saved and cut as such.

    Raises:
        StoreError: the store failed to answer (the step's failure: nothing is cut).
    """
    if RECALL_TOOL_NAME not in text:
        return None
    found: dict[str, bool] = {}  # id -> its note says the copy is as sent
    for held, i in _OUR_MARKER.findall(text):
        found.setdefault(i, held != "full text")
    ids = list(found)
    if not ids:
        return None
    pending: _Pending | None = getattr(_root(context), _ATTR, None)
    if pending is not None:
        for i in ids:
            if (s := pending.staged.get(i)) is not None:
                return s.entry.text, (s.note,)
    if store is None:
        return None
    held = [i for i in ids if await _holds(store, scope, i)]
    return (text, tuple(_note(i, found[i]) for i in held)) if held else None


async def saved_transcript(
    context: StepContext, store: ToolResultStore, scope: str, id_: str
) -> str | None:
    """The transcript of the span saved as ``id_`` (staged in this compression, else held
    by ``store`` under ``scope``), or ``None`` (unknown, expired, not a span of ours).

    Raises:
        StoreError: the store failed to answer.
    """
    pending: _Pending | None = getattr(_root(context), _ATTR, None)
    if pending is not None and (s := pending.staged.get(id_)) is not None:
        return None if s.span is None else encode_transcript(s.span)
    text = store.load_sync(scope, id_) if sync_face() else await store.load(scope, id_)
    if text is None:
        return None
    saved = read_saved(await _key(context, store), text)
    return saved.transcript if saved.span else None


async def _holds(store: ToolResultStore, scope: str, id: str) -> bool:
    if sync_face():
        return store.load_sync(scope, id) is not None
    return await store.load(scope, id) is not None


class _ErrorPolicy(Protocol):
    """What :func:`commit_saves` reads of the ``CompressionPolicy`` (the policy's module
    imports the default steps, which import this one)."""

    @property
    def on_step_error(self) -> Literal["raise", "skip"]: ...


async def commit_saves(
    context: StepContext,
    original: Sequence[Message],
    current: list[Message],
    total: int,
    policy: _ErrorPolicy,
    failures: list[StepFailure],
) -> tuple[list[Message], int]:
    """Write the staged texts ``current`` references; ``current`` and its token total, with
    the results whose text a failed store could not keep back as they were (see the module
    doc).

    Raises:
        Exception: a store's error, with ``on_step_error="raise"``.
    """
    root = _root(context)
    pending: _Pending | None = getattr(root, _ATTR, None)
    if pending is None:
        return current, total
    delattr(root, _ATTR)
    if not pending.staged:
        return current, total
    kept = {id(m) for m in original}  # an input message's ids were saved before
    named: set[str] = set()
    for m in current:
        if id(m) not in kept and (text := m.text):
            named.update(i for i in _RECALL_CALL.findall(text) if i in pending.staged)
    groups: dict[int, list[_Staged]] = {}
    for i in named:
        s = pending.staged[i]
        groups.setdefault(id(s.store), []).append(s)
    sync = sync_face()
    lost: list[_Staged] = []
    for group in groups.values():
        store = group[0].store
        entries = [s.entry for s in group]
        try:
            if sync:
                store.save_many_sync(entries)
            else:
                await store.save_many(entries)
        except Exception as exc:  # an outage never kills the run in "skip"
            if policy.on_step_error == "raise":
                raise
            failures.append(StepFailure(group[0].step, type(exc).__name__))
            lost.extend(group)
    if not lost:
        return current, total
    out = _restored(original, current, {s.entry.id: s for s in lost})
    if not _in_order(original, out):
        # a run from after the current turn's thinking opener had its note before it: back in
        # the note's place it would move; the caller's list as it was is the one safe answer
        out = list(original)
    return out, context.tokens(out)


def _in_order(original: Sequence[Message], out: Sequence[Message]) -> bool:
    """True when the caller's messages in ``out`` keep the order they had in ``original``."""
    where = {id(m): n for n, m in enumerate(original)}
    at = [where[id(m)] for m in out if id(m) in where]
    return all(a < b for a, b in itertools.pairwise(at))


def _restored(
    original: Sequence[Message], current: list[Message], lost: dict[str, _Staged]
) -> list[Message]:
    """``current`` with each message that names an id of ``lost`` back as it was: a note or
    summary gives way to the span it replaced; a cut or summarized text comes back whole,
    as the caller's message (the same object, found by its origin) when that still holds the
    text, else the message with that text."""
    by_origin: dict[int, Message | None] = {}
    for m in original:  # an origin given twice names no one message
        by_origin[m.origin] = None if m.origin in by_origin else m
    kept = {id(m) for m in original}
    out: list[Message] = []
    for m in current:
        ids = [] if id(m) in kept or not m.text else _RECALL_CALL.findall(m.text)
        hit = next((lost[i] for i in ids if i in lost), None)
        if hit is None:
            out.append(m)
            continue
        if hit.span is not None:
            out.extend(hit.span)
            continue
        text = hit.before if hit.before is not None else hit.entry.text
        before = by_origin.get(m.origin)
        if before is not None and before.text == text:
            out.append(before)
        else:
            out.append(m.with_text(text))
    return out
