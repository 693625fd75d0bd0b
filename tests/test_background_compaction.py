"""Compaction prepared in the background (issue 35, item 2): started at ``prepare_at`` of the
threshold on a snapshot, swapped in for exactly the snapshot's prefix at the threshold, a
snapshot the conversation no longer extends (or whose tail grew past the bound) discarded and
never sent, nothing summarized twice. Behaviour only, by events and counters (timings are
``bench/background.py``'s)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agent_adapter import CallableModel, ConfigError, Message, ModelRequest, RunContext, ToolCall
from agent_adapter.context import (
    CompactionStates,
    Compactor,
    CompressingModel,
    CompressionPolicy,
    Summarize,
)

PREPARED = "Summary written in the background for this test"
SUMMARY = json.dumps({"task": PREPARED, "open_tasks": ["run pytest"]})


class Summarizer:
    """A summarizer model that counts its calls and may be held until released."""

    def __init__(self) -> None:
        self.calls = 0
        self.release = asyncio.Event()
        self.release.set()
        self.model = CallableModel(self._reply)

    async def _reply(self, request: ModelRequest) -> str:
        self.calls += 1
        await self.release.wait()
        return SUMMARY


class Events:
    """The run context's ``compaction.*`` events, and a way to wait for one."""

    def __init__(self) -> None:
        self.ctx = RunContext()
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self._ready = asyncio.Event()
        self.ctx.subscribe(self._on)

    def _on(self, event: Any) -> None:
        if event.name.startswith("compaction."):
            self.seen.append((event.name.removeprefix("compaction."), dict(event.data)))
            if event.name == "compaction.ready":
                self._ready.set()

    def names(self) -> list[str]:
        return [name for name, _ in self.seen]

    async def ready(self) -> None:
        await asyncio.wait_for(self._ready.wait(), 10)
        self._ready.clear()


def _round(i: int, lines: int = 20) -> list[Message]:
    call = ToolCall(f"c{i}", "bash", json.dumps({"cmd": f"cat src/f{i}.py"}))
    body = f"# src/f{i}.py\n" + f"def f{i}(x):\n    return x + {i}\n" * lines
    return [
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", body, tool_call_id=call.id),
    ]


def _history(rounds: int) -> list[Message]:
    out = [Message("system", "You are a coding agent."), Message("user", "Fix the tests")]
    for i in range(rounds):
        out += _round(i)
    return out


def _policy(summarizer: Summarizer) -> CompressionPolicy:
    step = Summarize(model=summarizer.model, keep_recent_messages=4)
    return CompressionPolicy(
        threshold_tokens=4000, target_tokens=3000, model_max_tokens=100_000, steps=[step]
    )


async def _grow_to_prepare(compactor: Compactor, events: Events) -> list[Message]:
    """Rounds appended call by call until a compaction starts in the background."""
    history = _history(1)
    for i in range(1, 200):
        await compactor.compress(history, ctx=events.ctx)
        if "prepare" in events.names():
            return history
        history = [*history, *_round(i)]
    raise AssertionError("no compaction was prepared")


async def test_the_prepared_compaction_replaces_exactly_the_snapshot() -> None:
    summarizer, events = Summarizer(), Events()
    compactor = Compactor(_policy(summarizer))
    snapshot = await _grow_to_prepare(compactor, events)
    (_, started), *_ = [e for e in events.seen if e[0] == "prepare"]
    assert started["messages"] == len(snapshot)
    assert 0.8 * 4000 <= started["tokens"] < 4000
    await events.ready()
    history = list(snapshot)
    i = len(snapshot)
    while True:  # the conversation goes on appending until it crosses the threshold
        history += _round(i)
        i += 1
        out, report = await compactor.compress(history, ctx=events.ctx)
        if out is not history and out != history:
            break
        assert report.skipped == "under_threshold"
    assert events.names()[-1] == "swap" and summarizer.calls == 1
    tail = history[len(snapshot) :]
    assert out[len(out) - len(tail) :] == tail
    assert all(a is b for a, b in zip(out[len(out) - len(tail) :], tail, strict=True))
    head = out[: len(out) - len(tail)]
    assert sum(PREPARED in m.text for m in head) == 1  # the prepared summary, once
    kept = [m for m in head if PREPARED not in m.text]
    positions = [next(k for k, s in enumerate(snapshot) if s is m) for m in kept]
    assert positions == sorted(positions)  # the snapshot's kept messages, in order
    assert report.tokens_after <= report.threshold_tokens
    # compact once, then append: the next calls send that request plus the new round, and
    # nothing is summarized again until the next threshold
    history += _round(i)
    again, _ = await compactor.compress(history, ctx=events.ctx)
    assert again[: len(out)] == out and summarizer.calls == 1


