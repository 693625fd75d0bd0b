"""LangChain and LangGraph ``BaseMessage`` lists (``langchain`` format).

Shapes follow langchain-core 1.x (``langchain_core.messages``): ``SystemMessage``,
``HumanMessage``, ``AIMessage`` (``tool_calls``, ``invalid_tool_calls``, ``usage_metadata``),
``ToolMessage`` (``tool_call_id``, ``status``, ``artifact``) and ``ChatMessage`` (``role``),
chunks included. Only message objects are accepted, never dicts; reading them and changing
them never imports langchain-core (a changed message is ``msg.model_copy(update={"content":
...})``, so ``id``, ``name``, ``additional_kwargs``, ``response_metadata`` and every other field
stay; the input is never mutated).

Mapping: ``content`` as a str stays a str; a list becomes parts: ``text`` blocks and bare
strings :class:`TextPart`, ``thinking`` (Anthropic, Google) and ``reasoning`` (langchain v1,
``extras.signature``) blocks :class:`ThinkingPart` with their signature, ``redacted_thinking``
a redacted ThinkingPart, ``image_url`` and v1 ``image`` blocks (``url`` or ``base64``)
:class:`ImagePart`, v1 ``file`` blocks :class:`FilePart`; ``tool_use`` / ``tool_call`` /
``function_call`` blocks repeating one of the message's ``tool_calls`` are left to the tool
calls; other blocks are opaque. ``tool_calls`` become :class:`ToolCall` s (``args`` as JSON
text; a call with no id gets ``lc_call_<index>_<k>`` and ``extras["langchain_no_id"]``);
langchain-google-genai's ``additional_kwargs["__gemini_function_call_thought_signatures__"]``
(call id -> base64 signature) goes to each call's ``extras["thought_signature"]``, the key the
``gemini`` format uses, so signatures survive a trip between the two. A ``ToolMessage`` with
``status="error"`` gets ``extras["is_error"] = True`` (Anthropic's and Gemini's error flag).
Every other field (``id``, ``additional_kwargs``, ``response_metadata``, ``usage_metadata``,
``invalid_tool_calls``, ``artifact``, a ChatMessage's ``role``) rides in
``Message.extras["langchain"]``.

New messages (:meth:`LangChainConverter.dump`, e.g. summaries) are ``HumanMessage`` /
``AIMessage`` (``SystemMessage`` / ``ToolMessage`` for those roles) and need langchain-core
(:class:`~agent_adapter._errors.MissingDependency` otherwise). They are lossless:
``load(dump(m)) == [m]`` for any message; what has no LangChain slot (foreign extras such as
Anthropic's ``is_error: false``, the exact text of a call's arguments, tool calls on a
ChatMessage, opaque parts of other providers, image or file fields no block holds) rides in
``additional_kwargs["_agent_adapter"]`` (``RESERVED_KEY``; the carrier of
:mod:`agent_adapter.context.formats._carrier`), which LangChain chat models do not send. A
changed message that carried it gets it updated.

A changed text goes back into list content through
:func:`~agent_adapter.context.formats._patch.patch_text_blocks`, as in every format: the text
blocks (bare strings and ``text`` blocks) keep their places, and a block with keys of its own
keeps them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, assert_never

from agent_adapter._errors import ConfigError, MissingDependency
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._carrier import RESERVED_KEY, apply_carrier, carrier_for
from agent_adapter.context.formats._codec import parse_json, to_json
from agent_adapter.context.formats._patch import TextBlocks, patch_text_blocks

__all__ = ["GEMINI_SIGNATURES_KEY", "LangChainConverter"]

GEMINI_SIGNATURES_KEY = "__gemini_function_call_thought_signatures__"
"""langchain-google-genai's ``additional_kwargs`` map of call id -> base64 thought signature."""

