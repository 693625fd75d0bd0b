"""The tool-result stores (memory, SQLite, a real Redis): one contract, owner isolation,
expiry, all-or-none batches, bounds, and only referenced results saved."""

from __future__ import annotations

import asyncio
import glob
import json
import logging
import re
import sqlite3
import threading
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis

from _convo import calls, result
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._run import RunContext, owner_scope
from agent_adapter.cli._loaders import load_claude_code
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MemoryStore,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress,
    compress_for,
    compress_for_sync,
    recall_tool,
)
from agent_adapter.context._stores import (
    RedisStore,
    SQLiteStore,
    StoreEntry,
    StoreError,
    ToolResultStore,
)
from agent_adapter.context.formats import convert

KINDS = ["memory", "sqlite", "redis"]
RECALL = re.compile(r"recall_context\(id='([0-9a-f]+)'\)")


def _redis_store(url: str, **kw: Any) -> RedisStore:
    return RedisStore(url, prefix=f"test:{uuid.uuid4().hex}:", **kw)


@pytest.fixture(params=KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    kind = request.param
    if kind == "memory":
        yield MemoryStore()
    elif kind == "sqlite":
        with SQLiteStore(tmp_path / "results.sqlite3") as s:
            yield s
    else:
        s = _redis_store(request.getfixturevalue("redis_url"))
        try:
            yield s
        finally:
            await s.aclose()


def _entries(*items: tuple[str, str, str], ttl: float | None = None) -> list[StoreEntry]:
    return [StoreEntry(scope, id_, text, ttl) for scope, id_, text in items]


def _id(n: int) -> str:
    return f"{n:032x}"


# --------------------------------------------------------------------------------------------
# the contract, for every store


async def test_every_store_is_a_tool_result_store(store: Any) -> None:
    assert isinstance(store, ToolResultStore)


async def test_save_and_load_under_the_owner_scope_only(store: Any) -> None:
    await store.save_many(_entries(("thread:a", _id(1), "A text"), ("thread:b", _id(2), "B text")))
    assert await store.load("thread:a", _id(1)) == "A text"
    assert await store.load("thread:b", _id(2)) == "B text"
    assert await store.load("thread:b", _id(1)) is None  # another owner: not found
    assert await store.load("thread:a", _id(3)) is None  # unknown
    # the sync face sees the same data
    assert store.load_sync("thread:a", _id(1)) == "A text"
    store.save_many_sync(_entries(("run:r", _id(4), "sync")))
    assert await store.load("run:r", _id(4)) == "sync"
    assert store.load_sync("thread:a", _id(4)) is None


async def test_expiry_and_no_expiry(store: Any) -> None:
    # a second of life: a loaded machine (xdist workers beside other jobs) once took longer
    # than the 0.05 s this had between the save and the first load; expiry is then awaited
    # (at most 10 s), never assumed after a fixed sleep
    await store.save_many(_entries(("s", _id(1), "short"), ttl=1.0))
    await store.save_many(_entries(("s", _id(2), "forever"), ttl=None))
    assert await store.load("s", _id(1)) == "short"
    for _ in range(100):
        await asyncio.sleep(0.1)
        if await store.load("s", _id(1)) is None:
            break
    assert await store.load("s", _id(1)) is None
    assert await store.load("s", _id(2)) == "forever"


async def test_a_batch_is_saved_whole_or_not_at_all(store: Any) -> None:
    good = StoreEntry("s", _id(1), "good", 60)
    bad = StoreEntry("s", _id(2), "bad", -1)
    with pytest.raises(ConfigError, match=r"entries\[1\]\.ttl_seconds"):
        await store.save_many([good, bad])
    with pytest.raises(ConfigError, match=r"entries\[0\]\.text"):
        store.save_many_sync([StoreEntry("s", _id(3), b"bytes", None)])  # type: ignore[arg-type]
    assert await store.load("s", _id(1)) is None


async def test_any_text_round_trips(store: Any) -> None:
    texts = ["", "ünïcödé ✓ 漢字 🙂", "bad json \ud800 surrogate", "x" * 200_000, "a\x00b"]
    entries = [StoreEntry("s", _id(i), t, None) for i, t in enumerate(texts)]
    await store.save_many(entries)
    assert [await store.load("s", e.id) for e in entries] == texts


async def test_save_gives_a_fresh_128_bit_id(store: Any) -> None:
    ids = {await store.save("s", "same text", ttl_seconds=None) for _ in range(20)}
    assert len(ids) == 20 and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    assert store.save_sync("s", "t", ttl_seconds=1) not in ids


async def test_recall_gives_one_answer_for_wrong_owner_expired_and_unknown(store: Any) -> None:
    tool = recall_tool(store)
    owner, other = RunContext(thread_id="owner"), RunContext(thread_id="other")
    id_ = await store.save(owner_scope(owner), "the full text", ttl_seconds=0.2)
    assert await tool({"id": id_}, owner) == "the full text"
    wrong_owner = await tool({"id": id_}, other)
    await asyncio.sleep(0.4)
    expired = await tool({"id": id_}, owner)
    unknown = await tool({"id": _id(7)}, owner)
    assert wrong_owner == expired == unknown.replace(_id(7), id_)
    assert "the full text" not in wrong_owner


async def test_a_text_over_max_text_chars_is_not_saved_nor_offered(tmp_path: Path) -> None:
    for s in (MemoryStore(max_text_chars=100), SQLiteStore(tmp_path / "f", max_text_chars=100)):
        msgs = _shrinkable("x" * 5000)
        out, _ = await compress(msgs, CompressionPolicy(target_tokens=10, steps=[_shrink(s)]))
        assert "characters cut" in out[2].text and "recall_context" not in out[2].text
        assert len(s) == 0
        with pytest.raises(ConfigError, match="max_text_chars"):
            await s.save("s", "y" * 101, ttl_seconds=None)


# --------------------------------------------------------------------------------------------
# only what the returned list references is saved


def _shrink(store: Any, **kw: Any) -> ShrinkToolResults:
    return ShrinkToolResults(bigger_than_tokens=100, older_than_turns=1, save_to=store, **kw)


def _shrinkable(big: str) -> list[Message]:
    return [
        Message("user", "task"),
        calls("c1"),
        result("c1", big),
        Message("assistant", "a"),
        Message("user", "q"),
        Message("assistant", "b"),
    ]


def _saved_ids(store: Any) -> set[str]:
    if isinstance(store, MemoryStore):
        return {k[1] for k in store._data}
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as conn:
            return {r[0] for r in conn.execute("SELECT id FROM tool_results")}
    client = redis.Redis.from_url(store.url)
    try:  # the texts' keys, not the store's id key nor its scopes' indexes
        keys = {k.decode() for k in client.scan_iter(f"{store.prefix}*")}
        keys = {k for k in keys if not k.startswith(f"{store.prefix}index:")}
        return {k.rsplit(":", 1)[1] for k in keys - {f"{store.prefix}id_key"}}
    finally:
        client.close()


async def test_results_of_rounds_dropped_later_are_not_saved(store: Any) -> None:
    msgs = [Message("user", "task")]
    for i in range(6):
        msgs += [calls(f"c{i}"), result(f"c{i}", f"output {i}\n" * 400), Message("assistant", "n")]
    msgs += [Message("user", "q"), Message("assistant", "b")]
    steps = [_shrink(store), RemoveOldMessages(keep_first=1, keep_last=4)]
    out, report = await compress(msgs, CompressionPolicy(target_tokens=300, steps=steps))
    referenced = set(RECALL.findall("\n".join(m.text for m in out)))
    shrunk = report.steps[0].messages_changed  # results shrunk (and staged) first
    assert 0 < len(referenced) < shrunk  # then some of their rounds were dropped
    assert _saved_ids(store) == referenced


async def test_real_claude_code_session_saves_exactly_what_it_references(
    store: Any, data_dir: Path
) -> None:
    path = sorted(glob.glob(str(data_dir / "claude-code-spotter" / "*.jsonl")))[0]
    natives = load_claude_code(path)
    before = json.dumps(natives)
    ctx = RunContext(thread_id="session-1")
    steps = [RemoveDuplicates(), _shrink(store), CutLongMessages(), RemoveOldMessages()]
    out, report = await compress_for(
        natives, CompressionPolicy(target_tokens=12_000, steps=steps), ctx=ctx
    )
    assert json.dumps(natives) == before  # the caller's list untouched
    referenced = set(RECALL.findall(json.dumps(out)))
    assert referenced and _saved_ids(store) == referenced
    results = {m.text for m in convert(natives, "anthropic").messages if m.role == "tool"}
    tool = recall_tool(store)
    for id_ in referenced:
        assert await tool({"id": id_}, ctx) in results  # an original result, whole
        assert (await tool({"id": id_}, RunContext(thread_id="session-2"))).startswith("No saved")
    assert report.failures == ()


async def test_compress_for_sync_uses_the_sync_face(redis_url: str) -> None:
    store = _redis_store(redis_url)
    try:
        msgs = _shrinkable("line\n" * 2000)
        policy = CompressionPolicy(target_tokens=10, steps=[_shrink(store)])
        out, _ = compress_for_sync(msgs, policy, ctx=RunContext(run_id="r1"))
        (id_,) = RECALL.findall(out[2].text)
        assert store._aclient is None  # the async client was never made for that loop
        assert store.load_sync("run:r1", id_) == msgs[2].text
    finally:
        await store.aclose()


# --------------------------------------------------------------------------------------------
# SQLite


def test_sqlite_is_one_wal_file_with_an_expiry_column_and_purge(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite3"
    with SQLiteStore(path) as a, SQLiteStore(path) as b:  # two workers, one file
        a.save_many_sync(_entries(("s", _id(1), "old"), ttl=0.01))
        a.save_many_sync(_entries(("s", _id(2), "kept")))
        assert b.load_sync("s", _id(2)) == "kept"
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            cols = {r[1] for r in conn.execute("PRAGMA table_info(tool_results)")}
            assert {"scope", "id", "text", "expires_at"} <= cols
        threading.Event().wait(0.05)
        assert b.load_sync("s", _id(1)) is None  # expired: not read even before the purge
        assert len(b) == 2 and b.purge() == 1 and len(b) == 1 and b.purge() == 0


def test_sqlite_purges_expired_rows_when_saving(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "f", purge_every_seconds=0.01) as s:
        s.save_many_sync(_entries(("s", _id(1), "old"), ttl=0.01))
        threading.Event().wait(0.05)
        s.save_many_sync(_entries(("s", _id(2), "new")))
        assert len(s) == 1


async def test_sqlite_unreachable_file_is_a_store_error(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "no such folder" / "f.sqlite3")
    with pytest.raises(StoreError, match="OperationalError") as info:
        await s.save("s", "secret text", ttl_seconds=None)
    assert "secret text" not in str(info.value)
    closed = SQLiteStore(tmp_path / "f")
    closed.close()
    with pytest.raises(StoreError, match="closed"):
        closed.load_sync("s", _id(1))


def test_sqlite_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="path"):
        SQLiteStore("")
    with pytest.raises(ConfigError, match="max_connections"):
        SQLiteStore(tmp_path / "f", max_connections=0)
    with pytest.raises(ConfigError, match="timeout_s"):
        SQLiteStore(tmp_path / "f", timeout_s=float("nan"))


def test_sqlite_serves_many_threads_with_a_small_pool(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "f", max_connections=2) as s:
        errors: list[BaseException] = []

        def work(n: int) -> None:
            try:
                for j in range(20):
                    id_ = s.save_sync(f"t{n}", f"{n}-{j}", ttl_seconds=None)
                    assert s.load_sync(f"t{n}", id_) == f"{n}-{j}"
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and len(s) == 160


# --------------------------------------------------------------------------------------------
# Redis


async def test_redis_uses_native_ttl(redis_url: str) -> None:
    store = _redis_store(redis_url)
    client = redis.Redis.from_url(redis_url)
    try:
        await store.save_many(_entries(("s", _id(1), "t"), ttl=60))
        await store.save_many(_entries(("s", _id(2), "t"), ttl=None))
        assert 0 < client.pttl(store.key("s", _id(1))) <= 60_000
        assert client.pttl(store.key("s", _id(2))) == -1  # no expiry
        assert store.key("s", _id(1)) != store.key("t", _id(1))
    finally:
        client.close()
        await store.aclose()


async def test_redis_pool_waits_past_its_size_instead_of_failing(redis_url: str) -> None:
    store = _redis_store(redis_url, max_connections=2)
    try:
        await store.save_many(_entries(("s", _id(1), "shared")))
        texts = await asyncio.gather(*(store.load("s", _id(1)) for _ in range(300)))
        assert texts == ["shared"] * 300
        pool = store._aclient.connection_pool  # type: ignore[union-attr]
        opened = len(pool._available_connections) + len(pool._in_use_connections)  # type: ignore[attr-defined]
        assert opened <= 2
    finally:
        await store.aclose()


async def test_redis_two_workers_share_results(redis_url: str) -> None:
    prefix = f"test:{uuid.uuid4().hex}:"
    a, b = RedisStore(redis_url, prefix=prefix), RedisStore(redis_url, prefix=prefix)
    try:
        id_ = await a.save("thread:t", "from worker a", ttl_seconds=60)
        assert await b.load("thread:t", id_) == "from worker a"
        assert b.load_sync("thread:u", id_) is None
    finally:
        await a.aclose()
        await b.aclose()


async def test_redis_from_another_event_loop_uses_the_sync_face(redis_url: str) -> None:
    store = _redis_store(redis_url)
    try:
        id_ = await store.save("s", "text", ttl_seconds=60)  # binds the async client here
        got: list[str | None] = []
        thread = threading.Thread(target=lambda: got.append(asyncio.run(store.load("s", id_))))
        thread.start()
        thread.join()
        assert got == ["text"]
    finally:
        await store.aclose()


async def test_redis_unreachable_is_a_store_error_and_recall_says_so() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = RedisStore(f"redis://user:pw@127.0.0.1:{port}/0", timeout_s=1)
    try:
        with pytest.raises(StoreError) as info:
            await store.save("s", "secret text", ttl_seconds=None)
        assert "secret text" not in str(info.value) and "pw" not in repr(store)
        with pytest.raises(StoreError):
            store.load_sync("s", _id(1))
        answer = await recall_tool(store)({"id": _id(1)}, None)
        assert "try again" in answer
    finally:
        await store.aclose()


def test_redis_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="url"):
        RedisStore("http://localhost")
    with pytest.raises(ConfigError, match="max_connections"):
        RedisStore(max_connections=0)


