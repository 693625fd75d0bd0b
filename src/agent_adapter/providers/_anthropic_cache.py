"""Anthropic prompt-cache breakpoints for ``AnthropicModel(cache_breakpoint="auto")``.

Anthropic caches only what a ``cache_control`` breakpoint marks: "the entire prompt - tools,
system, and messages (in that order) up to and including the block designated with
cache_control"; a later request reads the longest cached prefix it finds "at all previous
content block boundaries", checking back at most "20 blocks" from each breakpoint; a request
holds "up to 4 cache breakpoints"; thinking blocks and empty text blocks cannot carry one
(platform.claude.com/docs/en/build-with-claude/prompt-caching). The library keeps a
conversation's request prefix byte-identical between compactions, so the prefix a request
shares with the previous one is what the cache can serve.

``"auto"`` adds ``{"type": "ephemeral"}`` breakpoints, never past the limit of four (the
caller's own marks count and are kept as they are):

1. **The end of the stable prefix**: the last block of the last message that equals the
   previous request of the same conversation (or, when only the tools and system are
   unchanged, the last system block or tool). That request's tail breakpoint (2.) wrote the
   cache there, so this one reads it exactly, however many blocks were appended since: an
   agent round of parallel tool calls easily adds more than the 20 blocks the lookback
   reaches.
2. **The end of the request** (its last markable block), which writes the new part, so the
   next call of the conversation finds its stable prefix cached. This is also where
   Anthropic's automatic caching (a top-level ``cache_control``) puts its one breakpoint.

With a single slot left, the tail's is placed (it both reads, through the lookback, and
writes). Writes cost 1.25x the input price for the 5-minute TTL and reads 0.1x (Anthropic's
pricing page), so marking the tail pays from the second call of a conversation on.

The previous request of a conversation is the one remembered (per model object, the last
16,384 distinct prefixes) that this request shares the longest leading run of messages with,
compared without their ``cache_control`` marks and with string content read as one text
block: the cache is content-addressed, so the prefix is what counts, not who sent it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

__all__ = [
    "EPHEMERAL",
    "MAX_BREAKPOINTS",
    "StablePrefixes",
    "chain",
    "count_breakpoints",
    "place",
]

#: The breakpoint ``"auto"`` places.
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
#: Anthropic's limit on breakpoints in one request.
MAX_BREAKPOINTS = 4
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def unmarked(value: Any) -> Any:
    """``value`` without ``cache_control`` keys (a marker does not change the prefix)."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _digest(previous: str, value: Any) -> str:
    text = json.dumps(unmarked(value), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(f"{previous}\x1e{text}".encode()).hexdigest()


def chain(kwargs: dict[str, Any]) -> list[str]:
    """Digests of the request's prefixes: ``[0]`` the tools and system, ``[i]`` those and the
    first ``i`` messages."""
    system = kwargs.get("system")
    head = _digest("", {"tools": kwargs.get("tools") or [], "system": _blocks(system)})
    digests = [head]
    for message in kwargs.get("messages") or ():
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        digests.append(_digest(digests[-1], {"role": role, "content": _blocks(content)}))
    return digests


class StablePrefixes:
    """The prefixes of recent requests, as :func:`chain` digests (bounded; thread-safe).

    Args:
        size: how many distinct prefix digests to remember (the least recently seen go).
    """

    def __init__(self, size: int = 16_384) -> None:
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def stable(self, digests: Sequence[str]) -> int:
        """How many leading messages an earlier request shared (``0``: only its tools and
        system; ``-1``: not even those)."""
        with self._lock:
            for i in range(len(digests) - 1, -1, -1):
                if digests[i] in self._seen:
                    return i
        return -1

    def remember(self, digests: Sequence[str]) -> None:
        """Remember a request's prefixes (one that was sent and answered)."""
        with self._lock:
            for digest in digests:
                self._seen[digest] = None
                self._seen.move_to_end(digest)
            while len(self._seen) > self._size:
                self._seen.popitem(last=False)


def count_breakpoints(kwargs: dict[str, Any]) -> int:
    """The breakpoints a request already holds: blocks with ``cache_control`` in the tools,
    system and messages, and a top-level ``cache_control``."""
    count = sum(isinstance(t, dict) and "cache_control" in t for t in kwargs.get("tools") or ())
    system = kwargs.get("system")
    for block in system if isinstance(system, list) else ():
        count += isinstance(block, dict) and "cache_control" in block
    for message in kwargs.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            count += isinstance(block, dict) and "cache_control" in block
    return count + (kwargs.get("cache_control") is not None)


def _markable(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") in _UNMARKABLE:
        return False
    return not (block.get("type") == "text" and not block.get("text"))


def _last_markable(messages: Sequence[Any], end: int) -> tuple[int, int] | None:
    """(message, block) of the last block that can carry a breakpoint in ``messages[:end]``."""
    for i in range(end - 1, -1, -1):
        message = messages[i]
        blocks = _blocks(message.get("content") if isinstance(message, dict) else None)
        for j in range(len(blocks) - 1, -1, -1):
            if _markable(blocks[j]):
                return i, j
    return None


def _marked(block: Any) -> bool:
    return isinstance(block, dict) and "cache_control" in block


def place(kwargs: dict[str, Any], stable: int) -> int:
    """Add the ``"auto"`` breakpoints to ``kwargs`` (see the module docstring); ``stable`` is
    :meth:`StablePrefixes.stable` of the request. Touched messages and blocks are copies (the
    caller's own dicts are never changed). Returns how many were added."""
    free = MAX_BREAKPOINTS - count_breakpoints(kwargs)
    messages = list(kwargs.get("messages") or ())
    targets: list[tuple[str, int, int]] = []
    tail = _last_markable(messages, len(messages))
    if tail is not None:
        targets.append(("messages", *tail))
    if stable > 0:
        head = _last_markable(messages, stable)
        if head is not None:
            targets.append(("messages", *head))
    elif stable == 0:
        system = kwargs.get("system")
        tools = kwargs.get("tools")
        if isinstance(system, list) and system and _markable(system[-1]):
            targets.append(("system", len(system) - 1, 0))
        elif isinstance(tools, list) and tools:
            targets.append(("tools", len(tools) - 1, 0))
    added = 0
    for where, i, j in dict.fromkeys(targets):
        if added >= free:
            break
        if where == "messages":
            message = messages[i]
            blocks = _blocks(message.get("content"))
            if _marked(blocks[j]):
                continue
            blocks[j] = {**blocks[j], "cache_control": dict(EPHEMERAL)}
            messages[i] = {**message, "content": blocks}
        else:
            items = list(kwargs[where])
            if _marked(items[i]):
                continue
            items[i] = {**items[i], "cache_control": dict(EPHEMERAL)}
            kwargs[where] = items
        added += 1
    kwargs["messages"] = messages
    return added
