"""Bounded memory: once every cache is full, more conversations cost no more memory.

A smaller run of ``bench/soak.py`` (its conversations, its state modes): the library's
process-level caches are made small first (each keeps its own kind of bound, only lower), so
they are full after a warm-up, and the traced memory (``tracemalloc``) over the conversations
after it must stay flat. Before the fix, every list ``compress_for`` fingerprinted stayed
alive (``Snap.compared`` in ``formats/_memo.py`` held the lists it was compared with, which
held theirs...): about 27 KB more a conversation here, for good.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agent_adapter.context import _lru
from agent_adapter.context.formats import _conversion, _memo

BENCH = Path(__file__).resolve().parents[1] / "bench" / "soak.py"
#: Conversations run before the first measure (every cache below is full by then), and after.
WARM_UP = 80
MEASURED = 160
#: What the measured conversations may add, all caches full (before the fix: ~4 MB).
MAX_GROWTH_MB = 1.0


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_soak_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def small_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every process-level cache of the compression path, emptied and bounded low."""
    _lru.clear()
    for memo in list(_lru._ALL):
        monkeypatch.setattr(memo, "entries", min(memo.entries, 16))
        monkeypatch.setattr(memo, "chars", min(memo.chars, 200_000))
    for each in (_memo._ANTHROPIC_EACH, _memo._CHAT_EACH, _memo._LANGCHAIN_EACH):
        each.natives.entries.clear()
        monkeypatch.setattr(each.natives, "size", 256)
    _memo._LISTS_MEMO.seen = []
    _conversion._REMEMBERED.clear()
    monkeypatch.setattr(_conversion._REMEMBERED, "size", 256)
    yield
    _lru.clear()
    _conversion._REMEMBERED.clear()


@pytest.mark.parametrize("mode", ["states", "compactor", "off"])
def test_memory_stays_flat_once_caches_are_full(small_caches: None, mode: str) -> None:
    soak = _bench()
    pool = soak.text_pool(None)  # synthetic texts: no data folder needed
    send = soak.sender(mode, 32)
    rows = soak.soak(WARM_UP + MEASURED, 3, send, pool)
    warm = next(r for r in rows if r[0] == WARM_UP)
    grown = rows[-1][1] - warm[1]
    table = "\n".join(f"{n:>5} conversations: {traced:6.2f} MB traced" for n, traced, *_ in rows)
    assert grown < MAX_GROWTH_MB, f"{mode}: +{grown:.2f} MB after the caches were full\n{table}"


def test_a_snap_does_not_keep_the_lists_it_was_compared_with() -> None:
    """The leak itself: a fingerprint compared with another holds it only weakly."""
    import gc
    import weakref

    old = _memo.snapshot([{"role": "user", "content": str(i)} for i in range(8)])
    assert old is not None
    new = _memo.snapshot([*old.natives, {"role": "user", "content": "more"}])
    assert new is not None and new.starts_with(old)
    assert new.starts_with(old)  # the remembered comparison
    gone = weakref.ref(old)
    del old
    gc.collect()
    assert gone() is None
