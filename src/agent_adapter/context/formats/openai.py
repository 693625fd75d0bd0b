"""OpenAI messages (``openai`` format): Chat Completions dicts and Responses API items.

One converter handles both APIs and dispatches per item:

* **Chat Completions** (API reference, *Create chat completion* ``messages``): roles ``system``,
  ``developer``, ``user``, ``assistant``, ``tool``; ``content`` a string, ``None`` or a list of
  parts (``text``, ``image_url``, ``input_audio``, ``file``, ``refusal``); assistant
  ``tool_calls`` of type ``function`` (``function.name``, ``function.arguments`` as JSON text)
  or ``custom`` (``custom.name``, ``custom.input``); ``tool`` messages answer by
  ``tool_call_id``. ``developer`` loads as a ``system`` message with ``extras["role"]``.
* **Responses** (API reference, *Create a model response* ``input`` items): any dict with a
  ``type``, or an "easy input message" ``{"role", "content": [{"type": "input_text"...}]}``.
  One item is one message; see :mod:`agent_adapter.context.formats.responses`. The one
  exception is a *group* :meth:`OpenAIChatConverter.dump_all` writes for an assistant message
  with several calls (or text and a call): its ``message`` item and one call item per call,
  the first item's carrier saying ``{"group": k}``, load as that one message again.

A plain ``{"role", "content": str}`` dict is valid in both APIs and loads the same either way.
A list mixing Chat-only dicts (``tool_calls``, ``role: "tool"``, ``text``/``image_url`` parts)
with Responses-only items cannot be sent to either API: :meth:`OpenAIChatConverter.load_all`
raises :class:`~agent_adapter.errors.ConfigError` ("mix").

**The reserved carrier.** ``dump`` must be lossless for a message of *any* format
(``load(dump(m)) == m``): an Anthropic thinking signature, a Gemini ``thought_signature`` in
``ToolCall.extras``, ``cache_control`` on an image, LangChain ids in ``Message.extras``. What
the target format has no slot for rides in one reserved key, :data:`RESERVED_KEY`
(``"_agent_adapter"``), on the dumped native: dump renders every field the format documents,
loads the result back, and records in the carrier only what came back different (field-level
patches of parts, tool calls and the message) plus the parts with no rendering at all (e.g.
a thinking part in a chat message) at their index. ``load`` applies the carrier, so the round
trip is exact. Neither OpenAI nor Anthropic accepts unknown keys (a request carrying one is
rejected with "Unknown parameter" / "Extra inputs are not permitted"), so the carrier is for
round trips through another format: :func:`~agent_adapter.context.formats.acceptance.check` reports
it (rule ``reserved_key``) and :func:`~agent_adapter.context.formats.acceptance.strip_reserved`
removes it before sending. Natives that came back unchanged or rebuilt from a native never get
the key; only ``dump`` adds it, and only when something has no slot. The carrier lives in
:mod:`agent_adapter.context.formats._carrier`, shared with the Anthropic converter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agent_adapter.context.formats import responses as _resp
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._carrier import (
    RESERVED_KEY,
    apply_carrier,
    dump_lossless,
    split_carrier,
    without_carrier_rebuild,
)
from agent_adapter.context.formats._carrier import _carrier as carrier_for
from agent_adapter.context.formats._patch import is_text_block, patch_text_blocks
from agent_adapter.context.formats.responses import data_url, split_data_url
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

__all__ = ["RESERVED_KEY", "OpenAIChatConverter"]

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


# --------------------------------------------------------------------------------------------
# Chat Completions


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
        if isinstance(image, str):
            image = {"url": image}
        if (
            isinstance(image, Mapping)
            and isinstance(image.get("url"), str)
            and set(image) <= {"url", "detail"}
            and isinstance(image.get("detail"), str | None)
        ):
            extras = {k: v for k, v in raw.items() if k not in ("type", "image_url")}
            media_type, data = split_data_url(image["url"])
            if data is not None:
                return ImagePart(
                    data=data, media_type=media_type, detail=image.get("detail"), extras=extras
                )
            return ImagePart(url=image["url"], detail=image.get("detail"), extras=extras)
    if kind == "file":
        f = raw.get("file")
        if (
            isinstance(f, Mapping)
            and set(f) <= {"file_data", "file_id", "filename"}
            and all(isinstance(v, str) for v in f.values())
        ):
            extras = {k: v for k, v in raw.items() if k not in ("type", "file")}
            media_type, data = split_data_url(f.get("file_data") or "")
            return FilePart(
                data=data if data is not None else f.get("file_data"),
                media_type=media_type,
                file_id=f.get("file_id"),
                filename=f.get("filename"),
                extras=extras,
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


def _load_chat(native: Any, where: str) -> Message:
    if not isinstance(native, Mapping):
        raise ConfigError(f"{where} is {type(native).__name__}, not an OpenAI chat message dict")
    role = native.get("role")
    if role not in _CHAT_ROLES:
        raise ConfigError(f"{where}.role {role!r} is not an OpenAI chat role {sorted(_CHAT_ROLES)}")
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
    return Message(
        "system" if role == "developer" else role,
        content,
        tool_calls=tool_calls,
        tool_call_id=call_id if role == "tool" else None,
        name=name if isinstance(name, str) else None,
        extras=extras,
    )


def _render_chat_part(part: Part) -> Any:
    """The chat content part for ``part``, or ``None`` when chat has no slot for it."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
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
    if isinstance(part, FilePart):
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
    if isinstance(part, OpaquePart):
        data = part.data
        if (
            part.provider == "openai"
            and isinstance(data, Mapping)
            and isinstance(data.get("type"), str)
            and data["type"] not in _CHAT_TYPED_PARTS
            and not _resp.is_item_type(data["type"])
        ):
            return data
        return None
    return None  # thinking: chat has no slot


