"""The model layer's types: requests, responses, usage, prices, profiles, ledger and events."""

from __future__ import annotations

import dataclasses
import logging

import pytest
from pydantic import BaseModel

from agent_adapter import (
    CallableModel,
    ConfigError,
    Event,
    FunctionTool,
    JsonSchema,
    Ledger,
    Message,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    Price,
    PriceTable,
    RunContext,
    Usage,
    model_profile,
    register_model_profile,
)
from agent_adapter._run import emit_event, record_call
from agent_adapter.context import CompressingModel, CompressionPolicy, RerankResult


async def _echo(args: dict[str, object], ctx: object = None) -> str:
    return str(args)


def test_request_stores_tuples_and_never_the_callers_list() -> None:
    messages = [Message("user", "hi")]
    request = ModelRequest(messages=messages, stop="END")
    messages.append(Message("user", "later"))
    assert request.messages == (Message("user", "hi"),)
    assert request.stop == ("END",)
    assert request.stage == "main" and request.precompressed is False


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"messages": [Message("user", "a"), "b"]}, "messages[1]"),
        ({"messages": "hi"}, "messages"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"temperature": 3.0}, "temperature"),
        ({"top_p": float("nan")}, "top_p"),
        ({"seed": 1.5}, "seed"),
        ({"compression": {"threshold_tokens": 10}}, "compression"),
        ({"tools": ["not a tool"]}, "tools[0]"),
        ({"response_format": 42}, "response_format"),
        ({"stage": ""}, "stage"),
    ],
)
def test_bad_request_fields_name_the_field(kwargs: dict[str, object], needle: str) -> None:
    fields: dict[str, object] = {"messages": [Message("user", "hi")], **kwargs}
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        ModelRequest(**fields)  # type: ignore[arg-type]


def test_duplicate_tool_names_are_rejected() -> None:
    tool = FunctionTool("t", "d", {"type": "object"}, _echo)
    with pytest.raises(ConfigError, match="duplicate"):
        ModelRequest(messages=[Message("user", "x")], tools=[tool, tool])


def test_response_formats_normalise_to_json_schema() -> None:
    class Answer(BaseModel):
        value: int

    msgs = [Message("user", "x")]
    assert ModelRequest(messages=msgs, response_format="text").response_format is None
    assert ModelRequest(messages=msgs, response_format="json").response_format == "json"
    fmt = ModelRequest(messages=msgs, response_format=Answer).response_format  # type: ignore[arg-type]
    assert isinstance(fmt, JsonSchema) and fmt.name == "Answer"
    assert fmt.schema["properties"]["value"]["type"] == "integer"
    raw = ModelRequest(messages=msgs, response_format={"type": "object"})  # type: ignore[arg-type]
    assert isinstance(raw.response_format, JsonSchema)
    assert raw.response_format.name == "response"


def test_request_compression_and_replace() -> None:
    policy = CompressionPolicy(threshold_tokens=100)
    request = ModelRequest(messages=[Message("user", "x")], compression=policy)
    again = dataclasses.replace(request, precompressed=True)
    assert again.compression is policy and again.messages is request.messages


def test_usage_counts_cached_tokens_inside_input() -> None:
    usage = Usage(input_tokens=100, output_tokens=10, cache_read_tokens=60, cache_write_tokens=40)
    assert usage.total_tokens == 110
    assert (usage + usage).cache_read_tokens == 120
    with pytest.raises(ConfigError, match="exceed input_tokens"):
        Usage(input_tokens=10, cache_read_tokens=11)
    with pytest.raises(ConfigError, match="output_tokens"):
        Usage(output_tokens=-1)
    with pytest.raises(ConfigError, match="input_tokens"):
        Usage(input_tokens=True)


def test_response_validates_the_message_and_finish_reason() -> None:
    reply = ModelResponse(message=Message("assistant", "hi"), model="m")
    assert reply.text == "hi" and reply.usage == Usage()
    with pytest.raises(ConfigError, match="assistant"):
        ModelResponse(message=Message("user", "hi"))
    with pytest.raises(ConfigError, match="finish_reason"):
        ModelResponse(message=Message("assistant", "hi"), finish_reason="done")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="cost_usd"):
        ModelResponse(message=Message("assistant", "hi"), cost_usd=-1.0)


