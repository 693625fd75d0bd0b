"""Compaction states shared by workers (issue 20, deliver 2): in a real Redis and a real
SQLite file, a conversation served by any worker process keeps one prefix; the state is the
same bytes in every process; a store that is down, a state that expired or cannot be shared,
a history that differs are all a fresh compression, never a wrong request or a failure."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from _redis_server import _free_port, private_server
from _replay import natives
from agent_adapter import RunContext
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, OpaquePart, TextPart, ThinkingPart, ToolCall
from agent_adapter.context import CompactionStates, CompressionPolicy, compress_for_sync
from agent_adapter.context._state_store import (
    Unshareable,
    decode_native,
    encode_native,
    native_digest,
)
from agent_adapter.context._stores import MemoryStore, RedisStore, SQLiteStore, StoreEntry

THRESHOLD, TARGET, ROUNDS = 6_000, 4_000, 30
POLICY = CompressionPolicy(threshold_tokens=THRESHOLD, target_tokens=TARGET)
#: every built-in format; "gemini_objects" are google.genai Content objects
FORMATS = [
    "agent_adapter",
    "openai",
    "responses",
    "anthropic",
    "gemini",
    "gemini_objects",
    "langchain",
]
TESTS = Path(__file__).resolve().parent
WORKER = (
    "import json, sys\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "import test_compaction_state_stores as t\n"
    "print(json.dumps(t.worker(json.loads(sys.argv[2]))))\n"
)


def _conversation(rounds: int) -> list[Message]:
    """A coding agent's run: every third tool result long (so old ones get shortened)."""
    out = [Message("system", "You are a coding agent."), Message("user", "fix the bug")]
    for n in range(rounds):
        cid = f"call_{n}"
        args = json.dumps({"command": f"cat src/m{n}.py"})
        out.append(Message("assistant", f"step {n}", tool_calls=(ToolCall(cid, "bash", args),)))
        lines = 120 if n % 3 == 0 else 12
        body = "".join(f"line {k} of m{n}: value = {k * n}\n" for k in range(lines))
        out.append(Message("tool", f"src/m{n}.py\n{body}", tool_call_id=cid))
    return out


def _history(fmt: str, rounds: int) -> list[Any]:
    """The conversation as the natives of ``fmt``, built anew (no object shared)."""
    if fmt == "gemini_objects":
        from google.genai import types

        return [types.Content.model_validate(d) for d in natives("gemini", _conversation(rounds))]
    return natives(fmt, _conversation(rounds))


def _format(fmt: str) -> str:
    return {"responses": "openai", "gemini_objects": "gemini"}.get(fmt, fmt)


def _text(native: Any) -> str:
    """The bytes a native is sent as: a dict's JSON (key order kept), a pydantic object's
    JSON, a Message's repr (every compared field)."""
    if isinstance(native, dict):
        return json.dumps(native)
    dump = getattr(native, "model_dump_json", None)
    if callable(dump):
        return f"{type(native).__name__}:{dump()}"
    assert isinstance(native, Message)
    return repr(native)


def _texts(items: list[Any]) -> list[str]:
    return [_text(n) for n in items]


def _store(spec: dict[str, Any]) -> RedisStore | SQLiteStore:
    if spec["store"] == "redis":
        return RedisStore(spec["url"], prefix=spec["prefix"], timeout_s=2.0)
    return SQLiteStore(spec["path"], timeout_s=2.0)


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    """One worker process: compress each format's history with the shared states (run in a
    subprocess by :func:`_run`)."""
    states = CompactionStates(store=_store(spec), ttl_seconds=spec.get("ttl"))
    out: dict[str, Any] = {}
    for fmt in spec["formats"]:
        history = _history(fmt, spec["rounds"])
        sent, report = compress_for_sync(
            history, POLICY, format=_format(fmt), conversation=f"c1-{fmt}", states=states
        )
        out[fmt] = {
            "history": _texts(history),
            "request": _texts(sent),
            "steps": [s.step for s in report.steps],
        }
    return out


