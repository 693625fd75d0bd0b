"""The stores under faults (issue 32, item 6), on a real Redis and a real SQLite file: a Redis
that loses the id key (evicted, or restarted without persistence), a SQLite file deleted
while it is open, and recall ids no store can encode as strict UTF-8."""

from __future__ import annotations

import ast
import logging
import os
import re
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from _redis_server import Server, private_server
from agent_adapter._messages import Message, ToolCall
from agent_adapter._run import RunContext, owner_scope
from agent_adapter.context import (
    CompressionPolicy,
    RemoveOldMessages,
    ShrinkToolResults,
    compress,
    recall_tool,
    search_tool,
)
from agent_adapter.context._stores import (
    RedisStore,
    SQLiteStore,
    StoreEntry,
    StoreError,
)

ID = re.compile(r"recall_context\(id='([0-9a-f]{32})'\)")
CTX = RunContext(thread_id="faults")
RAW = ("\x00", "agent_adapter.saved_span", '"starts"')
UNREADABLE = "cannot be read: it is a saved span whose seal"


def _conversation() -> list[Message]:
    """A task, eight rounds each reading a big file, the latest ask."""
    out = [Message("system", "You are a coding agent."), Message("user", "fix the parser")]
    for i in range(8):
        args = f'{{"path": "src/mod{i}.py"}}'
        out.append(
            Message("assistant", f"reading mod{i}", tool_calls=(ToolCall(f"c{i}", "read", args),))
        )
        body = f"def f{i}(): return {i * 7}  # magic-{i}\n" * 60
        out.append(Message("tool", body, tool_call_id=f"c{i}", name="read"))
        out.append(Message("assistant", f"mod{i} read"))
    out.append(Message("user", "now run the tests"))
    return out


async def _ids(store: Any) -> list[str]:
    """The recall ids one compression of :func:`_conversation` names (shortened results,
    then the span a removal note stands for)."""
    steps = [
        ShrinkToolResults(bigger_than_tokens=100, older_than_turns=2, save_to=store),
        RemoveOldMessages(save_to=store),
    ]
    policy = CompressionPolicy(threshold_tokens=900, target_tokens=900, steps=steps)
    out, report = await compress(_conversation(), policy, ctx=CTX)
    assert report.failures == ()
    return ID.findall("\n".join(m.text for m in out))


def _span_id(ids: list[str], store: RedisStore) -> str:
    """The id among ``ids`` of a saved span (its record opens with a NUL)."""
    client = redis.Redis.from_url(store.url)
    try:
        return next(
            i for i in ids if (client.get(store.key(owner_scope(CTX), i)) or b"")[:1] == b"\0"
        )
    finally:
        client.close()


# --------------------------------------------------------------------------------------------
# Redis loses the id key


@pytest.fixture
def server() -> Iterator[Server]:
    """A Redis of this test's own: it is restarted or flushed."""
    with private_server() as s:
        yield s


def _lose_key(server: Server, prefix: str, fault: str) -> None:
    if fault == "restarted":  # no persistence: every key is gone, the texts too
        server.restart()
        return
    client = redis.Redis.from_url(server.url)  # allkeys-lru evicted the id key alone
    try:
        assert client.delete(f"{prefix}id_key") == 1
    finally:
        client.close()


async def _reconnect(store: RedisStore, fault: str) -> None:
    """After a restart the first command on a connection of before fails loudly (a
    StoreError: a compression's step failure); the next one reconnects."""
    if fault == "restarted":
        try:
            await store.id_key()
        except StoreError as exc:
            assert "ConnectionError" in str(exc)


@pytest.mark.parametrize("fault", ["evicted", "restarted"])
async def test_redis_a_worker_that_knew_the_lost_id_key_puts_it_back(
    server: Server, fault: str
) -> None:
    prefix = f"t:{uuid.uuid4().hex}:"
    a, fresh = RedisStore(server.url, prefix=prefix), RedisStore(server.url, prefix=prefix)
    try:
        before = await _ids(a)
        span = _span_id(before, a)
        _lose_key(server, prefix, fault)
        await _reconnect(a, fault)
        assert await _ids(a) == before  # a compresses first after the loss: its key is back
        assert await _ids(fresh) == before  # a new worker takes it: the same ids
        answer = await recall_tool(fresh)({"id": span}, CTX)
        assert not any(r in answer for r in RAW)
        if fault == "evicted":  # the texts survived: the new worker reads a's span
            assert answer.startswith("assistant: reading mod0")
    finally:
        await a.aclose()
        await fresh.aclose()


