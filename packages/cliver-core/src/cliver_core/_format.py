"""The ``cliver`` message format: ``CLIverMessage`` lists as one more format of the toolkit.

:class:`CliverConverter` maps a :class:`~cliver_core.CLIverMessage` to the one message model
(:class:`agent_adapter.Message`) and back. It is registered as the ``cliver`` format when
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

import json
from collections.abc import Sequence
from typing import Any, ClassVar, assert_never

from agent_adapter import ConfigError, Message
from agent_adapter import ToolCall as AAToolCall
from agent_adapter._messages import FilePart, ImagePart, OpaquePart, Part, TextPart, ThinkingPart
from agent_adapter.context.formats import Converter, register_format
from agent_adapter.context.formats._patch import patch_text_blocks
from cliver_core._messages import CLIverMessage, ToolCall

__all__ = [
    "DENIED_PREFIX",
    "CliverConverter",
    "expanded",
    "from_message",
    "is_denial",
    "native_converter",
    "to_messages",
]

#: How 0.3.0a5 (and this version) writes a tool call the permission policy refused.
DENIED_PREFIX = "Error: Permission denied:"
#: The extras key marking a permission decision; its value is an approval marker.
_DECISION = "cliver_decision"


def is_denial(message: CLIverMessage) -> bool:
    """True for a tool result that records a refused permission."""
    return (
        message.role == "tool"
        and isinstance(message.content, str)
        and message.content.startswith(DENIED_PREFIX)
    )


def _source_key(message: CLIverMessage) -> tuple[Any, ...]:
    calls = message.tool_calls
    return (
        message.role,
        message.content,
        calls,
        tuple((c.id, c.name, c.args) for c in calls) if calls else (),
        message.tool_call_id,
    )


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Every field is the very object it was (an edit assigns a new one)."""
    return len(a) == len(b) and all(
        x is y or (isinstance(x, tuple) and isinstance(y, tuple) and _same(x, y))
        for x, y in zip(a, b, strict=True)
    )


def _block_part(block: Any) -> Part:
    if not isinstance(block, dict):
        return OpaquePart("cliver", block)
    kind = block.get("type")
    rest = {k: v for k, v in block.items() if k not in ("type", "text")}
    if kind == "text" and isinstance(block.get("text"), str):
        return TextPart(block["text"], rest)
    if kind == "image_url":
        image = block.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if isinstance(url, str):
            detail = image.get("detail") if isinstance(image, dict) else None
            return ImagePart(url=url, detail=detail if isinstance(detail, str) else None)
    source = block.get("source")
    if kind == "image" and isinstance(source, dict) and source.get("type") == "base64":
        return ImagePart(data=source.get("data"), media_type=source.get("media_type"))
    return OpaquePart("cliver", block)


def _part_block(part: Part) -> Any:
    match part:
        case TextPart():
            return {"type": "text", "text": part.text, **part.extras}
        case ImagePart():
            if part.url is not None:
                image: dict[str, Any] = {"url": part.url}
                if part.detail:
                    image["detail"] = part.detail
                return {"type": "image_url", "image_url": image}
            source = {"type": "base64", "media_type": part.media_type, "data": part.data}
            return {"type": "image", "source": source}
        case FilePart():
            return {"type": "text", "text": f"[file {part.filename or part.url or ''}]".strip()}
        case ThinkingPart():
            return None
        case OpaquePart():
            return part.data if part.provider == "cliver" else None
        case _:
            assert_never(part)


def _arguments(call: ToolCall, where: str) -> str:
    try:
        return json.dumps(call.args, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}.args is not JSON-serializable: {e}") from e


def _to_messages(native: CLIverMessage, index: int, names: dict[str, str]) -> list[Message]:
    """The messages of ``native``: those it was made from while its fields are unchanged
    (one, or the several results of one native turn), else the one its fields give."""
    where = f"messages[{index}]"
    if not isinstance(native, CLIverMessage):
        raise ConfigError(f"{where} is {type(native).__name__}, not a CLIverMessage")
    source = native._source
    if source is not None and _same(source[1], _source_key(native)):
        messages: tuple[Message, ...] = source[0]
        for message in messages:
            for call in message.tool_calls:
                names[call.id] = call.name
        return list(messages)
    return [_from_fields(native, where, names)]


