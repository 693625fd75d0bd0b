"""The reliability suite: faults, load and bad input.

Faults: ``Summarize`` with a real ``CallableModel`` raising, timing out and returning
invalid JSON; ``KeepMostRelevant`` with a scorer returning the wrong count (a
``CallableReranker`` behind ``RerankerScorer``) or NaN (``MyScorer``); the store
unreachable (Redis and SQLite); the Redis server killed (SIGKILL, by its pid) mid-run and
between runs; a provider overflow on ``CompressingModel``'s retry too. For each: the
caller's messages untouched, the outcome per ``on_step_error`` and ``if_still_too_long``,
the report naming what happened (no text), nothing half-written (no saved text the result
does not reference, no reference to a text that was not saved).

Load: 1,000 concurrent ``compress_for`` calls sharing one policy and one store (each
store), and ``compress_for_sync`` from 8 threads: every recall returns its own owner's text.

Bad input: see ``test_reliability_input.py``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _convo import calls, pairing_problems, result
from _redis_server import Server, private_server
from agent_adapter import CallableModel, Message, ModelOutputInvalid, ModelRequest, RunContext
from agent_adapter._errors import ConfigError, ModelContextOverflow, ModelError, ModelTimeout
from agent_adapter.context import (
    CompressingModel,
    CompressionPolicy,
    KeepMostRelevant,
    MemoryStore,
    MyOwnStep,
    MyScorer,
    RemoveOldMessages,
    RerankerScorer,
    ShrinkToolResults,
    StepFailure,
    Summarize,
    compress,
    compress_for,
    compress_for_sync,
    recall_tool,
)
from agent_adapter.context._reranker import CallableReranker
from agent_adapter.context._stores import RedisStore, SQLiteStore, StoreError

RECALL = re.compile(r"recall_context\(id='([0-9a-f]+)'\)")
SECRET = "SECRET-OUTPUT"


def _conversation(owner: str = "o") -> list[Message]:
    """A coding-agent run: four rounds with big tool results (naming their owner), two
    similar notes for the scorer, then the newest question and answer."""
    msgs = [Message("user", f"task of {owner}")]
    for i in range(4):
        msgs += [
            calls(f"{owner}-c{i}", text=f"step {i}: looking at the build output again"),
            result(f"{owner}-c{i}", f"{SECRET} {owner} #{i}\n" + f"{owner} line {i}\n" * 300),
            Message("assistant", f"note {i}: the build still fails in module {i}"),
        ]
    return [*msgs, Message("user", "and now?"), Message("assistant", "done")]


def _shrink(store: Any) -> ShrinkToolResults:
    return ShrinkToolResults(bigger_than_tokens=100, older_than_turns=1, save_to=store)


def _policy(*steps: Any, **kw: Any) -> CompressionPolicy:
    kw.setdefault("target_tokens", 400)
    return CompressionPolicy(steps=list(steps), recent_turns=0, **kw)


def _saved_ids(store: Any) -> set[str]:
    if isinstance(store, MemoryStore):
        return {k[1] for k in store._data}
    import sqlite3

    try:
        with sqlite3.connect(f"file:{store.path}?mode=ro", uri=True) as conn:
            return {r[0] for r in conn.execute("SELECT id FROM tool_results")}
    except sqlite3.OperationalError:  # never created: nothing saved
        return set()


def _referenced(out: list[Any]) -> set[str]:
    return set(RECALL.findall(json.dumps([m.text for m in out])))


# --------------------------------------------------------------------------------------------
# the faulty parts: the real steps (Summarize, KeepMostRelevant) with real CallableModel /
# CallableReranker ports around failing functions


def _raises(request: ModelRequest) -> str:
    raise RuntimeError(f"provider down ({SECRET})")


async def _hangs(request: ModelRequest) -> str:
    await asyncio.sleep(30)
    return "{}"


def _not_json(request: ModelRequest) -> str:
    return "Sure! Here is the summary: the build fails."


def _summarizer(reply: Callable[[ModelRequest], Any], *, timeout_s: float | None = None) -> Any:
    model = CallableModel(reply, provider="local", model="summarizer", timeout_s=timeout_s)
    return Summarize(model=model, keep_recent_messages=2)


def _relevance(scorer: Any) -> KeepMostRelevant:
    return KeepMostRelevant(scorer=scorer, keep_count=1)


@dataclass
class Fault:
    name: str
    step: Callable[[], Any]  # the failing step
    error: type[BaseException] | None  # what on_step_error="raise" raises (None: goes on)
    failure: StepFailure | None  # what "skip" records (None: nothing failed)


FAULTS = [
    Fault(
        "summarizer raises",
        lambda: _summarizer(_raises),
        ModelError,
        StepFailure("summarize", "ModelError"),
    ),
    Fault(
        "summarizer times out",
        lambda: _summarizer(_hangs, timeout_s=0.05),
        ModelTimeout,
        StepFailure("summarize", "ModelTimeout"),
    ),
    # the spec: an invalid reply only skips the step (it runs and changes nothing)
    Fault("summarizer returns invalid JSON", lambda: _summarizer(_not_json), None, None),
    Fault(
        "scorer returns the wrong count",
        lambda: _relevance(RerankerScorer(CallableReranker(lambda q, texts: [0.5]))),
        ModelOutputInvalid,
        StepFailure("keep_most_relevant", "ModelOutputInvalid"),
    ),
    Fault(
        "scorer returns NaN",
        lambda: _relevance(MyScorer(lambda q, texts: [float("nan")] * len(texts))),
        ConfigError,
        StepFailure("keep_most_relevant", "ConfigError"),
    ),
]


@pytest.fixture
def memory_store() -> MemoryStore:
    return MemoryStore()


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
async def test_a_failing_model_step_is_skipped_and_reported(
    fault: Fault, memory_store: MemoryStore
) -> None:
    msgs = _conversation()
    snapshot = copy.deepcopy(msgs)
    step = fault.step()
    steps = [_shrink(memory_store), step, RemoveOldMessages(keep_first=1, keep_last=2)]
    out, report = await compress(msgs, _policy(*steps))
    assert msgs == snapshot  # the caller's messages untouched
    ran = [s.step for s in report.steps]
    if fault.failure is None:
        assert report.failures == () and ran == [
            "shrink_tool_results",
            step.name,
            "remove_old_messages",
        ]
        assert report.steps[1].tokens_saved == 0  # the step ran and changed nothing
    else:
        assert report.failures == (fault.failure,)
        assert ran == ["shrink_tool_results", "remove_old_messages"]
    assert report.reached_target and pairing_problems(out) == []
    assert _saved_ids(memory_store) == _referenced(out)  # only what the result names
    assert SECRET not in repr(report) and SECRET not in report.explain()


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
async def test_a_failing_model_step_raises_and_writes_nothing(
    fault: Fault, memory_store: MemoryStore
) -> None:
    msgs = _conversation()
    snapshot = copy.deepcopy(msgs)
    steps = [_shrink(memory_store), fault.step(), RemoveOldMessages()]
    policy = _policy(*steps, on_step_error="raise")
    if fault.error is None:
        out, report = await compress(msgs, policy)
        assert report.failures == () and _saved_ids(memory_store) == _referenced(out)
    else:
        with pytest.raises(fault.error):
            await compress(msgs, policy)
        assert len(memory_store) == 0  # the results shrunk before the failure: never written
    assert msgs == snapshot


async def test_an_overflow_on_the_retry_too(memory_store: MemoryStore) -> None:
    """The provider rejects the compressed request and the smaller retry: the second
    overflow propagates; both requests were compressed, and what was saved is what they
    referenced; the caller's messages are untouched; the compression events say so."""
    sent: list[list[Message]] = []

    def too_long(request: ModelRequest) -> str:
        sent.append(list(request.messages))
        raise ModelContextOverflow("prompt is too long", tokens=10**6, limit=100)

    policy = CompressionPolicy(
        threshold_tokens=1_500,
        target_tokens=1_200,
        steps=[_shrink(memory_store), RemoveOldMessages(keep_first=1, keep_last=6)],
    )
    model = CompressingModel(CallableModel(too_long), policy)
    ctx = RunContext(thread_id="t")
    reports: list[Any] = []
    ctx.subscribe(lambda e: reports.append(e.data["report"]), names={"compression"})
    msgs = _conversation()
    snapshot = copy.deepcopy(msgs)
    with pytest.raises(ModelContextOverflow):
        await model.generate(ModelRequest(messages=msgs, ctx=ctx))
    assert msgs == snapshot and len(sent) == 2
    assert len(reports) == 2
    first, retry = sorted(reports, key=lambda r: -r.tokens_before)
    assert retry.tokens_after < first.tokens_after and retry.failures == first.failures == ()
    assert len(sent[1]) <= len(sent[0])
    assert _saved_ids(memory_store) == _referenced(sent[0]) | _referenced(sent[1])
    for m in msgs:
        assert "recall_context" not in m.text