_PROBE = -1  # the index dumps are checked at (generated ids never match a loaded one)
_KINDS: dict[str, Role] = {
    "SystemMessage": "system",
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "ToolMessage": "tool",
}
_CHAT_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
}
_CALL_BLOCKS = frozenset({"tool_use", "tool_call", "function_call"})
_LC_FIELDS = ("id", "usage_metadata", "invalid_tool_calls", "artifact", "response_metadata")
_MADE_UP = re.compile(r"lc_call_(-?\d+)_(\d+)")


def _class_names(item: Any) -> list[str]:
    return [c.__name__ for c in type(item).__mro__ if c.__module__.startswith("langchain_core.")]


def _role(native: Any) -> tuple[Role | None, str | None]:
    """The message role of ``native`` and, for a ChatMessage, its own role."""
    names = _class_names(native)
    for name in names:
        if name in _KINDS:
            return _KINDS[name], None
    if "ChatMessage" in names:
        role = getattr(native, "role", None)
        return (_CHAT_ROLES.get(role) if isinstance(role, str) else None), str(role)
    return None, None


def _rest(block: Mapping[str, Any], *skip: str) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k not in skip}


def _text(block: Mapping[str, Any]) -> Part | None:
    if not isinstance(block.get("text"), str):
        return None
    return TextPart(block["text"], _rest(block, "type", "text"))


def _thinking(block: Mapping[str, Any]) -> Part | None:
    if not isinstance(block.get("thinking"), str):
        return None
    sig = block.get("signature")
    return ThinkingPart(
        block["thinking"],
        sig if isinstance(sig, str) else None,
        extras=_rest(block, "type", "thinking", "signature"),
    )


def _reasoning(block: Mapping[str, Any]) -> Part | None:
    """A ``reasoning`` block: its signature (if any) in its ``extras``."""
    if not isinstance(block.get("reasoning"), str):
        return None
    rest = _rest(block, "type", "reasoning")
    more = rest.get("extras")
    sig = more.get("signature") if isinstance(more, Mapping) else None
    if isinstance(sig, str) and isinstance(more, Mapping):
        left = _rest(more, "signature")
        if left:
            rest["extras"] = left
        else:
            del rest["extras"]
    else:
        sig = None
    return ThinkingPart(block["reasoning"], sig, extras={"langchain_type": "reasoning", **rest})


def _redacted_thinking(block: Mapping[str, Any]) -> Part | None:
    if not isinstance(block.get("data"), str):
        return None
    return ThinkingPart(block["data"], redacted=True, extras=_rest(block, "type", "data"))


def _image_url(block: Mapping[str, Any]) -> Part | None:
    image = block.get("image_url")
    url = image.get("url") if isinstance(image, Mapping) else image
    detail = image.get("detail") if isinstance(image, Mapping) else None
    if isinstance(url, str) and (detail is None or isinstance(detail, str)):
        return ImagePart(url=url, detail=detail, extras=_rest(block, "type", "image_url"))
    return None


def _media(block: Mapping[str, Any]) -> Part | None:
    """An ``image`` or ``file`` block of LangChain's standard shape (no ``source_type``)."""
    if "source_type" in block or "source" in block:
        return None
    url, data = block.get("url"), block.get("base64")
    mime = block.get("mime_type")
    if not (isinstance(url, str) or isinstance(data, str)) or not (
        mime is None or isinstance(mime, str)
    ):
        return None
    rest = _rest(block, "type", "url", "base64", "mime_type")
    if block.get("type") == "image":
        return ImagePart(url=url, data=data, media_type=mime, extras=rest)
    return FilePart(url=url, data=data, media_type=mime, extras=rest)


#: The part mapper of each block type (``None`` from it, or a type not here: opaque).
_PARTS: dict[str, Callable[[Mapping[str, Any]], Part | None]] = {
    "text": _text,
    "thinking": _thinking,
    "reasoning": _reasoning,
    "redacted_thinking": _redacted_thinking,
    "image_url": _image_url,
    "image": _media,
    "file": _media,
}


