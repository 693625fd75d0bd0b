"""OpenAI Chat Completions message dicts (``openai`` format).

Shapes follow the Chat Completions API reference (``messages``): roles ``system``,
``developer``, ``user``, ``assistant``, ``tool``; ``content`` a string, ``None`` or a list of
parts (``text``, ``image_url``, ``input_audio``, ``file``, ``refusal``); assistant
``tool_calls`` of type ``function`` (``function.name``, ``function.arguments`` as JSON text)
or ``custom`` (``custom.name``, ``custom.input``); ``tool`` messages answer by
``tool_call_id``. Keys with no slot ride in ``Message.extras``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._patch import is_text_block, patch_text_blocks
from agent_adapter.errors import ConfigError
from agent_adapter.messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    TextPart,
    ToolCall,
)

__all__ = ["OpenAIChatConverter"]

_CHAT_ROLES = {"system", "developer", "user", "assistant", "tool"}
_KNOWN_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}
_SURE_PARTS = {"image_url", "input_audio", "refusal", "file"}


def _part(raw: Any, where: str) -> Part:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a content part dict, got {type(raw).__name__}")
    kind = raw.get("type")
    if kind == "text":
        text = raw.get("text")
        if not isinstance(text, str):
            raise ConfigError(f"{where}.text must be a str")
        return TextPart(text, {k: v for k, v in raw.items() if k not in ("type", "text")})
    if kind == "image_url":
        image = raw.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        detail = image.get("detail") if isinstance(image, Mapping) else None
        return ImagePart(url=url if isinstance(url, str) else None, detail=detail)
    if kind == "file":
        f: Mapping[str, Any] = raw["file"] if isinstance(raw.get("file"), Mapping) else {}
        return FilePart(
            data=f.get("file_data"), file_id=f.get("file_id"), filename=f.get("filename")
        )
    return OpaquePart("openai", raw)


def _tool_call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a tool call dict")
    id_ = raw.get("id")
    if not isinstance(id_, str) or not id_:
        raise ConfigError(f"{where}.id must be a non-empty str")
    kind = raw.get("type", "function")
    body = raw.get(kind)
    if not isinstance(body, Mapping) or not isinstance(body.get("name"), str):
        raise ConfigError(f"{where}.{kind}.name must be a str")
    args = body.get("arguments" if kind == "function" else "input", "")
    if not isinstance(args, str):
        raise ConfigError(f"{where}.{kind}.arguments must be a JSON str")
    return ToolCall(id_, body["name"], args, {"type": kind} if kind != "function" else {})


class OpenAIChatConverter(Converter[dict[str, Any]]):
    """Chat Completions dicts <-> Message (see the module docstring)."""

    name = "openai"

    def kind(self, item: Any) -> str | None:
        if not isinstance(item, Mapping) or item.get("role") not in _CHAT_ROLES:
            return None
        if "type" in item:  # a Responses item
            return None
        if (
            item.get("tool_calls")
            or "tool_call_id" in item
            or item["role"] in ("tool", "developer")
        ):
            return "sure"
        content = item.get("content")
        if isinstance(content, str) or content is None:
            return "maybe"
        if isinstance(content, list) and all(isinstance(p, Mapping) for p in content):
            kinds = {p.get("type") for p in content}
            if kinds & _SURE_PARTS:
                return "sure"
            if kinds <= {"text"}:
                return "maybe"
        return None

    def load(self, native: dict[str, Any], index: int) -> list[Message]:
        where = f"messages[{index}]"
        if not isinstance(native, Mapping):
            raise ConfigError(
                f"{where} is {type(native).__name__}, not an OpenAI chat message dict"
            )
        role = native.get("role")
        if role not in _CHAT_ROLES:
            raise ConfigError(
                f"{where}.role {role!r} is not an OpenAI chat role {sorted(_CHAT_ROLES)}"
            )
        raw = native.get("content")
        content: str | tuple[Part, ...]
        if raw is None or isinstance(raw, str):
            content = raw or ""
        elif isinstance(raw, list):
            content = tuple(_part(p, f"{where}.content[{k}]") for k, p in enumerate(raw))
        else:
            raise ConfigError(f"{where}.content must be a str, a list of parts or None")
        calls = native.get("tool_calls") or ()
        if not isinstance(calls, list | tuple):
            raise ConfigError(f"{where}.tool_calls must be a list")
        if calls and role != "assistant":
            raise ConfigError(f"{where}.tool_calls is only allowed on assistant messages")
        tool_calls = tuple(_tool_call(c, f"{where}.tool_calls[{k}]") for k, c in enumerate(calls))
        call_id = native.get("tool_call_id")
        if role == "tool" and (not isinstance(call_id, str) or not call_id):
            raise ConfigError(f"{where}.tool_call_id must be a non-empty str on a tool message")
        name = native.get("name")
        extras = {k: v for k, v in native.items() if k not in _KNOWN_KEYS}
        if role == "developer":
            extras["role"] = "developer"
        return [
            Message(
                "system" if role == "developer" else role,
                content,
                tool_calls=tool_calls,
                tool_call_id=call_id if role == "tool" else None,
                name=name if isinstance(name, str) else None,
                extras=extras,
            )
        ]

    def rebuild(
        self,
        native: dict[str, Any],
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> list[dict[str, Any]]:
        message = now[0]
        if message is None:
            return []
        if message.text == originals[0].text:
            return [native]
        raw = native.get("content")
        if isinstance(raw, list):
            return [{**native, "content": patch_text_blocks(raw, message.text, is_text_block)}]
        return [{**native, "content": message.text}]

    def dump(self, message: Message) -> dict[str, Any]:
        out: dict[str, Any] = {"role": message.extras.get("role", message.role)}
        if isinstance(message.content, str):
            out["content"] = message.content
        else:
            out["content"] = [_dump_part(p) for p in message.content]
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in message.tool_calls
            ]
        if message.tool_call_id:
            out["tool_call_id"] = message.tool_call_id
        if message.name:
            out["name"] = message.name
        out.update({k: v for k, v in message.extras.items() if k != "role"})
        return out


def _dump_part(part: Part) -> Any:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text, **part.extras}
    if isinstance(part, ImagePart):
        url = part.url or f"data:{part.media_type or 'image/png'};base64,{part.data or ''}"
        image: dict[str, Any] = {"url": url}
        if part.detail:
            image["detail"] = part.detail
        return {"type": "image_url", "image_url": image}
    if isinstance(part, OpaquePart):
        return part.data
    if isinstance(part, FilePart):
        f = {
            k: v
            for k, v in (
                ("file_data", part.data),
                ("file_id", part.file_id),
                ("filename", part.filename),
            )
            if v is not None
        }
        return {"type": "file", "file": f}
    return {"type": "text", "text": part.text}  # thinking has no chat slot: sent as text
