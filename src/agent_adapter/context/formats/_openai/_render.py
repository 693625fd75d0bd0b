"""Responses API items, the write side: rendering messages as items and patching item text.

See :mod:`agent_adapter.context.formats._openai._responses` for the mapping. Render functions
return the item(s) and the indexes of the message's parts they hold, in order; what no item has
a slot for is left to the caller's carrier (:mod:`agent_adapter.context.formats._carrier`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, assert_never

from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.context.formats._codec import data_url, parse_json
from agent_adapter.context.formats._openai._items import (
    ARG_KEYS,
    CALL_META,
    CHAT_ONLY_PARTS,
    RESPONSES_ONLY_PARTS,
    TEXT_TYPES,
    is_item_type,
    opaque_item,
    output_call_id,
    text_type,
)
from agent_adapter.context.formats._patch import TextBlocks, dict_text_blocks, patch_text_blocks

#: Text part keys of the API reference besides ``type`` and ``text``.
_TEXT_KEYS = frozenset({"annotations", "logprobs"})
#: ``output_text`` parts need ``annotations``; empty lists are no keys of their own.
_OUTPUT_TEXT = dict_text_blocks(
    frozenset(TEXT_TYPES),
    "output_text",
    defaults={"annotations": []},
    ignore={"logprobs": []},
)
_INPUT_TEXT = dict_text_blocks(frozenset(TEXT_TYPES), "input_text", ignore={"annotations": []})


def text_blocks(role: str) -> TextBlocks:
    """How the content parts of a ``role`` message (or a tool output) hold text."""
    return _OUTPUT_TEXT if role == "assistant" else _INPUT_TEXT


# --------------------------------------------------------------------------------------------
# rebuild


def rebuild_item(item: dict[str, Any], text: str) -> dict[str, Any]:
    """``item`` with its text replaced by ``text``; every other key and part is kept (text
    parts through :func:`~agent_adapter.context.formats._patch.patch_text_blocks`).

    Items with no text (calls, reasoning, opaque items, a screenshot output) come back as is.
    """
    kind_ = item.get("type")
    if kind_ is None or kind_ == "message":
        raw = item.get("content")
        if isinstance(raw, list):
            role = str(item.get("role"))
            return {**item, "content": patch_text_blocks(raw, text, text_blocks(role))}
        return {**item, "content": text}
    if output_call_id(item):
        output = item.get("output")
        if output is None or isinstance(output, str):
            return {**item, "output": text}
        if isinstance(output, list):
            return {**item, "output": patch_text_blocks(output, text, _INPUT_TEXT)}
    return item


# --------------------------------------------------------------------------------------------
# render (dump)


def _render_part(part: Part, role: str) -> Any:
    """The Responses content part for ``part``, or ``None`` when it has no slot."""
    match part:
        case TextPart():
            return _render_text(part, role)
        case ImagePart():
            return _render_image(part)
        case FilePart():
            return _render_file(part)
        case OpaquePart():
            return _render_opaque(part)
        case ThinkingPart():
            return None  # a message item has no slot: reasoning is an item of its own
        case _:
            assert_never(part)


def _render_text(part: TextPart, role: str) -> dict[str, Any]:
    kind_ = part.extras.get("type")
    if kind_ not in TEXT_TYPES:
        kind_ = text_type(role)
    block: dict[str, Any] = {"type": kind_, "text": part.text}
    block.update({k: v for k, v in part.extras.items() if k in _TEXT_KEYS})
    if kind_ == "output_text":
        block.setdefault("annotations", [])  # required on output_text
    return block


def _render_image(part: ImagePart) -> dict[str, Any] | None:
    block: dict[str, Any] = {"type": "input_image"}
    if part.url is not None:
        block["image_url"] = part.url
    elif part.data is not None:
        block["image_url"] = data_url(part.media_type or "image/png", part.data)
    elif not isinstance(part.extras.get("file_id"), str):
        return None
    if part.detail is not None:  # the API defaults to "auto"
        block["detail"] = part.detail
    block.update({k: v for k, v in part.extras.items() if k == "file_id"})
    return block


def _render_file(part: FilePart) -> dict[str, Any] | None:
    if part.url is None and part.data is None and part.file_id is None:
        return None
    block: dict[str, Any] = {"type": "input_file"}
    if part.url is not None:
        block["file_url"] = part.url
    if part.data is not None:
        block["file_data"] = data_url(part.media_type, part.data) if part.media_type else part.data
    if part.file_id is not None:
        block["file_id"] = part.file_id
    if part.filename is not None:
        block["filename"] = part.filename
    return block


def _render_opaque(part: OpaquePart) -> Any:
    """An opaque part of ours as it came; other providers' items have no slot."""
    data = part.data
    if (
        part.provider == "openai"
        and isinstance(data, Mapping)
        and isinstance(data.get("type"), str)
        and data["type"] not in RESPONSES_ONLY_PARTS | CHAT_ONLY_PARTS
        and not is_item_type(data["type"])
    ):
        return data
    return None