@pytest.mark.parametrize("fault", ["evicted", "restarted"])
async def test_redis_workers_agree_again_when_a_new_worker_made_a_new_id_key(
    server: Server, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    prefix = f"t:{uuid.uuid4().hex}:"
    a, fresh = RedisStore(server.url, prefix=prefix), RedisStore(server.url, prefix=prefix)
    try:
        before = await _ids(a)
        old_span = _span_id(before, a)
        _lose_key(server, prefix, fault)
        new = await _ids(fresh)  # a worker that never knew the old key makes a new one
        assert new != before
        with caplog.at_level(logging.WARNING, logger="agent_adapter.stores"):
            await _reconnect(a, fault)
            assert await _ids(a) == new  # a's next compression takes it: they agree again
        assert "not the one this worker used" in caplog.text
        assert a.id_key_sync() == fresh.id_key_sync()  # the sync face agrees too
        assert await _ids(a) == await _ids(fresh) == new  # and stay so
        # a recall never returns a raw record: the old span is unreadable (or gone with a
        # restart), the new one reads as a transcript on either worker
        for worker in (a, fresh):
            old = await recall_tool(worker)({"id": old_span}, CTX)
            assert not any(r in old for r in RAW)
            expected = UNREADABLE if fault == "evicted" else "No saved result"
            assert expected in old
            found = await search_tool(worker)({"query": "magic-0"}, CTX)
            assert not any(r in found for r in RAW)
        new_span = _span_id(new, fresh)
        text = await recall_tool(a)({"id": new_span}, CTX)
        assert text.startswith("assistant: reading mod0") and not any(r in text for r in RAW)
    finally:
        await a.aclose()
        await fresh.aclose()


async def test_a_text_that_opens_like_a_span_with_a_bad_seal_is_never_shown_raw(
    store: Any,
) -> None:
    for seal in ("0" * 32, "é" * 32, "\ud800"):
        forged = f'\x00agent_adapter.saved_span.v1:{seal}\n{{"starts":[0],"transcript":"x"}}'
        await store.save_many([StoreEntry(owner_scope(CTX), "e" * 32, forged)])
        answer = await recall_tool(store)({"id": "e" * 32}, CTX)
        assert UNREADABLE in answer and not any(r in answer for r in RAW)


# --------------------------------------------------------------------------------------------
# the SQLite file is deleted while open


def _entries(*ns: int) -> list[StoreEntry]:
    return [StoreEntry("s", f"{n:032x}", f"text {n}") for n in ns]


def _read_elsewhere(path: Path, *ns: int) -> list[str | None]:
    """What a later process reads from the file at ``path``."""
    code = (
        "import sys; from agent_adapter.context import SQLiteStore\n"
        "s = SQLiteStore(sys.argv[1])\n"
        "print(repr([s.load_sync('s', f'{int(n):032x}') for n in sys.argv[2:]]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), *map(str, ns)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    result: list[str | None] = ast.literal_eval(out.stdout)
    return result


@pytest.mark.parametrize("face", ["sync", "async"])
async def test_sqlite_file_deleted_while_open_is_reported_then_opened_anew(
    tmp_path: Path, face: str
) -> None:
    path = tmp_path / "saved.sqlite3"
    a, b = SQLiteStore(path), SQLiteStore(path)  # two workers on one file
    try:
        a.save_many_sync(_entries(1))
        assert b.load_sync("s", _entries(1)[0].id) == "text 1"
        old_key = a.id_key_sync()
        assert b.id_key_sync() == old_key
        path.unlink()  # the -wal and -shm files stay: SQLite would read them as the new file's
        for worker, n in ((a, 2), (b, 3)):
            with pytest.raises(StoreError, match="deleted or replaced while this store had it"):
                if face == "sync":
                    worker.save_many_sync(_entries(n))
                else:
                    await worker.save_many(_entries(n))
        # the next saves go into a new file at the path, which every worker and a later
        # process read; nothing of the deleted file comes back
        a.save_many_sync(_entries(4))
        await b.save_many(_entries(5))
        assert b.load_sync("s", _entries(4)[0].id) == "text 4"
        assert await a.load("s", _entries(5)[0].id) == "text 5"
        assert _read_elsewhere(path, 1, 2, 3, 4, 5) == [None, None, None, "text 4", "text 5"]
        assert a.id_key_sync() == await b.id_key() != old_key  # a new file, a new key
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        a.close()
        b.close()


def test_sqlite_save_that_the_deletion_overtook_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_adapter.context._stores import sqlite as module

    path = tmp_path / "saved.sqlite3"
    real = module._file_id
    calls: list[str] = []

    def deleted_after_the_checkout(where: str) -> Any:
        calls.append(where)
        if len(calls) == 2:  # the save's check after COMMIT: the file went while it wrote
            path.unlink()
        return real(where)

    with SQLiteStore(path) as s:
        s.save_many_sync(_entries(1))  # a pooled connection to the file
        monkeypatch.setattr(module, "_file_id", deleted_after_the_checkout)
        with pytest.raises(StoreError, match=r"deleted or replaced .*\(this save went into it\)"):
            s.save_many_sync(_entries(2))
        monkeypatch.setattr(module, "_file_id", real)
        s.save_many_sync(_entries(3))
        assert _read_elsewhere(path, 1, 2, 3) == [None, None, "text 3"]


def test_sqlite_id_key_and_loads_report_a_deleted_file(tmp_path: Path) -> None:
    path = tmp_path / "saved.sqlite3"
    with SQLiteStore(path) as s:
        key = s.id_key_sync()
        path.unlink()
        with pytest.raises(StoreError, match="deleted or replaced"):
            s.id_key_sync()  # a staged save's id: never one of the deleted file's key
        assert s.id_key_sync() != key
        s.save_many_sync(_entries(1))
        path.unlink()
        with pytest.raises(StoreError, match="deleted or replaced"):
            s.load_sync("s", _entries(1)[0].id)
        assert s.load_sync("s", _entries(1)[0].id) is None


async def test_sqlite_deleted_file_makes_recall_say_try_later_not_fail(tmp_path: Path) -> None:
    path = tmp_path / "saved.sqlite3"
    with SQLiteStore(path) as s:
        s.save_many_sync([StoreEntry(owner_scope(CTX), "a" * 32, "full")])
        path.unlink()
        assert "try again later" in await recall_tool(s)({"id": "a" * 32}, CTX)


# --------------------------------------------------------------------------------------------
# ids and scopes with a lone surrogate


async def test_a_recall_id_with_a_lone_surrogate_gets_the_same_reply_on_every_store(
    store: Any,
) -> None:
    answer = await recall_tool(store)({"id": "abc\ud800"}, CTX)
    assert answer == "No saved result with id 'abc\\ud800' (expired or unknown)."
    assert await store.load("s\udcff", "abc\ud800") is None
    assert store.load_sync("s", "abc\ud800") is None


async def test_ids_and_scopes_with_lone_surrogates_round_trip_on_every_store(
    store: Any,
) -> None:
    scope = owner_scope(CTX)
    entries = [
        StoreEntry(scope, "abc\ud800", "lone high"),
        StoreEntry(scope, "abc\udc00", "lone low"),
        StoreEntry(scope, "abc\ufffd", "replacement"),
        StoreEntry(scope, "abc", "plain"),
        StoreEntry("s\ud800", "abc", "odd scope"),
    ]
    await store.save_many(entries)
    for e in entries:
        assert await store.load(e.scope, e.id) == e.text
        assert store.load_sync(e.scope, e.id) == e.text
    assert await recall_tool(store)({"id": "abc\ud800"}, CTX) == "lone high"
    assert await store.load("s", "abc") is None
    assert sorted(await store.load_all(scope)) == sorted((e.id, e.text) for e in entries[:4])
    assert store.load_all_sync("s\ud800") == [("abc", "odd scope")]
