"""The test server's prompt cache: cached input tokens by prefix match, as each provider reports
them.

Every provider caches the *prefix* of a prompt: a later request that starts with the same
tokens as an earlier one (same model, same account) reads that part from the cache, billed at
a fraction of the input price. :class:`PromptCache` gives :class:`ProviderServer` one such
cache, so a test sees what a client that keeps its prefix stable saves (and what one that
rewrites it loses). It keeps to each provider's documented rules:

* **OpenAI** (Chat Completions and Responses). "Caching is enabled automatically for prompts
  that are 1024 tokens or longer"; "cache hits are only possible for exact prefix matches"
  and occur "in increments of 128 tokens"; reported as ``usage.prompt_tokens_details.
  cached_tokens`` (Chat) and ``usage.input_tokens_details.cached_tokens`` (Responses), a part
  of ``prompt_tokens`` / ``input_tokens``. Cached prefixes "remain active for 5 to 10 minutes
  of inactivity". Messages, tools and structured-output schemas are all part of the prefix
  (developers.openai.com/api/docs/guides/prompt-caching; the OpenAI cookbook's "Prompt
  Caching 201"). A ``prompt_cache_key`` is part of the cache's scope here (OpenAI combines it
  with the prefix hash to route requests).
* **Anthropic** (Messages). Only what a ``cache_control`` breakpoint marks is cached: "the
  entire prompt - tools, system, and messages (in that order) up to and including the block
  designated with cache_control"; a request may hold "up to 4 cache breakpoints" (more is a
  400: "A maximum of 4 blocks with cache_control may be provided. Found 5."); a top-level
  ``cache_control`` ("automatic caching") puts one on the last block. A read is the longest
  cached prefix ending at a block boundary, checked backwards from each breakpoint over "20
  blocks" (the lookback window) before moving to the previous breakpoint; what lies between
  the read and the last breakpoint is written. A prefix shorter than the model's minimum
  (1,024 tokens for Claude Sonnet 4.5 / 4 / 3.7 and Opus 4.1 / 4; 2,048 for Haiku 3.5 and 3;
  4,096 for Opus 4.5 / 4.6 and Haiku 4.5) is not cached. Entries live 5 minutes from their
  last use (``"ttl": "1h"``: an hour). Usage reports ``cache_read_input_tokens``,
  ``cache_creation_input_tokens`` (split by TTL in ``cache_creation``) and ``input_tokens``,
  the uncached rest after the last breakpoint (platform.claude.com/docs/en/build-with-claude/
  prompt-caching; the minimums as that page lists them, quoted in anthropic-sdk-python issue
  #1194; the 400 as quoted in tghamm/Anthropic.SDK issue #50).
* **DeepSeek** (a Chat Completions request naming a ``deepseek-*`` model). "Each request
  will produce two cache prefix units at the end position of the user input and the end
  position of the model output. A subsequent request can hit the cache if it fully matches
  them"; the hit is reported as ``usage.prompt_cache_hit_tokens`` (and the rest as
  ``prompt_cache_miss_tokens``), not OpenAI's fields (api-docs.deepseek.com/guides/kv_cache).
  Here the unit at the end of each earlier request's input is kept: the hit is the longest
  earlier prompt this one starts with, whole.
* **Gemini** (``generateContent``). "Implicit caching is enabled by default for all Gemini 2.5
  and newer models", with a minimum input of 2,048 tokens for Gemini 2.5 Flash and Pro and
  4,096 for Gemini 3 models (ai.google.dev/gemini-api/docs/caching, as read in October 2026);
  the hit is reported as ``usageMetadata.cachedContentTokenCount``, a part of
  ``promptTokenCount``. No granularity is documented: any common prefix at or over the
  minimum counts. Gemini 2.0 models have no implicit cache.

Tokens are counted the server's way, not with a real tokenizer: a request's prompt is its
prompt fields written as canonical JSON (sorted keys, no spaces; ``cache_control`` marks left
out, as they do not change the prefix), about four characters a token (the chars/4 rule of
thumb OpenAI gives for English text, and the library's own estimate). A prefix of ``c``
shared characters is ``c // 4`` tokens; the whole prompt ``ceil(chars / 4)``. The fields of a
request that are not prompt (model, sampling, ``max_tokens``, ``stream``) are not counted.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter.providers._anthropic_cache import count_breakpoints, unmarked
from agent_adapter.testing._replies import Protocol

__all__ = [
    "CacheHit",
    "PromptCache",
    "anthropic_breakpoints",
    "is_deepseek",
    "prompt_tokens",
]

#: Anthropic's limit on ``cache_control`` breakpoints in one request.
MAX_BREAKPOINTS = 4
_LOOKBACK = 20
_OPENAI_MIN, _OPENAI_STEP = 1024, 128
#: Anthropic's minimum cacheable prefix by model-name prefix (longest match wins).
_ANTHROPIC_MIN = {
    "claude-opus-4-5": 4096,
    "claude-opus-4-6": 4096,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
    "claude-haiku-3": 2048,
}
_ANTHROPIC_DEFAULT_MIN = 1024
_HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class CacheHit:
    """What the cache did for one request.

    Attributes:
        prompt_tokens: the request's prompt, as the server counts it.
        read: tokens of it read from the cache.
        write: tokens of it written to the cache (Anthropic's ``cache_creation_input_tokens``;
            0 for OpenAI and Gemini, which report no writes).
        write_1h: the part of ``write`` under a one-hour TTL (Anthropic ``"ttl": "1h"``).
    """

    prompt_tokens: int
    read: int = 0
    write: int = 0
    write_1h: int = 0


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _tokens(chars: int) -> int:
    return -(-chars // 4)


def _segments(protocol: Protocol, body: Mapping[str, Any]) -> list[str]:
    """The prompt of a Chat Completions / Responses / Gemini request, in prefix order."""
    head: list[Any]
    items: Any
    if protocol == "chat":
        head = [*(body.get("tools") or ()), body.get("response_format")]
        items = body.get("messages") or []
    elif protocol == "responses":
        text = body.get("text")
        head = [*(body.get("tools") or ()), text.get("format") if isinstance(text, dict) else None]
        head.append(body.get("instructions"))
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
    else:
        system = body.get("systemInstruction", body.get("system_instruction"))
        head = [system, *(body.get("tools") or ())]
        items = body.get("contents") or []
        if isinstance(items, str | dict):
            items = [items]
    segments = [_dumps(unmarked(h)) for h in head if h is not None]
    segments += [_dumps(unmarked(item)) for item in (items if isinstance(items, list) else [])]
    return [s + "\n" for s in segments]


@dataclass(frozen=True, slots=True)
class _Block:
    text: str
    breakpoint: bool
    ttl_s: float


def _ttl(mark: Any, default: float) -> float:
    if isinstance(mark, dict) and mark.get("ttl") == "1h":
        return _HOUR
    return default


def _anthropic_blocks(body: Mapping[str, Any], ttl_s: float) -> list[_Block]:
    """Tools, system and message blocks, in Anthropic's prefix order, with their breakpoints;
    the message blocks before the last ``compaction`` block are left out, as the API drops
    them."""
    blocks: list[_Block] = []

    def add(prefix: str, block: Any) -> None:
        mark = block.get("cache_control") if isinstance(block, dict) else None
        text = prefix + _dumps(unmarked(block)) + "\n"
        blocks.append(_Block(text, mark is not None, _ttl(mark, ttl_s)))

    for tool in body.get("tools") or ():
        add("tool:", tool)
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for block in system or ():
        add("system:", block)
    head = len(blocks)
    last_compaction: int | None = None
    for message in body.get("messages") or ():
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        content = content if isinstance(content, list) else []
        role = f"{message.get('role', '')}:"
        if not content:
            blocks.append(_Block(role + "\n", False, ttl_s))
        for i, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "compaction":
                last_compaction = len(blocks)
            add(role if i == 0 else "", block)
    if last_compaction is not None:
        # compaction beta: "The API automatically drops all message blocks prior to the
        # compaction block, continuing the conversation from the summary"
        del blocks[head:last_compaction]
    top = body.get("cache_control")
    if top is not None and blocks and not blocks[-1].breakpoint:
        last = blocks[-1]
        blocks[-1] = _Block(last.text, True, _ttl(top, ttl_s))
    return blocks


def anthropic_breakpoints(body: Any) -> int:
    """How many ``cache_control`` breakpoints an Anthropic Messages body holds (the blocks'
    own, and one for a top-level ``cache_control``): the provider's own count."""
    return count_breakpoints(body) if isinstance(body, dict) else 0


