"""The cliver message model: ``CLIverMessage``, ``ToolCall``, usage, chunks and responses.

Field names and defaults are those of cliver-core 0.3.0a5, so code written for it keeps
working. Inside the loop every message is one :class:`agent_adapter.Message` as well: the
conversion between the two is here (:func:`to_messages`, :func:`from_message`), shared by
``CLIverMessage.from_native`` / ``to_native`` and the ``cliver`` format
(:mod:`cliver_core._format`), and a message the model produced keeps the exact
:class:`~agent_adapter.Message` it came from (thinking signatures, Gemini thought signatures
on calls, vendor extras), so sending it back loses nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, assert_never
from uuid import uuid4

from pydantic import BaseModel, Field, PrivateAttr

from agent_adapter import ConfigError, Message, Usage
from agent_adapter import ToolCall as AAToolCall
from agent_adapter._messages import FilePart, ImagePart, OpaquePart, Part, TextPart, ThinkingPart

if TYPE_CHECKING:
    from agent_adapter.context.formats import Converter

__all__ = [
    "DENIED_PREFIX",
    "CLIverMessage",
    "CLIverMessageChunk",
    "CLIverResponse",
    "ToolCall",
    "ToolCallChunk",
    "UsageInfo",
    "expanded",
    "from_message",
    "is_denial",
    "messages_of",
    "native_converter",
    "to_messages",
]


class ToolCall(BaseModel):
    """A tool call of an assistant message: its ``id``, tool ``name`` and parsed ``args``."""

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ToolCallChunk(BaseModel):
    """A piece of a streamed tool call (``index`` names the call; ``args_delta`` is the next
    fragment of its JSON arguments)."""

    index: int = 0
    id: str | None = None
    name: str | None = None
    args_delta: str | None = None


class CLIverMessage(BaseModel):
    """One message of a run: ``system``, ``user``, ``assistant`` or ``tool``.

    Attributes:
        id: a fresh uuid4 unless given.
        role: the role.
        content: a ``str``, a list of content blocks (OpenAI- or Anthropic-style dicts), or
            ``None`` (an assistant message with only tool calls).
        tool_calls: the calls an assistant message makes.
        tool_call_id: the call a ``tool`` message answers.
        native: a native wire dict this message was built from, when there is one.
        native_protocol: the protocol of ``native``.
        trace: the loop's diagnostics (one entry per iteration), on final messages.

    Treat messages handed to a compactor as read-only: build new ones instead.
    """

    id: str = Field(default_factory=lambda: str(uuid4()))
    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    native: dict[str, Any] | None = None
    native_protocol: str | None = None
    trace: list[dict[str, Any]] | None = None

    # The agent_adapter Message this one was made from and the fields it had then; used only
    # while those fields are unchanged (see cliver_core._format).
    _source: Any = PrivateAttr(default=None)

    @classmethod
    def from_native(cls, native: dict[str, Any], protocol: str) -> CLIverMessage:
        """Wrap a native wire message of ``protocol`` (``"openai"`` Chat Completions or
        ``"anthropic"`` Messages); ``native`` stays on the message and :meth:`to_native`
        gives it back unchanged.

        The fields are 0.3.0a5's reading of the native (OpenAI: its ``content`` as it is, a
        missing role ``assistant``; Anthropic: text blocks joined by newlines, ``tool_use``
        blocks as calls, a user message of ``tool_result`` blocks a ``tool`` message for the
        first result); sending the message back sends the native itself, as the library's
        converter for that format reads it: every tool result of such a message (a user
        provider gets a ``tool`` message for each), and compaction and the history checks
        see them all, while its fields are unchanged.

        Raises:
            ConfigError: an unknown protocol, or ``native`` is not a message of it.
        """
        converter = native_converter(protocol)
        if protocol == "openai" and "role" not in native:
            native = {**native, "role": "assistant"}
        loaded = converter.load(native, 0)
        fields = _native_fields(native, protocol)
        if len(loaded) == 1:
            out = from_message(loaded[0])
            for name, value in fields.items():
                setattr(out, name, value)
        else:  # several tool results in one Anthropic user message: 0.3.0a5 reads the first
            out = cls(**fields)
        # what is sent and compacted is every message of the native (each of its tool
        # results), while the fields are unchanged
        out._source = (tuple(loaded), _source_key(out))
        out.native, out.native_protocol = native, protocol
        return out

    def to_native(self, protocol: str) -> dict[str, Any]:
        """The message as a native wire dict of ``protocol`` (a deep copy of ``native`` when
        it is already in that protocol), as the library's providers would send it.

        Raises:
            ConfigError: an unknown protocol.
        """
        import copy

        converter = native_converter(protocol)
        if self.native is not None and self.native_protocol == protocol:
            return copy.deepcopy(self.native)
        if protocol == "anthropic" and self.role == "system":
            # 0.3.0a5's message-level form (the provider moves it to the top-level system)
            text = self.content if isinstance(self.content, str) else ""
            blocks = [{"type": "text", "text": text}] if text else []
            return {"role": "system", "content": blocks if text else list(self.content or [])}
        from agent_adapter.context.formats import strip_reserved

        native: dict[str, Any] = strip_reserved([converter.dump(to_messages([self])[0])])[0]
        return native

    @property
    def text(self) -> str | None:
        """The content when it is a plain string, else ``None``."""
        return self.content if isinstance(self.content, str) else None

    @property
    def is_multimodal(self) -> bool:
        """True when the content is a list of blocks."""
        return isinstance(self.content, list)

    @property
    def has_tool_calls(self) -> bool:
        """True when the message makes tool calls."""
        return bool(self.tool_calls)

    @property
    def is_tool_result(self) -> bool:
        """True for a ``tool`` message."""
        return self.role == "tool"

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        """As pydantic's, leaving out ``None`` fields by default (as 0.3.0a5 does)."""
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)