def _block_part(block: Any) -> Part:
    if isinstance(block, str):
        return TextPart(block)
    if not isinstance(block, Mapping):
        return OpaquePart("langchain", block)
    kind = block.get("type")
    mapper = _PARTS.get(kind) if isinstance(kind, str) else None
    part = mapper(block) if mapper is not None else None
    return part if part is not None else OpaquePart("langchain", block)


def _dump_thinking(part: ThinkingPart) -> dict[str, Any]:
    extras = dict(part.extras)
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.text, **extras}
    if extras.pop("langchain_type", None) == "reasoning":
        out: dict[str, Any] = {"type": "reasoning", "reasoning": part.text, **extras}
        if part.signature is not None:
            more = extras.get("extras")
            out["extras"] = {
                **(more if isinstance(more, Mapping) else {}),
                "signature": part.signature,
            }
        return out
    out = {"type": "thinking", "thinking": part.text}
    if part.signature is not None:
        out["signature"] = part.signature
    return {**out, **extras}


def _dump_media(part: ImagePart | FilePart) -> dict[str, Any]:
    if isinstance(part, ImagePart) and part.url and not part.data and not part.media_type:
        image: dict[str, Any] = {"url": part.url}
        if part.detail:
            image["detail"] = part.detail
        return {"type": "image_url", "image_url": image, **part.extras}
    block: dict[str, Any] = {"type": "image" if isinstance(part, ImagePart) else "file"}
    if part.url is not None:
        block["url"] = part.url
    if part.data is not None:
        block["base64"] = part.data
    if part.media_type is not None:
        block["mime_type"] = part.media_type
    return {**block, **part.extras}


def _dump_block(part: Part) -> Any:
    match part:
        case TextPart():
            return {"type": "text", "text": part.text, **part.extras}
        case ThinkingPart():
            return _dump_thinking(part)
        case ImagePart() | FilePart():
            return _dump_media(part)
        case OpaquePart():
            if part.provider == "langchain":
                return part.data
            return {"type": "non_standard", "value": part.data}
        case _:
            assert_never(part)


def _is_text_block(block: Any) -> bool:
    """A block that loads as a text part: a bare str or a ``text`` block."""
    return isinstance(block, str) or (
        isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


#: LangChain content lists: bare strings and ``{"type": "text"}`` blocks hold the text.
_TEXT = TextBlocks(
    is_text=_is_text_block,
    text_of=lambda block: block if isinstance(block, str) else str(block["text"]),
    with_text=lambda block, text: text if isinstance(block, str) else {**block, "text": text},
    new=lambda text: {"type": "text", "text": text},
    keyed=lambda block: (
        isinstance(block, Mapping) and any(k not in ("type", "text") for k in block)
    ),
)


def _lc_fields(native: Any, chat_role: str | None) -> dict[str, Any]:
    """The LangChain fields of ``native`` that a Message has no slot for (set ones only)."""
    lc: dict[str, Any] = {}
    for field in _LC_FIELDS:
        value = getattr(native, field, None)
        if value is not None and value != [] and value != {}:
            lc[field] = value
    if chat_role is not None:
        lc["role"] = chat_role
    return lc


def _is_call_block(block: Any, ids: set[str]) -> bool:
    """A content block repeating one of the calls ``ids`` (``tool_calls`` holds them)."""
    return (
        isinstance(block, Mapping)
        and isinstance(block.get("type"), str)
        and block.get("type") in _CALL_BLOCKS
        and isinstance(block.get("id"), str)
        and block.get("id") in ids
    )


def _content(native: Any, calls: Sequence[ToolCall], where: str) -> str | tuple[Part, ...]:
    raw = getattr(native, "content", "")
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, list):
        raise ConfigError(f"{where}.content must be a str or a list")
    ids = {c.id for c in calls}
    return tuple(_block_part(b) for b in raw if not _is_call_block(b, ids))


def _tool_call_id(native: Any, where: str, extras: dict[str, Any]) -> str:
    """A ToolMessage's call id (an error status goes to ``extras``)."""
    call_id = getattr(native, "tool_call_id", None)
    if not isinstance(call_id, str) or not call_id:
        raise ConfigError(f"{where}.tool_call_id must be a non-empty str")
    if getattr(native, "status", "success") == "error":
        extras["is_error"] = True
    return call_id


