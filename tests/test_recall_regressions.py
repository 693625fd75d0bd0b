"""Regressions of issue 19 on ShrinkToolResults and the stores, in every message format:

* every recall id a note names leads to the ORIGINAL text in one recall, after the recency
  window's second pass, a second shrinking step and a later compression of our own output,
  in every store (memory, SQLite, a real Redis);
* a store that fails to save leaves the results it could not keep as the caller's own
  objects (a step reported as skipped changed nothing);
* the same input and policy give byte-identical output, across processes too, while ids stay
  keyed 128-bit hashes that nobody without the store's key can guess;
* bad settings (``save_for_seconds`` NaN or infinite, a NUL in an SQLite path) are a
  ConfigError at construction.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ToolCall
from agent_adapter._run import RunContext, owner_scope
from agent_adapter.context import (
    CompressionPolicy,
    MemoryStore,
    ShrinkToolResults,
    compress,
    compress_for_sync,
    recall_tool,
)
from agent_adapter.context._report import StepFailure
from agent_adapter.context._stores import RedisStore, SQLiteStore, StoreEntry, StoreError
from agent_adapter.context._tokens import tiktoken_counter
from agent_adapter.context.formats import convert, strip_reserved

FORMATS = ["agent_adapter", "openai", "responses", "anthropic", "gemini", "langchain"]
STORES = ["memory", "sqlite", "redis"]
RECALL = re.compile(r"recall_context\(id='([^']*)'\)")
CTX = RunContext(thread_id="issue-19")


# --------------------------------------------------------------------------------------------
# conversations in every format


def _conversation(rounds: int = 6, lines: int = 120, tag: str = "") -> list[Message]:
    """A coding-agent run: ``rounds`` tool rounds with big results, an answer and a question."""
    msgs = [Message("user", f"fix the build{tag}")]
    for i in range(rounds):
        call = ToolCall(f"call_{i}", "bash", json.dumps({"command": f"make mod{i}"}))
        msgs.append(Message("assistant", f"step {i}", tool_calls=(call,)))
        body = "".join(
            f"src/mod{i}.py:{j}: warning W{(j * 37 + i) % 1000:03d} at column {j * 7}{tag}\n"
            for j in range(lines)
        )
        msgs.append(Message("tool", body, tool_call_id=f"call_{i}"))
    return [*msgs, Message("assistant", "the build passes now"), Message("user", "and the tests?")]


def _seed(fmt: str) -> tuple[list[Any], str]:
    """One native of the format (binds a conversion that dumps messages in it), its name."""
    if fmt == "responses":
        item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "s"}]}
        return [item], "openai"
    if fmt == "langchain":
        pytest.importorskip("langchain_core")
        from langchain_core.messages import HumanMessage

        return [HumanMessage("s")], "langchain"
    if fmt == "gemini":
        return [{"role": "user", "parts": [{"text": "s"}]}], "gemini"
    return [{"role": "user", "content": "s"}], fmt


def _natives(fmt: str, messages: list[Message]) -> list[Any]:
    if fmt == "agent_adapter":
        return list(messages)
    seed, name = _seed(fmt)
    return strip_reserved(convert(seed, name).back(messages))  # as a provider takes them


def _messages(fmt: str, natives: list[Any]) -> list[Message]:
    if fmt == "agent_adapter":
        return list(natives)
    return convert(natives, _seed(fmt)[1]).messages


def _results(fmt: str, natives: list[Any]) -> dict[str, str]:
    """Tool call id -> tool result text, as the library reads the natives."""
    return {m.tool_call_id or "": m.text for m in _messages(fmt, natives) if m.role == "tool"}


# --------------------------------------------------------------------------------------------
# stores


def _make(kind: str, where: Any) -> Any:
    """A store of ``kind``; ``where`` is its SQLite file or its Redis (url, prefix)."""
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        return SQLiteStore(where)
    url, prefix = where
    return RedisStore(url, prefix=prefix)


async def _close(store: Any) -> None:
    if isinstance(store, RedisStore):
        await store.aclose()
    elif isinstance(store, SQLiteStore):
        store.close()


def _where(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if kind == "sqlite":
        return tmp_path / "results.sqlite3"
    if kind == "redis":
        return request.getfixturevalue("redis_url"), f"test19:{uuid.uuid4().hex}:"
    return None


@pytest.fixture(params=STORES)
async def store_where(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Any, str, Any]]:
    """A store, its kind, and where another worker finds the same store (``None``: memory)."""
    kind = request.param
    where = _where(kind, request, tmp_path)
    store = _make(kind, where)
    try:
        yield store, kind, where
    finally:
        await _close(store)


def _saved_texts(store: Any) -> list[str]:
    """Every text the store holds."""
    if isinstance(store, MemoryStore):
        return [text for text, _ in store._data.values()]
    if isinstance(store, SQLiteStore):
        import sqlite3

        with sqlite3.connect(store.path) as conn:
            return [bytes(r[0]).decode() for r in conn.execute("SELECT text FROM tool_results")]
    client = redis.Redis.from_url(store.url)
    try:
        id_key = f"{store.prefix}id_key".encode()  # the store's key, not a text
        index = f"{store.prefix}index:".encode()  # a scope's index of ids, not a text
        keys = [
            k
            for k in client.scan_iter(f"{store.prefix}*")
            if k != id_key and not k.startswith(index)
        ]
        return [client.get(k).decode() for k in keys]  # type: ignore[union-attr]
    finally:
        client.close()


async def _check_recalls(store: Any, fmt: str, out: list[Any], originals: dict[str, str]) -> int:
    """Every id a note in ``out`` names returns, in one recall, the original text of the
    result that names it; how many ids there were."""
    tool = recall_tool(store)
    n = 0
    for m in _messages(fmt, out):
        for id_ in RECALL.findall(m.text):
            assert m.role == "tool", m
            assert await tool({"id": id_}, CTX) == originals[m.tool_call_id or ""], id_
            n += 1
    # nothing but originals was ever saved (no stub under a second id)
    assert set(_saved_texts(store)) <= set(originals.values())
    return n


def _shrink(store: Any, **kw: Any) -> ShrinkToolResults:
    kw.setdefault("bigger_than_tokens", 100)
    kw.setdefault("older_than_turns", 1)
    kw.setdefault("keep_chars", 400)
    return ShrinkToolResults(save_to=store, **kw)


def _policy(*steps: Any, target: int, **kw: Any) -> CompressionPolicy:
    return CompressionPolicy(
        target_tokens=target, token_counter=tiktoken_counter(), steps=list(steps), **kw
    )


# --------------------------------------------------------------------------------------------
# 2. offloaded originals are never lost


@pytest.mark.parametrize("fmt", FORMATS)
async def test_the_recency_windows_second_pass_keeps_every_original(
    fmt: str, store_where: tuple[Any, str, Any]
) -> None:
    """Pass 1 (the newest 3 turns protected) shrinks the old results and stages them; pass 2
    shrinks again: the stubs of pass 1 are never saved as "full texts" under new ids."""
    store, _, _ = store_where
    natives = _natives(fmt, _conversation())
    originals = _results(fmt, natives)
    policy = _policy(_shrink(store), target=600, recent_turns=3)
    out, report = compress_for_sync(natives, policy, ctx=CTX)
    assert [s.step for s in report.steps] == ["shrink_tool_results"] * 2  # both passes ran
    assert report.failures == ()
    assert await _check_recalls(store, fmt, out, originals) == len(originals)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_second_shrinking_step_cuts_from_the_original_under_the_same_id(
    fmt: str, store_where: tuple[Any, str, Any]
) -> None:
    """The second step meets the first one's stubs (staged, not written yet): it cuts them
    anew from the staged original and keeps their id; that id is written."""
    store, _, _ = store_where
    natives = _natives(fmt, _conversation(rounds=4, lines=200))
    originals = _results(fmt, natives)
    steps = [_shrink(store, keep_chars=3000), _shrink(store, keep_chars=300)]
    out, report = compress_for_sync(natives, _policy(*steps, target=300, recent_turns=0), ctx=CTX)
    assert report.steps[1].messages_changed > 0  # the second step shortened the stubs again
    assert await _check_recalls(store, fmt, out, originals) == len(originals)
    assert len(_saved_texts(store)) == len(originals)  # one save per result


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_later_compression_of_our_output_keeps_pointing_to_the_original(
    fmt: str, store_where: tuple[Any, str, Any]
) -> None:
    """Our output plus a new round, compressed again (by another worker on the same store):
    the stubs of the first compression are shortened further and still name the saved id."""
    store, kind, where = store_where
    first = _conversation()
    natives = _natives(fmt, first)
    originals = _results(fmt, natives)
    out, _ = compress_for_sync(natives, _policy(_shrink(store), target=1500), ctx=CTX)
    assert await _check_recalls(store, fmt, out, originals) > 0
    call = ToolCall("call_new", "bash", '{"command": "make test"}')
    more = [Message("assistant", "running the tests", tool_calls=(call,))]
    more += [Message("tool", "tests: 12 passed\n" * 40, tool_call_id="call_new")]
    more += [Message("assistant", "all green"), Message("user", "ship it")]
    grown = list(out) + _natives(fmt, more)
    originals |= _results(fmt, _natives(fmt, more))
    other = store if kind == "memory" else _make(kind, where)  # another worker's store
    try:
        again = _policy(_shrink(other, keep_chars=150, bigger_than_tokens=40), target=400)
        out2, report = compress_for_sync(grown, again, ctx=CTX)
        assert report.failures == () and report.tokens_after < report.tokens_before
        texts = [m.text for m in _messages(fmt, out2) if m.role == "tool"]
        assert sum("characters cut" in t for t in texts) > 0
        assert await _check_recalls(other, fmt, out2, originals) > 0
    finally:
        if other is not store:
            await _close(other)


# --------------------------------------------------------------------------------------------
# 3. a failed save cuts nothing


class _DownMemoryStore(MemoryStore):
    """A real MemoryStore whose saves fail (the store went down after its id key was read)."""

    def save_many_sync(self, entries: Any) -> None:
        raise StoreError("MemoryStore: down")


class _DownSQLiteStore(SQLiteStore):
    """A real SQLiteStore whose saves fail (its async save runs this in a thread)."""

    def save_many_sync(self, entries: Any) -> None:
        raise StoreError("SQLiteStore: disk full")


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"redis://127.0.0.1:{s.getsockname()[1]}/0"


@pytest.fixture(params=["memory save fails", "sqlite save fails", "redis on a closed port"])
async def down_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory save fails":
        yield _DownMemoryStore()
    elif request.param == "sqlite save fails":
        with _DownSQLiteStore(tmp_path / "f.sqlite3") as store:
            yield store
    else:
        store = RedisStore(_closed_port_url(), timeout_s=1)
        try:
            yield store
        finally:
            await store.aclose()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("recent_turns", [0, 3])
async def test_a_failed_save_gives_back_the_callers_results(
    fmt: str, recent_turns: int, down_store: Any
) -> None:
    natives = _natives(fmt, _conversation(rounds=4))
    before = [json.dumps(strip_reserved([n]), default=str) for n in natives]
    policy = _policy(_shrink(down_store), target=300, recent_turns=recent_turns)
    out, report = compress_for_sync(natives, policy, ctx=CTX)
    assert StepFailure("shrink_tool_results", "StoreError") in report.failures
    # the step reported as skipped changed nothing: the caller's own objects, untouched
    assert len(out) == len(natives) and all(a is b for a, b in zip(out, natives, strict=True))
    assert [json.dumps(strip_reserved([n]), default=str) for n in natives] == before
    assert report.tokens_after == report.tokens_before


async def test_a_failed_store_reverts_only_its_own_results(tmp_path: Path) -> None:
    """Two shrinking steps, one store down: the results the working store saved stay cut and
    recall their originals; the others come back as the caller's messages."""
    msgs = _conversation(rounds=4, lines=200)
    good = MemoryStore()
    steps = [
        _shrink(good, keep_chars=300, older_than_turns=3),  # the two oldest results
        _shrink(_DownMemoryStore(), keep_chars=300),  # the two newer ones
    ]
    out, report = compress_for_sync(msgs, _policy(*steps, target=200, recent_turns=0), ctx=CTX)
    assert report.failures == (StepFailure("shrink_tool_results", "StoreError"),)
    tools = [(i, m) for i, m in enumerate(out) if m.role == "tool"]
    assert [m is msgs[i] for i, m in tools] == [False, False, True, True]
    assert await _check_recalls(good, "agent_adapter", out, _results("agent_adapter", msgs)) == 2


