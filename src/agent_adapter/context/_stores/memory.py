"""MemoryStore: full tool results in this process, with expiry."""

from __future__ import annotations

import hashlib
import time

__all__ = ["MemoryStore"]


class MemoryStore:
    """An in-process :class:`ToolResultStore`; lost when the process ends.

    Ids are the first 16 hex digits of the text's sha256, so saving the same result twice
    gives the same id. Expired entries are dropped when read and on each save.
    """

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], tuple[str, float | None]] = {}

    async def save(self, scope: str, text: str, *, ttl_seconds: float | None) -> str:
        """Save ``text`` under ``scope`` for ``ttl_seconds`` seconds; returns its id."""
        now = time.monotonic()
        self._data = {k: v for k, v in self._data.items() if v[1] is None or v[1] > now}
        id_ = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        expires = None if ttl_seconds is None else now + ttl_seconds
        self._data[(scope, id_)] = (text, expires)
        return id_

    async def load(self, scope: str, id: str) -> str | None:
        """The text saved under ``scope`` as ``id``, or ``None`` (unknown or expired)."""
        hit = self._data.get((scope, id))
        if hit is None:
            return None
        text, expires = hit
        if expires is not None and expires <= time.monotonic():
            del self._data[(scope, id)]
            return None
        return text

    def __len__(self) -> int:
        return len(self._data)
