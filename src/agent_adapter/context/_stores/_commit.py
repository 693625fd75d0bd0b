"""Saves staged during one compression, written only for what the returned list references.

``ShrinkToolResults`` stages each full text with :func:`stage_save` (a fresh id, no I/O);
the engine calls :func:`open_saves` when a compression starts and :func:`commit_saves` on
its final list, which writes the staged texts whose recall call (``recall_context(id=...)``)
that list still holds, one transaction per store. A text whose shortened result a later
step dropped (or cut past its note) is never written. When a store fails,
``on_step_error="raise"`` raises its error (nothing of that store was written); ``"skip"``
records a :class:`StepFailure` and takes the recall note out of the results it could not
save, so no result names an id that was not written.

Under :func:`compress_for_sync` (which marks its task with :func:`use_sync_face`) the
stores' sync methods run instead of the async ones: that call's event loop is its own, and
an async client that belongs to another loop could not serve it.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agent_adapter._messages import Message
from agent_adapter.context._report import StepFailure
from agent_adapter.context._stores._base import StoreEntry, ToolResultStore, new_id
from agent_adapter.context._stores.recall import RECALL_TOOL_NAME

if TYPE_CHECKING:
    from agent_adapter.context._policy import CompressionPolicy
    from agent_adapter.context._steps._base import StepContext

__all__ = ["commit_saves", "open_saves", "stage_save", "use_sync_face"]

_ATTR = "_agent_adapter_staged_saves"
#: The recall call a note holds; a staged text is referenced while the list still holds it
#: (a literal scan: ~20x faster than looking for any 32-hex-digit run).
_RECALL_CALL = re.compile(re.escape(RECALL_TOOL_NAME) + r"\(id='([0-9a-f]{32})'\)")
_SYNC_FACE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "agent_adapter_store_sync_face", default=False
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
    store: ToolResultStore
    entry: StoreEntry
    note: str
    step: str


@dataclass(slots=True)
class _Pending:
    staged: dict[str, _Staged] = field(default_factory=dict)


def use_sync_face() -> None:
    """Mark the running task: its compressions write through the stores' sync methods."""
    _SYNC_FACE.set(True)


def _root(context: Any) -> Any:
    """The compression's own context (a pass's or the last resort's context wraps it)."""
    while (parent := getattr(context, "_parent", None)) is not None:
        context = parent
    return context


def open_saves(context: StepContext) -> None:
    """Start staging saves for the compression ``context`` belongs to."""
    setattr(_root(context), _ATTR, _Pending())


async def stage_save(context: StepContext, step: _Saving, scope: str, text: str) -> str:
    """The recall note for ``text`` saved by ``step`` under ``scope``: staged until the
    compression commits; written at once when the step runs outside a compression (a direct
    ``apply``). ``""`` (no recall) for a text over the store's ``max_text_chars``.

    Raises:
        StoreError: written at once, and the store failed.
    """
    store: ToolResultStore = step.save_to
    limit = getattr(store, "max_text_chars", None)
    if isinstance(limit, int) and len(text) > limit:
        return ""
    entry = StoreEntry(scope, new_id(), text, step.save_for_seconds)
    note = f"full text: call {RECALL_TOOL_NAME}(id={entry.id!r})"
    pending: _Pending | None = getattr(_root(context), _ATTR, None)
    if pending is None:
        await store.save_many([entry])
    else:
        pending.staged[entry.id] = _Staged(store, entry, note, step.name)
    return note


async def commit_saves(
    context: StepContext,
    original: Sequence[Message],
    current: list[Message],
    total: int,
    policy: CompressionPolicy,
    failures: list[StepFailure],
) -> tuple[list[Message], int]:
    """Write the staged texts ``current`` references; ``current`` and its token total, with
    the notes of texts a failed store could not keep taken out (see the module doc).

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
    kept = {id(m) for m in original}  # an input message names no id staged now
    named: set[str] = set()
    for m in current:
        if id(m) not in kept and (text := m.text):
            named.update(i for i in _RECALL_CALL.findall(text) if i in pending.staged)
    groups: dict[int, list[_Staged]] = {}
    for i in named:
        s = pending.staged[i]
        groups.setdefault(id(s.store), []).append(s)
    sync = _SYNC_FACE.get()
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
    out = [_without_notes(m, lost) if id(m) not in kept else m for m in current]
    return out, context.tokens(out)


def _without_notes(message: Message, lost: Sequence[_Staged]) -> Message:
    """``message`` without the recall notes of ``lost`` (the same object when it has none)."""
    text = message.text
    new = text
    for s in lost:
        if s.entry.id in new:
            new = new.replace(f"; {s.note}", "").replace(s.note, "")
    return message if new == text else message.with_text(new)