async def test_a_direct_apply_with_the_store_down_raises() -> None:
    """Outside a compression the save is written at once: its failure is the step's."""
    from agent_adapter.context._steps._base import StepContext
    from agent_adapter.context._tokens import TokenMeter
    from agent_adapter.context._units import Protection

    msgs = _conversation(rounds=2, lines=200)
    context = StepContext(
        target_tokens=10,
        threshold_tokens=20,
        protection=Protection(msgs, None),
        meter=TokenMeter(tiktoken_counter()),
    )
    with pytest.raises(StoreError):
        await _shrink(_DownMemoryStore()).apply(list(msgs), context)


# --------------------------------------------------------------------------------------------
# 9. same input, same output


@pytest.mark.parametrize("fmt", FORMATS)
async def test_the_same_input_gives_the_same_output(
    fmt: str, store_where: tuple[Any, str, Any]
) -> None:
    """With an exact counter and a store, 10 inputs each compressed twice: byte-identical
    (a random id tokenizes to a varying length and so moved the cuts)."""
    store, _, _ = store_where
    for n in range(10):
        natives = _natives(fmt, _conversation(rounds=3 + n % 4, lines=60 + 13 * n, tag=f"#{n}"))
        policy = _policy(_shrink(store, keep_chars=200 + 20 * n), target=500 + 40 * n)
        a, _ = compress_for_sync(natives, policy, ctx=CTX)
        b, _ = compress_for_sync(natives, policy, ctx=CTX)
        texts_a = [m.text for m in _messages(fmt, a)]
        assert texts_a == [m.text for m in _messages(fmt, b)], n
        assert RECALL.search("\n".join(texts_a)), n