# --------------------------------------------------------------------------------------------
# MemoryStore bounds


async def test_memory_store_is_bounded_oldest_first() -> None:
    s = MemoryStore(max_entries=3, max_total_chars=10)
    for i in range(4):
        await s.save_many(_entries(("s", _id(i), "ab")))
    assert [await s.load("s", _id(i)) for i in range(4)] == [None, "ab", "ab", "ab"]
    await s.save_many(_entries(("s", _id(9), "x" * 9)))
    assert len(s) == 1 and await s.load("s", _id(9)) == "x" * 9
    with pytest.raises(ConfigError, match="max_entries"):
        MemoryStore(max_entries=0)


# --------------------------------------------------------------------------------------------
# stored text stays out of logs, reports and reprs


async def test_stored_text_never_reaches_logs_or_reports(
    store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "SECRET-CUSTOMER-DATA " * 300
    caplog.set_level(logging.DEBUG)
    msgs = _shrinkable(secret)
    out, report = await compress(msgs, CompressionPolicy(target_tokens=10, steps=[_shrink(store)]))
    (id_,) = RECALL.findall(out[2].text)
    assert await recall_tool(store)({"id": id_}, None) == secret
    entry = StoreEntry("s", id_, secret, None)
    for text in (caplog.text, repr(report), report.explain(), repr(entry), repr(store)):
        assert "SECRET" not in text


def test_sqlite_first_use_waits_for_a_writer_elsewhere(tmp_path: Path) -> None:
    """Regression: switching the journal mode to WAL does not wait on the busy handler, so a
    store's first connection failed at once ("database is locked") while another connection
    (another thread's first one, under load, or another process) held a write transaction."""
    path = tmp_path / "f"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    timer = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    timer.start()
    try:
        with SQLiteStore(path, timeout_s=5.0) as s:
            id_ = s.save_sync("t", "text", ttl_seconds=None)
            assert s.load_sync("t", id_) == "text"
            mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
            assert mode == "wal"
    finally:
        timer.join()
        other.close()


def _first_use_errors(store: SQLiteStore, threads: int) -> list[BaseException]:
    """Each of ``threads`` saves one text, all starting at once on the fresh store."""
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def work(n: int) -> None:
        try:
            start.wait()
            store.save_sync(f"t{n}", "x", ttl_seconds=None)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return errors


def test_sqlite_first_use_from_many_threads_at_once(tmp_path: Path) -> None:
    for k in range(20):
        with SQLiteStore(tmp_path / f"f{k}", max_connections=8) as s:
            assert _first_use_errors(s, 8) == [] and len(s) == 8