def test_prices_per_million_with_cache_reads_and_writes() -> None:
    table = PriceTable()
    # claude-sonnet-4-5: $3 input, $15 output, reads 0.1x, 5-minute writes 1.25x
    usage = Usage(
        input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=500_000,
        cache_write_tokens=100_000,
    )  # fmt: skip
    cost = table.cost("anthropic", "claude-sonnet-4-5-20250929", usage)
    assert cost == pytest.approx(0.4 * 3 + 0.5 * 0.3 + 0.1 * 3.75 + 15)
    assert table.cost("openai", "gpt-4o-2024-08-06", Usage(input_tokens=2_000_000)) == 5.0
    assert table.find("openai", "gpt-4o-mini") == Price(0.15, 0.60, 0.075)
    # a name no source knows takes the longest known entry it starts with
    assert table.find("openai", "gpt-4o-mini-acme-ft") == table.find("openai", "gpt-4o-mini")
    assert table.cost("openai", "gpt-4omni", Usage(input_tokens=1)) is None
    assert table.cost("acme", "m", Usage(input_tokens=1)) is None


def test_price_table_is_user_extendable() -> None:
    mine = PriceTable({"acme:rerank-1": Price(0.0, per_unit=0.002)})
    assert mine.cost("acme", "rerank-1", Usage(units=3)) == pytest.approx(0.006)
    mine.set("openai:gpt-4o", Price(1.0, 1.0))
    assert mine.cost("openai", "gpt-4o", Usage(input_tokens=1_000_000)) == 1.0
    assert PriceTable().cost("openai", "gpt-4o", Usage(input_tokens=1_000_000)) == 2.5
    assert len(PriceTable({"a:b": Price(1.0)}, defaults=False)) == 1
    with pytest.raises(ConfigError, match="provider:model"):
        mine.set("gpt-4o", Price(1.0))
    with pytest.raises(ConfigError, match=r"Price\.input"):
        Price(-1.0)


def test_model_profiles_know_todays_models() -> None:
    cases = {
        ("openai", "gpt-4o-2024-08-06"): 128_000,
        ("openai", "gpt-5"): 400_000,
        ("openai", "o4-mini"): 200_000,
        ("anthropic", "claude-sonnet-4-5-20250929"): 200_000,
        ("anthropic", "claude-3-5-haiku-latest"): 200_000,
        ("gemini", "models/gemini-2.5-pro"): 1_048_576,
        ("deepseek", "deepseek-chat"): 1_000_000,
        ("vllm", "meta-llama/Llama-3.3-70B-Instruct"): 131_072,
        ("ollama", "qwen2.5-coder:7b"): 32_768,
    }
    # (the window of a profile written from memory comes from genai-prices when installed:
    # tests/test_maintained_sources.py)
    for (provider, model), window in cases.items():
        profile = model_profile(provider, model)
        assert profile is not None, model
        assert profile.context_window == window, model
        assert profile.source.startswith("https://"), model
    assert model_profile("acme", "unknown-model") is None


def test_a_request_is_budgeted_against_the_input_limit_not_the_window() -> None:
    """GPT-5's window is 400,000 tokens, but a request over 272,000 input tokens is a 400
    ("Maximum input tokens: 272,000" on its model page): compression budgets against 272k."""
    gpt5 = model_profile("openai", "gpt-5")
    assert gpt5 is not None and (gpt5.context_window, gpt5.input_limit) == (400_000, 272_000)
    policy = CompressionPolicy(threshold_percent=80)
    model = CompressingModel(
        CallableModel(lambda r: "ok", provider="openai", model="gpt-5"), policy
    )
    assert model.context_window == 272_000
    assert model_profile("openai", "gpt-4o").input_limit == 128_000  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="max_input_tokens"):
        ModelProfile(1_000, 100, max_input_tokens=2_000)
    with pytest.raises(ConfigError, match="max_input_tokens"):
        ModelProfile(1_000, 100, max_input_tokens=0)


