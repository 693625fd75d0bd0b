"""OpenAI Chat Completions dicts: the Chat half of the ``openai`` format.

Shapes follow the API reference (*Create chat completion*, ``messages``): roles ``system``,
``developer``, ``user``, ``assistant``, ``tool``; ``content`` a string, ``None`` or a list of
parts (``text``, ``image_url``, ``input_audio``, ``file``, ``refusal``); assistant
``tool_calls`` of type ``function`` (``function.name``, ``function.arguments`` as JSON text)
or ``custom`` (``custom.name``, ``custom.input``); ``tool`` messages answer by
``tool_call_id``. ``developer`` loads as a ``system`` message with ``extras["role"]``.
One dict is one message, and one dict holds any message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, assert_never

from agent_adapter._errors import ConfigError
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
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._carrier import (
    RESERVED_KEY,
    apply_carrier,
    dump_lossless,
    over_native,
    split_carrier,
)
from agent_adapter.context.formats._codec import check_json_depth, data_url, split_data_url
from agent_adapter.context.formats._openai._items import (
    _named,
    check_one_api,
    classify,
    is_item_type,
)
from agent_adapter.context.formats._patch import (
    CHAT_TEXT,
    blank_dict,
    never_blank,
    patch_text_blocks,
)

__all__ = ["ChatConverter", "chat_kind", "load_chat"]

_CHAT_ROLES = {"system", "developer", "user", "assistant", "tool"}
_KNOWN_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}
_SURE_PARTS = {"image_url", "input_audio", "refusal", "file"}
#: Part types that load as typed parts (chat) or make a dict a Responses item: an opaque part
#: of one of these types has no chat rendering.
_CHAT_TYPED_PARTS = frozenset(
    {"text", "image_url", "file", "input_text", "output_text", "input_image", "input_file"}
)
#: Chat message keys of the API reference that ``Message`` has no field for.
_CHAT_EXTRA_KEYS = frozenset({"refusal", "audio", "function_call"})


def _text_part(raw: Mapping[str, Any], where: str) -> Part | None:
    text = raw.get("text")
    if not isinstance(text, str):
        raise ConfigError(f"{where}.text must be a str")
    return TextPart(text, {k: v for k, v in raw.items() if k not in ("type", "text")})


def _image_part(raw: Mapping[str, Any], where: str) -> Part | None:
    """An ``image_url`` part (a ``data:`` URL as data); ``None`` for one of another shape."""
    image = raw.get("image_url")
    if isinstance(image, str):
        image = {"url": image}
    if not (
        isinstance(image, Mapping)
        and isinstance(image.get("url"), str)
        and set(image) <= {"url", "detail"}
        and isinstance(image.get("detail"), str | None)
    ):
        return None
    extras = {k: v for k, v in raw.items() if k not in ("type", "image_url")}
    media_type, data = split_data_url(image["url"])
    if data is not None:
        return ImagePart(
            data=data, media_type=media_type, detail=image.get("detail"), extras=extras
        )
    return ImagePart(url=image["url"], detail=image.get("detail"), extras=extras)


def _file_part(raw: Mapping[str, Any], where: str) -> Part | None:
    f = raw.get("file")
    if not (
        isinstance(f, Mapping)
        and set(f) <= {"file_data", "file_id", "filename"}
        and all(isinstance(v, str) for v in f.values())
    ):
        return None
    extras = {k: v for k, v in raw.items() if k not in ("type", "file")}
    media_type, data = split_data_url(f.get("file_data") or "")
    return FilePart(
        data=data if data is not None else f.get("file_data"),
        media_type=media_type,
        file_id=f.get("file_id"),
        filename=f.get("filename"),
        extras=extras,
    )


#: The loader of each content part type (``None`` from it, or a type not here: opaque).
_PARTS: dict[str, Callable[[Mapping[str, Any], str], Part | None]] = {
    "text": _text_part,
    "image_url": _image_part,
    "file": _file_part,
}


def _part(raw: Any, where: str) -> Part:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a content part dict, got {type(raw).__name__}")
    kind = raw.get("type")
    if not isinstance(kind, str):  # every content part names its type (API reference)
        raise ConfigError(f"{where}.type must be a str (a content part names its type)")
    loader = _PARTS.get(kind)
    part = loader(raw, where) if loader is not None else None
    return part if part is not None else OpaquePart("openai", raw)


def _tool_call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where} must be a tool call dict")
    id_ = raw.get("id")
    if not isinstance(id_, str) or not id_:
        raise ConfigError(f"{where}.id must be a non-empty str")
    kind = raw.get("type", "function")
    if not isinstance(kind, str):
        raise ConfigError(f"{where}.type must be a str")
    body = raw.get(kind)
    if not isinstance(body, Mapping) or not isinstance(body.get("name"), str):
        raise ConfigError(f"{where}.{kind}.name must be a str")
    key = "arguments" if kind == "function" else "input"
    args = body.get(key, "")
    if not isinstance(args, str):
        raise ConfigError(f"{where}.{kind}.{key} must be a JSON str")
    if kind == "function":
        check_json_depth(args, f"{where}.function.arguments")
    return ToolCall(id_, body["name"], args, {"type": kind} if kind != "function" else {})


def _parts(raw: Any, where: str) -> tuple[Part, ...]:
    """The parts of a chat message's list content."""
    if not isinstance(raw, list):
        raise ConfigError(f"{where}.content must be a str, a list of parts or None")
    return tuple(_part(p, f"{where}.content[{k}]") for k, p in enumerate(raw))


