"""Conversion: one convert() call's natives as messages, and back()."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

from agent_adapter.context.formats._base import Converter, Pinned
from agent_adapter.context.invariants import align, next_known
from agent_adapter.errors import ConfigError
from agent_adapter.messages import Message

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
        self._pinned: set[int] = set()
        if pinned is not None:
            for i, native in enumerate(natives):
                if pinned(native):  # a pinned member pins its group's message
                    start, stop = self._ranges[members.get(i, i)]
                    self._pinned.update(id(m) for m in self.messages[start:stop])

    def is_pinned(self, message: Message) -> bool:
        """True when ``message`` came from a native the caller's ``pinned`` marked."""
        return id(message) in self._pinned

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
        slot, added = align(self.messages, messages)  # popped as dumped: starts can repeat
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
        return self._same_objects(conv.finish(out))

    def _same_objects(self, out: list[T]) -> list[T]:
        """``out`` with every rebuilt or merged native that equals an input native replaced by
        that very input object (a merge can rebuild an original, e.g. when a dropped message
        sat between two halves of it). Only input natives between the kept neighbours are
        compared, so the cost stays proportional to what changed."""
        pos = {id(n): i for i, n in enumerate(self._natives)}
        if all(id(x) in pos for x in out):
            return out
        nxt = next_known(out, pos, len(self._natives))
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
