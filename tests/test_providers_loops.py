"""A provider used from several event loops: one ``asyncio.run`` after another (as
``compress_for_sync`` does on every call), and from threads, each with its own loop.

Regression: the SDKs' async clients keep pooled connections tied to the loop that opened
them, so the second ``asyncio.run`` failed ("Event loop is closed" from the openai SDK, a
connection error from anthropic's), and a sync summarizer failed on every call but the first.
"""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from _provider_cases import KINDS, build, request, server, srv
from agent_adapter import ToolCall
from agent_adapter.context import (
    CompressionPolicy,
    ContextSummary,
    Summarize,
    compress_for_sync,
)
from agent_adapter.testing import ProviderServer, Reply

__all__ = ["server", "srv"]


@pytest.mark.parametrize("kind", KINDS)
def test_one_model_serves_one_asyncio_run_after_another(
    kind: str, srv: ProviderServer, caplog: pytest.LogCaptureFixture
) -> None:
    srv.add(*[Reply(text=f"reply {i}") for i in range(3)])
    model = build(kind, srv)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        texts = [asyncio.run(model.generate(request())).message.text for _ in range(3)]
        asyncio.run(model.aclose())
    assert texts == ["reply 0", "reply 1", "reply 2"]
    # each loop's client was closed inside its own loop: no finalizer failed in a later one
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


@pytest.mark.parametrize("kind", KINDS)
def test_one_model_serves_threads_each_with_its_own_loop(kind: str, srv: ProviderServer) -> None:
    srv.add(*[Reply(text="ok") for _ in range(8)])
    model = build(kind, srv)

    def call(_: int) -> str:
        return asyncio.run(model.generate(request())).message.text

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(call, range(8))) == ["ok"] * 8


@pytest.mark.parametrize("kind", KINDS)
def test_a_closed_model_opens_a_new_client_in_the_next_loop(kind: str, srv: ProviderServer) -> None:
    srv.add(Reply(text="one"), Reply(text="two"))
    model = build(kind, srv)

    async def once() -> str:
        try:
            return (await model.generate(request())).message.text
        finally:
            await model.aclose()

    assert [asyncio.run(once()), asyncio.run(once())] == ["one", "two"]


def _history() -> list[dict[str, object]]:
    out: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix issue #42 in src/app.py."},
    ]
    for i in range(6):
        call = ToolCall(f"call_{i}", "Read", json.dumps({"file_path": f"src/m{i}.py"}))
        out.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": call.arguments}},
        ]})  # fmt: skip
        out.append({"role": "tool", "tool_call_id": call.id, "content": "x = 1\n" * 300})
    out.append({"role": "user", "content": "Now write the fix."})
    return out


def test_compress_for_sync_summarizes_on_every_call(srv: ProviderServer) -> None:
    """The sync entry point runs each call in a loop of its own: the summarizer's client
    must work in the second and third, not only the first."""
    reply = ContextSummary(task="Fix issue #42 in src/app.py.").model_dump_json()
    srv.add(*[Reply(text=reply) for _ in range(3)])
    model = build("chat", srv)
    step = Summarize(model=model, keep_recent_messages=1)
    policy = CompressionPolicy(target_tokens=400, steps=[step], recent_turns=0)
    for _ in range(3):  # no compaction state: the same history is compressed each time
        out, report = compress_for_sync(_history(), policy, format="openai", states=False)
        assert report.failures == () and report.summary_probes > 0
        assert str(out[1]["content"]).startswith("[Summary of the earlier conversation")
    assert len(srv.requests) == 3