@pytest.mark.parametrize("still", ["raise", "cut", "keep"])
async def test_faults_and_if_still_too_long(still: str, memory_store: MemoryStore) -> None:
    msgs = _conversation()
    snapshot = copy.deepcopy(msgs)
    # the failing summarizer was the only step that could have reached a tiny target
    steps = [_shrink(memory_store), _summarizer(_raises)]
    policy = _policy(*steps, target_tokens=60, if_still_too_long=still)
    if still == "raise":
        with pytest.raises(ModelContextOverflow):
            await compress(msgs, policy)
        assert len(memory_store) == 0
    else:
        out, report = await compress(msgs, policy)
        assert report.failures == (StepFailure("summarize", "ModelError"),)
        assert report.if_still_too_long == still and pairing_problems(out) == []
        assert _saved_ids(memory_store) == _referenced(out)
        if still == "cut":
            assert report.tokens_after < report.tokens_before
    assert msgs == snapshot


# --------------------------------------------------------------------------------------------
# the store failing


def _dead_redis_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"redis://127.0.0.1:{s.getsockname()[1]}/0"


@pytest.fixture(params=["redis unreachable", "sqlite unreachable"])
async def dead_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "redis unreachable":
        store = RedisStore(_dead_redis_url(), timeout_s=1)
        yield store
        await store.aclose()
    else:
        yield SQLiteStore(tmp_path / "missing folder" / "results.sqlite3")


