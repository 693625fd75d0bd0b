"""CallableModel and CallableReranker: functions as ports, their errors, ledger and events."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_adapter import (
    CallableModel,
    ConfigError,
    Event,
    LLMPort,
    Message,
    ModelContextOverflow,
    ModelError,
    ModelOutputInvalid,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    Price,
    PriceTable,
    RunContext,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolUsageError,
    Usage,
    UsageEvent,
)
from agent_adapter.context import CallableReranker, RerankerPort, RerankResult


def _request(text: str = "hello", ctx: Any = None, **kw: Any) -> ModelRequest:
    return ModelRequest(messages=[Message("user", text)], ctx=ctx, **kw)


def _priced_ctx() -> RunContext:
    return RunContext(
        prices=PriceTable({"acme:m1": Price(1.0, 2.0), "acme:rr": Price(0.0, per_unit=0.5)})
    )


async def test_sync_and_async_functions_reply() -> None:
    seen_threads: list[int] = []

    def sync_fn(request: ModelRequest) -> str:
        seen_threads.append(threading.get_ident())
        return "sync:" + request.messages[-1].text

    async def async_fn(request: ModelRequest) -> Message:
        return Message("assistant", "async:" + request.messages[-1].text)

    sync_model, async_model = CallableModel(sync_fn), CallableModel(async_fn)
    assert isinstance(sync_model, LLMPort)
    assert (await sync_model.generate(_request())).text == "sync:hello"
    assert seen_threads and seen_threads[0] != threading.get_ident()  # a worker thread
    reply = await async_model.generate(_request())
    assert reply.text == "async:hello" and reply.finish_reason == "stop"
    assert reply.provider == "callable" and reply.model == "function"
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0


async def test_context_variables_reach_a_sync_function() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("caller")
    model = CallableModel(lambda request: var.get())
    assert (await model.generate(_request())).text == "caller"


async def test_ledger_entry_cost_and_events_per_call() -> None:
    ctx = _priced_ctx()
    events: list[Event] = []
    ctx.subscribe(events.append)

    def fn(request: ModelRequest) -> ModelResponse:
        return ModelResponse(
            message=Message("assistant", "ok"),
            usage=Usage(input_tokens=1_000_000, output_tokens=500_000),
        )

    model = CallableModel(fn, provider="acme", model="m1")
    reply = await model.generate(_request(ctx=ctx, stage="summary"))
    assert reply.cost_usd == pytest.approx(2.0)
    (entry,) = ctx.ledger.entries
    assert (entry.provider, entry.model, entry.stage) == ("acme", "m1", "summary")
    assert entry.cost_usd == pytest.approx(2.0) and entry.seconds >= 0
    assert entry.run_id == ctx.run_id
    assert [e.name for e in events] == ["model.request", "model.response"]
    assert events[1].data["usage"] == reply.usage


async def test_adapter_errors_pass_and_others_become_model_error() -> None:
    ctx = RunContext()
    events: list[Event] = []
    ctx.subscribe(events.append)

    def overflow(request: ModelRequest) -> str:
        raise ModelContextOverflow("too long", tokens=10, limit=5)

    def broken(request: ModelRequest) -> str:
        raise KeyError("boom")

    with pytest.raises(ModelContextOverflow) as info:
        await CallableModel(overflow).generate(_request(ctx=ctx))
    assert info.value.tokens == 10
    with pytest.raises(ModelError) as err:
        await CallableModel(broken).generate(_request(ctx=ctx))
    assert isinstance(err.value.__cause__, KeyError)
    assert "callable:function" in str(err.value)
    assert [e.data.get("error") for e in events if e.name == "model.error"] == [
        "ModelContextOverflow",
        "ModelError",
    ]
    assert len(ctx.ledger) == 0  # failed calls are not billed


async def test_timeout_abandons_a_slow_sync_function() -> None:
    release = threading.Event()

    def slow(request: ModelRequest) -> str:
        release.wait(5)
        return "late"

    model = CallableModel(slow, timeout_s=0.05)
    try:
        with pytest.raises(ModelTimeout, match=r"timeout_s=0\.05"):
            await model.generate(_request())
    finally:
        release.set()

    async def slow_async(request: ModelRequest) -> str:
        await asyncio.sleep(5)
        return "late"

    with pytest.raises(ModelTimeout):
        await CallableModel(slow_async, timeout_s=0.05).generate(_request())


async def test_bad_replies_are_model_output_invalid() -> None:
    with pytest.raises(ModelOutputInvalid, match="int"):
        await CallableModel(lambda r: 42).generate(_request())  # type: ignore[arg-type, return-value]
    with pytest.raises(ModelOutputInvalid, match="assistant"):
        await CallableModel(lambda r: Message("user", "x")).generate(_request())


def test_construction_errors() -> None:
    with pytest.raises(ToolUsageError, match="callable"):
        CallableModel("not a function")  # type: ignore[arg-type]
    for kwargs, needle in [
        ({"provider": ""}, "provider"),
        ({"model": 3}, "model"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": float("inf")}, "timeout_s"),
        ({"context_window": -1}, "context_window"),
    ]:
        with pytest.raises(ConfigError, match=needle):
            CallableModel(lambda r: "x", **kwargs)


async def test_generate_refuses_a_non_request() -> None:
    with pytest.raises(ToolUsageError, match="ModelRequest"):
        await CallableModel(lambda r: "x").generate([Message("user", "x")])  # type: ignore[arg-type]


async def test_stream_of_a_plain_function_ends_with_the_response() -> None:
    call = ToolCall("c1", "search", '{"q": "x"}')
    model = CallableModel(lambda r: Message("assistant", "looking", tool_calls=(call,)))
    ctx = RunContext()
    events = [e async for e in model.stream(_request(ctx=ctx))]
    kinds = [e.kind for e in events]
    assert kinds == ["text", "tool_call", "usage", "end"]
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.response.message.tool_calls == (call,)
    assert end.response.finish_reason == "tool_calls"
    assert len(ctx.ledger) == 1


async def test_stream_fn_chunks_are_assembled() -> None:
    async def chunks(request: ModelRequest) -> AsyncIterator[Any]:
        yield "Hel"
        yield TextDelta(text="lo")
        yield ToolCallDelta(index=0, id="c1", name="run", arguments='{"a"')
        yield ToolCallDelta(index=0, arguments=": 1}")
        yield UsageEvent(usage=Usage(input_tokens=7, output_tokens=3))

    model = CallableModel(lambda r: "unused", stream_fn=chunks)
    events = [e async for e in model.stream(_request())]
    end = events[-1]
    assert isinstance(end, StreamEnd)
    assert end.response.text == "Hello"
    assert end.response.message.tool_calls == (ToolCall("c1", "run", '{"a": 1}'),)
    assert end.response.usage == Usage(input_tokens=7, output_tokens=3)


async def test_stream_errors_after_the_first_event_propagate() -> None:
    def chunks(request: ModelRequest) -> Any:
        yield "partial"
        raise ModelContextOverflow("late overflow")

    model = CallableModel(lambda r: "unused", stream_fn=chunks)
    seen: list[Any] = []
    with pytest.raises(ModelContextOverflow):
        async for event in model.stream(_request()):
            seen.append(event)
    assert [e.kind for e in seen] == ["text"]


def test_cache_key_fields_name_the_function() -> None:
    def my_fn(request: ModelRequest) -> str:
        return ""

    key = CallableModel(my_fn, provider="p", model="m").cache_key_fields()
    assert key["provider"] == "p" and key["model"] == "m" and key["fn"].endswith("my_fn")


# ---- CallableReranker -------------------------------------------------------------------


async def test_reranker_scores_in_order_with_a_priced_entry() -> None:
    ctx = _priced_ctx()
    events: list[Event] = []
    ctx.subscribe(events.append)
    got: list[list[str]] = []

    def fn(query: str, texts: list[str]) -> list[float]:
        got.append(texts)
        texts.append("mutated")  # a copy: the caller's list stays as it was
        return [float(query in t) for t in texts[:-1]]

    reranker = CallableReranker(fn, provider="acme", model="rr")
    assert isinstance(reranker, RerankerPort)
    texts = ["a cat", "a dog", "cat food"]
    result = await reranker.rerank("cat", texts, ctx=ctx)
    assert result.scores == [1.0, 0.0, 1.0] and texts == ["a cat", "a dog", "cat food"]
    (entry,) = ctx.ledger.entries
    assert (entry.provider, entry.model, entry.stage) == ("acme", "rr", "rerank")
    assert entry.usage.units == 1 and entry.cost_usd == pytest.approx(0.5)
    assert [e.name for e in events] == ["rerank"]


async def test_reranker_accepts_results_with_usage_and_async_fns() -> None:
    async def fn(query: str, texts: list[str]) -> RerankResult:
        return RerankResult(scores=[0.5] * len(texts), usage=Usage(input_tokens=40))

    ctx = RunContext()
    result = await CallableReranker(fn).rerank("q", ["x", "y"], ctx=ctx)
    assert result.usage == Usage(input_tokens=40)
    mapping = CallableReranker(lambda q, t: {"scores": [1] * len(t), "usage": {"units": 2}})
    assert (await mapping.rerank("q", ["x"])).usage == Usage(units=2)


async def test_reranker_makes_no_call_for_no_texts() -> None:
    calls: list[int] = []
    ctx = RunContext()
    reranker = CallableReranker(lambda q, t: calls.append(1) or [])
    assert (await reranker.rerank("q", [], ctx=ctx)).scores == []
    assert calls == [] and len(ctx.ledger) == 0


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        ([1.0], "1 scores for 2 texts"),
        ([1.0, float("nan")], r"non-finite .* \[1\]"),
        ([1.0, "x"], r"\[1\]"),
        ("12", "not a list"),
        ({"scores": [1, 1], "usage": {"input_tokens": -1}}, "bad usage"),
        ({"scores": [1, 1], "usage": "lots"}, "usage of type str"),
        ({"values": [1, 1]}, "without 'scores'"),
    ],
)
async def test_reranker_bad_output_is_model_output_invalid(reply: Any, needle: str) -> None:
    with pytest.raises(ModelOutputInvalid, match=needle):
        await CallableReranker(lambda q, t: reply).rerank("q", ["a", "b"])


async def test_reranker_errors_and_timeouts() -> None:
    def broken(q: str, t: list[str]) -> list[float]:
        raise ZeroDivisionError("bad")

    with pytest.raises(ModelError) as info:
        await CallableReranker(broken).rerank("q", ["a"])
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert not isinstance(info.value, ModelOutputInvalid | ModelTimeout)

    def slow(q: str, t: list[str]) -> list[float]:
        time.sleep(0.5)
        return [1.0]

    with pytest.raises(ModelTimeout):
        await CallableReranker(slow, timeout_s=0.02).rerank("q", ["a"])


async def test_reranker_bad_arguments_are_tool_usage_errors() -> None:
    reranker = CallableReranker(lambda q, t: [1.0] * len(t))
    with pytest.raises(ToolUsageError, match="query"):
        await reranker.rerank(3, ["a"])  # type: ignore[arg-type]
    with pytest.raises(ToolUsageError, match="texts"):
        await reranker.rerank("q", "abc")
    with pytest.raises(ToolUsageError, match=r"texts\[1\]"):
        await reranker.rerank("q", ["a", 2])  # type: ignore[list-item]


def test_reranker_construction_errors() -> None:
    with pytest.raises(ToolUsageError):
        CallableReranker(None)  # type: ignore[arg-type]
    for kwargs, needle in [
        ({"provider": ""}, "provider"),
        ({"model": None}, "model"),
        ({"stage": " "}, "stage"),
        ({"timeout_s": -1}, "timeout_s"),
    ]:
        with pytest.raises(ConfigError, match=needle):
            CallableReranker(lambda q, t: [], **kwargs)
