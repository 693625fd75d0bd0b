"""The steady state: counts of messages already seen are reused across calls, by identity,
without keeping the messages alive; a grown conversation is counted only for its new part."""

from __future__ import annotations

import gc
import random
import weakref
from typing import Any

from agent_adapter import CallableModel, Message, ModelRequest
from agent_adapter.context import (
    CompressingModel,
    CompressionPolicy,
    TokenMeter,
    compress_for,
    estimate_tokens,
)
from agent_adapter.testing import ProviderServer, Reply


class CountingCounter:
    """chars/4 that records how many messages it was asked to count."""

    def __init__(self) -> None:
        self.counted = 0

    def __call__(self, messages: list[Message]) -> int:
        self.counted += len(messages)
        return estimate_tokens(messages)


def _round(i: int) -> list[Message]:
    return [Message("assistant", f"thinking about step {i}"), Message("user", f"result {i}")]


async def test_a_grown_conversation_is_counted_only_for_its_new_messages() -> None:
    counter = CountingCounter()
    policy = CompressionPolicy(threshold_tokens=10**6, token_counter=counter)
    model = CompressingModel(CallableModel(lambda r: "ok"), policy)
    messages = [Message("system", "be brief"), Message("user", "go")]
    await model.generate(ModelRequest(messages=messages))
    assert counter.counted == 2
    for i in range(20):
        messages = [*messages, *_round(i)]
        await model.generate(ModelRequest(messages=messages))
        assert counter.counted == 2 + 2 * (i + 1)  # only the new round each time


async def test_compress_for_reuses_counts_across_calls() -> None:
    counter = CountingCounter()
    policy = CompressionPolicy(threshold_tokens=10**6, token_counter=counter)
    messages = [Message("user", "go")]
    await compress_for(messages, policy)
    for i in range(5):
        messages = [*messages, *_round(i)]
        out, report = await compress_for(messages, policy)
        assert out is messages and report.skipped == "under_threshold"
    assert counter.counted == 1 + 2 * 5


def test_counted_messages_are_not_kept_alive() -> None:
    meter = TokenMeter()
    message = Message("user", "temporary " * 50)
    assert meter.total([Message("system", "s"), message]) > 0
    assert meter.known(message)
    ref = weakref.ref(message)
    del message
    gc.collect()
    assert ref() is None


def test_a_dead_messages_id_never_finds_its_count() -> None:
    counter = CountingCounter()
    meter = TokenMeter(counter)
    for size in range(1, 200):
        # the same address is reused by the next message of another size
        assert meter.of(Message("user", "x" * size)) == estimate_tokens(
            [Message("user", "x" * size)]
        )
    assert counter.counted == 199


def test_meters_of_one_counter_share_counts_and_others_do_not() -> None:
    first, second = CountingCounter(), CountingCounter()
    messages = [Message("user", "a"), Message("assistant", "b")]
    TokenMeter(first).total(messages)
    TokenMeter(first).total(messages)
    TokenMeter(second).total(messages)
    assert (first.counted, second.counted) == (2, 2)


def test_totals_stay_exact_as_lists_grow_shrink_and_change() -> None:
    # the prefix shortcut must never return another list's total
    # gc.freeze(): what the process held before is not this test's, so each collection below
    # scans only the objects made here (a full collection over an xdist worker's heap took
    # seconds, 60 of them minutes); what dies here is collected exactly as before
    gc.freeze()
    try:
        _grow_shrink_and_change()
    finally:
        gc.unfreeze()


def _grow_shrink_and_change() -> None:
    rng = random.Random(7)
    meter = TokenMeter()
    pool = [Message("user", "m" * rng.randrange(1, 400)) for _ in range(40)]
    current: list[Message] = []
    for step in range(400):
        action = rng.random()
        if action < 0.5 or not current:
            current = [*current, rng.choice(pool)]
        elif action < 0.7:
            current = current[: rng.randrange(len(current))]
        elif action < 0.85:
            i = rng.randrange(len(current))
            current = [*current[:i], Message("user", f"new {step}"), *current[i + 1 :]]
        else:
            pool[rng.randrange(len(pool))] = Message("assistant", "r" * rng.randrange(1, 300))
            gc.collect()  # the replaced ones die; their ids may come back
        assert meter.total(current) == estimate_tokens(current)


async def test_tool_schemas_count_once_a_request_not_as_a_ratio() -> None:
    """Regression: with 20 tools (~12k tokens of schemas) and one short message, the
    provider's count over the counter's (12,331 / 17) drove the ratio to its clamp of 8, and
    a history whose whole request was ~30k tokens (under the 40k threshold) was cut to ~10k."""
    from agent_adapter import FunctionTool
    from agent_adapter.context import tiktoken_counter
    from agent_adapter.providers import OpenAIChatModel

    async def fn(args: dict[str, Any], ctx: Any = None) -> str:
        return "ok"

    described = "a detailed explanation of what it does " * 3
    tools = [
        FunctionTool(
            name=f"tool_{i}",
            description=f"Tool number {i}. " * 10,
            parameters={
                "type": "object",
                "properties": {
                    f"field_{j}": {"type": "string", "description": f"Option {j}: {described}"}
                    for j in range(12)
                },
            },
            fn=fn,
        )
        for i in range(20)
    ]
    counter = tiktoken_counter("o200k_base")
    policy = CompressionPolicy(threshold_tokens=40_000, target_tokens=30_000, token_counter=counter)
    history = [Message("system", "You are an agent."), Message("user", "Start the task.")]
    with ProviderServer([Reply(text=f"step {i}", input_tokens=None) for i in range(3)]) as server:
        model = CompressingModel(
            OpenAIChatModel("gpt-4o", base_url=server.openai_url, api_key="t", max_retries=0),
            policy,
        )
        for i in range(3):
            response = await model.generate(ModelRequest(messages=history, tools=tools))
            body = server.requests[-1].body
            assert isinstance(body, dict) and len(body["messages"]) == len(history)
            history = [*history, Message("assistant", response.text)]
            history.append(Message("user", f"log line with details {i} " * 1500))
    assert response.usage.input_tokens is not None and 28_000 < response.usage.input_tokens < 40_000
    assert 0.8 < model.ratio < 1.25
