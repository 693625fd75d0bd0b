"""Bounded memos of pure results, reused across passes and calls.

An agent sends the same conversation again and again, one round longer: the same tool output
is cut the same way, the same message shortened to the same text, call after call. Two memos
keep that work from being done twice, and both return only what a fresh computation would:

* :class:`Memo`: results by the texts they were computed from (held as keys, so an equal
  text finds its result and nothing stale is ever returned).
* :func:`with_text`: ``message.with_text(text)`` as the same object for the same message
  object and text, so what is keyed by identity downstream (token counts, the notes of a
  dropped run) is found again on the next call. A :class:`~agent_adapter._messages.Message`
  is frozen, so sharing the derived object is safe.
"""

from __future__ import annotations

import threading
import weakref
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from agent_adapter._messages import Message

__all__ = ["Memo", "chars_of", "clear", "with_text"]

_T = TypeVar("_T")


#: Every memo made, for :func:`clear`.
_ALL: weakref.WeakSet[Memo] = weakref.WeakSet()


class Memo:
    """A bounded LRU of results by the texts they were computed from: at most ``entries``
    results and ``chars`` characters of keys; a key longer than ``chars // 4`` is never
    remembered."""

    def __init__(self, entries: int, chars: int) -> None:
        self.entries = entries
        self.chars = chars
        self.held = 0
        self.items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self.lock = threading.Lock()
        _ALL.add(self)

    def get(self, key: Hashable) -> Any:
        """The result remembered for ``key``, or ``None``."""
        with self.lock:
            hit = self.items.get(key)
            if hit is None:
                return None
            self.items.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        """Remember ``value`` for ``key`` (``size``: the characters ``key`` holds)."""
        if size > self.chars // 4:
            return
        with self.lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.held -= old[1]
            self.items[key] = (value, size)
            self.held += size
            while len(self.items) > self.entries or self.held > self.chars:
                _, (_, gone) = self.items.popitem(last=False)
                self.held -= gone

    def by_identity(
        self,
        objects: tuple[Any, ...],
        compute: Callable[[], _T],
        extra: Hashable = (),
        size: int | Callable[[], int] = 1,
    ) -> _T:
        """``compute()``, remembered by the identities of ``objects`` (and ``extra``): the
        objects are held with the result, so their ids stay theirs while it is remembered
        and a hit is always for these very objects. ``size``: the characters held (or what
        counts them, called on a miss only)."""
        key = (identities(objects), extra)
        hit = self.get(key)
        if hit is not None:
            return hit[1]  # type: ignore[no-any-return]
        value = compute()
        self.put(key, (objects, value), size() if callable(size) else size)
        return value

    def clear(self) -> None:
        """Forget everything (tests, benchmarks of the cold path)."""
        with self.lock:
            self.items.clear()
            self.held = 0


#: Longer tuples of objects are keyed by their ids packed in bytes (:func:`identities`).
_PACK_FROM = 8


def identities(objects: tuple[Any, ...]) -> Hashable:
    """A key equal for the same objects in the same order: their ids, as a tuple for a few,
    packed 8 bytes an id for more (a tuple of 100,000 ids holds 100,000 int objects, 4 MB;
    packed, 0.8 MB, hashed at C speed)."""
    if len(objects) < _PACK_FROM:
        return tuple(map(id, objects))
    return array("Q", map(id, objects)).tobytes()


def chars_of(*messages: Message) -> int:
    """The characters ``messages`` hold (texts, thinking, inline data, call arguments): what a
    memo holding them keeps alive, for its ``chars`` bound."""
    total = 0
    for message in messages:
        content = message.content
        if isinstance(content, str):
            total += len(content)
        else:
            for part in content:
                text = getattr(part, "text", None) or getattr(part, "data", None)
                total += len(text) if isinstance(text, str) else 1
        total += sum(len(c.arguments) for c in message.tool_calls)
    return total


#: Derived messages by (the message, held; the new text). Both count toward ``chars``: the
#: message held is mostly the longer one (a cut tool output).
_DERIVED = Memo(entries=4096, chars=16_000_000)


def with_text(message: Message, text: str) -> Message:
    """``message.with_text(text)``, the same object as last time for the same message object
    and text (see the module doc)."""
    return _DERIVED.by_identity(
        (message,), lambda: message.with_text(text), text, lambda: len(text) + chars_of(message)
    )


def clear() -> None:
    """Forget what every memo holds (tests; the cold path of a benchmark)."""
    for memo in list(_ALL):
        memo.clear()
