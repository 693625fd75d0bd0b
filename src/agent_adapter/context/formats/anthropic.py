"""Anthropic Messages dicts (``anthropic`` format).

Shapes follow the Messages API reference: ``{"role": "user" | "assistant", "content": str |
list[block]}``. Assistant blocks ``text``, ``thinking`` (with ``signature``),
``redacted_thinking`` (``data``) and ``tool_use`` (``id``, ``name``, ``input``) become one
message with parts and tool calls; other blocks (``server_tool_use``, ``web_search_tool_result``
...) ride along as opaque parts. A user message's ``tool_result`` blocks become ``tool``
messages (``tool_use_id`` -> ``tool_call_id``, ``is_error`` and ``cache_control`` in extras) and
its other blocks one user message. Back, blocks are rebuilt in their original places, so
``cache_control`` markers, thinking blocks and signatures never move or change.
"""

from __future__ import annotations

import json
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
    ThinkingPart,
    ToolCall,
)

__all__ = ["AnthropicConverter"]

_SURE_BLOCKS = {
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "document",
    "server_tool_use",
    "web_search_tool_result",
    "search_result",
}


def _block_part(block: Mapping[str, Any]) -> Part:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return TextPart(
            block["text"], {k: v for k, v in block.items() if k not in ("type", "text")}
        )
    if kind == "thinking":
        return ThinkingPart(str(block.get("thinking", "")), block.get("signature"))
    if kind == "redacted_thinking":
        return ThinkingPart(str(block.get("data", "")), redacted=True)
    if kind == "image":
        src: Mapping[str, Any] = block["source"] if isinstance(block.get("source"), Mapping) else {}
        return ImagePart(url=src.get("url"), data=src.get("data"), media_type=src.get("media_type"))
    if kind == "document":
        doc: Mapping[str, Any] = block["source"] if isinstance(block.get("source"), Mapping) else {}
        return FilePart(url=doc.get("url"), data=doc.get("data"), media_type=doc.get("media_type"))
    return OpaquePart("anthropic", block)


def _blocks(raw: Any, where: str) -> list[Mapping[str, Any]]:
    if not isinstance(raw, list):
        raise ConfigError(f"{where} must be a str or a list of content blocks")
    for k, block in enumerate(raw):
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise ConfigError(f"{where}[{k}] must be a content block dict with a 'type'")
    return raw