def _render_chat(message: Message, with_parts: bool) -> tuple[dict[str, Any], list[int]]:
    role: str = message.role
    if role == "system" and message.extras.get("role") == "developer":
        role = "developer"
    out: dict[str, Any] = {"role": role}
    rendered: list[int] = []
    if isinstance(message.content, str):
        out["content"] = message.content
    else:
        blocks: list[Any] = []
        for i, part in enumerate(message.content):
            block = _render_chat_part(part) if with_parts else None
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


def _load_one(native: Any) -> Message:
    """The message of one native, by the same dispatch as ``load``."""
    if _resp.classify(native) == "responses":
        return _resp.load_item(native, "input[?]")
    return _load_chat(native, "messages[?]")


# --------------------------------------------------------------------------------------------
# the converter


class OpenAIChatConverter(Converter[dict[str, Any]]):
    """OpenAI Chat Completions dicts and Responses items <-> Message (see the module docstring).

    ``dump`` writes a Chat Completions dict (one dict holds any message), except for messages
    loaded from Responses items, which go back as Responses items. :meth:`bind` gives a
    converter that writes Responses items for every message, for a list of Responses items;
    its :meth:`dump_all` (which ``Conversion.back`` uses for added messages) writes each tool
    call as its own item, as the Responses API does.
    """

    name = "openai"
    #: "chat" or "responses": the API new natives are written for ("auto": per message).
    flavour: str = "auto"

    def kind(self, item: Any) -> str | None:
        flavour = _resp.classify(item)
        if flavour is None:
            return None
        if flavour == "responses":
            return _resp.kind(item)
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

    def bind(self, natives: Sequence[Any]) -> OpenAIChatConverter:
        """The converter for one list: Responses items written for a Responses list."""
        if any(_resp.classify(split_carrier(n)[0]) == "responses" for n in natives):
            return _RESPONSES
        return self

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        """Every native loaded, after checking the list does not mix the two APIs (the items
        of a group written by :meth:`dump_all` load as one message; see :meth:`load_grouped`).

        Raises:
            ConfigError: Chat-only dicts and Responses-only items in one list, or an item that
                is not a message of either API.
        """
        messages, ranges, _ = self.load_grouped(natives)
        return messages, ranges

    def load_grouped(
        self, natives: Sequence[Any]
    ) -> tuple[list[Message], list[tuple[int, int]], dict[int, int]]:
        """:meth:`load_all` with the groups: a native whose carrier says ``{"group": k}`` and
        the ``k - 1`` plain call items after it (exactly as :meth:`dump_all` wrote them) are one
        message. When those items are not there as written (edited, dropped, stripped), every
        item loads on its own, as Responses items do.

        Raises:
            ConfigError: as :meth:`load_all`.
        """
        chat = resp = None
        for i, native in enumerate(natives):
            flavour = _resp.classify(split_carrier(native)[0])
            if flavour == "chat" and chat is None:
                chat = i
            elif flavour == "responses" and resp is None:
                resp = i
        if chat is not None and resp is not None:
            raise ConfigError(
                f"messages mix OpenAI Chat Completions messages (messages[{chat}]) and "
                f"Responses items (messages[{resp}]); send one API's shape"
            )
        messages: list[Message] = []
        ranges: list[tuple[int, int]] = []
        members: dict[int, int] = {}
        i = 0
        while i < len(natives):
            native = natives[i]
            base, carrier = split_carrier(native)
            size = _group_size(carrier)
            group = natives[i + 1 : i + size]
            loaded = None
            if size and len(group) == size - 1:
                try:
                    loaded = _load_group([base, *group], f"input[{i}]")
                except ConfigError:  # not as dump_all wrote it: one message per item
                    loaded = None
            start = len(messages)
            if loaded is not None:
                assert carrier is not None
                messages.append(apply_carrier(loaded, carrier))
                ranges.append((start, start + 1))
                for k in range(i + 1, i + size):
                    ranges.append((start + 1, start + 1))
                    members[k] = i
                i += size
                continue
            messages.extend(self.load(native, i))
            ranges.append((start, len(messages)))
            i += 1
        return messages, ranges, members

    def load(self, native: dict[str, Any], index: int) -> list[Message]:
        """The message of one native. A group's first item (see :meth:`dump_all`) loads as the
        message without the calls of the items after it: load a group with :meth:`load_all`."""
        base, carrier = split_carrier(native)
        if _resp.classify(base) == "responses":
            message = _resp.load_item(base, f"input[{index}]")
        else:
            message = _load_chat(base, f"messages[{index}]")
        return [apply_carrier(message, carrier) if carrier is not None else message]

    def rebuild(
        self,
        native: dict[str, Any],
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> list[dict[str, Any]]:
        """The native with the message's new text; a native that holds the carrier is dumped
        again (in a Responses list always as Responses items; a group's first item as the
        whole group, so its call items come back equal to what they were)."""
        message = now[0]
        if message is None:
            return []
        base, carrier = split_carrier(native)
        group = _group_size(carrier)
        if message.text == originals[0].text and not group:
            return [native]
        if carrier is not None or RESERVED_KEY in native:
            if self.flavour == "responses" or _resp.classify(base) == "responses" or group:
                items = self._dump_responses(message)
                return [_rebuilt_first(base, items[0]), *items[1:]]
            return [without_carrier_rebuild(native, self._dump(message, "chat"))]
        if _resp.classify(native) == "responses":
            return [_resp.rebuild_item(native, message.text)]
        raw = native.get("content")
        if isinstance(raw, list):
            return [{**native, "content": patch_text_blocks(raw, message.text, is_text_block)}]
        return [{**native, "content": message.text}]

    def dump(self, message: Message) -> dict[str, Any]:
        """One native for ``message`` (lossless: ``load(dump(m), i) == [m]``).

        An assistant message with several tool calls, or with text and a call, becomes one
        Responses ``message`` item whose calls exist only in the carrier, so
        :func:`~agent_adapter.context.formats.acceptance.strip_reserved` removes them: use
        :meth:`dump_all` to write such messages for a Responses list.
        """
        return self._dump(message, self._flavour_of(message))

    def dump_all(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Natives for a run of messages, lossless (``load_all(dump_all(ms))[0] == ms``).

        As :meth:`dump`, except that a message written as Responses items that one item
        cannot hold (an assistant message with several tool calls, or with text and a call;
        see :func:`~agent_adapter.context.formats.responses.needs_group`) becomes a *group*:
        its ``message`` item (when it has text or other non-thinking content), then one
        ``function_call`` / ``custom_tool_call`` item per call, as the Responses API writes
        them. The first item's carrier says ``{"group": k}`` (``k`` items), so
        :meth:`load_all` gives the one message back; after ``strip_reserved`` the items are
        what the API expects (each call item answered by its output).
        """
        out: list[dict[str, Any]] = []
        for message in messages:
            if self._flavour_of(message) == "responses":
                out.extend(self._dump_responses(message))
            else:
                out.append(self._dump(message, "chat"))
        return out

    def _flavour_of(self, message: Message) -> str:
        if self.flavour != "auto":
            return self.flavour
        return "responses" if _resp.is_responses_message(message) else "chat"

    def _dump(self, message: Message, flavour: str) -> dict[str, Any]:
        if flavour == "responses":
            return dump_lossless(message, _resp.render_item, _load_one)
        return dump_lossless(message, _render_chat, _load_one)

    def _dump_responses(self, message: Message) -> list[dict[str, Any]]:
        """The Responses items for ``message``: a group when it needs one, else one item."""
        if _resp.needs_group(message):
            for with_parts in (True, False):
                items, rendered = _resp.render_group(message, with_parts)
                carrier = carrier_for(message, items, rendered, _load_group_items)
                if carrier is not None:
                    return [
                        {**items[0], RESERVED_KEY: {**carrier, "group": len(items)}},
                        *items[1:],
                    ]
        return [self._dump(message, "responses")]


def _group_size(carrier: Mapping[str, Any] | None) -> int:
    """The number of items of the group a carrier starts (0: it starts none)."""
    size = carrier.get("group") if carrier is not None else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size >= 2 else 0


def _load_group(items: Sequence[Any], where: str) -> Message:
    """The message of a group's items (carrier left out): the first item's message with the
    calls of the others (plain call items, see ``responses.load_member``) after its own."""
    first = _load_one(items[0])
    calls = [_resp.load_member(item) for item in items[1:]]
    if not all(c is not None for c in calls):
        raise ConfigError(f"{where}: a group's items after the first must be plain call items")
    try:
        return replace(first, tool_calls=(*first.tool_calls, *(c for c in calls if c)))
    except ConfigError as exc:
        raise ConfigError(f"{where}: a {first.role} message cannot start a group") from exc


def _load_group_items(items: Any) -> Message:
    return _load_group(items, "input[?]")


def _rebuilt_first(base: Mapping[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """The first item dumped for a changed native (carrier left out), with the keys of the
    native it replaces when that was an item of the same type."""
    if base.get("type", "message") == item.get("type", "message"):
        return {**base, **item}
    return item


class _ResponsesConverter(OpenAIChatConverter):
    """The ``openai`` converter bound to a Responses list: new natives are Responses items."""

    flavour = "responses"

    def bind(self, natives: Sequence[Any]) -> OpenAIChatConverter:
        return self


_RESPONSES = _ResponsesConverter()
