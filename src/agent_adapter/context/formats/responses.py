"""OpenAI Responses API items: the private half of the ``openai`` format.

Shapes follow the Responses API reference (*Create a model response*, ``input`` item list) and
the function-calling, reasoning, MCP and computer-use guides. One item is one message (the
converter's ``dump_all`` writes an assistant message with several calls, or text and a call, as
a group of items: :func:`render_group`):

* ``message`` (typed, or an "easy input message" ``{"role", "content"}``): roles ``user``,
  ``system``, ``developer`` (a ``system`` message with ``extras["role"]``), ``assistant``;
  content parts ``input_text`` / ``output_text`` (text parts; a type other than the role's
  and non-empty ``annotations`` stay in extras), ``input_image``, ``input_file``; ``refusal``,
  ``input_audio`` and unknown parts ride as opaque parts. Other item keys (``type``, ``id``,
  ``status``) go to extras, so a typed message goes back typed; an easy input message with
  part content loads like a Chat Completions one (and is written back in the list's API).
* ``function_call`` (``call_id``, ``name``, ``arguments``), ``custom_tool_call`` (``input``) and
  every other ``*_call`` item with a ``call_id`` (``computer_call``, ``local_shell_call``,
  ``shell_call``, ``apply_patch_call``): an assistant message with one tool call. The call's
  payload (``action``, ``operation``...) is its ``arguments`` as JSON, its ``name`` the item's
  or the type without ``_call``; ``type``, ``id``, ``status`` and safety checks go to extras.
* ``*_call_output`` items (``call_id``; ``local_shell_call_output`` links by ``id``): a ``tool``
  message; a str ``output`` is the text, a list its parts, a ``computer_screenshot`` an image
  part (``type`` in its extras), any other output stays in ``extras["output"]``. So a call
  and its output form a tool round, which compression keeps or drops whole.
* ``reasoning``: an assistant message holding one thinking part and nothing else: ``text`` is
  the summary texts joined (the ``reasoning_text`` content when there is no summary),
  ``signature`` the ``encrypted_content``, ``extras`` the whole item, so it goes back unchanged.
  Such a message joins the unit of the item after it (see :mod:`agent_adapter.context.units`):
  a reasoning item is never kept without the item it precedes, nor the reverse.
* Everything else (``mcp_call``, ``mcp_list_tools``, ``mcp_approval_request``,
  ``web_search_call``, ``file_search_call``, ``image_generation_call``,
  ``code_interpreter_call``, ``item_reference``, unknown types): a message holding the item as
  one opaque part (and its ``type`` in extras), ``user`` for ``mcp_approval_response`` (the
  client's answer), else ``assistant``. MCP approval requests and responses hold an approval marker
  (:func:`~agent_adapter.context.units.has_approval_marker`), so they are protected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agent_adapter.errors import ConfigError
from agent_adapter.messages import (
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

#: Item types of the Responses API reference (``input`` item list).
ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "computer_call",
        "computer_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "shell_call",
        "shell_call_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "web_search_call",
        "file_search_call",
        "image_generation_call",
        "code_interpreter_call",
        "item_reference",
        "compaction",
    }
)
#: Content part types of Responses messages.
PART_TYPES = frozenset(
    {"input_text", "output_text", "input_image", "input_file", "input_audio", "refusal"}
)
_TEXT_TYPES = ("input_text", "output_text")
#: Text part keys of the API reference besides ``type`` and ``text``.
_TEXT_KEYS = frozenset({"annotations", "logprobs"})
_RESPONSES_ONLY_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file"})
_CHAT_ONLY_PARTS = frozenset({"text", "image_url", "file"})
_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_MESSAGE_ROLES = frozenset({"system", "developer", "user", "assistant"})
#: Items the client sends (not model output) that are not ``*_call_output``.
_USER_SIDE = frozenset({"mcp_approval_response"})
#: Keys of a ``*_call`` item that are not its payload.
_CALL_META = frozenset({"id", "status", "pending_safety_checks"})
_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+);base64,(.*)", re.DOTALL)


def split_data_url(value: str) -> tuple[str | None, str | None]:
    """``(media_type, data)`` of a ``data:<type>;base64,<data>`` URL, else ``(None, None)``."""
    match = _DATA_URL.fullmatch(value)
    return (match.group(1), match.group(2)) if match else (None, None)


def data_url(media_type: str, data: str) -> str:
    """The ``data:`` URL that :func:`split_data_url` reads back byte for byte."""
    return f"data:{media_type};base64,{data}"


def is_item_type(kind: Any) -> bool:
    """True for a known Responses item type, or one shaped like them (``*_call``, ``mcp_*``)."""
    return isinstance(kind, str) and (
        kind in ITEM_TYPES or kind.endswith(("_call", "_call_output")) or kind.startswith("mcp_")
    )


def is_call(item: Mapping[str, Any]) -> bool:
    """True for a ``*_call`` item answered by a ``*_call_output`` (it has a ``call_id``)."""
    kind = item.get("type")
    return isinstance(kind, str) and kind.endswith("_call") and isinstance(item.get("call_id"), str)


def output_call_id(item: Mapping[str, Any]) -> str | None:
    """The call a ``*_call_output`` item answers, or ``None`` when it is not one."""
    kind = item.get("type")
    if not isinstance(kind, str) or not kind.endswith("_call_output"):
        return None
    call_id = item.get("call_id")
    if isinstance(call_id, str):
        return call_id
    link = item.get("id")  # local_shell_call_output names the call by ``id``
    return link if kind == "local_shell_call_output" and isinstance(link, str) else None


def classify(item: Any) -> str | None:
    """``"responses"``, ``"chat"`` (Chat Completions only), ``"either"`` (a plain message valid
    in both APIs) or ``None`` (not an OpenAI message)."""
    if not isinstance(item, Mapping):
        return None
    if "type" in item:
        return "responses" if isinstance(item["type"], str) else None
    if item.get("role") not in _CHAT_ROLES:
        return None
    content = item.get("content")
    kinds = (
        {p.get("type") for p in content if isinstance(p, Mapping)}
        if isinstance(content, list)
        else set()
    )
    if (
        "tool_calls" in item
        or "tool_call_id" in item
        or item["role"] == "tool"
        or kinds & _CHAT_ONLY_PARTS
    ):
        return "chat"
    return "responses" if kinds & _RESPONSES_ONLY_PARTS else "either"


def kind(item: Mapping[str, Any]) -> str | None:
    """Detection of an item :func:`classify` calls ``"responses"``: ``"sure"`` for messages and
    known item types, ``"maybe"`` for other typed dicts (a newer item type)."""
    kind_ = item.get("type")
    if kind_ is None or kind_ == "message":
        content = item.get("content")
        if item.get("role") not in _MESSAGE_ROLES:
            return None
        if isinstance(content, str):
            return "sure"
        if isinstance(content, list) and all(
            isinstance(p, Mapping) and p.get("type") in PART_TYPES for p in content
        ):
            return "sure"
        return None
    return "sure" if is_item_type(kind_) else "maybe"


def is_responses_message(message: Message) -> bool:
    """True when ``message`` was loaded from a Responses item (it goes back as one)."""
    kind_ = message.extras.get("type")
    if is_item_type(kind_):
        return True
    if isinstance(message.content, str):
        return False
    if _opaque_item(message) is not None:
        return True
    return any(
        isinstance(part, ThinkingPart) and part.extras.get("type") == "reasoning"
        for part in message.content
    )


# --------------------------------------------------------------------------------------------
# load


def _text_type(role: str) -> str:
    """The text part type the API expects in a ``role`` message (tool outputs: input)."""
    return "output_text" if role == "assistant" else "input_text"


def _load_part(raw: Any, role: str) -> Part:
    """One content part. Defaults :func:`_render_part` writes back are left out of extras
    (the role's text type, empty ``annotations``), so text from any format looks alike."""
    if not isinstance(raw, Mapping):
        return OpaquePart("openai", raw)
    kind_ = raw.get("type")
    if kind_ in _TEXT_TYPES and isinstance(raw.get("text"), str):
        extras = {k: v for k, v in raw.items() if k != "text"}
        if kind_ == _text_type(role):
            del extras["type"]
        if kind_ == "output_text" and extras.get("annotations") == []:
            del extras["annotations"]
        return TextPart(raw["text"], extras)
    if kind_ == "input_image" and all(
        isinstance(raw.get(k), str | None) for k in ("image_url", "detail")
    ):
        url = raw.get("image_url")
        extras = {k: v for k, v in raw.items() if k not in ("type", "image_url", "detail")}
        media_type, data = split_data_url(url) if url is not None else (None, None)
        if data is not None:
            return ImagePart(
                data=data, media_type=media_type, detail=raw.get("detail"), extras=extras
            )
        return ImagePart(url=url, detail=raw.get("detail"), extras=extras)
    keys = ("file_url", "file_data", "file_id", "filename")
    if kind_ == "input_file" and all(isinstance(raw.get(k), str | None) for k in keys):
        file_data = raw.get("file_data")
        media_type, data = split_data_url(file_data) if file_data is not None else (None, None)
        return FilePart(
            url=raw.get("file_url"),
            data=data if data is not None else file_data,
            media_type=media_type,
            file_id=raw.get("file_id"),
            filename=raw.get("filename"),
            extras={k: v for k, v in raw.items() if k not in ("type", *keys)},
        )
    return OpaquePart("openai", raw)


def _load_message(item: Mapping[str, Any], where: str) -> Message:
    role = item.get("role")
    if role not in _MESSAGE_ROLES:
        raise ConfigError(f"{where}.role {role!r} must be one of {sorted(_MESSAGE_ROLES)}")
    raw = item.get("content")
    content: str | tuple[Part, ...]
    if raw is None or isinstance(raw, str):
        content = raw or ""
    elif isinstance(raw, list):
        content = tuple(_load_part(p, role) for p in raw)
    else:
        raise ConfigError(f"{where}.content must be a str or a list of content parts")
    extras = {k: v for k, v in item.items() if k not in ("role", "content")}
    if role == "developer":
        extras["role"] = "developer"
    message_role: Role = "system" if role == "developer" else role
    return Message(message_role, content, extras=extras)


def _thinking(item: Mapping[str, Any]) -> ThinkingPart:
    texts = [
        s["text"]
        for s in item.get("summary") or ()
        if isinstance(s, Mapping) and isinstance(s.get("text"), str)
    ]
    if not texts:
        texts = [
            c["text"]
            for c in item.get("content") or ()
            if isinstance(c, Mapping) and isinstance(c.get("text"), str)
        ]
    signature = item.get("encrypted_content")
    return ThinkingPart(
        "\n\n".join(texts), signature if isinstance(signature, str) else None, extras=item
    )


def _load_call(item: Mapping[str, Any], kind_: str, where: str) -> Message:
    call_id = item["call_id"]
    if kind_ in ("function_call", "custom_tool_call"):
        key = "arguments" if kind_ == "function_call" else "input"
        name, args = item.get("name"), item.get(key)
        if not isinstance(name, str) or not isinstance(args, str):
            raise ConfigError(f"{where}: {kind_} needs a str name and {key}")
        extras = {k: v for k, v in item.items() if k not in ("call_id", "name", key)}
    else:
        name = item["name"] if isinstance(item.get("name"), str) else kind_[: -len("_call")]
        payload = {k: v for k, v in item.items() if k not in _CALL_META | {"type", "call_id"}}
        try:
            args = json.dumps(payload)
        except (TypeError, ValueError):
            return Message("assistant", (OpaquePart("openai", item),))
        extras = {k: v for k, v in item.items() if k in _CALL_META or k == "type"}
    return Message("assistant", "", tool_calls=(ToolCall(call_id, name, args),), extras=extras)


def _is_screenshot(output: Any) -> bool:
    return (
        isinstance(output, Mapping)
        and output.get("type") == "computer_screenshot"
        and all(isinstance(output.get(k), str | None) for k in ("image_url", "file_id"))
    )


def _screenshot_part(output: Mapping[str, Any]) -> ImagePart:
    """A ``computer_screenshot`` output as an image part (``type`` and ``file_id`` in
    extras), so token counters see an image."""
    url = output.get("image_url")
    extras = {k: v for k, v in output.items() if k != "image_url"}
    media_type, data = split_data_url(url) if url is not None else (None, None)
    if data is not None:
        return ImagePart(data=data, media_type=media_type, extras=extras)
    return ImagePart(url=url, extras=extras)


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


def _load_output(item: Mapping[str, Any], call_id: str) -> Message:
    output = item.get("output")
    consumed = {"call_id"} if "call_id" in item else set()
    content: str | tuple[Part, ...] = ""
    if isinstance(output, str):
        content = output
        consumed.add("output")
    elif isinstance(output, list):
        content = tuple(_load_part(p, "tool") for p in output)
        consumed.add("output")
    elif output is None and "output" in item:
        consumed.add("output")
    elif isinstance(output, Mapping) and _is_screenshot(output):
        content = (_screenshot_part(output),)
        consumed.add("output")
    extras = {k: v for k, v in item.items() if k not in consumed}
    return Message("tool", content, tool_call_id=call_id, extras=extras)


def load_item(item: Any, where: str) -> Message:
    """The message of one Responses item (see the module docstring).

    Raises:
        ConfigError: ``item`` is not a dict, a message has no valid role or content, or a
            function call has no str name and arguments.
    """
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where} is {type(item).__name__}, not a Responses item dict")
    kind_ = item.get("type")
    if kind_ is None or kind_ == "message":
        return _load_message(item, where)
    if not isinstance(kind_, str):
        raise ConfigError(f"{where}.type must be a str")
    if kind_ == "reasoning":
        return Message("assistant", (_thinking(item),))
    if is_call(item):
        return _load_call(item, kind_, where)
    call_id = output_call_id(item)
    if call_id:
        return _load_output(item, call_id)
    role: Role = "user" if kind_ in _USER_SIDE else "assistant"
    if item.get("role") in ("user", "assistant"):
        role = item["role"]
    return Message(role, (OpaquePart("openai", item),), extras={"type": kind_})