def prompt_tokens(protocol: Protocol, body: Any) -> int:
    """The prompt tokens of a request body, as the server counts them (see the module
    docstring): ``ceil(chars / 4)`` of its prompt fields written as canonical JSON."""
    data = body if isinstance(body, dict) else {}
    if protocol == "anthropic":
        return _tokens(sum(len(b.text) for b in _anthropic_blocks(data, 0.0)))
    return _tokens(sum(len(s) for s in _segments(protocol, data)))


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (binary search on slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _anthropic_minimum(model: str) -> int:
    best = ""
    for name in _ANTHROPIC_MIN:
        if model.startswith(name) and len(name) > len(best):
            best = name
    return _ANTHROPIC_MIN[best] if best else _ANTHROPIC_DEFAULT_MIN


def is_deepseek(model: str) -> bool:
    """Whether a Chat Completions request names a DeepSeek model (reported in its words)."""
    return model.startswith("deepseek")


def _gemini_minimum(model: str) -> int | None:
    """Gemini's implicit-cache minimum for ``model``; ``None`` for models with no implicit
    cache (Gemini 1.x and 2.0)."""
    name = model.removeprefix("models/")
    if name.startswith(("gemini-1", "gemini-2.0")):
        return None
    if name.startswith("gemini-2.5") or not name.startswith("gemini-"):
        return 2048
    return 4096


@dataclass
class _Prompt:
    text: str
    expires: float


@dataclass
class _Entry:
    tokens: int
    ttl_s: float
    expires: float


class PromptCache:
    """A prompt cache for :class:`~agent_adapter.testing.ProviderServer`: cached tokens by
    prefix match, per provider rules (see the module docstring).

    Scoped like the providers' caches: by provider, API key and model (and OpenAI's
    ``prompt_cache_key``), so another key or model never reads what one wrote; Chat
    Completions and Responses share OpenAI's scope (a prompt that renders the same is the
    same prefix). Safe to use from the server's thread and the test's at once.

    Args:
        ttl_s: seconds an entry lives after its last use (OpenAI's and Gemini's prefixes,
            Anthropic's 5-minute breakpoints; a ``"ttl": "1h"`` breakpoint lives an hour).
        max_prompts: earlier prompts remembered per scope for OpenAI and Gemini (the oldest
            go first).
        max_entries: Anthropic cache entries remembered per scope.

    Raises:
        ConfigError: a setting is not a positive number.
    """

    def __init__(
        self, *, ttl_s: float = 300.0, max_prompts: int = 64, max_entries: int = 4096
    ) -> None:
        if isinstance(ttl_s, bool) or not isinstance(ttl_s, int | float) or not ttl_s > 0:
            raise ConfigError(f"PromptCache.ttl_s must be a number > 0, got {ttl_s!r}")
        for name, value in (("max_prompts", max_prompts), ("max_entries", max_entries)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"PromptCache.{name} must be an int >= 1, got {value!r}")
        self.ttl_s = float(ttl_s)
        self.max_prompts = max_prompts
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._prompts: dict[tuple[str, ...], list[_Prompt]] = {}
        self._entries: dict[tuple[str, ...], OrderedDict[str, _Entry]] = {}

    def clear(self) -> None:
        """Forget everything cached."""
        with self._lock:
            self._prompts.clear()
            self._entries.clear()

    def lookup(
        self,
        protocol: Protocol,
        model: str,
        body: Any,
        headers: Mapping[str, str] | None = None,
        query: Mapping[str, str] | None = None,
    ) -> CacheHit:
        """What the cache reads and writes for one request, which it then holds.

        Args:
            protocol: the wire protocol the request came in.
            model: the model it names.
            body: its JSON body.
            headers: its headers, lower-case names (the API key is read from them).
            query: its query parameters (Gemini's ``key``).
        """
        data = body if isinstance(body, dict) else {}
        scope = _scope(protocol, model, data, headers or {}, query or {})
        now = time.monotonic()
        with self._lock:
            if protocol == "anthropic":
                return self._anthropic(scope, model, data, now)
            segments = _segments(protocol, data)
            text = "".join(segments)
            total = _tokens(len(text))
            if protocol == "chat" and is_deepseek(model):
                return CacheHit(total, read=self._whole(scope, text, now) // 4)
            if protocol == "gemini":
                minimum = _gemini_minimum(model)
                if minimum is None:
                    return CacheHit(total)
            else:
                minimum = _OPENAI_MIN
            shared = self._longest(scope, text, now, minimum) // 4
            if shared < minimum:
                return CacheHit(total)
            if protocol != "gemini":
                shared = minimum + (shared - minimum) // _OPENAI_STEP * _OPENAI_STEP
            return CacheHit(total, read=shared)

    def _longest(self, scope: tuple[str, ...], text: str, now: float, minimum: int) -> int:
        """The longest prefix ``text`` shares with a live earlier prompt, in characters (a
        hit of ``minimum`` tokens or more renews that prompt's life); ``text`` is
        remembered."""
        prompts = [p for p in self._prompts.get(scope, []) if p.expires > now]
        best, match = 0, None
        for prompt in prompts:
            n = _common_prefix(prompt.text, text)
            if n > best:
                best, match = n, prompt
        if match is not None and best // 4 >= minimum:
            match.expires = now + self.ttl_s
        prompts.append(_Prompt(text, now + self.ttl_s))
        self._prompts[scope] = prompts[-self.max_prompts :]
        return best

    def _whole(self, scope: tuple[str, ...], text: str, now: float) -> int:
        """The longest live earlier prompt that ``text`` starts with, in characters (DeepSeek's
        prefix unit at the end of a request's input); ``text`` is remembered."""
        prompts = [p for p in self._prompts.get(scope, []) if p.expires > now]
        best, match = 0, None
        for prompt in prompts:
            if len(prompt.text) > best and text.startswith(prompt.text):
                best, match = len(prompt.text), prompt
        if match is not None:
            match.expires = now + self.ttl_s
        prompts.append(_Prompt(text, now + self.ttl_s))
        self._prompts[scope] = prompts[-self.max_prompts :]
        return best

    def _anthropic(
        self, scope: tuple[str, ...], model: str, body: Mapping[str, Any], now: float
    ) -> CacheHit:
        blocks = _anthropic_blocks(body, self.ttl_s)
        chars, digests = 0, []
        ends: list[int] = []
        h = hashlib.sha256()
        for block in blocks:
            h.update(block.text.encode())
            chars += len(block.text)
            ends.append(chars // 4)
            digests.append(h.copy().hexdigest())
        total = _tokens(chars)
        marks = [i for i, b in enumerate(blocks) if b.breakpoint]
        if not marks:
            return CacheHit(total)
        entries = self._entries.setdefault(scope, OrderedDict())
        for key in [k for k, e in entries.items() if e.expires <= now]:
            del entries[key]
        read_at = -1
        for mark in reversed(marks):
            for j in range(mark, max(-1, mark - _LOOKBACK), -1):
                if digests[j] in entries:
                    read_at = j
                    break
            if read_at >= 0:
                break
        read = 0
        if read_at >= 0:
            entry = entries[digests[read_at]]
            entry.expires = now + entry.ttl_s
            entries.move_to_end(digests[read_at])
            read = ends[read_at]
        minimum = _anthropic_minimum(model)
        written, written_1h, start = 0, 0, read
        for mark in marks:
            if mark <= read_at or ends[mark] < minimum:
                continue
            block = blocks[mark]
            entries[digests[mark]] = _Entry(ends[mark], block.ttl_s, now + block.ttl_s)
            entries.move_to_end(digests[mark])
            segment = ends[mark] - start
            written += segment
            written_1h += segment if block.ttl_s >= _HOUR else 0
            start = ends[mark]
        while len(entries) > self.max_entries:
            entries.popitem(last=False)
        return CacheHit(total, read=read, write=written, write_1h=written_1h)

    def __repr__(self) -> str:
        return f"PromptCache(ttl_s={self.ttl_s:g})"


def _scope(
    protocol: Protocol,
    model: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    query: Mapping[str, str],
) -> tuple[str, ...]:
    if protocol == "anthropic":
        key = headers.get("x-api-key") or headers.get("authorization", "")
        return ("anthropic", key, model)
    if protocol == "gemini":
        key = headers.get("x-goog-api-key") or query.get("key", "")
        return ("gemini", key, model.removeprefix("models/"))
    routing = body.get("prompt_cache_key")
    return ("openai", headers.get("authorization", ""), model, str(routing or ""))
