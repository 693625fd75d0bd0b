"""OpenAI Responses API items: the Responses half of the ``openai`` format.

Shapes follow the Responses API reference (*Create a model response*, ``input`` item list) and
the function-calling, reasoning, MCP and computer-use guides. An item is one message, except
that several items can make one message (a *group*, below):

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
* **Parallel calls.** Consecutive call items (the function-calling guide: with parallel tool
  calls a response holds several ``function_call`` items, each answered by a
  ``function_call_output`` with its ``call_id``) are one assistant message with one call
  per item, as Chat Completions has them: the first item's keys in the message's extras as
  above, each further item's (``id``, ``status``) in its call's extras (``"type": "custom"``
  for a ``custom_tool_call``, the item type for other non-function calls). So a round of
  parallel calls and their outputs pairs like a Chat round, the newest round may still be
  pending, and compression keeps or drops the round whole.
* ``*_call_output`` items (``call_id``; ``local_shell_call_output`` links by ``id``): a ``tool``
  message; a str ``output`` is the text, a list its parts, a ``computer_screenshot`` an image
  part (``type`` in its extras), any other output stays in ``extras["output"]``.
* ``reasoning``: an assistant message holding one thinking part and nothing else: ``text`` is
  the summary texts joined (the ``reasoning_text`` content when there is no summary),
  ``signature`` the ``encrypted_content``, ``extras`` the whole item, so it goes back unchanged.
  Such a message joins the unit of the item after it (see :mod:`agent_adapter.context._units`):
  a reasoning item is never kept without the item it precedes, nor the reverse.
* Everything else (``mcp_call``, ``mcp_list_tools``, ``mcp_approval_request``,
  ``web_search_call``, ``file_search_call``, ``image_generation_call``,
  ``code_interpreter_call``, ``item_reference``, unknown types): a message holding the item as
  one opaque part (and its ``type`` in extras), ``user`` for ``mcp_approval_response`` and
  ``compaction_trigger`` (the client's), else ``assistant``. MCP approval requests and
  responses hold an approval marker
  (:func:`~agent_adapter.context._units.has_approval_marker`), so they are protected; so are
  the ``compaction`` item (its opaque ``encrypted_content`` "carries forward key prior state
  and reasoning into the next run", compaction guide) and the ``compaction_trigger``
  (:func:`~agent_adapter.context._units.carries_compaction_state`): they go back as the very
  dicts, never cut, changed or dropped.

**Groups.** A message one item cannot hold (an assistant message with several calls, or with
text and a call) is written by :meth:`ResponsesConverter.dump_all` as its ``message`` item (when
it has content) and one call item per call, the first item's carrier saying ``{"group": k}``;
those ``k`` items load as that message again. A run of parallel call items (above) is a group
too, with no carrier. :meth:`ResponsesConverter.load_grouped` reports both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ToolCall
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._carrier import (
    RESERVED_KEY,
    apply_carrier,
    carrier_diff,
    dump_lossless,
    split_carrier,
    with_carrier,
)
from agent_adapter.context.formats._openai._chat import load_chat
from agent_adapter.context.formats._openai._items import (
    check_one_api,
    classify,
    is_call,
    kind,
    load_item,
    member_call,
)
from agent_adapter.context.formats._openai._render import (
    needs_group,
    rebuild_item,
    render_group,
    render_item,
    render_member,
)
from agent_adapter.context.formats._patch import blank_dict, never_blank

__all__ = ["ResponsesConverter"]


def _load_native(native: Any, index: int | str) -> Message:
    """The message of one native of a Responses list (carrier left out): a Responses item, or
    a plain message valid in both APIs (loaded as Chat Completions loads it)."""
    if classify(native) == "responses":
        return load_item(native, f"input[{index}]")
    return load_chat(native, f"messages[{index}]")


def _load_one(native: Any) -> Message:
    return _load_native(native, "?")


def _group_size(carrier: Mapping[str, Any] | None) -> int:
    """The number of items a carrier says its message spans (0: it says nothing)."""
    size = carrier.get("group") if carrier is not None else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size >= 1 else 0


def _plain_call(native: Any) -> bool:
    """True for a call item with no carrier: it can join a run of parallel calls."""
    return isinstance(native, Mapping) and RESERVED_KEY not in native and is_call(native)


def _with_calls(first: Message, calls: Sequence[ToolCall], where: str) -> Message:
    try:
        return replace(first, tool_calls=(*first.tool_calls, *calls))
    except ConfigError as exc:
        raise ConfigError(f"{where}: a {first.role} message cannot start a group") from exc


def _item_call_id(native: Any) -> str | None:
    """The ``call_id`` of a call item (carrier left out), else ``None``."""
    base = split_carrier(native)[0]
    return base["call_id"] if isinstance(base, Mapping) and is_call(base) else None


def _load_marked(items: Sequence[Any], where: str) -> Message:
    """The message of a group :meth:`ResponsesConverter.dump_all` wrote (carrier left out):
    the first item's message with the calls of the others, each exactly as
    :func:`render_member` writes it.

    Raises:
        ConfigError: the items are not such a group (an edited or stripped one).
    """
    first = _load_one(items[0])
    calls: list[ToolCall] = []
    for item in items[1:]:
        call = member_call(item, where) if isinstance(item, Mapping) else None
        if call is None or RESERVED_KEY in item or render_member(call) != item:
            raise ConfigError(f"{where}: a group's items after the first must be its call items")
        calls.append(call)
    return _with_calls(first, calls, where)


def _load_items(items: Sequence[Any]) -> Message:
    return _load_marked(items, "input[?]")


class ResponsesConverter(Converter[dict[str, Any]]):
    """OpenAI Responses items <-> Message (see the module docstring).

    The ``openai`` converter binds to this one for a list holding Responses items: new natives
    are Responses items, and :meth:`dump_all` writes each tool call as its own item, as the
    Responses API does.
    """

    name = "openai"
    call_terms: ClassVar[tuple[str, str]] = ("call_id", "call_id")

    def kind(self, item: Any) -> str | None:
        flavour = classify(item)
        if flavour == "responses":
            return kind(item)
        return "maybe" if flavour == "either" else None

    # ---- loading

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        """Every native loaded; the items of a group load as one message (see
        :meth:`load_grouped`).

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
        the ``k - 1`` call items after it exactly as :meth:`dump_all` wrote them (when they are
        not there as written, e.g. edited or stripped, every item loads on its own), and every
        run of two or more consecutive call items without a carrier (parallel calls).

        Raises:
            ConfigError: as :meth:`load_all`.
        """
        check_one_api([classify(split_carrier(n)[0]) for n in natives])
        messages: list[Message] = []
        ranges: list[tuple[int, int]] = []
        members: dict[int, int] = {}
        i = 0
        while i < len(natives):
            size, message = self._group_at(natives, i)
            start = len(messages)
            if message is None:
                messages.extend(self.load(natives[i], i))
                ranges.append((start, len(messages)))
                i += 1
                continue
            messages.append(message)
            ranges.append((start, start + 1))
            for k in range(i + 1, i + size):
                ranges.append((start + 1, start + 1))
                members[k] = i
            i += size
        return messages, ranges, members

    def _group_at(self, natives: Sequence[Any], i: int) -> tuple[int, Message | None]:
        """The group starting at ``natives[i]``: its size and message (``None``: none)."""
        native = natives[i]
        base, carrier = split_carrier(native)
        where = f"input[{i}]"
        size = _group_size(carrier)
        if size >= 2:
            group = natives[i + 1 : i + size]
            if len(group) != size - 1:
                return 0, None
            try:
                loaded = _load_marked([base, *group], where)
            except ConfigError:  # not as dump_all wrote it: one message per item
                return 0, None
            assert carrier is not None
            return size, apply_carrier(loaded, carrier, where)
        if not _plain_call(native):
            return 0, None
        first = load_item(native, where)
        if len(first.tool_calls) != 1:
            return 0, None  # an opaque call item
        calls: list[ToolCall] = []
        j = i + 1
        while j < len(natives) and _plain_call(natives[j]):
            call = member_call(natives[j], f"input[{j}]")
            if call is None:
                break
            calls.append(call)
            j += 1
        if not calls:
            return 0, None
        return j - i, _with_calls(first, calls, where)

    def call_index(
        self,
        natives: Sequence[Any],
        leader: int,
        call_ids: Sequence[str | None],
        *,
        last: bool = False,
    ) -> int:
        """The item of the group led by ``natives[leader]`` that holds the first call of
        ``call_ids`` (the last one with ``last``: the repeat of a duplicate ``call_id``), as
        :func:`~agent_adapter.context.formats._openai.check_responses` names a call by its own
        item; ``leader`` when ``natives[leader]`` leads no group or no item holds such a call.
        """
        size, message = self._group_at(natives, leader)
        if message is None:
            return leader
        wanted = set(call_ids)
        hits = [j for j in range(leader, leader + size) if _item_call_id(natives[j]) in wanted]
        if not hits:
            return leader
        return hits[-1] if last else hits[0]

    def load(self, native: dict[str, Any], index: int) -> list[Message]:
        """The message of one native. A group's first item loads as the message without the
        calls of the items after it: load a group with :meth:`load_grouped`."""
        base, carrier = split_carrier(native)
        message = _load_native(base, index)
        if carrier is None:
            return [message]
        return [apply_carrier(message, carrier, f"input[{index}]")]

    # ---- back

    def rebuild(
        self,
        native: dict[str, Any],
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> list[dict[str, Any]]:
        """The native with the message's new text. A native that holds the carrier, and the
        first item of a group, are written again from the message (a group as the whole
        group, so its call items come back equal to what they were). A message cut to blank
        text never leaves a ``message`` item without content (see
        :func:`~agent_adapter.context.formats._patch.never_blank`)."""
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
        base, carrier = split_carrier(native)
        marked = _group_size(carrier) >= 2
        natural = carrier is None and is_call(base) and len(originals[0].tool_calls) > 1
        if message.text == originals[0].text and not (marked or natural):
            return [native]
        if RESERVED_KEY in native or natural:
            items = self._dump_items(message, mark=not natural)
            return [_rebuilt_first(base, items[0]), *items[1:]]
        return [rebuild_item(native, message.text)]

    def dump(self, message: Message) -> dict[str, Any]:
        """One item for ``message`` (lossless: ``load(dump(m), i) == [m]``).

        An assistant message with several tool calls, or with text and a call, becomes one
        ``message`` item whose calls exist only in the carrier, so
        :func:`~agent_adapter.context.formats.strip_reserved` removes them: use
        :meth:`dump_all` to write such messages for a Responses list.
        """
        return dump_lossless(message, render_item, _load_one)

    def dump_all(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Items for a run of messages, lossless (``load_all(dump_all(ms))[0] == ms``).

        As :meth:`dump`, except that a message one item cannot hold (see
        :func:`~agent_adapter.context.formats._openai._render.needs_group`) becomes a group:
        its ``message`` item (when it has text or other non-thinking content), then one
        ``function_call`` / ``custom_tool_call`` item per call, as the Responses API writes
        them. The first item's carrier says ``{"group": k}`` (``k`` items), so
        :meth:`load_all` gives the one message back; after ``strip_reserved`` the items are
        what the API expects (each call item answered by its output). A one-call message
        right after another is marked ``{"group": 1}``, so the two do not load as one.
        """
        out: list[dict[str, Any]] = []
        for message in messages:
            items = self._dump_items(message)
            if out and len(items) == 1 and _plain_call(items[0]) and _plain_call(out[-1]):
                items = [with_carrier(items[0], {"group": 1})]
            out.extend(items)
        return out

    def _dump_items(self, message: Message, *, mark: bool = True) -> list[dict[str, Any]]:
        """The items for ``message``: a group when it needs one, else one item. ``mark=False``
        leaves the carrier off a group of call items that loads back exactly without one."""
        if needs_group(message):
            for with_parts in (True, False):
                items, rendered = render_group(message, with_parts)
                try:
                    loaded = _load_items(items)
                except ConfigError:
                    continue
                carrier = carrier_diff(message, loaded, rendered)
                if carrier is None:
                    continue
                if not mark and not carrier and is_call(items[0]):
                    return items
                return [with_carrier(items[0], {**carrier, "group": len(items)}), *items[1:]]
        return [self.dump(message)]


def _rebuilt_first(base: Mapping[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """The first item dumped for a changed native (carrier left out), with the keys of the
    native it replaces when that was an item of the same type."""
    if base.get("type", "message") == item.get("type", "message"):
        return {**base, **item}
    return item