def expanded(message: CLIverMessage) -> list[CLIverMessage]:
    """``message``, or for one loaded from a native turn of several tool results (while its
    fields are unchanged) a tool message for each result, as it is sent."""
    source = message._source
    if source is not None and len(source[0]) > 1 and _same(source[1], _source_key(message)):
        return [from_message(m) for m in source[0]]
    return [message]


def _from_fields(native: CLIverMessage, where: str, names: dict[str, str]) -> Message:
    content = native.content
    if content is None:
        body: str | tuple[Part, ...] = ""
    elif isinstance(content, str):
        body = content
    else:
        body = tuple(_block_part(b) for b in content)
    calls = tuple(
        AAToolCall(c.id, c.name, _arguments(c, f"{where}.tool_calls[{k}]"))
        for k, c in enumerate(native.tool_calls or ())
    )
    if calls and native.role != "assistant":
        raise ConfigError(f"{where}.tool_calls is only allowed on assistant, not {native.role}")
    for call in calls:
        names[call.id] = call.name
    if native.role == "tool":
        if not native.tool_call_id:
            raise ConfigError(f"{where}.tool_call_id is required on a tool message")
        extras: dict[str, Any] = {}
        if is_denial(native):
            extras = {_DECISION: {"type": "approval_decision", "decision": "denied"}}
            extras["is_error"] = True
        elif isinstance(content, str) and content.startswith("Error:"):
            extras["is_error"] = True
        return Message(
            "tool",
            body,
            tool_call_id=native.tool_call_id,
            name=names.get(native.tool_call_id),
            extras=extras,
        )
    if native.tool_call_id is not None:
        raise ConfigError(f"{where}.tool_call_id is only allowed on tool, not {native.role}")
    return Message(native.role, body, tool_calls=calls)


def to_messages(messages: Sequence[CLIverMessage]) -> list[Message]:
    """The messages as :class:`agent_adapter.Message` s, in order (a message loaded from
    a native that holds several, an Anthropic user turn of parallel tool results, gives
    all of them).

    Raises:
        ConfigError: an item is not a CLIverMessage, or a field sits on the wrong role
            (naming ``messages[i]`` and the field).
    """
    names: dict[str, str] = {}
    return [out for i, m in enumerate(messages) for out in _to_messages(m, i, names)]


def from_message(message: Message) -> CLIverMessage:
    """A :class:`CLIverMessage` for ``message``; converting it back gives ``message`` itself
    while its fields are unchanged."""
    parts = message.parts
    content: str | list[dict[str, Any]] | None
    if isinstance(message.content, str) or all(
        isinstance(p, TextPart | ThinkingPart) and not (isinstance(p, TextPart) and p.extras)
        for p in parts
    ):
        content = message.text
        if not content and message.role == "assistant":
            content = None
    else:
        content = [b for b in (_part_block(p) for p in parts) if b is not None]
    calls = None
    if message.tool_calls:
        calls = []
        for call in message.tool_calls:
            try:
                args = json.loads(call.arguments) if call.arguments.strip() else {}
            except ValueError:
                args = {}
            calls.append(
                ToolCall(id=call.id, name=call.name, args=args if isinstance(args, dict) else {})
            )
    out = CLIverMessage(
        role=message.role,
        content=content,
        tool_calls=calls,
        tool_call_id=message.tool_call_id,
    )
    out._source = ((message,), _source_key(out))
    return out


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
        return _to_messages(native, index, {})

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        """Every native loaded, tool results named after the calls they answer."""
        names: dict[str, str] = {}
        messages: list[Message] = []
        spans: list[tuple[int, int]] = []
        for i, m in enumerate(natives):
            start = len(messages)
            messages.extend(_to_messages(m, i, names))
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


def native_converter(protocol: str) -> Converter[Any]:
    """The converter of a 0.3.0a5 protocol name: ``"openai"`` (Chat Completions) or
    ``"anthropic"``.

    Raises:
        ConfigError: another name.
    """
    if protocol == "openai":
        from agent_adapter.context.formats._chat import ChatConverter

        return ChatConverter()
    if protocol == "anthropic":
        from agent_adapter.context.formats import AnthropicConverter

        return AnthropicConverter()
    raise ConfigError(f"unknown protocol {protocol!r}; supported: ['openai', 'anthropic']")


def _detect(messages: Sequence[Any]) -> bool:
    return bool(messages) and all(isinstance(m, CLIverMessage) for m in messages)


CONVERTER = CliverConverter()
register_format("cliver", CONVERTER, detect=_detect)
