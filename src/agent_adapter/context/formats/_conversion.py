"""Conversion: one convert() call's natives as messages, and back()."""

from __future__ import annotations

import dataclasses
import operator
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import agent_adapter.context.formats._memo as _memo
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._ranges import Ranges
from agent_adapter.context._provenance import same_objects, text_only_change, trace
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._base import Converter, Pinned
from agent_adapter.context.formats._carrier import split_carrier
from agent_adapter.context.formats._openai import ChatConverter, OpenAIChatConverter
from agent_adapter.context.formats._openai._items import check_one_api, classify

__all__ = ["Conversion"]

T = TypeVar("T")


class Conversion(Generic[T]):
    """Native messages as messages; back() turns a compressed list into natives again.

    Messages the compression kept as they were come back as the very same native objects;
    changed ones keep every field of their native except the changed text.

    Attributes:
        messages: the natives as :class:`Message` s, to compress.
        format: the format's name.
    """

    def __init__(
        self,
        natives: list[T],
        converter: Converter[T],
        pinned: Pinned | None = None,
    ) -> None:
        self._natives = natives
        bound = converter.bind(natives)
        self._converter = bound
        self.format = bound.name
        self.messages, self._ranges, members = _load_grouped(converter, bound, natives)
        #: leader index -> the indexes of its members, in order
        self._groups: dict[int, list[int]] = {}
        for member, leader in sorted(members.items()):
            self._groups.setdefault(leader, []).append(member)
        self._members = members
        #: origins of the messages that are not the first of their native
        self._inner = {
            m.origin for start, stop in self._ranges for m in self.messages[start + 1 : stop]
        }
        self._pinned: set[int] = set()
        if pinned is not None:
            for i, native in enumerate(natives):
                if pinned(native):  # a pinned member pins its group's message
                    start, stop = self._ranges[members.get(i, i)]
                    self._pinned.update(m.origin for m in self.messages[start:stop])

    @property
    def turn_thinking(self) -> bool:
        """The format may carry Anthropic thinking (see ``Converter.turn_thinking``)."""
        return self._converter.turn_thinking

    @property
    def call_terms(self) -> tuple[str, str]:
        """What the format calls a tool call and a tool result (for error messages)."""
        return self._converter.call_terms

    def native_call_id(self, call_id: str) -> str:
        """How the caller knows the call ``call_id``."""
        return self._converter.native_call_id(call_id)

    def native_index(
        self, index: int, call_ids: Sequence[str | None] = (), *, last: bool = False
    ) -> int:
        """The index in the caller's list of the native that ``messages[index]`` came from
        (``len(natives)`` for one past the last message); with ``call_ids``, of the native
        holding those calls (a message spread over several natives, as Responses items are),
        the last one with ``last``."""
        if index >= len(self.messages):
            return len(self._natives)
        for i, (start, stop) in enumerate(self._ranges):
            if start <= index < stop:
                if call_ids:
                    return self._converter.call_index(self._natives, i, call_ids, last=last)
                return i
        return len(self._natives)

    def prefix_of(self, natives: Sequence[Any]) -> list[Message] | None:
        """The messages of ``natives`` when this conversion's natives start with them (by
        identity): a prefix of :attr:`messages`; ``None`` when they do not, or when a message
        holds natives on both sides of the boundary (a group)."""
        count = len(natives)
        own = self._natives
        if count > len(own) or any(a is not b for a, b in zip(natives, own, strict=False)):
            return None
        if count == len(own):
            return list(self.messages)
        if any((m < count) != (leader < count) for m, leader in self._members.items()):
            return None
        return self.messages[: self._ranges[count][0]]

    def starts_native(self, message: Message) -> bool:
        """False when ``message`` (or the input message it derives from) is not the first
        message of its native: an addition cannot be written right before it."""
        return message.origin not in self._inner

    def is_pinned(self, message: Message) -> bool:
        """True when ``message`` came from a native the caller's ``pinned`` marked."""
        return message.origin in self._pinned

    def back(self, messages: Sequence[Message]) -> list[T]:
        """Natives for messages (this conversion's messages, compressed or not).

        Raises:
            ConfigError: ``messages`` is not a sequence of Message.
        """
        if not isinstance(messages, Sequence) or not all(isinstance(m, Message) for m in messages):
            raise ConfigError("Conversion.back: messages must be a list of Message")
        if same_objects(messages, self.messages):
            return self._natives
        traced = trace(self.messages, messages)
        if not traced.ordered:
            raise ConfigError(
                "Conversion.back: messages kept or changed must stay in this conversion's "
                "order (a native holds its messages in one place)"
            )
        slot, added = traced.slot, traced.added  # popped as dumped
        self._demote(slot, added)
        conv = self._converter
        out: list[T] = []
        members, groups, messages = self._members, self._groups, self.messages
        for i, (native, (start, stop)) in enumerate(zip(self._natives, self._ranges, strict=True)):
            if members and i in members:  # emitted with its leader
                continue
            if start in added:
                out.extend(conv.dump_all(added.pop(start)))
            if stop != start + 1:
                self._back_span(out, i, native, start, stop, slot, added)
            elif slot[start] is messages[start]:  # one message: the most common native by far
                out.append(native)
                if groups:
                    out.extend(self._natives[j] for j in groups.get(i, ()))
            elif slot[start] is not None:
                out.extend(conv.rebuild(native, messages[start:stop], slot[start:stop]))
        out.extend(conv.dump_all(added.pop(len(self.messages), ())))
        pos = {id(n): i for i, n in enumerate(self._natives)}  # input natives by identity
        return self._same_objects(conv.finish(out, new=lambda n: id(n) not in pos), pos)

    def _demote(self, slot: list[Message | None], added: dict[int, list[Message]]) -> None:
        """Moves each message of ``slot`` changed in more than its text to ``added``: such a
        change cannot be written onto the native, so the message is written as itself, in its
        place (its extras carry its native fields)."""
        for j, m in enumerate(slot):
            if (
                m is not None
                and m is not self.messages[j]
                and not text_only_change(self.messages[j], m)
            ):
                slot[j] = None
                added.setdefault(j, []).append(m)

    def _back_span(
        self,
        out: list[T],
        i: int,
        native: T,
        start: int,
        stop: int,
        slot: list[Message | None],
        added: dict[int, list[Message]],
    ) -> None:
        """Appends to ``out`` what native ``i`` of messages ``start:stop`` (not one) became,
        and the messages added inside its span after it."""
        originals = self.messages[start:stop]
        now = slot[start:stop]
        if all(a is b for a, b in zip(now, originals, strict=True)):
            out.append(native)
            out.extend(self._natives[j] for j in self._groups.get(i, ()))
        elif any(m is not None for m in now):
            out.extend(self._converter.rebuild(native, originals, now))
        for g in range(start + 1, stop):  # added inside a native's span go after it
            if g in added:
                out.extend(self._converter.dump_all(added.pop(g)))

    def _same_objects(self, out: list[T], pos: dict[int, int]) -> list[T]:
        """``out`` with every rebuilt or merged native that equals an input native replaced by
        that very input object (a merge can rebuild an original, e.g. when a dropped message
        sat between two halves of it). Only input natives between the kept neighbours are
        compared, so the cost stays proportional to what changed. ``pos``: each input
        native's index, by ``id``."""
        if all(id(x) in pos for x in out):
            return out
        nxt = _next_known(out, pos, len(self._natives))
        prev = -1
        for k, x in enumerate(out):
            i = pos.get(id(x))
            if i is None:
                for j in range(prev + 1, nxt[k + 1]):
                    if self._natives[j] == x:
                        out[k] = self._natives[j]
                        i = j
                        break
            if i is not None:
                prev = i
        return out


