"""Native lists loaded once: the steady state of ``compress_for`` on provider formats.

An agent sends the model the same list again, one round longer, every call. Converting every
native to :class:`~agent_adapter._messages.Message` on every call costs more than the whole
compression check; this module remembers what natives loaded as, so a grown list loads only
its new natives (and the token counts of the old messages, cached by identity in
:class:`~agent_adapter.context._tokens.TokenMeter`, stay valid because the messages are the
same objects).

Two memos, both bounded and both holding what they remember strongly (so an ``id`` cannot be
reused by another object while it is remembered):

* **Lists** (:class:`_Lists`): the last :data:`_LISTS` lists seen, by the identity of their
  items and a *shallow fingerprint* of each item (how many fields it has and the field values:
  a dict's values, an object's ``vars()``), made at C speed for the whole list
  (:func:`snapshot`). A list that starts with a remembered one, items and fingerprints alike,
  reuses its result and works only on the items after it. Lists longer than
  :data:`_LIST_MAX` are not remembered.
* **Natives** (:class:`_Natives`): an LRU of at most :data:`_NATIVES` single natives (by
  identity, checked against the native itself and its fingerprint), for the formats that load
  each native on its own (Chat Completions, Anthropic, LangChain): a list that is not an
  extension (the compressed list an agent kept, plus new rounds) loads only the natives not
  seen before.

**Mutation.** The last :data:`_TAIL` natives of a list are always loaded again (and their
messages reused only when equal to the remembered ones), so any in-place edit of the newest
natives is seen, nested or not: agents build the newest turn in place (the tool results of
the last user turn appended block by block, ``msg["content"].append(...)``; the assistant
turn while it streams). The natives of the remembered prefix cost O(1) and are read again
when changed at their top level: a field set to a new value, added or removed
(``msg["content"] = ...``, ``msg.content = ...``); a native looked up on its own (not in a
remembered prefix) is also read again when a top-level list value changed length
(``msg["content"].append(...)``). Any other edit *inside* a nested value of an older native
(``msg["content"][0]["text"] = ...``) is not seen: like the OpenAI and Anthropic SDKs, which
take a list of sent messages as the history, this treats a message as fixed once it is
older than the last few. To change one, assign the field anew or send a new dict. Only the
library's own converters (exactly their classes) are memoized; any other converter loads the
whole list every time.

Loading through the memo gives exactly the messages a full load gives (equal messages; the
same objects where remembered), so the threshold check, the counts and the pairing validation
decide as they would on a fresh conversion. Anything unusual (an error, a list mixing APIs)
returns ``None`` and the caller converts the list the usual way, which raises the error
naming the caller's own index.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._carrier import split_carrier
from agent_adapter.context.formats._gemini import GeminiConverter
from agent_adapter.context.formats._gemini._parts import Calls
from agent_adapter.context.formats._langchain import LangChainConverter
from agent_adapter.context.formats._openai import (
    ChatConverter,
    OpenAIChatConverter,
    ResponsesConverter,
)
from agent_adapter.context.formats._openai._items import classify, is_call
from agent_adapter.context.formats._openai._responses import _group_size

__all__ = [
    "Snap",
    "disabled",
    "enabled",
    "load_messages",
    "loaded_alone",
    "loaded_prefix",
    "native_shape",
    "remembers_alone",
    "scan",
    "snapshot",
]

#: Lists remembered (over all purposes), and the longest list worth remembering.
_LISTS = 8
_LIST_MAX = 20_000
#: Single natives remembered for each format that loads natives one by one.
_NATIVES = 4096
#: Shortest list worth remembering (shorter ones cost less to load than to look up).
_MIN = 4
#: The newest natives of a list, loaded again on every call (edited in place: see above).
_TAIL = 2

_enabled = True
_lock = threading.Lock()


def enabled() -> bool:
    """False within :func:`disabled` (nothing is remembered or reused)."""
    return _enabled


@contextmanager
def disabled() -> Any:
    """Within the block nothing is remembered or reused (benchmarks: today's full path)."""
    global _enabled
    before, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = before


# ----------------------------------------------------------------------------- fingerprints


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Snap:
    """One list's fingerprint: its items (held, so their ids stay unique while it is
    remembered), their field counts and their field values (all items' in one tuple), each
    made in one C-level pass."""

    natives: tuple[Any, ...]
    lens: tuple[int, ...]
    values: tuple[Any, ...]
    #: remembered lists already compared with this one (detection and loading share one
    #: comparison): ``id(theirs) -> (theirs, weakly; whether this list starts with it)``.
    #: Weakly: a snap remembered holds what it was compared with, and that its own, and so
    #: on; held strongly, every list ever seen would stay alive through that chain.
    compared: dict[int, tuple[weakref.ref[Snap], bool]] = field(default_factory=dict, compare=False)

    def starts_with(self, old: Snap) -> bool:
        """True when this list starts with ``old``'s list: the same items, unchanged at
        their top level (field counts and values)."""
        hit = self.compared.get(id(old))
        if hit is not None and hit[0]() is old:
            return hit[1]
        natives, k = self.natives, len(old.natives)
        same = (
            k <= len(natives)
            and natives[k - 1] is old.natives[-1]
            and natives[0] is old.natives[0]
            and _equal(natives[:k], old.natives)
            and self.lens[:k] == old.lens
            and _equal(self.values[: len(old.values)], old.values)
        )
        self.compared[id(old)] = (weakref.ref(old), same)
        return same


def snapshot(natives: Sequence[Any]) -> Snap | None:
    """The fingerprint of a list of dicts, or of objects with a ``__dict__`` (pydantic
    models: LangChain messages, ``google.genai`` contents); ``None`` for anything else, for
    short lists (cheaper to load than to look up) and while the memo is :func:`disabled`."""
    if not _enabled or len(natives) < _MIN:
        return None
    try:
        dicts: Any = natives if type(natives[0]) is dict else list(map(vars, natives))
        lens = tuple(map(len, dicts))
        values = tuple(chain.from_iterable(map(dict.values, dicts)))
    except TypeError:  # an item that is not a dict / has no __dict__: no fingerprint
        return None
    return Snap(tuple(natives), lens, values)


def native_shape(native: Any) -> tuple[Any, ...] | None:
    """One native's fingerprint (its fields' values and the lengths of those that are lists:
    a content list grown in place), ``None`` when it has none."""
    try:
        values = tuple((native if type(native) is dict else vars(native)).values())
    except TypeError:
        return None
    return values, tuple([len(v) for v in values if type(v) is list])


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """True when ``a`` and ``b`` hold the same objects (ends compared first: no deep ``==``
    of two different lists of equal natives)."""
    return len(a) == len(b) and a[-1] is b[-1] and a[0] is b[0] and _equal(a, b)


def _equal(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """``a == b``; False when comparing raises (a field whose ``==`` is not a bool)."""
    try:
        return bool(a == b)
    except Exception:
        return False


# ----------------------------------------------------------------------------- lists


@dataclass(frozen=True, slots=True)
class _Seen:
    """A remembered list: its fingerprint and what the purpose computed for it."""

    key: Hashable
    snap: Snap
    result: Any


class _Lists:
    """The last few lists seen, for any purpose (detection, loading in one format)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.seen: list[_Seen] = []

    def find(self, key: Hashable, snap: Snap) -> _Seen | None:
        """The longest remembered list of ``key`` that ``snap``'s list starts with (the same
        items, unchanged at their top level)."""
        best: _Seen | None = None
        for seen in self.seen:
            if (
                seen.key == key
                and (best is None or len(seen.snap.natives) > len(best.snap.natives))
                and snap.starts_with(seen.snap)
            ):
                best = seen
        return best

    def remember(self, key: Hashable, snap: Snap, result: Any) -> None:
        if len(snap.natives) > _LIST_MAX:
            return
        seen = _Seen(key, snap, result)
        with _lock:
            kept = [
                s for s in self.seen if not (s.key == key and _same(s.snap.natives, snap.natives))
            ]
            self.seen = [seen, *kept][: self.size]


_LISTS_MEMO = _Lists(_LISTS)


# ----------------------------------------------------------------------------- detection


def scan(
    items: Sequence[Any],
    kinds: Callable[[Sequence[Any], int], set[str]],
    snap: Snap | None = None,
) -> set[str]:
    """``kinds(items, 0)`` (the formats each item is sure to be; raising for an item of none),
    reusing the result for a remembered prefix: ``kinds(tail, offset)`` scans only the items
    after it and the last :data:`_TAIL` items of the remembered list (edited in place: the
    module docstring), whose result is remembered without them (``offset``: the tail's index
    in ``items``, for errors). ``snap``: ``items``' :func:`snapshot` when the caller has it."""
    snap = snap or snapshot(items)
    if snap is None:
        return kinds(items, 0)
    seen = _LISTS_MEMO.find("detect", snap)
    cut = len(items) - _TAIL  # snapshots are of lists longer than _TAIL
    if seen is None:
        head = kinds(items[:cut], 0)
    else:
        k = len(seen.snap.natives) - _TAIL
        head = set(seen.result) | (kinds(items[k:cut], k) if k < cut else set())
    _LISTS_MEMO.remember("detect", snap, frozenset(head))
    return head | kinds(items[cut:], cut)


# ----------------------------------------------------------------------------- natives


@dataclass(frozen=True, slots=True)
class _Entry:
    native: Any
    shape: tuple[Any, ...]
    index: int
    #: the messages do not depend on the native's index (no made-up call ids)
    anywhere: bool
    messages: tuple[Message, ...]
    flavour: str | None


class _Natives:
    """An LRU of single natives loaded on their own (see the module docstring)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[int, _Entry] = OrderedDict()

    def get(self, native: Any, index: int, shape: tuple[Any, ...]) -> _Entry | None:
        entry = self.entries.get(id(native))
        if (
            entry is None
            or entry.native is not native
            or (not entry.anywhere and entry.index != index)
            or not _equal(entry.shape, shape)
        ):
            return None
        with suppress(KeyError):  # evicted by another thread meanwhile
            self.entries.move_to_end(id(native))
        return entry

    def put(self, entry: _Entry) -> None:
        with _lock:
            self.entries[id(entry.native)] = entry
            self.entries.move_to_end(id(entry.native))
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)


# ----------------------------------------------------------------------------- loaders


@dataclass(frozen=True, slots=True)
class _Loaded:
    """A list loaded: its messages, where each native's messages start (``len(natives) + 1``
    offsets) and what loading the rest needs (flavours seen; gemini's open calls before the
    last :data:`_TAIL` natives, where the next load starts again)."""

    mode: str
    messages: tuple[Message, ...]
    starts: tuple[int, ...]
    state: Any


class _Fallback(Exception):
    """Load the usual way (an error to report in the caller's terms, a list mixing APIs)."""


def _flavour(native: Any) -> str | None:
    return classify(split_carrier(native)[0])


class _Each:
    """A format whose natives load one by one (``Converter.load``), through :class:`_Natives`.

    ``openai`` lists load as Chat Completions dicts while no Responses item is among them
    (dicts valid in both APIs load the same either way)."""

    def __init__(self, converter: Converter[Any], *, flavours: bool) -> None:
        self.converter = converter
        self.flavours = flavours
        self.natives = _Natives(_NATIVES)

    def _anywhere(self, messages: Sequence[Message]) -> bool:
        if not isinstance(self.converter, LangChainConverter):
            return True  # chat and anthropic use the index for error messages only
        return not any(c.extras.get("langchain_no_id") for m in messages for c in m.tool_calls)

    def load(
        self, natives: Sequence[Any], start: int, before: _Loaded | None
    ) -> tuple[list[Message], list[int], frozenset[str]]:
        out: list[Message] = list(before.messages[: before.starts[start]]) if before else []
        starts: list[int] = list(before.starts[:start]) if before else []
        # the flavours of the natives loaded again stay in: a list that seems to mix APIs
        # is converted the usual way, which decides
        seen: set[str] = set(before.state) if before else set()
        memo, load = self.natives, self.converter.load
        # a native classified here is not classified again by its load (Chat's)
        classified = load
        if self.flavours and isinstance(self.converter, ChatConverter):
            classified = self.converter.load_classified
        tail = len(natives) - _TAIL
        # the natives the puts after them evict within this very loop are not put (nor
        # their entries made): only the last ``memo.size`` stay remembered
        kept_from = len(natives) - memo.size
        for i in range(start, len(natives)):
            native = natives[i]
            shape = native_shape(native)
            entry = memo.get(native, i, shape) if shape is not None else None
            if entry is None or i >= tail:  # the newest natives: always loaded again
                flavour = _flavour(native) if self.flavours else None
                if flavour == "responses":
                    raise _Fallback  # not a Chat list after all: the caller reloads it
                try:
                    messages = tuple((classified if self.flavours else load)(native, i))
                except ConfigError:
                    raise _Fallback from None
                if i < kept_from and entry is None:
                    starts.append(len(out))
                    out.extend(messages)
                    if flavour is not None:
                        seen.add(flavour)
                    continue
                if entry is None or entry.messages != messages or entry.flavour != flavour:
                    anywhere = self._anywhere(messages)
                    entry = _Entry(native, shape or (), i, anywhere, messages, flavour)
                    if shape is not None:
                        memo.put(entry)
            starts.append(len(out))
            out.extend(entry.messages)
            if entry.flavour is not None:
                seen.add(entry.flavour)
        starts.append(len(out))
        return out, starts, frozenset(seen)


def _reuse(out: list[Message], old: Sequence[Message], lo: int) -> None:
    """Put back in ``out[lo:]`` the remembered messages equal to the ones loaded again (the
    same objects: their token counts and validation stay remembered)."""
    for j in range(lo, min(len(out), len(old))):
        if out[j] is not old[j] and out[j] == old[j]:
            out[j] = old[j]


_CHAT = ChatConverter()
_RESPONSES = ResponsesConverter()


def _open_tail(natives: Sequence[Any], k: int) -> int:
    """Where a Responses list of ``k`` items must be loaded again from when items follow:
    its trailing call items, and the item before them when its carrier opens a group
    (``{"group": n}``): the next items may join them into one group (a run of parallel calls,
    a group cut short), while any earlier group ends before them (its members are call
    items, and the item before the trailing ones is none)."""
    r = k
    while (
        r > 0 and isinstance(natives[r - 1], Mapping) and is_call(split_carrier(natives[r - 1])[0])
    ):
        r -= 1
    if r > 0 and _group_size(split_carrier(natives[r - 1])[1]) >= 2:
        r -= 1
    return r


def _responses(
    natives: Sequence[Any], start: int, before: _Loaded | None
) -> tuple[list[Message], list[int], frozenset[str]]:
    """Responses items, groups included (``ResponsesConverter.load_grouped`` on the items
    from the last closed group on)."""
    r = _open_tail(natives, start) if before else 0
    head = before.messages[: before.starts[r]] if before else ()
    try:
        loaded, ranges, _ = _RESPONSES.load_grouped(natives[r:])
    except ConfigError:
        raise _Fallback from None
    out = [*head, *loaded]
    if before is not None:
        _reuse(out, before.messages, len(head))
    starts = [*(before.starts[:r] if before else ()), *(len(head) + a for a, _ in ranges)]
    starts.append(len(out))
    seen = set(before.state if before else ())
    seen.update(map(_flavour, natives[start if before else 0 :]))
    return out, starts, frozenset(seen)


def _gemini(
    natives: Sequence[Any], start: int, before: _Loaded | None
) -> tuple[list[Message], list[int], tuple[frozenset[str], tuple[Any, ...]]]:
    """Gemini contents, loaded in order with the open calls of the turn before (results
    without an id answer them by name; calls without an id get ids made up from their
    index, which a prefix keeps)."""
    converter = GeminiConverter()
    calls = Calls()
    out: list[Message] = list(before.messages[: before.starts[start]]) if before else []
    starts: list[int] = list(before.starts[:start]) if before else []
    if before is not None:  # the open calls before ``start`` (the last call's tail)
        ids, pending = before.state
        calls.ids, calls.pending = set(ids), list(pending)
    tail = max(0, len(natives) - _TAIL)  # where the next call starts again
    state: tuple[frozenset[str], tuple[Any, ...]] = (frozenset(), ())
    for i in range(start, len(natives)):
        if i == tail:
            state = (frozenset(calls.ids), tuple(calls.pending))
        starts.append(len(out))
        try:
            out.extend(converter._load(natives[i], i, calls))
        except ConfigError:
            raise _Fallback from None
    starts.append(len(out))
    if before is not None:
        _reuse(out, before.messages, before.starts[start])
    return out, starts, state


_ANTHROPIC_EACH = _Each(AnthropicConverter(), flavours=False)
_LANGCHAIN_EACH = _Each(LangChainConverter(), flavours=False)
_CHAT_EACH = _Each(_CHAT, flavours=True)

#: Each memoized converter class -> its loader's name.
_KINDS: dict[type[Any], str] = {
    AnthropicConverter: "anthropic",
    LangChainConverter: "langchain",
    OpenAIChatConverter: "openai",
    ChatConverter: "chat",
    ResponsesConverter: "responses",
    GeminiConverter: "gemini",
}


def loaded_alone(kind: str, native: Any) -> tuple[Message, ...] | None:
    """The messages remembered for ``native`` by this module's loader of ``kind``
    (``"anthropic"`` or ``"chat"``), or ``None``: a conversion that loads the native again
    (:mod:`~agent_adapter.context.formats._conversion`) reuses them when equal, so the
    threshold check and the compression hold the same objects (their counts and validation
    are remembered by identity)."""
    each = _ANTHROPIC_EACH if kind == "anthropic" else _CHAT_EACH if kind == "chat" else None
    entry = each.natives.entries.get(id(native)) if each is not None else None
    return entry.messages if entry is not None and entry.native is native else None


def remembers_alone(kind: str) -> bool:
    """False when :func:`loaded_alone` finds nothing for any native of ``kind`` (its loader
    remembers none): a conversion then skips asking native by native."""
    each = _ANTHROPIC_EACH if kind == "anthropic" else _CHAT_EACH if kind == "chat" else None
    return each is not None and bool(each.natives.entries)


def _run(
    mode: str, natives: Sequence[Any], start: int, before: _Loaded | None
) -> tuple[list[Message], list[int], Any]:
    if mode == "anthropic":
        return _ANTHROPIC_EACH.load(natives, start, before)
    if mode == "langchain":
        return _LANGCHAIN_EACH.load(natives, start, before)
    if mode == "chat":
        return _CHAT_EACH.load(natives, start, before)
    if mode == "responses":
        return _responses(natives, start, before)
    return _gemini(natives, start, before)


def load_messages(
    natives: Sequence[Any], converter: Converter[Any], snap: Snap | None = None
) -> list[Message] | None:
    """The messages ``convert(natives, converter).messages`` would hold (equal, and the same
    objects for natives remembered), loading only natives not remembered; ``None`` when the
    list must be converted the usual way (a converter this module does not know, a list that
    is not a list or tuple, an error to report, a list mixing APIs).

    ``openai`` lists load as Chat Completions dicts until a Responses item is among them, then
    as Responses items (as :meth:`OpenAIChatConverter.bind` picks); a ``chat`` list holding a
    Responses item is converted the usual way (which raises). ``snap``: ``natives``'
    :func:`snapshot` when the caller has it. A list longer than :data:`_LIST_MAX` is
    converted the usual way too: it is not remembered, so loading it here would only load it
    twice (here, then in the conversion that compresses it).
    """
    kind = _KINDS.get(type(converter))
    if kind is None or not _enabled or not isinstance(natives, list | tuple) or not natives:
        return None
    if len(natives) > _LIST_MAX:
        return None
    snap = snap or snapshot(natives)
    key = ("load", kind)
    before = _LISTS_MEMO.find(key, snap) if snap is not None else None
    loaded: _Loaded | None = before.result if before is not None else None
    mode = loaded.mode if loaded is not None else ("chat" if kind == "openai" else kind)
    # the remembered list's last natives are loaded again (edited in place: the module doc)
    start = max(0, len(before.snap.natives) - _TAIL) if before is not None else 0
    try:
        try:
            messages, starts, state = _run(mode, natives, start, loaded)
        except _Fallback:
            if kind != "openai" or mode != "chat":
                raise
            mode = "responses"  # a Responses item: the list is a Responses list
            messages, starts, state = _run(mode, natives, 0, None)
    except _Fallback:
        return None
    if mode in ("chat", "responses") and {"chat", "responses"} <= state:
        return None  # both APIs in one list: the usual conversion raises
    if snap is not None:
        _LISTS_MEMO.remember(key, snap, _Loaded(mode, tuple(messages), tuple(starts), state))
    return messages


def loaded_prefix(
    natives: Sequence[Any], converter: Converter[Any], n: int
) -> list[Message] | None:
    """The messages of ``natives[:n]`` when ``natives`` was just loaded through the memo
    (nothing is loaded again); ``None`` when it is not remembered."""
    kind = _KINDS.get(type(converter))
    snap = snapshot(natives) if kind is not None and natives else None
    if snap is None:
        return None
    seen = _LISTS_MEMO.find(("load", kind), snap)
    if seen is None or len(seen.snap.natives) != len(natives):
        return None
    loaded: _Loaded = seen.result
    if n >= len(loaded.starts):
        return list(loaded.messages)
    return list(loaded.messages[: loaded.starts[n]])