_WORKER = """
import json, sys
from agent_adapter._messages import Message, ToolCall
from agent_adapter._run import RunContext
from agent_adapter.context import CompressionPolicy, ShrinkToolResults, compress_for_sync
from agent_adapter.context._stores import RedisStore, SQLiteStore
from agent_adapter.context._tokens import tiktoken_counter

kind, where, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
store = SQLiteStore(where) if kind == "sqlite" else RedisStore(where, prefix=prefix)
msgs = [Message("user", "fix the build")]
for i in range(5):
    call = ToolCall(f"call_{i}", "bash", json.dumps({"command": f"make mod{i}"}))
    msgs.append(Message("assistant", f"step {i}", tool_calls=(call,)))
    body = "".join(f"src/mod{i}.py:{j}: warning W{j:03d} value {j * 7}\\n" for j in range(150))
    msgs.append(Message("tool", body, tool_call_id=f"call_{i}"))
msgs += [Message("assistant", "done"), Message("user", "and now?")]
steps = [ShrinkToolResults(bigger_than_tokens=100, older_than_turns=1, save_to=store)]
policy = CompressionPolicy(target_tokens=700, token_counter=tiktoken_counter(), steps=steps)
out, _ = compress_for_sync(msgs, policy, ctx=RunContext(thread_id="t"))
print(json.dumps([m.text for m in out]))
store.close()
"""


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_workers_sharing_a_store_give_byte_identical_output(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Two processes (two workers), one SQLite file or Redis: the same bytes, and the same ids
    (the key is in the store)."""
    if kind == "sqlite":
        args = [str(tmp_path / "shared.sqlite3"), ""]
    else:
        args = [request.getfixturevalue("redis_url"), f"test19:{uuid.uuid4().hex}:"]
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", _WORKER, kind, *args],
            capture_output=True,
            check=True,
            env=env,
            timeout=120,
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert RECALL.search(runs[0].decode())


async def test_ids_are_keyed_hashes_nobody_can_guess(tmp_path: Path) -> None:
    """The id is a 128-bit MAC under the store's secret key: another store (another key) or
    another owner gives another id for the same text; two clients of one SQLite file share
    the key; unknown, expired and wrong-owner ids answer alike."""
    msgs = _conversation(rounds=3)

    def ids(store: Any, ctx: RunContext = CTX) -> list[str]:
        policy = _policy(_shrink(store), target=400, recent_turns=0)
        out, _ = compress_for_sync(msgs, policy, ctx=ctx)
        return RECALL.findall("\n".join(m.text for m in out))

    a, b = MemoryStore(), MemoryStore()
    ids_a = ids(a)
    assert ids_a and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids_a)
    assert len(set(ids_a)) == len(ids_a)
    assert not set(ids_a) & set(ids(b))  # another key: other ids
    other_owner = RunContext(thread_id="someone-else")
    assert not set(ids_a) & set(ids(a, other_owner))
    path = tmp_path / "f.sqlite3"
    with SQLiteStore(path) as s1, SQLiteStore(path) as s2:
        assert ids(s1) == ids(s2) and not set(ids(s1)) & set(ids_a)
        assert s1.id_key_sync() == s2.id_key_sync() and len(s1.id_key_sync()) == 32
    # unknown, expired and wrong-owner ids answer alike
    tool = recall_tool(a)
    short = MemoryStore()
    short_ids = RECALL.findall(
        "\n".join(
            m.text
            for m in compress_for_sync(
                msgs,
                _policy(_shrink(short, save_for_seconds=0.05), target=400, recent_turns=0),
                ctx=CTX,
            )[0]
        )
    )
    await asyncio.sleep(0.2)
    expired = await recall_tool(short)({"id": short_ids[0]}, CTX)
    wrong_owner = await tool({"id": ids_a[0]}, other_owner)
    unknown = await tool({"id": "0" * 32}, CTX)
    assert (
        wrong_owner.replace(ids_a[0], "X")
        == expired.replace(short_ids[0], "X")
        == unknown.replace("0" * 32, "X")
    )
    assert await tool({"id": ids_a[0]}, CTX) in {m.text for m in msgs}


class _DictStore:
    """A store of the caller's own: the four protocol methods, no id key of its own."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str], str] = {}

    async def save_many(self, entries: Any) -> None:
        self.save_many_sync(entries)

    async def load(self, scope: str, id: str) -> str | None:
        return self.load_sync(scope, id)

    def save_many_sync(self, entries: Any) -> None:
        self.data.update({(e.scope, e.id): e.text for e in entries})

    def load_sync(self, scope: str, id: str) -> str | None:
        return self.data.get((scope, id))


async def test_a_store_without_an_id_key_gets_keyed_ids_of_this_process() -> None:
    msgs = _conversation(rounds=3)
    store = _DictStore()
    policy = _policy(_shrink(store), target=400, recent_turns=0)
    a, _ = compress_for_sync(msgs, policy, ctx=CTX)
    b, _ = compress_for_sync(msgs, policy, ctx=CTX)
    assert [m.text for m in a] == [m.text for m in b]
    ids = RECALL.findall("\n".join(m.text for m in a))
    assert ids and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    assert await _check_recalls_of(store, a, msgs) == len(ids)


async def _check_recalls_of(store: Any, out: list[Message], msgs: list[Message]) -> int:
    originals = _results("agent_adapter", msgs)
    n = 0
    for m in out:
        for id_ in RECALL.findall(m.text):
            assert await recall_tool(store)({"id": id_}, CTX) == originals[m.tool_call_id or ""]
            n += 1
    return n


async def test_redis_workers_share_one_id_key(redis_url: str) -> None:
    prefix = f"test19:{uuid.uuid4().hex}:"
    a, b = RedisStore(redis_url, prefix=prefix), RedisStore(redis_url, prefix=prefix)
    c = RedisStore(redis_url, prefix=f"test19:{uuid.uuid4().hex}:")
    try:
        key = await a.id_key()
        assert len(key) == 32 and b.id_key_sync() == key and await b.id_key() == key
        assert await c.id_key() != key  # another prefix: another store, another key
    finally:
        for s in (a, b, c):
            await s.aclose()


# --------------------------------------------------------------------------------------------
# 12. settings checked at construction


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -math.inf])
def test_save_for_seconds_must_be_finite(seconds: float) -> None:
    with pytest.raises(ConfigError, match="save_for_seconds"):
        ShrinkToolResults(save_to=MemoryStore(), save_for_seconds=seconds)


