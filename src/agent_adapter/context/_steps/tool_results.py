"""ShrinkToolResults: shorten old big tool results, optionally saving the full text."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._run import owner_scope
from agent_adapter.context._digest import names_room
from agent_adapter.context._lru import with_text
from agent_adapter.context._shapes import shorten_text
from agent_adapter.context._steps._base import BaseCompressionStep, StepContext
from agent_adapter.context._steps._named_lines import NamedLines
from agent_adapter.context._stores._base import ToolResultStore
from agent_adapter.context._stores._commit import shortened_source, stage_original

__all__ = ["ShrinkToolResults"]


@dataclass(kw_only=True)
class ShrinkToolResults(BaseCompressionStep):
    """Shorten tool results over bigger_than_tokens older than older_than_turns, oldest first.

    A turn is one assistant message; the newest older_than_turns turns are left alone. With
    save_to, the full text is saved there for save_for_seconds (None: no expiry), under the
    run's thread or run id, and the note gives an id for recall_tool.

    The shortened result keeps what matters of what it is (see
    :mod:`~agent_adapter.context._shapes`): a test run, traceback, compiler or linter output
    every error and summary line, a listing every path, JSON its structure and keys, code its
    signatures (and, in a numbered read of one file, the lines that the list's tracebacks,
    failed tests, linter findings and diff hunks name in that file, first, with a line of
    context either side when it fits), a diff its file and hunk headers, a log one line a run of
    repeats, each run of lines that went counted in a gap line; prose and texts of no known
    shape keep their head and tail. It keeps ``keep_chars`` characters or more when this one
    result covers all that the target still needs (then only the tokens needed go), and one note
    (on the first line of a shaped result, between head and tail of a cut one): how many
    characters went, the names they held that what stays does not show (paths, the exit status,
    error lines, failed tests, ids), and with save_to the recall call, e.g. ``[... 2611
    characters cut; names: exit 1, src/a.py, TypeError: bad operand; full text: call
    recall_context(id='3f2a...') ...]``. The names count against ``keep_chars`` (see
    :func:`~agent_adapter.context._text.cut_text`) up to half of it; a result cut by much may
    name more, up to a fifth of the characters cut (at most 2,400), which the shortened result
    holds on top (a long listing keeps its file names). Its tool call id, name and non-text
    parts stay. The id is a keyed hash of the owner scope, the tool call id and the text (see
    :func:`~agent_adapter.context._stores._base.derive_id`), so the same input gives the same
    output.

    What is saved is the caller's text: when an earlier step of the same compression
    shortened the result first (``CutLongMessages``, ``SummarizeLongMessage`` without a
    store), the result as the compression got it is saved and cut anew (see
    :meth:`~agent_adapter.context._steps._base.StepContext.original_of`), so the recall
    returns it byte for byte. A result that arrived already shortened (an earlier call cut
    it, and its original is not in the request) is saved as it came, and its note says so:
    ``saved as sent (already shortened): call recall_context(id='...')``, never "full text".

    A result that is already shortened by this step (its marker names a recall id) is never
    saved again, so every id leads to the original in one recall: when its original was
    staged in this compression (the recency window's first pass), it is cut anew from that
    original under the same id; when it was saved by an earlier compression, the shorter cut
    keeps naming that id. When the store fails to save, the results it could not keep come
    back as they were (see :mod:`~agent_adapter.context._stores._commit`).

    Args:
        bigger_than_tokens: only results over this many tokens are shortened.
        older_than_turns: results in the newest this many turns are left alone.
        keep_chars: characters kept: half head, half tail, less what the names take.
        save_to: a ToolResultStore for the full texts, or ``None``.
        save_for_seconds: how long saved texts live, a finite number > 0 (``None``: no
            expiry).

    Raises:
        ConfigError: a number is out of range (save_for_seconds NaN or infinite too), or
            save_to is not a ToolResultStore.
    """

    name: ClassVar[str] = "shrink_tool_results"
    bigger_than_tokens: int = 500
    older_than_turns: int = 2
    keep_chars: int = 400
    save_to: Any = None
    save_for_seconds: float | None = 24 * 3600

    def __post_init__(self) -> None:
        for attr in ("bigger_than_tokens", "older_than_turns", "keep_chars"):
            v = getattr(self, attr)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"ShrinkToolResults.{attr} must be an int >= 0, got {v!r}")
        if self.save_to is not None and not isinstance(self.save_to, ToolResultStore):
            raise ConfigError("ShrinkToolResults.save_to must be a ToolResultStore")
        s = self.save_for_seconds
        if s is not None and (
            isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s) or s <= 0
        ):
            raise ConfigError(
                f"ShrinkToolResults.save_for_seconds must be a finite number > 0 or None, got {s!r}"
            )

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages with old big tool results shortened until under the target."""
        out = list(messages)
        total = context.tokens(out)
        newest_ok = self._old_end(out)
        scope = owner_scope(context.ctx)
        named = NamedLines(messages)
        for i in range(newest_ok):
            if context.under_target(total):
                break
            m = out[i]
            if m.role != "tool" or context.is_protected(m):
                continue
            before = context.message_tokens(m)
            if before <= self.bigger_than_tokens or len(m.text) <= self.keep_chars:
                continue
            short, after = await self._shrunk(m, before, total, context, scope, named.of(m))
            if after < before:
                out[i] = short
                context.mark_shortened(short)
                total += after - before
        return out

    def _old_end(self, out: list[Message]) -> int:
        """Results before this index are older than the newest ``older_than_turns`` turns;
        with fewer turns than that in the list, no result is old."""
        newest_ok = len(out) if self.older_than_turns == 0 else 0
        turns_after = 0
        for i in range(len(out) - 1, -1, -1) if self.older_than_turns else ():
            if out[i].role == "assistant":
                turns_after += 1
                if turns_after == self.older_than_turns:
                    newest_ok = i
                    break
        return newest_ok

    async def _shrunk(
        self,
        m: Message,
        before: int,
        total: int,
        context: StepContext,
        scope: str,
        keep_lines: frozenset[int] = frozenset(),
    ) -> tuple[Message, int]:
        """``m`` (of ``before`` tokens, in a list of ``total``) cut, and its tokens: to
        ``keep_chars``, or more when this result alone covers what is still needed (the cut
        takes only the tokens the target needs, so the most text stays)."""
        text = m.text
        source, notes, fallback = await self._source(m, context, scope)
        note = "; ".join(notes)
        allowed = before - (total - context.target_tokens)
        keep = self.keep_chars
        if allowed > 0:
            keep = max(keep, len(text) * allowed // before - len(note) - 80)
        least = self.keep_chars
        short, after = _fitted(m, source, (keep, least), notes, allowed, context, keep_lines)
        if after >= before and fallback:  # the original's cut names too much to fit
            short, after = _fitted(m, fallback, (keep, least), notes, allowed, context, keep_lines)
        return short, after

    async def _source(
        self, m: Message, context: StepContext, scope: str
    ) -> tuple[str, tuple[str, ...], str]:
        """What to cut of ``m``, the notes its marker names (the recall ids it is saved
        under) and what to cut when that cuts no smaller (``""``: nothing else): a result
        shortened before is cut again under the id(s) it names; with ``save_to``, the
        caller's text (not a copy an earlier step of this compression cut) is saved."""
        text = m.text
        ours = await shortened_source(context, text, self.save_to, scope)
        if ours is not None:  # shortened before: cut again, under the id(s) it names
            return ours[0], ours[1], ""
        if self.save_to is None:
            return text, (), ""
        source, saved = await stage_original(context, self, scope, m)
        return source, ((saved,) if saved else ()), (text if source != text else "")


def _fitted(
    m: Message,
    source: str,
    sizes: tuple[int, int],
    notes: tuple[str, ...],
    allowed: int,
    context: StepContext,
    keep_lines: frozenset[int] = frozenset(),
) -> tuple[Message, int]:
    """``m`` with ``source`` cut to about ``keep`` characters (fewer, down to ``least``,
    while it counts over ``allowed`` tokens; ``sizes`` is both), and its tokens."""
    keep, least = sizes
    short = with_text(m, _cut(source, keep, notes, keep_lines))
    after = context.message_tokens(short)
    while after > allowed and keep > least:  # the estimate ran over
        keep = max(least, keep * 3 // 4)
        short = with_text(m, _cut(source, keep, notes, keep_lines))
        after = context.message_tokens(short)
    return short, after


def _cut(
    source: str, keep: int, notes: tuple[str, ...], keep_lines: frozenset[int] = frozenset()
) -> str:
    """``source`` cut to about ``keep`` characters, its marker holding ``notes`` but those
    that the kept head or tail already shows (an earlier marker kept whole); a code read
    keeps ``keep_lines`` (see
    :class:`~agent_adapter.context._steps._named_lines.NamedLines`)."""
    room = names_room(len(source) - keep)
    out = shorten_text(
        source, keep, "both", note="; ".join(notes), names_chars=room, keep_lines=keep_lines
    )
    shown = tuple(n for n in notes if out.count(n) > 1)
    if not shown:
        return out
    rest = "; ".join(n for n in notes if n not in shown)
    return shorten_text(source, keep, "both", note=rest, names_chars=room, keep_lines=keep_lines)