async def test_not_ready_at_the_threshold_the_request_goes_as_it_is_then_swaps() -> None:
    summarizer, events = Summarizer(), Events()
    summarizer.release.clear()  # the summary takes as long as the test wants
    compactor = Compactor(_policy(summarizer))
    history = await _grow_to_prepare(compactor, events)
    i = len(history)
    reports = []
    for _ in range(60):
        history = [*history, *_round(i, lines=6)]
        i += 1
        out, report = await compactor.compress(history, ctx=events.ctx)
        reports.append(report.skipped)
        if report.skipped == "preparing":
            assert out == history  # over the threshold, under the window: as it is
            break
    assert "preparing" in reports
    summarizer.release.set()
    await events.ready()
    history = [*history, *_round(i, lines=6)]
    out, report = await compactor.compress(history, ctx=events.ctx)
    assert events.names()[-1] == "swap" and not report.skipped
    assert sum(PREPARED in m.text for m in out) == 1 and summarizer.calls == 1


async def test_a_snapshot_the_conversation_no_longer_extends_is_discarded() -> None:
    summarizer, events = Summarizer(), Events()
    compactor = Compactor(_policy(summarizer), conversation="chat-1")
    snapshot = await _grow_to_prepare(compactor, events)
    await events.ready()
    # the conversation was edited: an earlier message is another object now
    edited = [snapshot[0], Message("user", "Fix the tests, please"), *snapshot[2:]]
    edited += _round(900, lines=200)
    out, _ = await compactor.compress(edited, ctx=events.ctx)
    assert ("discard", {"reason": "diverged", "messages": len(snapshot)}) in events.seen
    assert "swap" not in events.names()
    # never sent: the request holds a summary of its own, made now (a second call)
    assert summarizer.calls == 2 and sum(PREPARED in m.text for m in out) == 1


async def test_a_tail_grown_past_the_bound_is_discarded() -> None:
    summarizer, events = Summarizer(), Events()
    compactor = Compactor(_policy(summarizer))
    snapshot = await _grow_to_prepare(compactor, events)
    await events.ready()
    # a tail so long that the swap would leave the request over the threshold
    grown = [*snapshot, *_round(901, lines=600)]
    await compactor.compress(grown, ctx=events.ctx)
    assert ("discard", {"reason": "tail", "messages": len(snapshot)}) in events.seen
    # compacted now instead (a call of its own, at least), the prepared one never sent
    assert "swap" not in events.names() and summarizer.calls >= 2


async def test_compressing_model_prepares_too_and_sync_faces_do_not() -> None:
    summarizer, events = Summarizer(), Events()

    def reply(request: ModelRequest) -> str:
        return "ok"

    model = CompressingModel(CallableModel(reply), _policy(summarizer))
    history = _history(1)
    for i in range(1, 60):
        history += _round(i)
        await model.generate(ModelRequest(messages=list(history), ctx=events.ctx))
        if events.names() == ["prepare"]:
            await events.ready()
        if "swap" in events.names():
            break
    assert events.names()[:3] == ["prepare", "ready", "swap"] and summarizer.calls == 1

    sync_events = Events()
    compactor = Compactor(_policy(summarizer), states=CompactionStates())
    history = _history(1)
    for i in range(1, 40):
        history += _round(i)
        await asyncio.to_thread(compactor.compress_sync, history, ctx=sync_events.ctx)
    assert "prepare" not in sync_events.names()
    off = Compactor(_policy(summarizer), states=CompactionStates(prepare_at=None))
    history = _history(30)
    await off.compress(history, ctx=sync_events.ctx)
    assert "prepare" not in sync_events.names()


def test_prepare_at_is_a_share_of_the_threshold() -> None:
    assert CompactionStates().prepare_at == 0.8
    for bad in (0, 1, 1.5, True, "0.8"):
        with pytest.raises(ConfigError, match="prepare_at"):
            CompactionStates(prepare_at=bad)  # type: ignore[arg-type]