# --------------------------------------------------------------------------------------------
# rebuild


def _patch_parts(blocks: list[Any], text: str, new_type: str) -> list[Any]:
    """``blocks`` with the first text part set to ``text`` and other text parts removed;
    other parts are kept as the same objects. With no text part, one is appended."""
    out: list[Any] = []
    placed = False
    for block in blocks:
        if isinstance(block, Mapping) and block.get("type") in _TEXT_TYPES:
            if not placed:
                out.append({**block, "text": text})
                placed = True
        else:
            out.append(block)
    if not placed and text:
        new: dict[str, Any] = {"type": new_type, "text": text}
        if new_type == "output_text":
            new["annotations"] = []
        out.append(new)
    return out


def rebuild_item(item: dict[str, Any], text: str) -> dict[str, Any]:
    """``item`` with its text replaced by ``text``; every other key and part is kept.

    Items with no text (calls, reasoning, opaque items, a screenshot output) come back as is.
    """
    kind_ = item.get("type")
    if kind_ is None or kind_ == "message":
        raw = item.get("content")
        if isinstance(raw, list):
            new_type = "output_text" if item.get("role") == "assistant" else "input_text"
            return {**item, "content": _patch_parts(raw, text, new_type)}
        return {**item, "content": text}
    if output_call_id(item):
        output = item.get("output")
        if output is None or isinstance(output, str):
            return {**item, "output": text}
        if isinstance(output, list):
            return {**item, "output": _patch_parts(output, text, "input_text")}
    return item