async def test_store_unreachable_skip_drops_the_recall_notes(dead_store: Any) -> None:
    msgs = _conversation()
    snapshot = copy.deepcopy(msgs)
    steps = [_shrink(dead_store), RemoveOldMessages(keep_first=1, keep_last=6)]
    out, report = await compress(msgs, _policy(*steps))
    assert msgs == snapshot
    assert report.failures == (StepFailure("shrink_tool_results", "StoreError"),)
    assert _referenced(out) == set()  # no result names a text that was not saved
    # a skipped step changed nothing: the results kept are the caller's own messages
    assert all(any(m is o for o in msgs) for m in out if m.role == "tool")
    assert pairing_problems(out) == []


async def test_store_unreachable_raise(dead_store: Any) -> None:
    msgs = _conversation()
    snapshot = copy.deepcopy(msgs)
    with pytest.raises(StoreError):
        await compress(msgs, _policy(_shrink(dead_store), on_step_error="raise"))
    assert msgs == snapshot


def _killer(server: Server) -> MyOwnStep:
    def kill(ms: list[Message]) -> list[Message]:
        server.kill()  # SIGKILL to redis-server's pid, between the staging and the commit
        return ms

    return MyOwnStep(fn=kill)


@pytest.mark.parametrize("on_step_error", ["skip", "raise"])
async def test_redis_killed_mid_run(on_step_error: str) -> None:
    with private_server() as server:
        store = RedisStore(server.url, timeout_s=1)
        try:
            assert await store.load("s", "0" * 32) is None  # connected before the kill
            msgs = _conversation()
            snapshot = copy.deepcopy(msgs)
            steps = [_shrink(store), _killer(server), RemoveOldMessages(keep_first=1, keep_last=6)]
            policy = _policy(*steps, on_step_error=on_step_error)
            if on_step_error == "raise":
                with pytest.raises(StoreError):
                    await compress(msgs, policy)
            else:
                out, report = await compress(msgs, policy)
                assert report.failures == (StepFailure("shrink_tool_results", "StoreError"),)
                assert _referenced(out) == set() and pairing_problems(out) == []
                answer = await recall_tool(store)({"id": "0" * 32}, None)
                assert "try again" in answer  # the recall tool says so too
            assert msgs == snapshot
        finally:
            await store.aclose()


