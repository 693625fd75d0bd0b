"""Every provider against the local server over real HTTP, on its real SDK: generate, stream,
overflow, 429 / 5xx with the SDK's retries, timeout, malformed replies, tool calls, ledger."""

from __future__ import annotations

import json
from typing import Any

import pytest

from _provider_cases import (
    CALL,
    KINDS,
    MODEL,
    PROTOCOL,
    WEATHER,
    Make,
    make,
    request,
    server,
    srv,
)
from agent_adapter import (
    ConfigError,
    Message,
    ModelContextOverflow,
    ModelError,
    ModelOutputInvalid,
    ModelTimeout,
    RunContext,
    StreamEnd,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCallDelta,
    Usage,
    UsageEvent,
)
from agent_adapter.testing import ProviderServer, Reply

__all__ = ["make", "server", "srv"]

pytestmark = pytest.mark.parametrize("kind", KINDS)


def _vendor(error: BaseException) -> bool:
    """The cause is the SDK's own exception (or the HTTP library's), never one of ours."""
    cause = error.__cause__
    return cause is not None and not isinstance(cause, ModelError)


async def _collect(model: Any, req: Any) -> list[Any]:
    return [event async for event in model.stream(req)]


async def test_generate_reads_text_usage_and_writes_the_ledger(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    ctx = RunContext()
    seen: list[str] = []
    ctx.subscribe(lambda event: seen.append(event.name))
    srv.add(Reply(text="Sunny, 21C.", input_tokens=1200, output_tokens=300, cache_read_tokens=200))
    model = make(kind)
    response = await model.generate(request(ctx=ctx))
    usage = Usage(input_tokens=1200, output_tokens=300, cache_read_tokens=200)
    assert response.text == "Sunny, 21C."
    assert response.usage == usage
    assert response.finish_reason == "stop"
    assert response.provider == model.provider
    assert response.model == MODEL[kind]
    expected = ctx.prices.cost(model.provider, MODEL[kind], usage)
    assert expected is not None and expected > 0
    assert response.cost_usd == pytest.approx(expected)
    [entry] = ctx.ledger.entries
    assert (entry.provider, entry.model, entry.stage) == (model.provider, MODEL[kind], "main")
    assert entry.usage == usage and entry.cost_usd == pytest.approx(expected)
    assert entry.seconds > 0
    assert seen == ["model.request", "model.response"]
    [sent] = srv.requests
    assert sent.protocol == PROTOCOL[kind] and not sent.stream


async def test_stream_yields_deltas_then_usage_then_the_whole_reply(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    ctx = RunContext()
    text = "The weather in Paris is sunny today."
    srv.add(Reply(text=text, input_tokens=900, output_tokens=40, chunk_size=5))
    model = make(kind)
    events = await _collect(model, request(ctx=ctx))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == text
    assert isinstance(events[-2], UsageEvent) and isinstance(events[-1], StreamEnd)
    response = events[-1].response
    assert response.text == text
    assert response.usage == Usage(input_tokens=900, output_tokens=40) == events[-2].usage
    [entry] = ctx.ledger.entries
    assert entry.usage == response.usage and entry.cost_usd == response.cost_usd
    assert response.cost_usd is not None and response.cost_usd > 0
    [sent] = srv.requests
    assert sent.stream


async def test_context_overflow_carries_the_provider_numbers(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    ctx = RunContext()
    seen: list[Any] = []
    ctx.subscribe(seen.append)
    srv.add(Reply.overflow(tokens=210_000, limit=200_000))
    with pytest.raises(ModelContextOverflow) as caught:
        await make(kind).generate(request(ctx=ctx))
    error = caught.value
    if kind == "responses":  # "Your input exceeds the context window": no numbers
        assert (error.tokens, error.limit) == (None, None)
    else:
        assert (error.tokens, error.limit) == (210_000, 200_000)
    assert error.provider == make(kind).provider and _vendor(error)
    assert len(ctx.ledger) == 0
    assert [e.name for e in seen] == ["model.request", "model.error"]
    assert seen[-1].data["error"] == "ModelContextOverflow"
    assert len(srv.requests) == 1  # a 400 is not retried


async def test_context_overflow_while_streaming(kind: str, srv: ProviderServer, make: Make) -> None:
    srv.add(Reply.overflow(tokens=140_000, limit=128_000))
    with pytest.raises(ModelContextOverflow) as caught:
        await _collect(make(kind), request())
    assert _vendor(caught.value)
    if kind != "responses":
        assert caught.value.tokens == 140_000


async def test_rate_limit_is_retried_by_the_sdk(kind: str, srv: ProviderServer, make: Make) -> None:
    srv.add(Reply.rate_limited(retry_after_s=0.0), Reply(text="after the retry"))
    response = await make(kind, max_retries=1).generate(request())
    assert response.text == "after the retry"
    assert len(srv.requests) == 2


async def test_server_errors_past_the_retries_are_a_model_error(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    srv.add(Reply.server_error(503), Reply.server_error(503), Reply(text="never reached"))
    with pytest.raises(ModelError) as caught:
        await make(kind, max_retries=1).generate(request())
    assert type(caught.value) is ModelError and "503" in str(caught.value)
    assert _vendor(caught.value)
    assert len(srv.requests) == 2 and srv.pending == 1


async def test_a_slow_reply_is_a_timeout(kind: str, srv: ProviderServer, make: Make) -> None:
    srv.add(Reply(text="too late", delay_s=5.0))
    with pytest.raises(ModelTimeout) as caught:
        await make(kind, timeout_s=0.3).generate(request())
    assert _vendor(caught.value)


async def test_a_slow_stream_is_a_timeout(kind: str, srv: ProviderServer, make: Make) -> None:
    srv.add(Reply(text="too late", delay_s=5.0))
    with pytest.raises(ModelTimeout):
        await _collect(make(kind, timeout_s=0.3), request())


@pytest.mark.parametrize("body", [None, '{"unexpected": true}', "[]"])
async def test_a_malformed_reply_is_output_invalid(
    kind: str, srv: ProviderServer, make: Make, body: str | None
) -> None:
    ctx = RunContext()
    srv.add(Reply.malformed(body))
    with pytest.raises(ModelOutputInvalid) as caught:
        await make(kind).generate(request(ctx=ctx))
    if body is None:  # not JSON: the SDK's decoding error is the cause
        assert _vendor(caught.value)
    assert len(ctx.ledger) == 0


async def test_a_malformed_stream_is_output_invalid(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    srv.add(Reply.malformed())
    with pytest.raises(ModelOutputInvalid):
        await _collect(make(kind), request())


def _sent_calls(kind: str, body: dict[str, Any]) -> tuple[Any, Any]:
    """The assistant's call and the tool's result as the second request carried them."""
    if PROTOCOL[kind] == "chat":
        *_, call_turn, result = body["messages"]
        call = call_turn["tool_calls"][0]
        return {**call["function"], "id": call["id"]}, result
    if kind == "responses":
        items = body["input"]
        call = next(i for i in items if i.get("type") == "function_call")
        result = next(i for i in items if i.get("type") == "function_call_output")
        return call, result
    if kind == "anthropic":
        *_, call_turn, result_turn = body["messages"]
        call = next(b for b in call_turn["content"] if b["type"] == "tool_use")
        return call, result_turn["content"][0]
    *_, call_turn, result_turn = body["contents"]
    call = next(p for p in call_turn["parts"] if "functionCall" in p)["functionCall"]
    return call, result_turn["parts"][0]["functionResponse"]


async def test_tool_calls_round_trip(kind: str, srv: ProviderServer, make: Make) -> None:
    srv.add(Reply(text="Let me check.", tool_calls=[CALL]), Reply(text="It is sunny in Paris."))
    model = make(kind)
    question = Message("user", "What is the weather in Paris?")
    first = await model.generate(request(question, tools=[WEATHER]))
    [call] = first.message.tool_calls
    assert (call.name, call.args) == ("get_weather", {"city": "Paris"})
    assert first.finish_reason == "tool_calls"
    if kind != "gemini":  # the Gemini API sends no call ids; the adapter makes unique ones
        assert call.id == "call_1"
    result = Message("tool", "sunny in Paris", tool_call_id=call.id, name="get_weather")
    second = await model.generate(request(question, first.message, result, tools=[WEATHER]))
    assert second.text == "It is sunny in Paris."
    sent_call, sent_result = _sent_calls(kind, srv.requests[1].body)
    assert sent_call["name"] == "get_weather"
    arguments = sent_call.get("arguments", sent_call.get("input", sent_call.get("args")))
    assert (json.loads(arguments) if isinstance(arguments, str) else arguments) == {"city": "Paris"}
    assert "sunny in Paris" in json.dumps(sent_result)
    if kind != "gemini":
        ids = {sent_call.get("id"), sent_call.get("call_id")} - {None}
        assert ids and json.dumps(sent_result).count(call.id) == 1


async def test_streamed_tool_call_deltas(kind: str, srv: ProviderServer, make: Make) -> None:
    srv.add(Reply(tool_calls=[CALL], chunk_size=4))
    events = await _collect(make(kind), request(tools=[WEATHER]))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0].name == "get_weather" and {d.index for d in deltas} == {0}
    assert json.loads("".join(d.arguments for d in deltas)) == {"city": "Paris"}
    response = events[-1].response
    assert response.message.tool_calls[0].args == {"city": "Paris"}
    assert response.finish_reason == "tool_calls"


THINKING = "The user wants the weather; call the tool."


async def test_thinking_is_read_streamed_and_sent_back_as_each_api_wants(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    signed = Reply(thinking=THINKING, signature="U0lH", text="Checking.", tool_calls=[CALL])
    srv.add(signed, Reply(text="Sunny."), signed)
    model = make(kind)
    question = Message("user", "Weather in Paris?")
    first = await model.generate(request(question, tools=[WEATHER]))
    thinking, text = first.message.content
    assert isinstance(thinking, ThinkingPart) and thinking.text == THINKING
    assert isinstance(text, TextPart) and text.text == "Checking."
    # Chat Completions' reasoning_content (DeepSeek, vLLM, Ollama) has no signature
    assert thinking.signature == (None if PROTOCOL[kind] == "chat" else "U0lH")
    result = Message("tool", "sunny", tool_call_id=first.message.tool_calls[0].id)
    await model.generate(request(question, first.message, result, tools=[WEATHER]))
    sent = json.dumps(srv.requests[1].body)
    if kind in ("anthropic", "gemini", "responses"):  # the signed thinking goes back with the
        assert THINKING in sent and "U0lH" in sent  # call, as each API asks
    if kind == "deepseek":  # thinking mode: a tool-call turn's reasoning goes back, else 400
        turn = srv.requests[1].body["messages"][-2]  # type: ignore[index]
        assert turn["reasoning_content"] == THINKING and turn["content"] == "Checking."
    elif PROTOCOL[kind] == "chat":  # no field for it on the other Chat servers
        assert THINKING not in sent and "reasoning_content" not in sent
    events = await _collect(model, request(question, tools=[WEATHER]))
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == THINKING
    streamed = events[-1].response.message.content
    assert [(type(p), p.text) for p in streamed] == [(type(p), p.text) for p in (thinking, text)]
    assert streamed[0].signature == thinking.signature


async def test_errors_reported_mid_stream_are_translated(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    srv.add(
        Reply.overflow(tokens=150_000, limit=128_000, in_stream=True),
        Reply.server_error(500, in_stream=True),
    )
    model = make(kind)
    with pytest.raises(ModelContextOverflow) as caught:
        await _collect(model, request())
    if kind != "responses":
        assert (caught.value.tokens, caught.value.limit) == (150_000, 128_000)
    with pytest.raises(ModelError) as failed:
        await _collect(model, request())
    assert type(failed.value) is ModelError
    assert [r.stream for r in srv.requests] == [True, True]


async def test_unknown_options_fail_before_sending(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    with pytest.raises(ConfigError, match=r"options\['temprature'\]"):
        await make(kind).generate(request(options={"temprature": 0.5}))
    assert srv.requests == []