def _lc() -> Any:
    try:
        from langchain_core import messages
    except ImportError as exc:
        raise MissingDependency(
            "langchain-core", "langchain", "building LangChain messages"
        ) from exc
    return messages


class LangChainConverter(Converter[Any]):
    """LangChain ``BaseMessage`` objects <-> Message (see the module docstring)."""

    name = "langchain"
    call_terms: ClassVar[tuple[str, str]] = ("tool_calls", "tool_call_id")

    def native_call_id(self, call_id: str) -> str:
        """How the caller knows ``call_id``: a made-up id (a call with no ``id``) as the place
        of its call, e.g. ``tool_calls[0] (no id)``; a real id as itself."""
        made_up = _MADE_UP.fullmatch(call_id)
        if made_up is not None:
            return f"tool_calls[{made_up.group(2)}] (no id)"
        return repr(call_id)

    def kind(self, item: Any) -> str | None:
        return "sure" if "BaseMessage" in _class_names(item) else None

    def load(self, native: Any, index: int) -> list[Message]:
        where = f"messages[{index}]"
        if "BaseMessage" not in _class_names(native):
            raise ConfigError(f"{where} is {type(native).__name__}, not a LangChain BaseMessage")
        role, chat_role = _role(native)
        if role is None:
            raise ConfigError(
                f"{where} is a {type(native).__name__}; only System/Human/AI/Tool/ChatMessage "
                "(with a user, assistant or system role) can be compressed"
            )
        lc = _lc_fields(native, chat_role)
        kwargs = getattr(native, "additional_kwargs", None) or {}
        if not isinstance(kwargs, Mapping):
            raise ConfigError(f"{where}.additional_kwargs must be a dict")
        kwargs = dict(kwargs)
        carried = kwargs.pop(RESERVED_KEY, None)
        signatures = kwargs.pop(GEMINI_SIGNATURES_KEY, None)
        signatures = dict(signatures) if isinstance(signatures, Mapping) else {}
        calls = self._calls(native, index, signatures, where)
        if signatures:
            kwargs[GEMINI_SIGNATURES_KEY] = signatures
        if kwargs:
            lc["additional_kwargs"] = kwargs
        content = _content(native, calls, where)
        extras: dict[str, Any] = {"langchain": lc} if lc else {}
        call_id = _tool_call_id(native, where, extras) if role == "tool" else None
        name = getattr(native, "name", None)
        message = Message(
            role,
            content,
            tool_calls=tuple(calls),
            tool_call_id=call_id,
            name=name if isinstance(name, str) else None,
            extras=extras,
        )
        return [apply_carrier(message, carried, where) if carried is not None else message]

    def _calls(
        self, native: Any, index: int, signatures: dict[str, Any], where: str
    ) -> list[ToolCall]:
        """The tool calls of ``native`` (their signatures popped from ``signatures``)."""
        raw_calls = getattr(native, "tool_calls", None) or ()
        if not isinstance(raw_calls, list | tuple):
            raise ConfigError(f"{where}.tool_calls must be a list")
        return [
            self._call(call, index, k, signatures, f"{where}.tool_calls[{k}]")
            for k, call in enumerate(raw_calls)
        ]

    def _call(
        self, call: Any, index: int, k: int, signatures: dict[str, Any], where: str
    ) -> ToolCall:
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise ConfigError(f"{where} must be a tool call dict with a str name")
        args = call.get("args")
        args = {} if args is None else args
        arguments = to_json(args, f"{where}.args", ensure_ascii=False, lenient=True)
        extras: dict[str, Any] = {
            k2: v for k2, v in call.items() if k2 not in ("name", "args", "id", "type")
        }
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = f"lc_call_{index}_{k}"
            extras["langchain_no_id"] = True
        elif call_id in signatures:
            extras["thought_signature"] = signatures.pop(call_id)
        return ToolCall(call_id, call["name"], arguments, extras)

    def rebuild(
        self, native: Any, originals: Sequence[Message], now: Sequence[Message | None]
    ) -> list[Any]:
        message = now[0]
        if message is None:
            return []
        if message.text == originals[0].text:
            return [native]
        raw = native.content
        content: Any = (
            message.text if isinstance(raw, str) else patch_text_blocks(raw, message.text, _TEXT)
        )
        update: dict[str, Any] = {"content": content}
        kwargs = native.additional_kwargs or {}
        if RESERVED_KEY in kwargs:
            bare = {k: v for k, v in kwargs.items() if k != RESERVED_KEY}
            plain = self.load(
                native.model_copy(update={**update, "additional_kwargs": bare}), _PROBE
            )
            carrier = carrier_for(message, plain[0])
            update["additional_kwargs"] = {**bare, RESERVED_KEY: carrier} if carrier else bare
        return [native.model_copy(update=update)]

    def dump(self, message: Message) -> Any:
        """A new LangChain message for ``message``; ``load(dump(m)) == [m]``.

        Raises:
            MissingDependency: langchain-core is not installed.
        """
        lcm = _lc()
        native = self._build(lcm, message, {})
        carrier = carrier_for(message, self.load(native, _PROBE)[0])
        if carrier:
            native = self._build(lcm, message, {RESERVED_KEY: carrier})
        return native

    def _build(self, lcm: Any, message: Message, more: dict[str, Any]) -> Any:
        lc = message.extras.get("langchain")
        lc = lc if isinstance(lc, Mapping) else {}
        content: Any = (
            message.content
            if isinstance(message.content, str)
            else [_dump_block(p) for p in message.content]
        )
        kwargs = _kwargs(lc, message)
        kwargs.update(more)
        fields: dict[str, Any] = {"content": content, "additional_kwargs": kwargs}
        for key in ("id", "response_metadata"):
            if key in lc:
                fields[key] = lc[key]
        if message.name is not None:
            fields["name"] = message.name
        if message.role == "assistant":
            return _build_assistant(lcm, message, lc, fields)
        if message.role == "tool":
            if "artifact" in lc:
                fields["artifact"] = lc["artifact"]
            status = "error" if message.extras.get("is_error") is True else "success"
            return lcm.ToolMessage(tool_call_id=message.tool_call_id, status=status, **fields)
        if "role" in lc:
            return lcm.ChatMessage(role=lc["role"], **fields)
        if message.role == "system":
            return lcm.SystemMessage(**fields)
        return lcm.HumanMessage(**fields)