# --------------------------------------------------------------------------------------------
# render (dump)


def _render_part(part: Part, role: str) -> Any:
    """The Responses content part for ``part``, or ``None`` when it has no slot."""
    if isinstance(part, TextPart):
        kind_ = part.extras.get("type")
        if kind_ not in _TEXT_TYPES:
            kind_ = _text_type(role)
        block: dict[str, Any] = {"type": kind_, "text": part.text}
        block.update({k: v for k, v in part.extras.items() if k in _TEXT_KEYS})
        if kind_ == "output_text":
            block.setdefault("annotations", [])  # required on output_text
        return block
    if isinstance(part, ImagePart):
        block = {"type": "input_image"}
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
    if isinstance(part, FilePart):
        if part.url is None and part.data is None and part.file_id is None:
            return None
        block = {"type": "input_file"}
        if part.url is not None:
            block["file_url"] = part.url
        if part.data is not None:
            block["file_data"] = (
                data_url(part.media_type, part.data) if part.media_type else part.data
            )
        if part.file_id is not None:
            block["file_id"] = part.file_id
        if part.filename is not None:
            block["filename"] = part.filename
        return block
    if isinstance(part, OpaquePart):
        data = part.data
        if (
            part.provider == "openai"
            and isinstance(data, Mapping)
            and isinstance(data.get("type"), str)
            and data["type"] not in _RESPONSES_ONLY_PARTS | _CHAT_ONLY_PARTS
            and not is_item_type(data["type"])
        ):
            return data
    return None  # thinking, other providers' items


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


