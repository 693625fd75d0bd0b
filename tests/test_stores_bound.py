"""SQLiteStore's bound on the characters it keeps (``max_total_chars``): the oldest saves go
first, expired rows before them, what a save writes never; ``None`` keeps every text; stores
sharing one file keep it, and a file an older release made gets the bound's columns."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from agent_adapter._errors import ConfigError
from agent_adapter.context._stores import SQLiteStore, StoreEntry, StoreError


def _id(n: int) -> str:
    return f"{n:032x}"


def _save(store: SQLiteStore, n: int, text: str, ttl: float | None = None) -> None:
    store.save_many_sync([StoreEntry("s", _id(n), text, ttl)])


def _kept(store: SQLiteStore, ids: range) -> list[int]:
    return [n for n in ids if store.load_sync("s", _id(n)) is not None]


def test_past_the_bound_the_oldest_saves_go_and_the_newest_stay(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "f", max_total_chars=100) as s:
        for n in range(10):
            _save(s, n, str(n) * 30)
            assert s.total_chars() <= 100 and s.load_sync("s", _id(n)) == str(n) * 30
        assert _kept(s, range(10)) == [7, 8, 9]
        _save(s, 7, "again")  # a re-save counts as new: 8 goes next
        _save(s, 20, "z" * 60)
        assert _kept(s, range(21)) == [7, 9, 20] and s.total_chars() == 95
        assert len(s) == 3 and s.purge() == 0


def test_the_bound_counts_characters_not_bytes(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "f", max_total_chars=100) as s:
        _save(s, 1, "é" * 45)  # 90 bytes
        _save(s, 2, "ü" * 45)
        assert _kept(s, range(3)) == [1, 2] and s.total_chars() == 90


def test_a_save_never_evicts_what_it_writes(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "f", max_total_chars=100) as s:
        assert s.max_text_chars == 100  # no text alone over the bound
        with pytest.raises(ConfigError, match="max_text_chars"):
            _save(s, 1, "x" * 101)
        _save(s, 1, "kept")
        batch = [StoreEntry("s", _id(n), "y" * 40) for n in (2, 3, 4)]
        with pytest.raises(StoreError, match=r"max_total_chars=100.*nothing was written"):
            s.save_many_sync(batch)
        assert _kept(s, range(5)) == [1]
        s.save_many_sync(batch[:2])  # 80 + 4 characters: all kept
        s.save_many_sync([StoreEntry("s", _id(5), "z" * 50), StoreEntry("s", _id(6), "w" * 50)])
        assert _kept(s, range(7)) == [5, 6]


def test_expired_rows_go_before_older_live_ones(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "f", max_total_chars=100, purge_every_seconds=3600) as s:
        s.purge()  # the next periodic purge is an hour away: the bound alone deletes
        _save(s, 1, "a" * 40)
        _save(s, 2, "b" * 40, ttl=0.01)
        threading.Event().wait(0.05)
        _save(s, 3, "c" * 40)
        assert _kept(s, range(4)) == [1, 3] and len(s) == 2


def test_none_keeps_every_text_as_before(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "f") as s:
        assert s.max_total_chars is None
        for n in range(50):
            _save(s, n, "x" * 10_000)
        assert _kept(s, range(50)) == list(range(50)) and s.purge() == 0
        assert s.total_chars() == 500_000
    with pytest.raises(ConfigError, match="max_total_chars"):
        SQLiteStore(tmp_path / "f", max_total_chars=0)


def test_stores_sharing_a_file_keep_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "f"
    with (
        SQLiteStore(path, max_total_chars=100) as a,
        SQLiteStore(path, max_total_chars=100) as b,
        SQLiteStore(path) as unbounded,
    ):
        for n in range(12):
            _save(a if n % 2 else b, n, str(n % 10) * 30)
            assert a.total_chars() <= 100 and a.load_sync("s", _id(n)) is not None
        assert _kept(b, range(12)) == [9, 10, 11]
        for n in range(20, 30):  # a store without the bound writes past it ...
            _save(unbounded, n, "u" * 30)
        assert unbounded.total_chars() == 390
        assert b.purge() == 10  # ... until one with the bound purges
        assert _kept(a, range(30)) == [27, 28, 29]

        def saves(store: SQLiteStore, first: int) -> None:
            for n in range(first, first + 25):
                _save(store, n, "t" * 30)

        workers = [threading.Thread(target=saves, args=(s, f)) for s, f in ((a, 100), (b, 200))]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert a.total_chars() <= 100 and len(a) == 3  # the last saver's last save is kept
        assert {_id(124), _id(224)} & {i for i, _ in a.load_all_sync("s")}


def test_a_file_an_older_release_made_gets_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:  # the schema before the bound, with two rows
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(
            "CREATE TABLE tool_results (scope TEXT NOT NULL, id TEXT NOT NULL, text BLOB NOT "
            "NULL, expires_at REAL, PRIMARY KEY (scope, id)) WITHOUT ROWID"
        )
        conn.executemany(
            "INSERT INTO tool_results (scope, id, text) VALUES (?, ?, ?)",
            [("s", _id(n), ("é" * 20).encode()) for n in (1, 2)],
        )
    with SQLiteStore(path, max_total_chars=100) as s:
        assert s.total_chars() == 80  # an older release's rows count as their bytes
        _save(s, 3, "n" * 50)  # the first save also purges, counting them: the oldest goes
        assert _kept(s, range(4)) == [2, 3] and s.total_chars() == 90
        with sqlite3.connect(path) as conn:
            cols = {r[1] for r in conn.execute("PRAGMA table_info(tool_results)")}
        assert {"chars", "saved_at"} <= cols