def _tool_calls(calls: Any, role: str, where: str) -> tuple[ToolCall, ...]:
    """The tool calls of a chat message's (non-empty) ``tool_calls``."""
    if not isinstance(calls, list | tuple):
        raise ConfigError(f"{where}.tool_calls must be a list")
    if role != "assistant":
        raise ConfigError(f"{where}.tool_calls is only allowed on assistant messages")
    return tuple(_tool_call(c, f"{where}.tool_calls[{k}]") for k, c in enumerate(calls))


def load_chat(native: Any, where: str) -> Message:
    """The message of one Chat Completions dict (carrier left out).

    Raises:
        ConfigError: not a dict, no chat role, bad content or tool calls (naming ``where``
            and the field).
    """
    if type(native) is not dict and not isinstance(native, Mapping):  # (dicts: no ABC check)
        raise ConfigError(f"{where} is {type(native).__name__}, not an OpenAI chat message dict")
    role = native.get("role")
    if not _named(role) or role not in _CHAT_ROLES:
        raise ConfigError(f"{where}.role {role!r} is not an OpenAI chat role {sorted(_CHAT_ROLES)}")
    raw = native.get("content")
    content = (raw or "") if raw is None or isinstance(raw, str) else _parts(raw, where)
    calls = native.get("tool_calls")
    tool_calls = _tool_calls(calls, role, where) if calls else ()
    call_id = native.get("tool_call_id")
    if role == "tool" and (not isinstance(call_id, str) or not call_id):
        raise ConfigError(f"{where}.tool_call_id must be a non-empty str on a tool message")
    name = native.get("name")
    # (most dicts hold known keys only: a C-level subset check, no comprehension)
    extras = (
        {}
        if native.keys() <= _KNOWN_KEYS
        else {k: v for k, v in native.items() if k not in _KNOWN_KEYS}
    )
    if role == "developer":
        extras["role"] = "developer"
    return Message(
        "system" if role == "developer" else role,
        content,
        tool_calls=tool_calls,
        tool_call_id=call_id if role == "tool" else None,
        name=name if isinstance(name, str) else None,
        extras=extras,
    )


def _render_image(part: ImagePart) -> Any:
    if part.url is not None:
        url = part.url
    elif part.data is not None:
        url = data_url(part.media_type or "image/png", part.data)
    else:
        return None
    image: dict[str, Any] = {"url": url}
    if part.detail is not None:
        image["detail"] = part.detail
    return {"type": "image_url", "image_url": image}


def _render_file(part: FilePart) -> Any:
    if part.data is None and part.file_id is None:
        return None
    f: dict[str, Any] = {}
    if part.data is not None:
        f["file_data"] = data_url(part.media_type, part.data) if part.media_type else part.data
    if part.file_id is not None:
        f["file_id"] = part.file_id
    if part.filename is not None:
        f["filename"] = part.filename
    return {"type": "file", "file": f}


def _render_part(part: Part) -> Any:
    """The chat content part for ``part``, or ``None`` when chat has no slot for it."""
    match part:
        case TextPart():
            return {"type": "text", "text": part.text}
        case ImagePart():
            return _render_image(part)
        case FilePart():
            return _render_file(part)
        case OpaquePart():
            data = part.data
            if (
                part.provider == "openai"
                and isinstance(data, Mapping)
                and isinstance(data.get("type"), str)
                and data["type"] not in _CHAT_TYPED_PARTS
                and not is_item_type(data["type"])
            ):
                return data
            return None
        case ThinkingPart():
            return None  # chat has no slot for reasoning
        case _:
            assert_never(part)


