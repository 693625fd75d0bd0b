"""The ``cliver`` message format: ``CLIverMessage`` lists as one more format of the toolkit.

:class:`CliverConverter` maps a :class:`~cliver_core.CLIverMessage` to the one message model
(:class:`agent_adapter.Message`) and back (with the conversion of :mod:`cliver_core._messages`,
re-exported here). It is registered as the ``cliver`` format when
:mod:`cliver_core` is imported, so ``compress_for(messages, policy)`` detects and compresses a
``CLIverMessage`` list like any other format, and the loop itself sends its history to the
providers through the same converter.

Mapping: ``content`` as a str stays a str (``None`` is ``""``); a list of blocks becomes parts
(``text`` blocks :class:`~agent_adapter.TextPart`, OpenAI ``image_url`` and Anthropic base64
``image`` blocks :class:`~agent_adapter.ImagePart`, anything else an
:class:`~agent_adapter.OpaquePart` carried untouched); ``ToolCall.args`` become the call's
JSON ``arguments``; a tool result gets the name of the call it answers (Gemini needs it).
A tool result recording a permission decision (0.3.0a5 writes ``"Error: Permission denied:
<reason>"``) is approval state: it carries an approval marker in its extras, so compression
protects it (:func:`agent_adapter.context.carries_approval_state`) and the agent cannot
"forget" that the user refused. A message the model produced converts back to the very
:class:`~agent_adapter.Message` it came from while its fields are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from agent_adapter import Message
from agent_adapter.context.formats import Converter, register_format
from agent_adapter.context.formats._patch import patch_text_blocks
from cliver_core._messages import (
    DENIED_PREFIX,
    CLIverMessage,
    expanded,
    from_message,
    is_denial,
    messages_of,
    native_converter,
    to_messages,
)

__all__ = [
    "DENIED_PREFIX",
    "CliverConverter",
    "expanded",
    "from_message",
    "is_denial",
    "native_converter",
    "to_messages",
]


class CliverConverter(Converter[CLIverMessage]):
    """``CLIverMessage`` lists, for :func:`agent_adapter.context.compress_for` (format
    ``"cliver"``). Kept messages come back as the same objects; a changed one is a
    ``model_copy`` with the new text (list content keeps its other blocks)."""

    name: ClassVar[str] = "cliver"

    def kind(self, item: Any) -> str | None:
        """``"sure"`` for a CLIverMessage."""
        return "sure" if isinstance(item, CLIverMessage) else None

    def load(self, native: CLIverMessage, index: int) -> list[Message]:
        """The messages of ``native`` (one, or a native turn's several tool results)."""
        return messages_of(native, index, {})

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        """Every native loaded, tool results named after the calls they answer."""
        names: dict[str, str] = {}
        messages: list[Message] = []
        spans: list[tuple[int, int]] = []
        for i, m in enumerate(natives):
            start = len(messages)
            messages.extend(messages_of(m, i, names))
            spans.append((start, len(messages)))
        return messages, spans

    def rebuild(
        self, native: CLIverMessage, originals: Sequence[Message], now: Sequence[Message | None]
    ) -> list[CLIverMessage]:
        """``native`` with the changed text, or nothing when it was removed; a native of
        several messages (a turn's parallel tool results) becomes one message for each
        that is left (a tool message each, as :meth:`dump` writes them)."""
        if len(originals) > 1:
            return [from_message(m) for m in now if m is not None]
        changed = now[0] if now else None
        if changed is None:
            return []
        text = changed.text
        content: str | list[dict[str, Any]] | None
        if isinstance(native.content, list):
            content = patch_text_blocks(native.content, text)
        else:
            content = text if text or native.content is not None else None
        return [native.model_copy(update={"content": content})]

    def dump(self, message: Message) -> CLIverMessage:
        """A new CLIverMessage for a message a step added (a summary, a note)."""
        return from_message(message)


def _detect(messages: Sequence[Any]) -> bool:
    return bool(messages) and all(isinstance(m, CLIverMessage) for m in messages)


CONVERTER = CliverConverter()
register_format("cliver", CONVERTER, detect=_detect)