def test_model_profiles_are_overridable() -> None:
    register_model_profile("acme:small", ModelProfile(8_000, 1_000, "mine"))
    register_model_profile("*:small-2", ModelProfile(16_000, 2_000))
    assert model_profile("acme", "small").context_window == 8_000  # type: ignore[union-attr]
    assert model_profile("other", "small-2").context_window == 16_000  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="max_output_tokens"):
        ModelProfile(1_000, 2_000)
    with pytest.raises(ConfigError, match="provider:model"):
        register_model_profile("small", ModelProfile(1, 1))


async def test_run_context_records_calls_and_delivers_events() -> None:
    ctx = RunContext()
    seen: list[Event] = []
    awaited: list[str] = []

    async def later(event: Event) -> None:
        awaited.append(event.name)

    unsubscribe = ctx.subscribe(seen.append)
    ctx.subscribe(later, names={"model.response"})
    cost = record_call(
        ctx, provider="openai", model="gpt-4o", stage="main",
        usage=Usage(input_tokens=1_000_000, output_tokens=100_000), seconds=0.5,
    )  # fmt: skip
    assert cost == pytest.approx(3.5)
    await emit_event(ctx, "model.response", cost_usd=cost)
    await ctx.emit("model.request", messages=1)
    assert [e.name for e in seen] == ["model.response", "model.request"]
    assert seen[0].run_id == ctx.run_id and seen[0].data["cost_usd"] == cost
    assert awaited == ["model.response"]
    unsubscribe()
    await ctx.emit("model.request")
    assert len(seen) == 2
    (entry,) = ctx.ledger.entries
    assert (entry.provider, entry.model, entry.stage, entry.seconds) == (
        "openai", "gpt-4o", "main", 0.5,
    )  # fmt: skip
    assert ctx.ledger.cost_usd == pytest.approx(3.5)
    assert ctx.ledger.by_stage()["main"].input_tokens == 1_000_000


async def test_a_failing_handler_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    ctx = RunContext()

    def broken(event: Event) -> None:
        raise RuntimeError("handler bug")

    ctx.subscribe(broken)
    with caplog.at_level(logging.ERROR, logger="agent_adapter.events"):
        await ctx.emit("x")
    assert "handler" in caplog.text


def test_unpriced_calls_and_contexts_without_a_ledger() -> None:
    ctx = RunContext()
    assert record_call(ctx, provider="acme", model="m", stage="main", usage=Usage(),
                       seconds=0.0) is None  # fmt: skip
    assert ctx.ledger.unpriced == 1 and ctx.ledger.cost_usd == 0
    # None and foreign contexts: the cost is still computed, nothing is recorded
    assert record_call(None, provider="openai", model="gpt-4o", stage="main",
                       usage=Usage(input_tokens=1_000_000), seconds=0.0) == 2.5  # fmt: skip
    assert record_call({"run_id": "r"}, provider="openai", model="gpt-4o", stage="main",
                       usage=Usage(), seconds=0.0) == 0.0  # fmt: skip


def test_each_run_context_extends_its_own_price_table() -> None:
    ctx = RunContext()
    ctx.prices.set("acme:m", Price(1.0))
    assert RunContext().prices.find("acme", "m") is None
    assert record_call(ctx, provider="acme", model="m", stage="main",
                       usage=Usage(input_tokens=1_000_000), seconds=0.0) == 1.0  # fmt: skip


def test_run_context_stays_backward_compatible() -> None:
    ctx = RunContext(run_id="r", thread_id="t", metadata={"k": 1})
    assert ctx == RunContext(run_id="r", thread_id="t", metadata={"k": 1})
    assert "ledger" not in repr(ctx)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.run_id = "other"  # type: ignore[misc]
    assert isinstance(ctx.ledger, Ledger)


def test_rerank_result_is_frozen_and_coerces_numbers() -> None:
    result = RerankResult(scores=[1, 0.5], usage=Usage(input_tokens=3))
    assert result.scores == [1.0, 0.5]
    with pytest.raises(Exception, match="frozen"):
        result.scores = []  # type: ignore[misc]
