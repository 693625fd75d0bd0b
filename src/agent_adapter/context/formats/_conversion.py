"""Conversion: one convert() call's natives as messages, and back()."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._provenance import text_only_change, trace
from agent_adapter.context.formats._base import Converter, Pinned

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
        converter = converter.bind(natives)
        self._converter = converter
        self.format = converter.name
        self.messages, self._ranges, members = converter.load_grouped(natives)
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
        if len(messages) == len(self.messages) and all(
            a is b for a, b in zip(messages, self.messages, strict=True)
        ):
            return self._natives
        traced = trace(self.messages, messages)
        if not traced.ordered:
            raise ConfigError(
                "Conversion.back: messages kept or changed must stay in this conversion's "
                "order (a native holds its messages in one place)"
            )
        slot, added = traced.slot, traced.added  # popped as dumped
        for j, m in enumerate(slot):
            # a change of more than text cannot be written onto the native: the message is
            # written as itself, in its place (its extras carry its native fields)
            if (
                m is not None
                and m is not self.messages[j]
                and not text_only_change(self.messages[j], m)
            ):
                slot[j] = None
                added.setdefault(j, []).append(m)
        conv = self._converter
        out: list[T] = []
        for i, (native, (start, stop)) in enumerate(zip(self._natives, self._ranges, strict=True)):
            if i in self._members:  # emitted with its leader
                continue
            out.extend(conv.dump_all(added.pop(start, ())))
            originals = self.messages[start:stop]
            now = slot[start:stop]
            if all(a is b for a, b in zip(now, originals, strict=True)):
                out.append(native)
                out.extend(self._natives[j] for j in self._groups.get(i, ()))
            elif any(m is not None for m in now):
                out.extend(conv.rebuild(native, originals, now))
            for g in range(start + 1, stop):  # added inside a native's span go after it
                out.extend(conv.dump_all(added.pop(g, ())))
        out.extend(conv.dump_all(added.pop(len(self.messages), ())))
        pos = {id(n): i for i, n in enumerate(self._natives)}  # input natives by identity
        return self._same_objects(conv.finish(out, new=lambda n: id(n) not in pos), pos)

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