def _render_parts(
    parts: Sequence[Part], role: str, with_parts: bool
) -> tuple[list[Any], list[int]]:
    blocks: list[Any] = []
    rendered: list[int] = []
    for i, part in enumerate(parts):
        block = _render_part(part, role) if with_parts else None
        if block is not None:
            blocks.append(block)
            rendered.append(i)
    return blocks, rendered


def _origin_meta(message: Message, kind_: str, skip: Sequence[str]) -> dict[str, Any]:
    """The message's extras to write on a ``kind_`` item: all of them (but ``skip``) when the
    message was loaded from such an item, none otherwise (they go to the carrier)."""
    if message.extras.get("type") != kind_:
        return {}
    return {k: v for k, v in message.extras.items() if k not in ("type", *skip)}


def _payload(kind_: str, arguments: str) -> dict[str, Any] | None:
    """The payload of a ``kind_`` call item (not a function or custom call) from its
    arguments: a JSON object with none of the item's own keys, else ``None``."""
    if kind_ in ARG_KEYS or not (is_item_type(kind_) and kind_.endswith("_call")):
        return None
    payload = parse_json(arguments)
    if not isinstance(payload, dict) or set(payload) & (CALL_META | {"type", "call_id"}):
        return None
    return payload


def _call_item(kind_: str, call: ToolCall, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The item of one call: ``kind_`` (``function_call`` when its payload does not fit)."""
    if kind_ == "custom_tool_call":
        return {
            "type": kind_,
            **meta,
            "call_id": call.id,
            "name": call.name,
            "input": call.arguments,
        }
    payload = _payload(kind_, call.arguments)
    if payload is None:
        return {
            "type": "function_call",
            **meta,
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
    return {
        "type": kind_,
        **{k: v for k, v in meta.items() if k in CALL_META},
        "call_id": call.id,
        **payload,
    }


def _render_call(message: Message) -> dict[str, Any]:
    """The item of a message holding one call (its extras on the item when they came from
    one)."""
    call = message.tool_calls[0]
    kind_ = message.extras.get("type")
    if not isinstance(kind_, str) or not kind_.endswith("_call"):
        kind_ = "custom_tool_call" if call.extras.get("type") == "custom" else "function_call"
    if _payload(kind_, call.arguments) is None and kind_ not in ARG_KEYS:
        kind_ = "function_call"
    key = ARG_KEYS.get(kind_)
    skip = ("call_id", "name", key) if key else ("call_id",)
    return _call_item(kind_, call, _origin_meta(message, kind_, skip))


def render_member(call: ToolCall) -> dict[str, Any]:
    """The item of a further call of a message (a member of its group): ``custom_tool_call``
    when its extras say ``"type": "custom"``, the ``*_call`` type they name when its arguments
    are that item's payload, else ``function_call``; the extras of the API reference's item
    keys (``id``, ``status``, ``pending_safety_checks``) on the item.
    :func:`~agent_adapter.context.formats._openai._items.member_call` reads it back."""
    kind_ = call.extras.get("type")
    meta = {k: v for k, v in call.extras.items() if k in CALL_META}
    if kind_ == "custom":
        return _call_item("custom_tool_call", call, meta)
    if isinstance(kind_, str) and _payload(kind_, call.arguments) is not None:
        return _call_item(kind_, call, meta)
    return _call_item("function_call", call, meta)


def _render_screenshot(part: Part) -> dict[str, Any] | None:
    if not isinstance(part, ImagePart) or part.extras.get("type") != "computer_screenshot":
        return None
    out: dict[str, Any] = {"type": "computer_screenshot"}
    if part.url is not None:
        out["image_url"] = part.url
    elif part.data is not None:
        out["image_url"] = data_url(part.media_type or "image/png", part.data)
    out.update({k: v for k, v in part.extras.items() if k != "type"})
    return out


def _render_output(message: Message, with_parts: bool) -> tuple[dict[str, Any], list[int]]:
    kind_ = message.extras.get("type")
    if not isinstance(kind_, str) or not kind_.endswith("_call_output"):
        kind_ = "function_call_output"
    meta = _origin_meta(message, kind_, ("call_id",))
    item: dict[str, Any] = {"type": kind_}
    item.update({k: v for k, v in meta.items() if k != "output"})
    call_id = message.tool_call_id or ""
    if not (kind_ == "local_shell_call_output" and meta.get("id") == call_id):
        item["call_id"] = call_id
    rendered: list[int] = []
    screenshot = (
        _render_screenshot(message.content[0])
        if with_parts and not isinstance(message.content, str) and len(message.content) == 1
        else None
    )
    if "output" in meta and message.content in ("", ()):
        item["output"] = meta["output"]
    elif screenshot is not None:
        item["output"], rendered = screenshot, [0]
    elif isinstance(message.content, str):
        item["output"] = message.content
    else:
        item["output"], rendered = _render_parts(message.content, "user", with_parts)
    return item, rendered


def _render_reasoning(message: Message) -> dict[str, Any] | None:
    """The ``reasoning`` item of an assistant message holding thinking parts only."""
    parts = message.content
    if (
        message.role != "assistant"
        or message.tool_calls
        or isinstance(parts, str)
        or not parts
        or not all(isinstance(p, ThinkingPart) for p in parts)
    ):
        return None
    first = parts[0]
    assert isinstance(first, ThinkingPart)
    if first.extras.get("type") == "reasoning":
        return dict(first.extras)
    item: dict[str, Any] = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": first.text}] if first.text else [],
    }
    if first.signature is not None:
        item["encrypted_content"] = first.signature
    return item


def render_item(message: Message, with_parts: bool) -> tuple[dict[str, Any], list[int]]:
    """The Responses item for ``message`` and the indexes of the parts it holds, in order.

    What one item cannot hold (a second tool call, a thinking part in a message, foreign
    extras) is left to the caller's carrier; ``with_parts=False`` renders no part at all.
    """
    content = message.content
    parts = () if isinstance(content, str) else content
    if message.role == "tool":
        return _render_output(message, with_parts)
    opaque = opaque_item(message) if with_parts else None
    if opaque is not None:
        return dict(opaque), [0]
    reasoning = _render_reasoning(message) if with_parts else None
    if reasoning is not None:
        return reasoning, [0]
    if (
        len(message.tool_calls) == 1
        and all(isinstance(p, ThinkingPart) for p in parts)
        and not (isinstance(content, str) and content)
    ):
        return _render_call(message), []
    role: str = message.role
    if role == "system" and message.extras.get("role") == "developer":
        role = "developer"
    item: dict[str, Any] = {}
    if message.extras.get("type") == "message":
        item["type"] = "message"
        item.update(_origin_meta(message, "message", ("role", "content")))
    item["role"] = role
    rendered: list[int] = []
    if isinstance(content, str):
        item["content"] = content
    else:
        item["content"], rendered = _render_parts(content, message.role, with_parts)
    return item, rendered


# --------------------------------------------------------------------------------------------
# groups: one message written as several items


def needs_group(message: Message) -> bool:
    """True when one item cannot hold ``message``: an assistant message with two or more
    tool calls, or with a call and text or other non-thinking content. The Responses API
    writes each call as its own item, after the message item holding the rest."""
    calls = message.tool_calls
    if message.role != "assistant" or not calls:
        return False
    return len(calls) > 1 or has_head(message)


def has_head(message: Message) -> bool:
    """True when a group for ``message`` starts with an item for its content (not a call)."""
    content = message.content
    if isinstance(content, str):
        return bool(content)
    return any(not isinstance(part, ThinkingPart) for part in content)


def render_group(message: Message, with_parts: bool) -> tuple[list[dict[str, Any]], list[int]]:
    """The items of a message :func:`needs_group` (see there) and the indexes of the parts
    the first one holds: the message item (:func:`render_item` of the message without its
    calls) when there is text or another non-thinking part, then one item per call
    (:func:`render_member`); without such content the first call's item (as
    :func:`render_item` writes a one-call message, with the message's extras) comes first.
    Thinking parts and extras no item has a slot for are left to the caller's carrier."""
    calls = message.tool_calls
    if has_head(message):
        head, rendered = render_item(replace(message, tool_calls=()), with_parts)
        return [head, *(render_member(c) for c in calls)], rendered
    first = _render_call(replace(message, tool_calls=calls[:1]))
    return [first, *(render_member(c) for c in calls[1:])], []
