"""Responses API items, the load side: what an item is, and the message one item loads as.

See :mod:`agent_adapter.context.formats._openai._responses` for the mapping; shapes follow the
Responses API reference (*Create a model response*, ``input`` item list) and the function-calling,
reasoning, MCP and computer-use guides.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_adapter._errors import ConfigError
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
from agent_adapter.context.formats._codec import check_depth, check_json_depth, split_data_url

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
        "compaction_trigger",
    }
)
#: Content part types of Responses messages.
PART_TYPES = frozenset(
    {"input_text", "output_text", "input_image", "input_file", "input_audio", "refusal"}
)
TEXT_TYPES = ("input_text", "output_text")
RESPONSES_ONLY_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file"})
CHAT_ONLY_PARTS = frozenset({"text", "image_url", "file"})
_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_MESSAGE_ROLES = frozenset({"system", "developer", "user", "assistant"})
#: Items the client sends (not model output) that are not ``*_call_output``: an MCP approval,
#: and the ``compaction_trigger`` that asks the server to compact ("Compacts the current
#: context. Must be the final input item.", API reference).
USER_SIDE = frozenset({"mcp_approval_response", "compaction_trigger"})
#: Keys of a ``*_call`` item that are not its payload.
CALL_META = frozenset({"id", "status", "pending_safety_checks"})
#: The argument key of the two call item types whose payload is text.
ARG_KEYS = {"function_call": "arguments", "custom_tool_call": "input"}


def _named(value: Any, names: frozenset[str] | None = None) -> bool:
    """``value`` is a str (in ``names``, when given): junk such as a list never reaches a set
    lookup, which would raise TypeError instead of the ConfigError that names the field."""
    return isinstance(value, str) and (names is None or value in names)


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
    if type(item) is not dict and not isinstance(item, Mapping):  # (dicts: no ABC check)
        return None
    if "type" in item:
        return "responses" if isinstance(item["type"], str) else None
    if not _named(item.get("role"), _CHAT_ROLES):
        return None
    content = item.get("content")
    kinds = (
        {p.get("type") for p in content if isinstance(p, Mapping) and _named(p.get("type"))}
        if isinstance(content, list)
        else set()
    )
    if (
        "tool_calls" in item
        or "tool_call_id" in item
        or item["role"] == "tool"
        or kinds & CHAT_ONLY_PARTS
    ):
        return "chat"
    return "responses" if kinds & RESPONSES_ONLY_PARTS else "either"


def check_one_api(flavours: Sequence[str | None]) -> None:
    """Raise when a list mixes Chat-only dicts and Responses-only items (``flavours`` are
    :func:`classify` of each native, carrier left out).

    Raises:
        ConfigError: both kinds are there (naming the first of each).
    """
    chat = next((i for i, f in enumerate(flavours) if f == "chat"), None)
    resp = next((i for i, f in enumerate(flavours) if f == "responses"), None)
    if chat is not None and resp is not None:
        raise ConfigError(
            f"messages mix OpenAI Chat Completions messages (messages[{chat}]) and "
            f"Responses items (messages[{resp}]); send one API's shape"
        )


def kind(item: Mapping[str, Any]) -> str | None:
    """Detection of an item :func:`classify` calls ``"responses"``: ``"sure"`` for messages and
    known item types, ``"maybe"`` for other typed dicts (a newer item type)."""
    kind_ = item.get("type")
    if kind_ is None or kind_ == "message":
        content = item.get("content")
        if not _named(item.get("role"), _MESSAGE_ROLES):
            return None
        if isinstance(content, str):
            return "sure"
        if isinstance(content, list) and all(
            isinstance(p, Mapping) and _named(p.get("type"), PART_TYPES) for p in content
        ):
            return "sure"
        return None
    return "sure" if is_item_type(kind_) else "maybe"


def opaque_item(message: Message) -> Mapping[str, Any] | None:
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


def is_responses_message(message: Message) -> bool:
    """True when ``message`` was loaded from a Responses item (it goes back as one)."""
    if is_item_type(message.extras.get("type")):
        return True
    if isinstance(message.content, str):
        return False
    if opaque_item(message) is not None:
        return True
    return any(
        isinstance(part, ThinkingPart) and part.extras.get("type") == "reasoning"
        for part in message.content
    )


def text_type(role: str) -> str:
    """The text part type the API expects in a ``role`` message (tool outputs: input)."""
    return "output_text" if role == "assistant" else "input_text"


def _load_text(raw: Mapping[str, Any], role: str) -> Part | None:
    """A text part; the role's text type and empty ``annotations`` left out of extras."""
    if not isinstance(raw.get("text"), str):
        return None
    extras = {k: v for k, v in raw.items() if k != "text"}
    if raw["type"] == text_type(role):
        del extras["type"]
    if raw["type"] == "output_text" and extras.get("annotations") == []:
        del extras["annotations"]
    return TextPart(raw["text"], extras)


def _load_image(raw: Mapping[str, Any], role: str) -> Part | None:
    if not all(isinstance(raw.get(k), str | None) for k in ("image_url", "detail")):
        return None
    url = raw.get("image_url")
    extras = {k: v for k, v in raw.items() if k not in ("type", "image_url", "detail")}
    media_type, data = split_data_url(url) if url is not None else (None, None)
    if data is not None:
        return ImagePart(data=data, media_type=media_type, detail=raw.get("detail"), extras=extras)
    return ImagePart(url=url, detail=raw.get("detail"), extras=extras)


_FILE_KEYS = ("file_url", "file_data", "file_id", "filename")