def _run(spec: dict[str, Any], seed: int) -> dict[str, Any]:
    """:func:`worker` in a process of its own (its own hash seed)."""
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(TESTS), json.dumps(spec)],
        capture_output=True,
        text=True,
        env={"PYTHONHASHSEED": str(seed), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _fresh(fmt: str, rounds: int) -> list[str]:
    """What a compression with no state sends for the history of ``rounds``."""
    sent, report = compress_for_sync(
        _history(fmt, rounds), POLICY, format=_format(fmt), states=False
    )
    assert report.steps
    return _texts(sent)


def _clean(url: str, prefix: str) -> None:
    """Delete the keys a test wrote under ``prefix`` (the server is shared)."""
    client = redis.Redis.from_url(url)
    try:
        names = client.keys(prefix + "*")
        if names:
            client.delete(*names)
    finally:
        client.close()


@pytest.fixture(params=["redis", "sqlite"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Where the workers of one test share their states."""
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        prefix = f"test:{uuid.uuid4().hex}:"
        yield {"store": "redis", "url": url, "prefix": prefix}
        _clean(url, prefix)
    else:
        yield {"store": "sqlite", "path": str(tmp_path / "states.db")}


def _stored(spec: dict[str, Any]) -> dict[str, bytes]:
    """The raw states a store holds, by their name in it."""
    if spec["store"] == "redis":
        client = redis.Redis.from_url(spec["url"])
        try:
            names = client.keys(spec["prefix"] + "compaction_state:*")
            return {n.decode()[len(spec["prefix"]) :]: client.get(n) for n in names}
        finally:
            client.close()
    with sqlite3.connect(spec["path"]) as conn:
        rows = conn.execute("SELECT name, version, payload FROM compaction_states").fetchall()
    return {name: version.encode() + bytes(payload) for name, version, payload in rows}


# --------------------------------------------------------------------------------------------
# two workers, one prefix


def test_worker_b_sends_worker_a_request_plus_the_new_round_in_every_format(
    spec: dict[str, Any],
) -> None:
    a = _run({**spec, "formats": FORMATS, "rounds": ROUNDS}, seed=1)
    b = _run({**spec, "formats": FORMATS, "rounds": ROUNDS + 1}, seed=2)
    for fmt in FORMATS:
        first, then = a[fmt], b[fmt]
        assert first["steps"], fmt  # worker A compressed
        n = len(first["history"])
        assert then["history"][:n] == first["history"], fmt  # the same history, grown
        new = then["history"][n:]
        assert new, fmt
        assert then["steps"] == [], fmt  # worker B did not compress
        assert then["request"] == first["request"] + new, fmt
        # without A's state, B would have sent another request
        assert _fresh(fmt, ROUNDS + 1) != then["request"], fmt


def test_the_state_is_the_same_bytes_in_every_process(spec: dict[str, Any], tmp_path: Path) -> None:
    other = (
        {**spec, "prefix": f"test:{uuid.uuid4().hex}:"}
        if spec["store"] == "redis"
        else {**spec, "path": str(tmp_path / "other.db")}
    )
    _run({**spec, "formats": FORMATS, "rounds": ROUNDS}, seed=3)
    try:
        _run({**other, "formats": FORMATS, "rounds": ROUNDS}, seed=4)
        here, there = _stored(spec), _stored(other)
    finally:
        if spec["store"] == "redis":
            _clean(spec["url"], other["prefix"])
    assert len(here) == len(FORMATS)
    assert here == there
    # each holds natives the library wrote (packed), not only digests
    assert all(b'{"j":' in v or b'{"m":' in v or b'{"p":' in v for v in here.values())


def test_a_worker_follows_a_compaction_another_worker_made_since(spec: dict[str, Any]) -> None:
    a, b = CompactionStates(store=_store(spec)), CompactionStates(store=_store(spec))
    compress_for_sync(_history("openai", ROUNDS), POLICY, conversation="c1", states=a)
    # B serves the conversation while it grows past the threshold: B compacts again
    again, report = compress_for_sync(
        _history("openai", ROUNDS + 5), POLICY, conversation="c1", states=b
    )
    assert report.steps
    # A's own copy is now stale: A sends B's request plus the new round
    grown = _history("openai", ROUNDS + 6)
    sent, report = compress_for_sync(grown, POLICY, conversation="c1", states=a)
    assert report.steps == ()
    assert _texts(sent) == _texts(again) + _texts(grown[-2:])


def test_worker_b_with_another_owner_compresses_fresh(spec: dict[str, Any]) -> None:
    states = CompactionStates(store=_store(spec))
    compress_for_sync(_history("openai", ROUNDS), POLICY, conversation="c1", states=states)
    other = CompactionStates(store=_store(spec))
    grown = _history("openai", ROUNDS + 1)
    sent, report = compress_for_sync(
        grown, POLICY, conversation="c1", ctx=RunContext(thread_id="another"), states=other
    )
    assert report.steps
    assert _texts(sent) == _fresh("openai", ROUNDS + 1)


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "agent_adapter"])
def test_a_history_whose_old_native_differs_is_compressed_fresh(
    spec: dict[str, Any], fmt: str
) -> None:
    states = CompactionStates(store=_store(spec))
    compress_for_sync(
        _history(fmt, ROUNDS), POLICY, format=_format(fmt), conversation="c1", states=states
    )
    messages = _conversation(ROUNDS + 1)
    messages[7] = messages[7].with_text(messages[7].text + " (edited)")
    edited = natives(fmt, messages)
    other = CompactionStates(store=_store(spec))
    sent, report = compress_for_sync(
        edited, POLICY, format=_format(fmt), conversation="c1", states=other
    )
    want, _ = compress_for_sync(natives(fmt, messages), POLICY, format=_format(fmt), states=False)
    assert report.steps
    assert _texts(sent) == _texts(want)


def test_a_state_that_cannot_be_shared_stays_in_its_worker(spec: dict[str, Any]) -> None:
    history = _history("openai", ROUNDS)
    states = CompactionStates(store=_store(spec))
    first, _ = compress_for_sync(history, POLICY, conversation="c1", states=states)
    assert len(_stored(spec)) == 1
    # the next message holds a set: the state has no process-independent form any more
    grown = [*history, {"role": "user", "content": "go on", "meta": {1, 2}}]
    sent, report = compress_for_sync(grown, POLICY, conversation="c1", states=states)
    assert report.steps == () and sent == [*first, grown[-1]]
    assert _stored(spec) == {}  # no older state left shared
    grown = [*grown, *_history("openai", ROUNDS + 1)[len(history) :]]
    # its own worker appends, from its local copy
    sent, report = compress_for_sync(grown, POLICY, conversation="c1", states=states)
    assert report.steps == ()
    assert sent[: len(first)] == first
    # another worker compresses fresh
    other = CompactionStates(store=_store(spec))
    sent, report = compress_for_sync(grown, POLICY, conversation="c1", states=other)
    want, _ = compress_for_sync(grown, POLICY, states=False)
    assert report.steps
    assert sent == want


def test_a_corrupt_state_is_a_fresh_compression(spec: dict[str, Any]) -> None:
    states = CompactionStates(store=_store(spec))
    compress_for_sync(_history("openai", ROUNDS), POLICY, conversation="c1", states=states)
    (name,) = _stored(spec)
    if spec["store"] == "redis":
        client = redis.Redis.from_url(spec["url"])
        client.set(spec["prefix"] + name, b"0" * 32 + b'{"layout": 1, "key": "x"}')
        client.close()
    else:
        with sqlite3.connect(spec["path"]) as conn:
            conn.execute("UPDATE compaction_states SET version = 'x', payload = X'00ff'")
    other = CompactionStates(store=_store(spec))
    sent, report = compress_for_sync(
        _history("openai", ROUNDS + 1), POLICY, conversation="c1", states=other
    )
    assert report.steps
    assert _texts(sent) == _fresh("openai", ROUNDS + 1)


# --------------------------------------------------------------------------------------------
# stores that fail


def test_a_worker_whose_store_is_down_compresses_fresh(tmp_path: Path) -> None:
    dead_redis = {"store": "redis", "url": f"redis://127.0.0.1:{_free_port()}/0", "prefix": "x:"}
    no_folder = {"store": "sqlite", "path": str(tmp_path / "missing" / "states.db")}
    for spec in (dead_redis, no_folder):
        got = _run({**spec, "formats": ["openai", "agent_adapter"], "rounds": ROUNDS}, seed=5)
        for fmt in ("openai", "agent_adapter"):
            assert got[fmt]["steps"], spec
            assert got[fmt]["request"] == _fresh(fmt, ROUNDS), spec


def test_redis_killed_between_calls_is_a_lost_state_never_an_error() -> None:
    with private_server() as server:
        store = RedisStore(server.url, prefix="t:", timeout_s=1.0)
        states = CompactionStates(store=store)
        history = _history("openai", ROUNDS)
        first, _ = compress_for_sync(history, POLICY, conversation="c1", states=states)
        server.kill()
        grown = _history("openai", ROUNDS + 1)
        # a worker with no copy of its own: a fresh compression
        other = CompactionStates(store=RedisStore(server.url, prefix="t:", timeout_s=1.0))
        sent, report = compress_for_sync(grown, POLICY, conversation="c1", states=other)
        assert report.steps
        assert _texts(sent) == _fresh("openai", ROUNDS + 1)
        # the worker that has its copy keeps appending to it
        sent, report = compress_for_sync(grown, POLICY, conversation="c1", states=states)
        assert report.steps == ()
        assert _texts(sent) == _texts(first) + _texts(grown[len(history) :])


def test_a_store_that_fails_is_left_alone_then_gets_what_was_written_meanwhile(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "later"
    path = folder / "states.db"
    states = CompactionStates(store=SQLiteStore(path, timeout_s=1.0), retry_after_seconds=0.3)
    key = "c1-openai"  # as the worker names it
    first, report = compress_for_sync(
        _history("openai", ROUNDS), POLICY, conversation=key, states=states
    )
    assert report.steps  # compressed, though the store failed
    folder.mkdir()
    grown = _history("openai", ROUNDS + 1)
    sent, report = compress_for_sync(grown, POLICY, conversation=key, states=states)
    assert report.steps == ()  # its own copy
    assert sent[: len(first)] == first
    assert not path.exists()  # left alone for retry_after_seconds
    time.sleep(0.35)
    sent, report = compress_for_sync(grown, POLICY, conversation=key, states=states)
    assert report.steps == ()
    assert path.exists()  # written back
    spec = {"store": "sqlite", "path": str(path), "formats": ["openai"], "rounds": ROUNDS + 2}
    got = _run(spec, seed=6)["openai"]
    assert got["steps"] == []
    assert got["request"][: len(sent)] == _texts(sent)


# --------------------------------------------------------------------------------------------
# expiry, eviction, forget


def test_a_state_expires_ttl_seconds_after_its_last_write(spec: dict[str, Any]) -> None:
    states = CompactionStates(store=_store(spec), ttl_seconds=1.5)
    compress_for_sync(_history("openai", ROUNDS), POLICY, conversation="c1", states=states)
    if spec["store"] == "redis":
        client = redis.Redis.from_url(spec["url"])
        (name,) = client.keys(spec["prefix"] + "compaction_state:*")
        assert 0 < client.pttl(name) <= 1500
        client.close()
    else:
        with sqlite3.connect(spec["path"]) as conn:
            (expires,) = conn.execute("SELECT expires_at FROM compaction_states").fetchone()
        assert 0 < expires - time.time() <= 1.5
    (key,) = states._records
    grown = _history("openai", ROUNDS + 1)
    other = CompactionStates(store=_store(spec), ttl_seconds=1.5)
    assert compress_for_sync(grown, POLICY, conversation="c1", states=other)[1].steps == ()
    time.sleep(1.6)
    assert CompactionStates(store=_store(spec)).get(key) is None  # gone from the store
    assert states.get(key) is None and other.get(key) is None  # and from each worker
    sent, report = compress_for_sync(grown, POLICY, conversation="c1", states=states)
    assert report.steps
    assert _texts(sent) == _fresh("openai", ROUNDS + 1)


def test_a_state_evicted_here_is_read_back_from_the_store(spec: dict[str, Any]) -> None:
    states = CompactionStates(1, store=_store(spec))
    alone = CompactionStates(1)
    firsts = {}
    for key in ("c1", "c2"):
        firsts[key], _ = compress_for_sync(
            _history("openai", ROUNDS), POLICY, conversation=key, states=states
        )
        compress_for_sync(_history("openai", ROUNDS), POLICY, conversation=key, states=alone)
    assert len(states) == len(alone) == 1
    grown = _history("openai", ROUNDS + 1)
    sent, report = compress_for_sync(grown, POLICY, conversation="c1", states=states)
    assert report.steps == ()
    assert _texts(sent) == _texts(firsts["c1"]) + _texts(grown[-2:])
    # in memory only, the evicted state is lost
    assert compress_for_sync(grown, POLICY, conversation="c1", states=alone)[1].steps


def test_forget_deletes_in_both_and_only_states(spec: dict[str, Any]) -> None:
    store = _store(spec)
    store.save_many_sync([StoreEntry("default", "t1", "a tool result")])
    states = CompactionStates(store=store)
    for key in ("c1", "c2"):
        compress_for_sync(_history("openai", ROUNDS), POLICY, conversation=key, states=states)
    assert len(_stored(spec)) == 2
    (c1,) = [k for k in states._records if "|key:c1|" in k]
    elsewhere = CompactionStates(store=_store(spec))
    assert elsewhere.get(c1) is not None
    states.forget(c1)
    assert len(_stored(spec)) == 1 and len(states) == 1
    assert elsewhere.get(c1) is None  # its copy went with the store's
    states.forget()
    assert _stored(spec) == {} and len(states) == 0
    assert store.load_sync("default", "t1") == "a tool result"


def test_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="SQLiteStore or a RedisStore"):
        CompactionStates(store=MemoryStore())  # type: ignore[arg-type]
    store = SQLiteStore(tmp_path / "s.db")
    for bad in ({"ttl_seconds": 0}, {"ttl_seconds": math.inf}, {"retry_after_seconds": -1}):
        with pytest.raises(ConfigError):
            CompactionStates(store=store, **bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_conversations"):
        CompactionStates(0, store=store)


# --------------------------------------------------------------------------------------------
# the codec


def test_library_natives_rebuild_exactly() -> None:
    tricky = {
        "role": "tool",
        "z": {"b": 1, "a": 2.0, "$ref": True},
        "bytes": b"\x00\xff",
        "tuple": (1, [2, (3,)]),
        "nan": math.nan,
        "inf": -math.inf,
        "none": None,
        "text": "caf\u00e9 \ud800",
    }
    back = decode_native(json.loads(encode_native(tricky)))
    assert list(back) == list(tricky) and list(back["z"]) == ["b", "a", "$ref"]
    assert back["tuple"] == (1, [2, (3,)]) and type(back["tuple"][1][1]) is tuple
    assert back["bytes"] == b"\x00\xff" and math.isnan(back["nan"]) and back["inf"] == -math.inf
    assert native_digest(back) == native_digest(tricky)
    message = Message(
        "assistant",
        (
            ThinkingPart("hm", signature="sig"),
            TextPart("hi", extras={"cache": {"type": "ephemeral"}}),
            OpaquePart("x", {"data": (1, b"\x01"), "$k": [1.5]}),
        ),
        tool_calls=(ToolCall("c1", "f", '{"a":1}', extras={"sig": "s"}),),
        extras={"k": [1, 2]},
    )
    rebuilt = decode_native(json.loads(encode_native(message)))
    assert isinstance(rebuilt, Message) and repr(rebuilt) == repr(message)
    assert rebuilt == message and rebuilt.origin != message.origin


def test_digests_tell_types_apart_but_not_key_order() -> None:
    assert native_digest({"a": 1, "b": 2}) == native_digest({"b": 2, "a": 1})
    values = [{"a": 1}, {"a": 1.0}, {"a": True}, {"a": "1"}, {"a": [1]}, {"a": (1,)}]
    assert len({native_digest(v) for v in values}) == len(values)
    assert native_digest({"a": {1, 2}}) is None
    assert native_digest({1: "a"}) is None
    assert native_digest(object()) is None
    with pytest.raises(Unshareable):
        encode_native({"a": {1}})


def test_a_stored_class_is_never_imported() -> None:
    for body in (["no_such_module_here", "X", "{}"], ["json", "JSONDecoder", "{}"]):
        with pytest.raises(ValueError):
            decode_native({"p": body})
    assert "no_such_module_here" not in sys.modules


def test_the_librarys_counter_names_the_same_policy_in_every_process() -> None:
    """Regression: the policy key named tiktoken_counter("o200k_base") by its address, so
    workers sharing states through a store never reused each other's (each compressed
    fresh, prefix_tokens 0); a module-level function is named by its name."""
    import subprocess
    import sys

    code = (
        "from agent_adapter.context import CompressionPolicy, tiktoken_counter, estimate_tokens\n"
        "from agent_adapter.context._stateful import _policy_key\n"
        "p = CompressionPolicy(target_tokens=1000, token_counter=tiktoken_counter('o200k_base'))\n"
        "q = CompressionPolicy(target_tokens=1000, token_counter=estimate_tokens)\n"
        "print(_policy_key(p, None), _policy_key(q, None))\n"
    )
    keys = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert keys[0].stdout == keys[1].stdout and keys[0].stdout.strip()