class UsageInfo(BaseModel):
    """Tokens one call (or a whole run) used.

    ``input_tokens`` counts every input token, cached ones included (as
    :class:`agent_adapter.Usage` and OpenAI's ``prompt_tokens`` do; the Anthropic adapter adds
    Anthropic's cache reads and writes back in), of which ``cache_read_input_tokens`` were
    read from the prompt cache and ``cache_creation_input_tokens`` written to it (``None``
    when zero).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: UsageInfo) -> UsageInfo:
        """The field-wise sum."""
        if not isinstance(other, UsageInfo):
            return NotImplemented
        return UsageInfo.of(self.to_usage() + other.to_usage())

    @classmethod
    def of(cls, usage: Usage | UsageInfo | None) -> UsageInfo:
        """A ``UsageInfo`` from an :class:`agent_adapter.Usage` (or a copy of one)."""
        if usage is None:
            return cls()
        if isinstance(usage, UsageInfo):
            return usage.model_copy()
        return cls(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_input_tokens=usage.cache_read_tokens or None,
            cache_creation_input_tokens=usage.cache_write_tokens or None,
        )

    def to_usage(self) -> Usage:
        """The same counts as an :class:`agent_adapter.Usage`."""
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_input_tokens or 0,
            cache_write_tokens=self.cache_creation_input_tokens or 0,
        )


class CLIverMessageChunk(BaseModel):
    """A streamed piece of the reply.

    Attributes:
        content: a text delta.
        tool_call_chunks: pieces of tool calls, as they arrive.
        vendor_ext: other string deltas by name (``reasoning_content``); the last chunk of a
            stream carries the run's trace as JSON under ``"__llm_trace__"``.
        native: unused by this version (0.3.0a5 compatibility).
        usage: on the last chunk, the run's total usage so far.
        run_id: on the last chunk, the run's id.
    """

    content: str | None = None
    tool_call_chunks: list[ToolCallChunk] | None = None
    vendor_ext: dict[str, str] = Field(default_factory=dict)
    native: dict[str, Any] | None = None
    usage: UsageInfo | None = None
    run_id: str | None = None

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        """As pydantic's, leaving out ``None`` fields by default."""
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)


class CLIverResponse(BaseModel):
    """What a run returns.

    Attributes:
        message: the final assistant message (its ``trace`` holds one entry per iteration).
        media: generated media (unused by the chat loop; 0.3.0a5 compatibility).
        usage: the last model call's usage (as 0.3.0a5 reports it).
        request_info: a summary of the last request (model, provider, message count).
        usage_total: every model call of the run summed, plus usage a compactor recorded.
        run_id: the run's correlation id (the same on its events and compaction contexts).
        messages: the history as the run ended, without the system message and ending with
            ``message``: pass it as ``conversation=`` to continue (compactions included).
        parsed: ``chat_structured``'s validated reply (a pydantic model or a dict).
    """

    message: CLIverMessage
    media: list[Any] | None = None
    usage: UsageInfo | None = None
    request_info: dict[str, Any] | None = None
    usage_total: UsageInfo = Field(default_factory=UsageInfo)
    run_id: str = ""
    messages: list[CLIverMessage] = Field(default_factory=list)
    parsed: Any = None


def _native_fields(native: dict[str, Any], protocol: str) -> dict[str, Any]:
    """0.3.0a5's fields of a native message (``CLIverMessage._from_native_openai`` /
    ``_from_native_anthropic``): role, content, tool calls and the answered call."""
    if protocol == "openai":
        return _openai_fields(native)
    return _anthropic_fields(native)


def _openai_fields(native: dict[str, Any]) -> dict[str, Any]:
    """:func:`_native_fields` of an OpenAI Chat Completions message."""
    calls = [_openai_call(raw) for raw in native.get("tool_calls") or ()]
    content = native.get("content")
    return {
        "role": native.get("role") or "assistant",
        "content": None if calls and not content else content,
        "tool_calls": calls or None,
        "tool_call_id": native.get("tool_call_id"),
    }


def _openai_call(raw: dict[str, Any]) -> ToolCall:
    """An OpenAI tool call; arguments that are not a JSON object read as ``{}``."""
    function = raw.get("function") or {}
    try:
        args = json.loads(function.get("arguments") or "{}")
    except ValueError:
        args = {}
    return ToolCall(
        id=raw.get("id") or "",
        name=function.get("name") or "",
        args=args if isinstance(args, dict) else {},
    )


