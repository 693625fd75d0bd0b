"""DropStaleReads: a file read that a later edit or read of the same file made stale goes first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._run import owner_scope
from agent_adapter.context._digest import _same_file
from agent_adapter.context._lru import with_text
from agent_adapter.context._own import stale_marker, stale_path
from agent_adapter.context._steps._base import BaseCompressionStep, StepContext
from agent_adapter.context._steps._extractive import edits_open_file, file_access
from agent_adapter.context._stores._base import check_save_to
from agent_adapter.context._stores._commit import stage_original

__all__ = ["DropStaleReads", "stale_reads"]


def _base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def stale_reads(messages: Sequence[Message]) -> dict[int, tuple[str, str]]:
    """The tool results of ``messages`` that hold a read of a file which a later call
    supersedes: ``{index: (path, why)}``, ``why`` being ``"edited"`` (a later call changes
    the file: the copy shows what it no longer holds) or ``"read again"`` (a later call reads
    the whole file, or the same part of it, again). Reads and edits are known from the
    calls' arguments (:func:`~agent_adapter.context._steps._extractive.file_access`); two
    spellings of one path (``/testbed/src/a.py``, ``src/a.py``) are one file. Only a later
    *call* supersedes a read: one made in the same assistant message does not (the calls of
    one message run together). SWE-agent's ``edit`` / ``insert`` name no path: they edit
    the file its last ``open`` or ``create`` named."""
    results = {m.tool_call_id: i for i, m in enumerate(messages) if m.role == "tool"}
    # file base name -> the reads seen so far: (path, part, result index)
    open_reads: dict[str, list[tuple[str, str, int]]] = {}
    out: dict[int, tuple[str, str]] = {}
    current = ""  # the file SWE-agent's windowed editor has open
    for m in messages:
        if m.role != "assistant" or not m.tool_calls:
            continue
        accesses = []
        for call in m.tool_calls:
            access = file_access(call)
            if access is None and current and edits_open_file(call):
                access = ("edit", current, "")
            elif access is not None:
                current = access[1]
            accesses.append((call, access))
        for _call, access in accesses:  # supersede what earlier messages read
            if access is None:
                continue
            kind, path, part = access
            for read_path, read_part, at in open_reads.get(_base(path), []):
                if at in out or not _same_file(read_path, path):
                    continue
                if kind == "edit":
                    out[at] = (read_path, "edited")
                elif part == "" or part == read_part:
                    out[at] = (read_path, "read again")
        for call, access in accesses:  # then this message's reads are the newest
            if access is None or access[0] != "read":
                continue
            at = results.get(call.id, -1)
            if at >= 0:
                open_reads.setdefault(_base(access[1]), []).append((access[1], access[2], at))
    return out


@dataclass(kw_only=True)
class DropStaleReads(BaseCompressionStep):
    """Replace a file read that a later edit or read of the same file made stale by a
    one-line marker naming the path, oldest first, until under the target.

    A stale read is the costliest kind of old text: it shows a file as it no longer is (a
    later call edited it) or as a later read shows it again, so it goes before anything the
    conversation holds only once (peers do the same: headroom replaces a read made stale by
    a later edit with a short marker). What is a read and what an edit comes from the tool
    calls' arguments, never from a result's text: see :func:`stale_reads`. The result keeps
    its tool call id, name and non-text parts (the tool round stays whole); its text becomes
    the marker, tagged with the library's keyed tag (see
    :func:`~agent_adapter.context._own.stale_marker`; a later call knows it by the tag and
    leaves it), e.g. ``[Stale read of src/a.py: the file was edited later, so this copy of
    it is out of date (4,210 characters left out; full text: call
    recall_context(id='3f2a...')); ref 1a2b3c4d5e6f]``. Protected messages (the recency
    window's turns in the first pass, the newest turn always) are never touched.

    With ``save_to``, the caller's text of the read is saved there (under the run's owner
    scope, for ``save_for_seconds``) and the marker names its recall call, as
    ``ShrinkToolResults`` does; when the store fails, the result comes back as it was.

    Placement (a design choice): a step of its own, not a mode of ``ShrinkToolResults``: it
    runs right after ``RemoveDuplicates`` in the default steps, before any step that shortens
    what is held only once, and a policy can leave it out or move it without touching how old
    results are shortened.

    Args:
        bigger_than_tokens: only reads over this many tokens are replaced (a marker is
            about 40 tokens, 60 with its recall call).
        save_to: a ToolResultStore for the reads replaced, or ``None``.
        save_for_seconds: how long saved texts live, a finite number > 0 (``None``: no
            expiry).

    Raises:
        ConfigError: bigger_than_tokens is not an int >= 0, save_to is not a
            ToolResultStore, or save_for_seconds is out of range.
    """

    name: ClassVar[str] = "drop_stale_reads"
    bigger_than_tokens: int = 100
    save_to: Any = None
    save_for_seconds: float | None = 24 * 3600

    def __post_init__(self) -> None:
        v = self.bigger_than_tokens
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ConfigError(f"DropStaleReads.bigger_than_tokens must be an int >= 0, got {v!r}")
        check_save_to("DropStaleReads", self.save_to, self.save_for_seconds)

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages with stale file reads replaced by markers until under the target."""
        out = list(messages)
        total = context.tokens(out)
        if context.under_target(total):
            return out
        stale = stale_reads(out)
        scope = owner_scope(context.ctx) if self.save_to is not None else ""
        for i in sorted(stale):
            if context.under_target(total):
                break
            m = out[i]
            if context.is_protected(m) or stale_path(m.text) is not None:
                continue
            before = context.message_tokens(m)
            if before <= self.bigger_than_tokens:
                continue
            path, why = stale[i]
            saved = ""
            if self.save_to is not None:
                _, saved = await stage_original(context, self, scope, m)
            marker = with_text(m, stale_marker(path, why, len(m.text), saved))
            after = context.message_tokens(marker)
            if after < before:
                out[i] = marker
                context.mark_shortened(marker)
                total += after - before
        return out