def _kwargs(lc: Mapping[str, Any], message: Message) -> dict[str, Any]:
    """The ``additional_kwargs`` of a new native: the loaded ones, with the calls' thought
    signatures."""
    kwargs: dict[str, Any] = dict(lc.get("additional_kwargs") or {})
    signatures = dict(kwargs.get(GEMINI_SIGNATURES_KEY) or {})
    for call in message.tool_calls:
        sig = call.extras.get("thought_signature")
        if isinstance(sig, str):
            signatures[call.id] = sig
    if signatures:
        kwargs[GEMINI_SIGNATURES_KEY] = signatures
    return kwargs


def _build_assistant(
    lcm: Any, message: Message, lc: Mapping[str, Any], fields: dict[str, Any]
) -> Any:
    """A new AIMessage (a ChatMessage when it was one) with its tool calls."""
    calls = []
    for call in message.tool_calls:
        args = parse_json(call.arguments) if call.arguments else {}
        calls.append(
            {
                "name": call.name,
                "args": args if isinstance(args, dict) else {},
                "id": None if call.extras.get("langchain_no_id") else call.id,
                "type": "tool_call",
            }
        )
    for key in ("usage_metadata", "invalid_tool_calls"):
        if key in lc:
            fields[key] = lc[key]
    if "role" in lc:
        return lcm.ChatMessage(role=lc["role"], **fields)
    return lcm.AIMessage(tool_calls=calls, **fields)