class AnthropicConverter(Converter[dict[str, Any]]):
    """Anthropic Messages dicts <-> Message (see the module docstring)."""

    name = "anthropic"

    def kind(self, item: Any) -> str | None:
        if not isinstance(item, Mapping) or item.get("role") not in ("user", "assistant"):
            return None
        if "type" in item or "tool_calls" in item or "tool_call_id" in item:
            return None
        content = item.get("content")
        if isinstance(content, str):
            return "maybe"
        if not isinstance(content, list) or not all(isinstance(b, Mapping) for b in content):
            return None
        kinds = {b.get("type") for b in content}
        if (
            kinds & _SURE_BLOCKS
            or any(b.get("type") == "image" and "source" in b for b in content)
            or any("cache_control" in b for b in content)
        ):
            return "sure"
        return "maybe" if kinds <= {"text"} else None

    def load(self, native: dict[str, Any], index: int) -> list[Message]:
        where = f"messages[{index}]"
        if not isinstance(native, Mapping):
            raise ConfigError(f"{where} is {type(native).__name__}, not an Anthropic message dict")
        role = native.get("role")
        if role not in ("user", "assistant"):
            raise ConfigError(f"{where}.role {role!r} must be 'user' or 'assistant'")
        extras = {k: v for k, v in native.items() if k not in ("role", "content")}
        raw = native.get("content")
        if isinstance(raw, str):
            return [Message(role, raw, extras=extras)]
        blocks = _blocks(raw, f"{where}.content")
        if role == "assistant":
            parts: list[Part] = []
            calls: list[ToolCall] = []
            for k, block in enumerate(blocks):
                if block["type"] == "tool_use":
                    id_, name = block.get("id"), block.get("name")
                    if not isinstance(id_, str) or not isinstance(name, str):
                        raise ConfigError(f"{where}.content[{k}] tool_use needs str id and name")
                    calls.append(ToolCall(id_, name, json.dumps(block.get("input", {}))))
                else:
                    parts.append(_block_part(block))
            return [Message("assistant", tuple(parts), tool_calls=tuple(calls), extras=extras)]
        out: list[Message] = []
        pending: list[Part] = []
        for k, block in enumerate(blocks):
            if block["type"] != "tool_result":
                pending.append(_block_part(block))
                continue
            if pending:
                out.append(Message("user", tuple(pending), extras=extras))
                pending = []
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str) or not call_id:
                raise ConfigError(f"{where}.content[{k}].tool_use_id must be a non-empty str")
            body = block.get("content", "")
            content: str | tuple[Part, ...]
            if isinstance(body, str):
                content = body
            else:
                content = tuple(
                    _block_part(b) for b in _blocks(body, f"{where}.content[{k}].content")
                )
            meta = {
                k2: v for k2, v in block.items() if k2 not in ("type", "tool_use_id", "content")
            }
            out.append(Message("tool", content, tool_call_id=call_id, extras=meta))
        if pending or not out:
            out.append(Message("user", tuple(pending), extras=extras))
        return out

    def rebuild(
        self,
        native: dict[str, Any],
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> list[dict[str, Any]]:
        raw = native.get("content")
        if isinstance(raw, str) or native.get("role") == "assistant":
            message = now[0]
            if message is None:
                return []
            if message.text == originals[0].text:
                return [native]
            if isinstance(raw, str):
                return [{**native, "content": message.text}]
            blocks0 = raw if isinstance(raw, list) else []
            return [{**native, "content": patch_text_blocks(blocks0, message.text, is_text_block)}]
        # a user message: tool_result blocks and runs of other blocks, as load() split them
        blocks: list[Any] = []
        k = 0  # index of the message the current block belongs to
        run: list[Any] = []

        def flush() -> None:
            if not run:
                return
            msg = now[k]
            if msg is originals[k]:
                blocks.extend(run)
            elif msg is not None:
                blocks.extend(patch_text_blocks(run, msg.text, is_text_block))
            run.clear()

        for block in raw or []:
            if block.get("type") != "tool_result":
                run.append(block)
                continue
            if run:
                flush()
                k += 1
            msg = now[k]
            if msg is originals[k]:
                blocks.append(block)
            elif msg is not None:
                body = block.get("content", "")
                new_body: Any = (
                    msg.text
                    if isinstance(body, str)
                    else patch_text_blocks(list(body), msg.text, is_text_block)
                )
                blocks.append({**block, "content": new_body})
            k += 1
        flush()
        return [{**native, "content": blocks}] if blocks else []

    def dump(self, message: Message) -> dict[str, Any]:
        role = "assistant" if message.role == "assistant" else "user"
        if isinstance(message.content, str) and not message.tool_calls:
            return {"role": role, "content": message.content}
        blocks: list[Any] = []
        for p in message.parts:
            if isinstance(p, TextPart):
                blocks.append({"type": "text", "text": p.text, **p.extras})
            elif isinstance(p, ThinkingPart):
                blocks.append(
                    {"type": "redacted_thinking", "data": p.text}
                    if p.redacted
                    else {"type": "thinking", "thinking": p.text, "signature": p.signature or ""}
                )
            elif isinstance(p, OpaquePart):
                blocks.append(p.data)
            elif isinstance(p, ImagePart):
                src: dict[str, Any] = (
                    {"type": "url", "url": p.url}
                    if p.url
                    else {"type": "base64", "media_type": p.media_type, "data": p.data}
                )
                blocks.append({"type": "image", "source": src})
            else:
                src = (
                    {"type": "url", "url": p.url}
                    if p.url
                    else {"type": "base64", "media_type": p.media_type, "data": p.data}
                )
                blocks.append({"type": "document", "source": src})
        blocks.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.args}
            for c in message.tool_calls
        )
        if message.role == "tool":
            return {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": message.tool_call_id,
                        "content": blocks,
                        **message.extras,
                    }
                ],
            }
        return {"role": role, "content": blocks}