def _next_known(items: Sequence[Any], pos: dict[int, int], default: int) -> list[int]:
    """For each index ``k`` of ``items`` (and one past the end), the position in ``pos`` of
    the first item at or after ``k`` that ``pos`` knows by identity, else ``default``."""
    out = [default] * (len(items) + 1)
    for k in range(len(items) - 1, -1, -1):
        j = pos.get(id(items[k]))
        out[k] = j if j is not None else out[k + 1]
    return out


# ----------------------------------------------------------------------------- loads remembered

#: Natives whose messages are remembered, and how deep a native is copied to compare it.
_LOADS = 4096
_DEPTH = 32
_UNFIT = object()
_LEAVES = frozenset({str, int, float, bool, bytes, type(None)})
_CHAT = ChatConverter()


def _frozen(value: Any, depth: int = 0) -> Any:
    """A copy of ``value``'s dicts, lists and tuples sharing its leaves (strings, numbers),
    to tell later whether the native was edited anywhere inside; ``_UNFIT`` for anything
    else (an object whose edits a copy would not show) or a nesting deeper than ``_DEPTH``."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if depth >= _DEPTH:
        return _UNFIT
    if kind is dict:
        out: dict[Any, Any] = {}
        for k, v in value.items():
            f = _frozen(v, depth + 1)
            if f is _UNFIT:
                return _UNFIT
            out[k] = f
        return out
    if kind is list or kind is tuple:
        items = [_frozen(v, depth + 1) for v in value]
        if any(f is _UNFIT for f in items):
            return _UNFIT
        return items if kind is list else tuple(items)
    return _UNFIT


def _containers(value: Any, out: list[Any]) -> list[Any]:
    """Every dict, list and tuple inside ``value`` (itself included), in order: a native whose
    containers are no longer these very objects (a block replaced by an equal one) is loaded
    again, since its messages may hold its parts (a thinking block goes back as the caller's
    own object)."""
    kind = type(value)
    if kind is dict:
        out.append(value)
        for v in value.values():
            if type(v) not in _LEAVES:
                _containers(v, out)
    elif kind is list or kind is tuple:
        out.append(value)
        for v in value:
            if type(v) not in _LEAVES:
                _containers(v, out)
    return out


def _reaches(value: Any, ids: set[int], depth: int = 0) -> bool:
    """True when ``value`` (messages and what they hold: parts, calls, extras, containers)
    holds an object whose ``id`` is in ``ids``; also for anything this walk cannot see into
    (an object of another kind, a nesting deeper than ``_DEPTH``), to be safe."""
    if id(value) in ids:
        return True
    kind = type(value)
    if kind in _LEAVES:
        return False
    if depth >= _DEPTH:
        return True
    items: Any
    if isinstance(value, Mapping):
        items = value.values()
    elif kind is list or kind is tuple:
        items = value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = _field_values(value)
    else:
        return True
    return any(_reaches(v, ids, depth + 1) for v in items)


#: A getter of every field of a dataclass type, by type (``dataclasses.fields`` builds its
#: tuple on every call: 4,096 natives' messages walked a conversion).
_FIELD_GETTERS: dict[type[Any], Callable[[Any], tuple[Any, ...]]] = {}


def _field_values(value: Any) -> tuple[Any, ...]:
    """The values of every field of the dataclass instance ``value``, in field order."""
    getter = _FIELD_GETTERS.get(type(value))
    if getter is None:
        names = [f.name for f in dataclasses.fields(value)]
        get = operator.attrgetter(*names) if names else None
        getter = (
            (lambda v: ()) if get is None else ((lambda v: (get(v),)) if len(names) == 1 else get)
        )
        _FIELD_GETTERS[type(value)] = getter
    return getter(value)


class _Loads:
    """The messages of single dict natives, by the native's identity, while the native equals
    the copy made when it was loaded (:func:`_frozen`: an edit anywhere inside it, nested or
    not, loads it again). Leaves are shared with the native, so the check is a C-level
    comparison that mostly compares identities. An LRU of at most :data:`_LOADS` natives,
    holding them (an ``id`` is not reused while remembered)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[
            tuple[str, int], tuple[Any, Any, tuple[Any, ...] | None, tuple[Message, ...]]
        ] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, kind: str, native: Any) -> tuple[Message, ...] | None:
        key = (kind, id(native))
        entry = self.entries.get(key)
        if entry is None or entry[0] is not native:
            return None
        try:
            same = bool(native == entry[1])
        except Exception:  # a value whose == is not a bool
            same = False
        if not same:
            return None
        held = entry[2]
        if held is not None:  # its messages hold some of its containers: the very ones?
            now = _containers(native, [])
            if len(now) != len(held) or not all(a is b for a, b in zip(now, held, strict=True)):
                return None
        with self.lock:
            if key in self.entries:
                self.entries.move_to_end(key)
        return entry[3]

    def put(self, kind: str, native: Any, messages: tuple[Message, ...]) -> None:
        frozen = _frozen(native)
        if frozen is _UNFIT:
            return
        with self.lock:
            containers = tuple(_containers(native, []))
            ids = {id(c) for c in containers}
            # messages holding none of the native's containers are the same for an equal
            # native: only the equality is checked on the next get (no walk of the native)
            held = containers if _reaches(messages, ids) else None
            self.entries[(kind, id(native))] = (native, frozen, held, messages)
            self.entries.move_to_end((kind, id(native)))
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every load (tests)."""
        with self.lock:
            self.entries.clear()


_REMEMBERED = _Loads(_LOADS)


def _loader(
    converter: Converter[Any], bound: Converter[Any]
) -> tuple[str, Callable[[Any, int], list[Message]]] | None:
    """The kind and per-native ``load`` of a conversion whose natives load one by one with no
    groups (Anthropic; Chat Completions, as ``openai`` lists without Responses items), for
    the library's own converters only; ``None`` for any other."""
    if type(converter) is AnthropicConverter:
        return "anthropic", converter.load
    if type(bound) is ChatConverter:
        return "chat", bound.load
    if type(converter) is OpenAIChatConverter and bound is converter:
        return "chat", _CHAT.load  # as OpenAIChatConverter.load_grouped loads such a list
    return None


