"""Converter (one per format) and Conversion (one per convert call)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from agent_adapter.context.invariants import align
from agent_adapter.errors import ConfigError
from agent_adapter.messages import Message

__all__ = ["Conversion", "Converter", "Pinned"]

T = TypeVar("T")
Pinned = Callable[[Any], bool]


class Converter(ABC, Generic[T]):
    """Turns one format's native messages into :class:`Message` s and back.

    Subclasses set ``name`` and implement ``kind`` (detection of one item), ``load`` (one
    native to its messages), ``rebuild`` (a native some of whose messages were changed or
    dropped) and ``dump`` (a native for a message a step added, e.g. a summary).
    """

    name: ClassVar[str]

    @abstractmethod
    def kind(self, item: Any) -> str | None:
        """``"sure"`` when ``item`` can only be this format, ``"maybe"`` when it could be
        (e.g. a plain ``{"role", "content": str}`` dict), ``None`` when it is not."""

    @abstractmethod
    def load(self, native: T, index: int) -> list[Message]:
        """The messages of one native message (in order; often one).

        Raises:
            ConfigError: ``native`` is not a valid message of the format (naming ``index``).
        """

    @abstractmethod
    def rebuild(
        self, native: T, originals: Sequence[Message], now: Sequence[Message | None]
    ) -> list[T]:
        """Natives for ``native`` whose messages ``originals`` became ``now`` (``None``:
        removed; a new object: changed text). Every field but the changed text is kept."""

    @abstractmethod
    def dump(self, message: Message) -> T:
        """A new native for a message that no native produced (a summary, a note)."""

    def bind(self, natives: Sequence[Any]) -> Converter[T]:
        """The converter to use for one conversion of ``natives`` (default: ``self``); a
        converter whose new natives depend on the input's kind returns a bound copy (openai:
        Responses items for a Responses list; gemini: Content objects for Content input)."""
        return self

    def finish(self, natives: list[T]) -> list[T]:
        """Repairs spanning several natives once back() built them (default: none; anthropic
        merges adjacent same-role messages). Returns ``natives`` itself when nothing changes."""
        return natives

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        """Every native loaded: the messages and each native's (start, stop) among them."""
        messages: list[Message] = []
        ranges: list[tuple[int, int]] = []
        for i, native in enumerate(natives):
            start = len(messages)
            messages.extend(self.load(native, i))
            ranges.append((start, len(messages)))
        return messages, ranges


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
        self.messages, self._ranges = converter.load_all(natives)
        self._pinned: set[int] = set()
        if pinned is not None:
            for native, (start, stop) in zip(natives, self._ranges, strict=True):
                if pinned(native):
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
        slot, added = align(self.messages, messages)
        conv = self._converter
        out: list[T] = []
        for native, (start, stop) in zip(self._natives, self._ranges, strict=True):
            out.extend(conv.dump(m) for m in added.get(start, ()))
            originals = self.messages[start:stop]
            now = slot[start:stop]
            if all(a is b for a, b in zip(now, originals, strict=True)):
                out.append(native)
            elif any(m is not None for m in now):
                out.extend(conv.rebuild(native, originals, now))
            for g in range(start + 1, stop):  # added inside a native's span go after it
                out.extend(conv.dump(m) for m in added.get(g, ()))
        out.extend(conv.dump(m) for m in added.get(len(self.messages), ()))
        return self._same_objects(conv.finish(out))

    def _same_objects(self, out: list[T]) -> list[T]:
        """``out`` with every rebuilt or merged native that equals an input native replaced by
        that very input object (a merge can rebuild an original, e.g. when a dropped message
        sat between two halves of it). Only input natives between the kept neighbours are
        compared, so the cost stays proportional to what changed."""
        pos = {id(n): i for i, n in enumerate(self._natives)}
        if all(id(x) in pos for x in out):
            return out
        nxt = [len(self._natives)] * (len(out) + 1)
        for k in range(len(out) - 1, -1, -1):
            i = pos.get(id(out[k]))
            nxt[k] = i if i is not None else nxt[k + 1]
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
