"""An on-disk cache of embeddings for the benchmarks, so a warm run embeds nothing."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agent_adapter.context import LocalEmbedder


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/agent-adapter/bench`` (``~/.cache/...``): outside the repository."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "agent-adapter" / "bench"


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class DiskCachedEmbedder:
    """An EmbeddingPort in front of another, keeping vectors in one SQLite file by the
    sha256 of their text."""

    def __init__(self, inner: LocalEmbedder, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.inner = inner
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB)")
        self.embedded = 0

    async def embed(self, texts: Sequence[str], *, ctx: Any = None) -> list[list[float]]:
        found: dict[str, list[float]] = {}
        for text in set(texts):
            row = self.db.execute("SELECT vec FROM vectors WHERE key = ?", (_key(text),)).fetchone()
            if row is not None:
                found[text] = np.frombuffer(row[0], dtype=np.float32).tolist()
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            vectors = await self.inner.embed(missing)
            self.embedded += len(missing)
            for text, vec in zip(missing, vectors, strict=True):
                found[text] = vec
                blob = np.asarray(vec, dtype=np.float32).tobytes()
                self.db.execute("INSERT OR REPLACE INTO vectors VALUES (?, ?)", (_key(text), blob))
            self.db.commit()
        return [found[t] for t in texts]