def _load_file(raw: Mapping[str, Any], role: str) -> Part | None:
    if not all(isinstance(raw.get(k), str | None) for k in _FILE_KEYS):
        return None
    file_data = raw.get("file_data")
    media_type, data = split_data_url(file_data) if file_data is not None else (None, None)
    return FilePart(
        url=raw.get("file_url"),
        data=data if data is not None else file_data,
        media_type=media_type,
        file_id=raw.get("file_id"),
        filename=raw.get("filename"),
        extras={k: v for k, v in raw.items() if k not in ("type", *_FILE_KEYS)},
    )


#: The loader of each content part type (``None`` from it, or a type not here: opaque).
_PART_LOADERS: dict[str, Callable[[Mapping[str, Any], str], Part | None]] = {
    **dict.fromkeys(TEXT_TYPES, _load_text),
    "input_image": _load_image,
    "input_file": _load_file,
}


def _load_part(raw: Any, role: str) -> Part:
    """One content part. Defaults the renderer writes back are left out of extras (the role's
    text type, empty ``annotations``), so text from any format looks alike."""
    if not isinstance(raw, Mapping):
        return OpaquePart("openai", raw)
    kind_ = raw.get("type")
    loader = _PART_LOADERS.get(kind_) if isinstance(kind_, str) else None
    part = loader(raw, role) if loader is not None else None
    return part if part is not None else OpaquePart("openai", raw)


def _load_message(item: Mapping[str, Any], where: str) -> Message:
    role = item.get("role")
    if not _named(role) or role not in _MESSAGE_ROLES:
        raise ConfigError(f"{where}.role {role!r} must be one of {sorted(_MESSAGE_ROLES)}")
    raw = item.get("content")
    content: str | tuple[Part, ...]
    if raw is None or isinstance(raw, str):
        content = raw or ""
    elif isinstance(raw, list):
        for k, part in enumerate(raw):
            if (
                isinstance(part, Mapping)
                and part.get("type") in TEXT_TYPES
                and not isinstance(part.get("text"), str)
            ):
                raise ConfigError(f"{where}.content[{k}].text must be a str ({part['type']})")
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


def load_call(item: Mapping[str, Any], kind_: str, where: str) -> Message:
    """The assistant message of one ``*_call`` item (an opaque part when its payload is not
    JSON); the item's other keys in ``extras``.

    Raises:
        ConfigError: a ``function_call`` / ``custom_tool_call`` without a str name and
            arguments, or arguments / a payload nested too deep.
    """
    call_id = item["call_id"]
    if kind_ in ARG_KEYS:
        key = ARG_KEYS[kind_]
        name, args = item.get("name"), item.get(key)
        if not isinstance(name, str) or not isinstance(args, str):
            raise ConfigError(f"{where}: {kind_} needs a str name and {key}")
        if kind_ == "function_call":
            check_json_depth(args, f"{where}.arguments")
        extras = {k: v for k, v in item.items() if k not in ("call_id", "name", key)}
    else:
        name = item["name"] if isinstance(item.get("name"), str) else kind_[: -len("_call")]
        payload = {k: v for k, v in item.items() if k not in CALL_META | {"type", "call_id"}}
        for k, v in payload.items():
            check_depth(v, f"{where}.{k}")
        try:
            args = json.dumps(payload)
        except (TypeError, ValueError):  # not JSON: the item rides as it is
            return Message("assistant", (OpaquePart("openai", item),))
        extras = {k: v for k, v in item.items() if k in CALL_META or k == "type"}
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
    """The message of one Responses item (see
    :mod:`agent_adapter.context.formats._openai._responses`).

    Raises:
        ConfigError: ``item`` is not a dict, a message has no valid role or content, a
            function call has no str name and arguments, or a call's payload is nested too
            deep.
    """
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where} is {type(item).__name__}, not a Responses item dict")
    kind_ = item.get("type")
    if kind_ is None or kind_ == "message":
        return _load_message(item, where)
    if not isinstance(kind_, str):
        raise ConfigError(f"{where}.type must be a str")
    if kind_ == "reasoning":
        summary = item.get("summary")
        if summary is not None and not isinstance(summary, list):  # API reference: an array
            raise ConfigError(f"{where}.summary must be a list of summary parts")
        return Message("assistant", (_thinking(item),))
    if is_call(item):
        return load_call(item, kind_, where)
    call_id = output_call_id(item)
    if call_id:
        output = item.get("output")
        if kind_ == "function_call_output" and not isinstance(output, str | list | None):
            # API reference: a function_call_output's output is a string or a list of parts
            raise ConfigError(f"{where}.output must be a str or a list of content parts")
        return _load_output(item, call_id)
    role: Role = "user" if kind_ in USER_SIDE else "assistant"
    if item.get("role") in ("user", "assistant"):
        role = item["role"]
    return Message(role, (OpaquePart("openai", item),), extras={"type": kind_})


def member_call(item: Any, where: str) -> ToolCall | None:
    """The call of a ``*_call`` item as a further call of a message (see
    :func:`~agent_adapter.context.formats._openai._render.render_member`): the item's keys
    other than its call's in the call's ``extras``, with ``"type": "custom"`` for a
    ``custom_tool_call`` (as Chat Completions custom calls load) and the item type for other
    non-function calls. ``None`` for anything else (not a call item, an opaque call).

    Raises:
        ConfigError: as :func:`load_call`.
    """
    if not isinstance(item, Mapping) or not is_call(item):
        return None
    message = load_call(item, item["type"], where)
    if len(message.tool_calls) != 1:
        return None
    extras = dict(message.extras)
    kind_ = extras.pop("type")
    if kind_ == "custom_tool_call":
        extras = {"type": "custom", **extras}
    elif kind_ != "function_call":
        extras = {"type": kind_, **extras}
    call = message.tool_calls[0]
    return ToolCall(call.id, call.name, call.arguments, extras)