def render_chat(message: Message, with_parts: bool) -> tuple[dict[str, Any], list[int]]:
    """The Chat Completions dict for ``message`` and the indexes of the parts it holds (see
    :func:`~agent_adapter.context.formats._carrier.dump_lossless`)."""
    role: str = message.role
    if role == "system" and message.extras.get("role") == "developer":
        role = "developer"
    out: dict[str, Any] = {"role": role}
    rendered: list[int] = []
    if isinstance(message.content, str):
        # no text beside tool calls: null, as the API returns such a message
        empty = role == "assistant" and not message.content and message.tool_calls
        out["content"] = None if empty else message.content
    else:
        blocks: list[Any] = []
        for i, part in enumerate(message.content):
            block = _render_part(part) if with_parts else None
            if block is not None:
                blocks.append(block)
                rendered.append(i)
        # an empty list is rejected ("expected an array with minimum length 1")
        out["content"] = blocks or (None if role == "assistant" else "")
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "custom", "custom": {"name": c.name, "input": c.arguments}}
            if c.extras.get("type") == "custom"
            else {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    out.update({k: v for k, v in message.extras.items() if k in _CHAT_EXTRA_KEYS})
    return out, rendered


def chat_kind(item: Mapping[str, Any]) -> str | None:
    """Detection of a dict :func:`classify` calls ``"chat"`` or ``"either"``."""
    if item.get("tool_calls") or "tool_call_id" in item or item["role"] in ("tool", "developer"):
        return "sure"
    content = item.get("content")
    if isinstance(content, str) or content is None:
        return "maybe"
    if isinstance(content, list) and all(isinstance(p, Mapping) for p in content):
        kinds = {p.get("type") for p in content if isinstance(p.get("type"), str)}
        if kinds & _SURE_PARTS:
            return "sure"
        if kinds <= {"text"}:
            return "maybe"
    return None


def _load_one(native: Any) -> Message:
    return load_chat(native, "messages[?]")


class ChatConverter(Converter[dict[str, Any]]):
    """OpenAI Chat Completions dicts <-> Message (see the module docstring).

    The ``openai`` converter binds to this one for a list of Chat Completions messages. Every
    message dumps to one dict, lossless through the reserved carrier.
    """

    name = "openai"
    call_terms: ClassVar[tuple[str, str]] = ("tool_calls", "tool_call_id")

    def kind(self, item: Any) -> str | None:
        if classify(item) not in ("chat", "either"):
            return None
        return chat_kind(item)

    def load_grouped(
        self, natives: Sequence[Any]
    ) -> tuple[list[Message], list[tuple[int, int]], dict[int, int]]:
        """Every native loaded (one message each; Chat has no groups).

        Raises:
            ConfigError: Chat-only dicts and Responses items in one list, or an item that is
                not a Chat Completions message.
        """
        check_one_api([classify(split_carrier(n)[0]) for n in natives])
        messages, ranges = super().load_all(natives)
        return messages, ranges, {}

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        messages, ranges, _ = self.load_grouped(natives)
        return messages, ranges

    def load(self, native: dict[str, Any], index: int) -> list[Message]:
        """The message of one dict (its carrier applied).

        Raises:
            ConfigError: ``native`` is a Responses item or not a chat message.
        """
        return self._load(native, index, classified=False)

    def load_classified(self, native: dict[str, Any], index: int) -> list[Message]:
        """:meth:`load` of a native of a list already classified as holding no Responses
        item (``OpenAIChatConverter.bind`` or ``check_one_api`` looked at each, carrier
        left out): it is not classified again (a conversion of 100,000 dicts classified
        each twice).

        Raises:
            ConfigError: ``native`` is not a chat message.
        """
        return self._load(native, index, classified=True)

    def _load(self, native: dict[str, Any], index: int, *, classified: bool) -> list[Message]:
        where = f"messages[{index}]"
        base, carrier = split_carrier(native)
        if not classified and classify(base) == "responses":
            raise ConfigError(
                f"{where} is an OpenAI Responses item, not a Chat Completions message"
            )
        message = load_chat(base, where)
        return [apply_carrier(message, carrier, where) if carrier is not None else message]

    def rebuild(
        self,
        native: dict[str, Any],
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> list[dict[str, Any]]:
        """The native with the message's new text (text parts through
        :func:`~agent_adapter.context.formats._patch.patch_text_blocks`); a native that holds
        the carrier is dumped again. A message cut to blank text never leaves an empty
        message (see :func:`never_blank`)."""
        return never_blank(self._rebuild, blank_dict, native, originals, now)

    def _rebuild(
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
        if RESERVED_KEY in native:
            return [over_native(native, self.dump(message))]
        raw = native.get("content")
        if isinstance(raw, list):
            return [{**native, "content": patch_text_blocks(raw, message.text, CHAT_TEXT)}]
        return [{**native, "content": message.text}]

    def dump(self, message: Message) -> dict[str, Any]:
        """One Chat Completions dict for ``message`` (lossless: ``load(dump(m), i) == [m]``)."""
        return dump_lossless(message, render_chat, _load_one)