async def test_redis_killed_between_compressions(redis_url: str) -> None:
    """Runs before the kill keep recalls that work until then; runs after it are
    consistent: either their notes were written or they carry none."""
    with private_server() as server:
        store = RedisStore(server.url, timeout_s=1)
        try:
            policy = _policy(_shrink(store), RemoveOldMessages(keep_first=1, keep_last=6))
            outs = []
            for i in range(6):
                if i == 3:
                    server.kill()
                ctx = RunContext(thread_id=f"t{i}")
                outs.append(await compress(_conversation(f"o{i}"), policy, ctx=ctx))
            for i, (out, report) in enumerate(outs):
                if i < 3:
                    assert report.failures == () and _referenced(out)
                else:
                    assert report.failures == (StepFailure("shrink_tool_results", "StoreError"),)
                    assert _referenced(out) == set()
        finally:
            await store.aclose()


# --------------------------------------------------------------------------------------------
# load


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def shared_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        with SQLiteStore(tmp_path / "shared.sqlite3") as store:
            yield store
    else:
        url = request.getfixturevalue("redis_url")
        # one event loop runs 1,000 CPU-bound compressions: a reply can wait for the loop
        # far longer than for Redis, so the timeouts are generous (the pool still waits)
        store = RedisStore(
            url,
            prefix=f"load:{uuid.uuid4().hex}:",
            max_connections=8,
            timeout_s=120,
            pool_timeout_s=300,
        )
        yield store
        await store.aclose()


def _chat(owner: str) -> list[dict[str, Any]]:
    """The conversation as OpenAI chat dicts (compress_for converts it)."""
    out: list[dict[str, Any]] = []
    for m in _conversation(owner):
        d: dict[str, Any] = {"role": m.role, "content": m.text}
        if m.tool_calls:
            d["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": "{}"}}
                for c in m.tool_calls
            ]
        if m.tool_call_id:
            d["tool_call_id"] = m.tool_call_id
        out.append(d)
    return out


async def _check_owners(store: Any, runs: dict[str, tuple[list[Any], Any]]) -> None:
    """Every recall returns its own owner's text; another owner gets "not found"."""
    tool = recall_tool(store)
    shapes = set()
    owners = sorted(runs)
    for n, owner in enumerate(owners):
        out, report = runs[owner]
        shapes.add((report.messages_after, report.messages_changed, len(report.failures)))
        ids = RECALL.findall(json.dumps(out))
        assert ids, (owner, report.failures)
        for id_ in ids:
            text = await tool({"id": id_}, RunContext(thread_id=owner))
            assert text.startswith(f"{SECRET} {owner} #") and f"{owner} line" in text
            other = owners[(n + 1) % len(owners)]
            assert (await tool({"id": id_}, RunContext(thread_id=other))).startswith("No saved")
    assert len(shapes) == 1  # no state leaks between runs: every run did the same


async def test_1000_concurrent_compressions_share_one_policy_and_store(shared_store: Any) -> None:
    policy = _policy(_shrink(shared_store), RemoveOldMessages(keep_first=1, keep_last=6))
    owners = [f"owner{i:04d}" for i in range(1000)]
    inputs = {o: _chat(o) for o in owners}
    snapshot = copy.deepcopy(inputs)
    outs = await asyncio.gather(
        *(compress_for(inputs[o], policy, ctx=RunContext(thread_id=o)) for o in owners)
    )
    assert inputs == snapshot
    await _check_owners(shared_store, dict(zip(owners, outs, strict=True)))


async def test_compress_for_sync_from_8_threads(shared_store: Any) -> None:
    policy = _policy(_shrink(shared_store), RemoveOldMessages(keep_first=1, keep_last=6))
    runs: dict[str, tuple[list[Any], Any]] = {}
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for j in range(25):
                owner = f"thread{t}-run{j}"
                runs[owner] = compress_for_sync(
                    _chat(owner), policy, ctx=RunContext(thread_id=owner)
                )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(runs) == 200
    await _check_owners(shared_store, runs)