def _render_call(message: Message) -> dict[str, Any]:
    call = message.tool_calls[0]
    kind_ = message.extras.get("type")
    if not isinstance(kind_, str) or not kind_.endswith("_call"):
        kind_ = "custom_tool_call" if call.extras.get("type") == "custom" else "function_call"
    payload: Any = None
    if kind_ not in ("function_call", "custom_tool_call"):
        try:
            payload = json.loads(call.arguments)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            kind_ = "function_call"
    if kind_ == "function_call":
        meta = _origin_meta(message, kind_, ("call_id", "name", "arguments"))
        return {
            "type": kind_,
            **meta,
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
    if kind_ == "custom_tool_call":
        meta = _origin_meta(message, kind_, ("call_id", "name", "input"))
        return {
            "type": kind_,
            **meta,
            "call_id": call.id,
            "name": call.name,
            "input": call.arguments,
        }
    meta = {k: v for k, v in _origin_meta(message, kind_, ("call_id",)).items() if k in _CALL_META}
    return {"type": kind_, **meta, "call_id": call.id, **payload}


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


def _opaque_item(message: Message) -> Mapping[str, Any] | None:
    """The item of a message that carries one opaque Responses item (``extras["type"]`` is
    its type), else ``None``."""
    content = message.content
    if isinstance(content, str) or len(content) != 1 or message.tool_calls:
        return None
    part = content[0]
    if (
        isinstance(part, OpaquePart)
        and part.provider == "openai"
        and isinstance(part.data, Mapping)
        and isinstance(part.data.get("type"), str)
        and part.data["type"] == message.extras.get("type")
    ):
        return part.data
    return None


def render_item(message: Message, with_parts: bool) -> tuple[dict[str, Any], list[int]]:
    """The Responses item for ``message`` and the indexes of the parts it holds, in order.

    What one item cannot hold (a second tool call, a thinking part in a message, foreign
    extras) is left to the caller's carrier; ``with_parts=False`` renders no part at all.
    """
    content = message.content
    parts = () if isinstance(content, str) else content
    if message.role == "tool":
        return _render_output(message, with_parts)
    opaque = _opaque_item(message) if with_parts else None
    if opaque is not None:
        return dict(opaque), [0]
    if (
        with_parts
        and message.role == "assistant"
        and not message.tool_calls
        and parts
        and all(isinstance(p, ThinkingPart) for p in parts)
    ):
        first = parts[0]
        assert isinstance(first, ThinkingPart)
        if first.extras.get("type") == "reasoning":
            return dict(first.extras), [0]
        item: dict[str, Any] = {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": first.text}] if first.text else [],
        }
        if first.signature is not None:
            item["encrypted_content"] = first.signature
        return item, [0]
    if (
        len(message.tool_calls) == 1
        and all(isinstance(p, ThinkingPart) for p in parts)
        and not (isinstance(content, str) and content)
    ):
        return _render_call(message), []
    role: str = message.role
    if role == "system" and message.extras.get("role") == "developer":
        role = "developer"
    item = {}
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
# groups: one message written as several items (``dump_all``)

#: The argument key of the two call item types a group's members are written as.
_MEMBER_KEYS = {"function_call": "arguments", "custom_tool_call": "input"}


def needs_group(message: Message) -> bool:
    """True when one item cannot hold ``message``: an assistant message with two or more
    tool calls, or with a call and text or other non-thinking content. The Responses API
    writes each call as its own item, after the message item holding the rest."""
    calls = message.tool_calls
    if message.role != "assistant" or not calls:
        return False
    return len(calls) > 1 or _has_head(message)


def _has_head(message: Message) -> bool:
    """True when a group for ``message`` starts with an item for its content (not a call)."""
    content = message.content
    if isinstance(content, str):
        return bool(content)
    return any(not isinstance(part, ThinkingPart) for part in content)


def render_member(call: ToolCall) -> dict[str, Any]:
    """The call item a group writes for ``call`` (``custom_tool_call`` when its extras say
    ``"type": "custom"``, as Chat Completions custom calls load, else ``function_call``)."""
    kind_ = "custom_tool_call" if call.extras.get("type") == "custom" else "function_call"
    return {
        "type": kind_,
        "call_id": call.id,
        "name": call.name,
        _MEMBER_KEYS[kind_]: call.arguments,
    }


def load_member(item: Any) -> ToolCall | None:
    """The call of an item exactly as :func:`render_member` writes it (no other key), else
    ``None``: only such items can be members of a group."""
    if not isinstance(item, Mapping):
        return None
    kind_ = item.get("type")
    key = _MEMBER_KEYS.get(kind_) if isinstance(kind_, str) else None
    if key is None or set(item) != {"type", "call_id", "name", key}:
        return None
    call_id, name, args = item["call_id"], item["name"], item[key]
    if not (isinstance(call_id, str) and isinstance(name, str) and isinstance(args, str)):
        return None
    return ToolCall(call_id, name, args, {"type": "custom"} if kind_ == "custom_tool_call" else {})


def render_group(message: Message, with_parts: bool) -> tuple[list[dict[str, Any]], list[int]]:
    """The items of a message :func:`needs_group` (see there) and the indexes of the parts
    the first one holds: the message item (:func:`render_item` of the message without its
    calls) when there is text or another non-thinking part, then one item per call; without
    such content the first call's item (as :func:`render_item` writes a one-call message) comes
    first. Thinking parts and extras no item has a slot for are left to the caller's carrier."""
    calls = message.tool_calls
    if _has_head(message):
        head, rendered = render_item(replace(message, tool_calls=()), with_parts)
        return [head, *(render_member(c) for c in calls)], rendered
    first = _render_call(replace(message, tool_calls=calls[:1]))
    return [first, *(render_member(c) for c in calls[1:])], []
