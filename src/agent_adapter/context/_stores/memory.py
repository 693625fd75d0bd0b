"""MemoryStore: full tool results in this process, bounded, with expiry."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from agent_adapter.context._stores._base import (
    DEFAULT_MAX_TEXT_CHARS,
    DEFAULT_MAX_TOTAL_CHARS,
    SaveOne,
    StoreEntry,
    StoreError,
    check_entries,
    check_limit,
    new_id_key,
)

__all__ = ["MemoryStore"]

#: Expired entries are swept on a save at most this often (seconds); reads drop them anyway.
_SWEEP_EVERY_S = 1.0


class MemoryStore(SaveOne):
    """An in-process :class:`ToolResultStore` for tests and one-process apps; lost when the
    process ends, and not shared between workers (use ``SQLiteStore`` or ``RedisStore``).

    Bounded: past ``max_entries`` entries or ``max_total_chars`` characters in all, the
    oldest saves go first (a recall of one then answers "not found", as for an expired id);
    a save never evicts what it writes: one that alone is over the bounds fails
    (``StoreError``, a :class:`StepFailure` of the step, which then removes nothing).
    Thread-safe: one lock guards the table, so ``compress_for_sync`` from many threads can
    share one store. Its id key (see :func:`derive_id`) is random per instance: the same
    input gives the same ids with the same store.

    Args:
        max_entries: the most texts kept.
        max_total_chars: the most characters kept over all texts.
        max_text_chars: longer texts are not saved (the shortened result offers no recall).

    Raises:
        ConfigError: a limit is not an int >= 1.
    """

    def __init__(
        self,
        *,
        max_entries: int = 10_000,
        max_total_chars: int = DEFAULT_MAX_TOTAL_CHARS,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
    ) -> None:
        check_limit("MemoryStore.max_entries", max_entries)
        check_limit("MemoryStore.max_total_chars", max_total_chars)
        check_limit("MemoryStore.max_text_chars", max_text_chars)
        self.max_entries = max_entries
        self.max_total_chars = max_total_chars
        self.max_text_chars = min(max_text_chars, max_total_chars)
        self._data: dict[tuple[str, str], tuple[str, float | None]] = {}
        self._chars = 0
        self._lock = threading.Lock()
        self._swept = time.monotonic()
        self._id_key = new_id_key()

    async def id_key(self) -> bytes:
        """The secret key of this store's ids (random per instance)."""
        return self._id_key

    def id_key_sync(self) -> bytes:
        """``id_key`` for sync code."""
        return self._id_key

    async def save_many(self, entries: Sequence[StoreEntry]) -> None:
        """Save every entry (all or none: they are checked first).

        Raises:
            ConfigError: a bad entry (naming its index and field).
            StoreError: the entries alone are more than the store keeps (see
                :meth:`save_many_sync`).
        """
        self.save_many_sync(entries)

    async def load(self, scope: str, id: str) -> str | None:
        """The text saved under ``scope`` as ``id``, or ``None`` (unknown, expired, evicted
        or another scope's)."""
        return self.load_sync(scope, id)

    async def load_all(self, scope: str) -> list[tuple[str, str]]:
        """Every ``(id, text)`` saved under ``scope`` that has not expired, oldest first."""
        return self.load_all_sync(scope)

    def load_all_sync(self, scope: str) -> list[tuple[str, str]]:
        """``load_all`` for sync code."""
        now = time.monotonic()
        with self._lock:
            return [
                (id_, text)
                for (s, id_), (text, expires) in self._data.items()
                if s == scope and (expires is None or expires > now)
            ]

    def save_many_sync(self, entries: Sequence[StoreEntry]) -> None:
        """``save_many`` for sync code.

        Raises:
            ConfigError: a bad entry (naming its index and field).
            StoreError: the entries alone are more than the store keeps (``max_entries`` /
                ``max_total_chars``): nothing is written, as a save may only evict older
                saves, never what it writes (a list naming ids the store dropped at once).
        """
        checked = check_entries(entries, self.max_text_chars)
        batch = {(e.scope, e.id): len(e.text) for e in checked}
        if len(batch) > self.max_entries or sum(batch.values()) > self.max_total_chars:
            raise StoreError(
                f"MemoryStore: {len(batch)} texts of {sum(batch.values()):,} characters in one "
                f"save are more than it keeps (max_entries={self.max_entries}, "
                f"max_total_chars={self.max_total_chars:,}); nothing was written"
            )
        now = time.monotonic()
        with self._lock:
            if now - self._swept >= _SWEEP_EVERY_S:
                self._sweep(now)
            for e in checked:
                expires = None if e.ttl_seconds is None else now + e.ttl_seconds
                self._drop((e.scope, e.id))
                self._data[(e.scope, e.id)] = (e.text, expires)
                self._chars += len(e.text)
            while len(self._data) > self.max_entries or self._chars > self.max_total_chars:
                self._drop(next(iter(self._data)))  # the oldest save

    def load_sync(self, scope: str, id: str) -> str | None:
        """``load`` for sync code."""
        key = (scope, id)
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                return None
            text, expires = hit
            if expires is not None and expires <= time.monotonic():
                self._drop(key)
                return None
            return text

    def _drop(self, key: tuple[str, str]) -> None:
        hit = self._data.pop(key, None)
        if hit is not None:
            self._chars -= len(hit[0])

    def _sweep(self, now: float) -> None:
        for key in [k for k, (_, exp) in self._data.items() if exp is not None and exp <= now]:
            self._drop(key)
        self._swept = now

    def __len__(self) -> int:
        """How many texts are kept (expired ones not yet swept included)."""
        return len(self._data)