def _chat_load(
    converter: Converter[Any], bound: Converter[Any], natives: Sequence[Any]
) -> Callable[[Any, int], list[Message]]:
    """The per-native load of a Chat Completions conversion, each native classified once:
    an ``openai`` list's :meth:`~OpenAIChatConverter.bind` found no Responses item in it
    (else it would be bound to Responses), a ``chat`` list is classified here (its mix of
    APIs raises, as ``ChatConverter.load_grouped`` does); the natives are then loaded
    without classifying each again, unless a Responses item is among them (its load raises
    the error naming it)."""
    chat = bound if isinstance(bound, ChatConverter) else _CHAT  # (unbound openai: as _loader)
    if type(converter) is OpenAIChatConverter:
        return chat.load_classified
    flavours = [classify(split_carrier(n)[0]) for n in natives]
    check_one_api(flavours)
    return chat.load if "responses" in flavours else chat.load_classified


def _load_grouped(
    converter: Converter[Any], bound: Converter[Any], natives: Sequence[Any]
) -> tuple[list[Message], Sequence[tuple[int, int]], dict[int, int]]:
    """``bound.load_grouped(natives)``, with the messages of dict natives loaded before (and
    unchanged since, anywhere inside) reused: a list compressed again (the next call, the
    list ``compress_for`` just loaded through its memo for the threshold check) is not
    converted again, and its messages being the same objects, their token counts and
    digests stay remembered. A native given twice in one list is loaded again for its second
    place (a conversion holds one message object a place)."""
    how = _loader(converter, bound) if _memo.enabled() else None
    if how is None or not isinstance(natives, list | tuple):
        return bound.load_grouped(natives)
    kind, load = how
    if kind == "chat":
        load = _chat_load(converter, bound, natives)
    messages: list[Message] = []
    stops: array[int] = array("q")
    seen: set[int] = set()
    memo = _REMEMBERED
    # only the last ``memo.size`` natives are remembered: the puts after an older one would
    # evict it in this very loop (and copying and walking it is most of a put's cost)
    kept_from = len(natives) - memo.size
    if (
        not memo.entries
        and not _memo.remembers_alone(kind)
        and len(set(map(id, natives))) == len(natives)
    ):
        # nothing remembered to reuse and no native twice (a cold conversion): each native
        # loaded, the newest remembered, without a lookup a native
        for i, native in enumerate(natives):
            loaded = load(native, i)
            if i >= kept_from and type(native) is dict:
                memo.put(kind, native, tuple(loaded))
            messages.extend(loaded)
            stops.append(len(messages))
        return messages, Ranges(stops, "native"), {}
    for i, native in enumerate(natives):
        twice = id(native) in seen
        got: Sequence[Message] | None = (
            None if twice or type(native) is not dict else memo.get(kind, native)
        )
        if got is None:
            got = load(native, i)
            if not twice and type(native) is dict:
                alone = _memo.loaded_alone(kind, native)
                if alone is not None and alone == tuple(got):
                    got = alone  # the threshold check's own messages: one object each
                if i >= kept_from:
                    memo.put(kind, native, tuple(got))
        seen.add(id(native))
        messages.extend(got)
        stops.append(len(messages))
    return messages, Ranges(stops, "native"), {}
