"""CutLongMessages: cut the text of over-long messages, oldest first."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._run import owner_scope
from agent_adapter.context._shapes import shorten_text
from agent_adapter.context._steps._base import (
    BaseCompressionStep,
    StepContext,
    first_non_system,
)
from agent_adapter.context._steps._named_lines import NamedLines
from agent_adapter.context._stores._base import check_save_to
from agent_adapter.context._stores._commit import shortened_source, stage_original
from agent_adapter.context._text import _MARKER, Keep, fit_message

__all__ = ["CutLongMessages"]

#: A cut stands only when the text it removes is at least this many times as long as the
#: marker it adds: a cut whose marker is about as long as what went saves nothing worth the
#: loss (the one-line text of a message that its tool call makes long).
_MIN_CUT_RATIO = 4


def _marker_chars(text: str) -> int:
    """Characters of the cut markers in ``text``, with the line break each stands on."""
    return sum(len(m.group(0)) + 1 for m in _MARKER.finditer(text))


def _worth_cutting(before: Message, after: Message) -> bool:
    """Whether ``after``, ``before`` with its text cut, removes at least
    ``_MIN_CUT_RATIO`` times the characters its new marker adds."""
    marker = max(0, _marker_chars(after.text) - _marker_chars(before.text))
    removed = len(before.text) - len(after.text) + marker
    return removed >= _MIN_CUT_RATIO * marker


@dataclass(kw_only=True)
class CutLongMessages(BaseCompressionStep):
    """Cut the text of messages over max_tokens_per_message, oldest first.

    A text is shortened by what it is (see :mod:`~agent_adapter.context._shapes`): a test run
    keeps every error and summary line, a listing every path, JSON its keys, code its signatures
    (a numbered read of one file first the lines the list's errors and diff hunks name in it, as
    ``ShrinkToolResults``), a diff its headers, a log one line a run of repeats; prose and texts
    of no known shape keep one end (``keep``). Only text is cut, never tool calls. One marker
    says how many characters went and names what they held that the kept part does not show:
    paths, commands and exit statuses, error lines, failed tests, ids and URLs, e.g. ``[...
    10442 characters cut; names: src/_pytest/main.py, TypeError: unsupported operand ...]``. The
    names count against max_tokens_per_message. With include_system_prompt=True, an unpinned
    system message is cut too, after the others.

    A cut is made only when it removes at least four times the characters of the marker it
    adds: a message long for its tool call, with one short line of text, keeps that line
    (cutting 41 characters for a 27-character marker saves nothing).

    The first ``keep_first`` non-system messages (the task statement) are never cut, as
    ``RemoveOldMessages(keep_first=1)`` never drops them: the task is what the agent still
    needs when everything older than the newest work has gone (``keep_first=0`` cuts it like
    any other old message).

    With ``save_to``, the text as the caller gave it is saved there (for
    ``save_for_seconds``, under the run's owner scope, as ``ShrinkToolResults`` saves a
    result) and the marker ends with the recall call, ``full text: call
    recall_context(id='3f2a...')``; a text already cut by a saving step keeps the id it
    names. Without it (the default for a policy's step; a
    :class:`~agent_adapter.context.Compactor` gives its store), nothing is kept.

    Args:
        max_tokens_per_message: a message over this many tokens is cut down to it.
        keep: which end of the text survives, ``"start"`` (default: the head of a file or
            log, where the command and its first lines are) or ``"end"``.
        include_system_prompt: also cut unpinned system messages, last.
        keep_first: the first this many non-system messages stay whole.
        save_to: a ToolResultStore for the texts cut, or ``None``.
        save_for_seconds: how long saved texts live, a finite number > 0 (``None``: no
            expiry).

    Raises:
        ConfigError: max_tokens_per_message is not an int > 0, keep is unknown,
            keep_first is not an int >= 0, save_to is not a ToolResultStore, or
            save_for_seconds is out of range.
    """

    name: ClassVar[str] = "cut_long_messages"
    max_tokens_per_message: int = 2000
    keep: Keep = "start"
    include_system_prompt: bool = False
    keep_first: int = 1
    save_to: Any = None
    save_for_seconds: float | None = 24 * 3600

    def __post_init__(self) -> None:
        k = self.keep_first
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ConfigError(f"CutLongMessages.keep_first must be an int >= 0, got {k!r}")
        m = self.max_tokens_per_message
        if isinstance(m, bool) or not isinstance(m, int) or m <= 0:
            raise ConfigError(f"CutLongMessages.max_tokens_per_message must be > 0, got {m!r}")
        if self.keep not in ("start", "end"):
            raise ConfigError(f"CutLongMessages.keep must be 'start' or 'end', got {self.keep!r}")
        check_save_to("CutLongMessages", self.save_to, self.save_for_seconds)

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages with long texts cut until under the target."""
        out = list(messages)
        total = context.tokens(out)
        named = NamedLines(messages)
        first = set(first_non_system(out, self.keep_first))
        order = [i for i, m in enumerate(out) if i not in first and not context.is_protected(m)]
        if self.include_system_prompt:
            order += [
                i
                for i, m in enumerate(out)
                if m.role == "system" and not context.protection.is_pinned(m)
            ]
        for i in order:
            if context.under_target(total):
                break
            m = out[i]
            before = context.message_tokens(m)
            if before <= self.max_tokens_per_message:
                continue
            source, note = await self._source(m, context)
            cut = fit_message(
                m,
                self.max_tokens_per_message,
                context.message_tokens,
                self.keep,
                source=source,
                note=note,
                cut=partial(shorten_text, keep_lines=named.of(m)),
            )
            if cut is not m and _worth_cutting(m, cut):
                out[i] = cut
                context.mark_shortened(cut)
                total += context.message_tokens(cut) - before
        return out

    async def _source(self, m: Message, context: StepContext) -> tuple[str | None, str]:
        """What to cut of ``m`` (``None``: its text) and the marker's recall note: with
        ``save_to``, the caller's text saved (a text cut before by a saving step is cut
        again under the id it names)."""
        if self.save_to is None:
            return None, ""
        scope = owner_scope(context.ctx)
        ours = await shortened_source(context, m.text, self.save_to, scope)
        if ours is not None:
            return ours[0], "; ".join(ours[1])
        return await stage_original(context, self, scope, m)