@pytest.mark.parametrize("path", ["results\x00.sqlite3", Path("results\x00.sqlite3")])
def test_a_nul_in_an_sqlite_path_is_a_config_error(path: Any) -> None:
    with pytest.raises(ConfigError, match=r"SQLiteStore\.path"):
        SQLiteStore(path)


def test_a_bytes_sqlite_path_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"SQLiteStore\.path"):
        SQLiteStore(b"results.sqlite3")  # type: ignore[arg-type]


def test_store_entries_still_reject_bad_ttls() -> None:
    with pytest.raises(ConfigError, match=r"entries\[0\]\.ttl_seconds"):
        MemoryStore().save_many_sync([StoreEntry("s", "0" * 32, "t", math.inf)])


def _rounds(first: str, n: int = 4) -> list[Message]:
    msgs = [Message("system", "sys"), Message("user", "task")]
    for i in range(n):
        msgs.append(Message("assistant", "", tool_calls=(ToolCall(f"c{i}", "bash", "{}"),)))
        body = first if i == 0 else "\n".join(f"out {i}.{j} value" for j in range(300))
        msgs.append(Message("tool", body, tool_call_id=f"c{i}", name="bash"))
    msgs.append(Message("user", "go on"))
    return msgs


async def test_a_result_quoting_a_marker_of_ours_is_saved_like_any_other() -> None:
    """Regression: a result that quotes one of our markers (a log of an earlier compressed
    session, printed again) was taken for one we shortened: cut with no copy, its lines gone,
    the note naming only the quoted id, which recalls nothing."""
    store = MemoryStore()
    quoted = "[... 5000 characters cut; full text: call recall_context(id='" + "ab" * 16 + "') ...]"
    body = "\n".join(f"line {i}: important_value_{i} = {i * 7}" for i in range(400))
    big = f"cat old_session.log\n{quoted}\n{body}"
    msgs = _rounds(big)
    policy = CompressionPolicy(target_tokens=1500, steps=[ShrinkToolResults(save_to=store)])
    out, report = await compress(msgs, policy, ctx=CTX)
    cut = next(m for m in out if m.tool_call_id == "c0")
    assert len(cut.text) < len(big) and report.failures == ()
    ids = [i for i in RECALL.findall(cut.text) if i != "ab" * 16]
    assert ids, cut.text
    assert store.load_sync(owner_scope(CTX), ids[0]) == big


@pytest.mark.parametrize("store", [MemoryStore(max_entries=2), MemoryStore(max_total_chars=8000)])
async def test_a_bounded_store_never_evicts_what_its_save_writes(store: MemoryStore) -> None:
    """Regression: one compression's save evicted the texts its own notes named (6 ids named,
    2 held): recalled at once, they answered "not found". A save over the bounds fails as a
    StepFailure, and nothing is shortened without its copy."""
    msgs = _rounds("\n".join(f"out 0.{j} value" for j in range(300)), n=8)
    policy = CompressionPolicy(target_tokens=2000, steps=[ShrinkToolResults(save_to=store)])
    out, report = await compress(msgs, policy, ctx=CTX)
    assert [f.error_type for f in report.failures] == ["StoreError"]
    assert out == msgs and all(a is b for a, b in zip(out, msgs, strict=True))
    assert len(store) == 0
    small = _rounds("\n".join(f"out 0.{j} value" for j in range(300)), n=3)  # one old result
    out, report = await compress(small, policy, ctx=CTX)
    ids = [i for m in out for i in RECALL.findall(m.text)]
    assert ids and all(store.load_sync(owner_scope(CTX), i) is not None for i in ids)