def _anthropic_fields(native: dict[str, Any]) -> dict[str, Any]:
    """:func:`_native_fields` of an Anthropic message: a tool result's when it holds one."""
    blocks = native.get("content")
    if isinstance(blocks, str):
        return {"role": native.get("role") or "user", "content": blocks}
    by_kind: dict[Any, list[dict[str, Any]]] = {"text": [], "tool_use": [], "tool_result": []}
    for block in blocks or ():
        if isinstance(block, dict) and block.get("type") in by_kind:
            by_kind[block.get("type")].append(block)
    texts = [block.get("text") or "" for block in by_kind["text"]]
    uses = [_anthropic_use(block) for block in by_kind["tool_use"]]
    if by_kind["tool_result"]:
        return _anthropic_result(by_kind["tool_result"][0])
    return {
        "role": native.get("role") or "assistant",
        "content": "\n".join(texts) if texts else None,
        "tool_calls": uses or None,
    }


def _anthropic_use(block: dict[str, Any]) -> ToolCall:
    """An Anthropic ``tool_use`` block as a tool call."""
    return ToolCall(
        id=block.get("id") or "",
        name=block.get("name") or "",
        args=dict(block.get("input") or {}),
    )


def _anthropic_result(first: dict[str, Any]) -> dict[str, Any]:
    """The fields of a message holding a tool result: its first result's (text blocks joined)."""
    result = first.get("content")
    if isinstance(result, list):
        result = "".join(b.get("text") or "" for b in result if isinstance(b, dict))
    return {
        "role": "tool",
        "content": result or None,
        "tool_call_id": first.get("tool_use_id"),
    }


# --------------------------------------------------------------------------------------------
# CLIverMessage <-> agent_adapter.Message: the conversion the ``cliver`` format
# (cliver_core._format) and CLIverMessage.from_native / to_native share

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


def messages_of(native: CLIverMessage, index: int, names: dict[str, str]) -> list[Message]:
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
        # no ``is_error``: 0.3.0a5 never sends Anthropic's flag (its tool results are text
        # only), and whether a call failed is the loop's knowledge, not the text's opening
        extras: dict[str, Any] = {}
        if is_denial(native):
            extras = {_DECISION: {"type": "approval_decision", "decision": "denied"}}
        return Message(
            "tool",
            body,
            tool_call_id=native.tool_call_id,
            name=names.get(native.tool_call_id),
            extras=extras,
        )
    if native.tool_call_id is not None:
        raise ConfigError(f"{where}.tool_call_id is only allowed on tool, not {native.role}")
    thinking = _native_thinking(native) if native.role == "assistant" else ()
    if thinking:
        rest = ((TextPart(body),) if body else ()) if isinstance(body, str) else body
        body = (*thinking, *rest)
    return Message(native.role, body, tool_calls=calls)


def _native_thinking(message: CLIverMessage) -> tuple[ThinkingPart, ...]:
    """The reasoning a message's ``native`` carries (a Chat Completions reply's
    ``reasoning_content``; an Anthropic reply's thinking blocks, signatures included), as
    thinking parts: a history restored from ``model_dump()`` sends it back as 0.3.0a5
    does (it replays ``native``), which DeepSeek and GLM require on tool-call turns."""
    native = message.native
    if not isinstance(native, dict):
        return ()
    if message.native_protocol == "openai":
        reasoning = native.get("reasoning_content")
        return (ThinkingPart(reasoning),) if isinstance(reasoning, str) and reasoning else ()
    if message.native_protocol == "anthropic" and isinstance(native.get("content"), list):
        try:
            loaded = native_converter("anthropic").load(native, 0)
        except ConfigError:
            return ()
        return tuple(p for m in loaded for p in m.parts if isinstance(p, ThinkingPart))
    return ()


def to_messages(messages: Sequence[CLIverMessage]) -> list[Message]:
    """The messages as :class:`agent_adapter.Message` s, in order (a message loaded from
    a native that holds several, an Anthropic user turn of parallel tool results, gives
    all of them).

    Raises:
        ConfigError: an item is not a CLIverMessage, or a field sits on the wrong role
            (naming ``messages[i]`` and the field).
    """
    names: dict[str, str] = {}
    return [out for i, m in enumerate(messages) for out in messages_of(m, i, names)]


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


def native_converter(protocol: str) -> Converter[Any]:
    """The converter of a 0.3.0a5 protocol name: ``"openai"`` (Chat Completions) or
    ``"anthropic"``.

    Raises:
        ConfigError: another name.
    """
    if protocol == "openai":
        from agent_adapter.context.formats._openai import ChatConverter

        return ChatConverter()
    if protocol == "anthropic":
        from agent_adapter.context.formats import AnthropicConverter

        return AnthropicConverter()
    raise ConfigError(f"unknown protocol {protocol!r}; supported: ['openai', 'anthropic']")
