"""CompressingModel around a real function model (CallableModel): compression, skipping,
overflow retries, nesting, streaming, cache keys, calibration."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_adapter import (
    CallableModel,
    ConfigError,
    Event,
    Message,
    ModelContextOverflow,
    ModelRequest,
    ModelResponse,
    RunContext,
    StreamEnd,
    ToolUsageError,
    Usage,
)
from agent_adapter.context import (
    CompressingModel,
    CompressionPolicy,
    RemoveOldMessages,
    estimate_tokens,
)


def _conversation(rounds: int, size: int = 400) -> list[Message]:
    msgs = [Message("system", "You are a coding agent."), Message("user", "Fix the bug.")]
    for i in range(rounds):
        msgs.append(Message("assistant", f"step {i} " + "x" * size))
        msgs.append(Message("user", f"output {i} " + "y" * size))
    return msgs


class Recorder:
    """A model function that records what it was sent; it overflows above ``limit`` tokens
    (as the provider counts them: ``scale`` x chars/4) and reports that count as usage."""

    def __init__(self, limit: int | None = None, scale: float = 1.0, always: bool = False) -> None:
        self.limit = limit
        self.scale = scale
        self.always = always  # overflow whatever the size (no limit in the error)
        self.seen: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.seen.append(request)
        tokens = round(estimate_tokens(list(request.messages)) * self.scale)
        if self.always or (self.limit is not None and tokens > self.limit):
            raise ModelContextOverflow(
                f"prompt is too long: {tokens} tokens > {self.limit} maximum",
                tokens=tokens,
                limit=self.limit,
            )
        return ModelResponse(
            message=Message("assistant", "ok"), usage=Usage(input_tokens=tokens, output_tokens=1)
        )


def _policy(threshold: int, **kw: Any) -> CompressionPolicy:
    return CompressionPolicy(threshold_tokens=threshold, **kw)


async def test_under_the_threshold_the_same_messages_go_on_and_nothing_runs() -> None:
    fn = Recorder()
    ctx = RunContext()
    events: list[Event] = []
    ctx.subscribe(events.append)
    model = CompressingModel(CallableModel(fn), _policy(100_000))
    request = ModelRequest(messages=_conversation(3), ctx=ctx)
    await model.generate(request)
    (sent,) = fn.seen
    assert sent.messages is request.messages and sent.precompressed
    assert "compression" not in [e.name for e in events]
    assert len(ctx.ledger) == 1


async def test_over_the_threshold_the_request_is_compressed_and_reported() -> None:
    fn = Recorder()
    ctx = RunContext()
    reports: list[Any] = []
    ctx.subscribe(lambda e: reports.append(e.data["report"]), names={"compression"})
    messages = _conversation(20)
    total = estimate_tokens(messages)
    model = CompressingModel(CallableModel(fn), _policy(total // 2, target_tokens=total // 3))
    await model.generate(ModelRequest(messages=messages, ctx=ctx))
    (sent,) = fn.seen
    assert estimate_tokens(list(sent.messages)) <= total // 3
    assert sent.messages[0] is messages[0] and sent.messages[-1] is messages[-1]
    (report,) = reports
    assert report.tokens_before == total and report.reached_target
    assert len(messages) == 42  # the caller's list is untouched


async def test_a_requests_own_compression_wins() -> None:
    fn = Recorder()
    messages = _conversation(20)
    total = estimate_tokens(messages)
    model = CompressingModel(CallableModel(fn), _policy(10 * total))
    own = _policy(total // 2, target_tokens=total // 4)
    await model.generate(ModelRequest(messages=messages, compression=own))
    assert estimate_tokens(list(fn.seen[0].messages)) <= total // 4


@pytest.mark.parametrize("is_async", [False, True])
async def test_when_can_skip_compression(is_async: bool) -> None:
    fn = Recorder()
    messages = _conversation(20)
    asked: list[tuple[str, Any]] = []

    def sync_when(request: ModelRequest, ctx: Any) -> bool:
        asked.append((request.stage, ctx))
        return request.stage == "main"

    async def async_when(request: ModelRequest, ctx: Any) -> bool:
        return sync_when(request, ctx)

    ctx = RunContext()
    total = estimate_tokens(messages)
    model = CompressingModel(
        CallableModel(fn), _policy(total // 2), when=async_when if is_async else sync_when
    )
    await model.generate(ModelRequest(messages=messages, stage="summary", ctx=ctx))
    await model.generate(ModelRequest(messages=messages, stage="main", ctx=ctx))
    skipped, compressed = fn.seen
    assert skipped.messages == tuple(messages) and not skipped.precompressed
    assert len(compressed.messages) < len(messages)
    assert asked == [("summary", ctx), ("main", ctx)]


async def test_an_overflow_is_retried_once_with_a_smaller_request() -> None:
    messages = _conversation(20)
    total = estimate_tokens(messages)
    fn = Recorder(limit=total // 2)
    ctx = RunContext()
    names: list[str] = []
    ctx.subscribe(lambda e: names.append(e.name))
    # the policy thinks the window is far bigger than the provider's real limit
    model = CompressingModel(CallableModel(fn), CompressionPolicy(model_max_tokens=10 * total))
    reply = await model.generate(ModelRequest(messages=messages, ctx=ctx))
    assert reply.text == "ok"
    first, second = fn.seen
    assert first.messages is not second.messages
    assert estimate_tokens(list(second.messages)) < total // 2
    assert names.count("model.retry") == 1 and names.count("model.error") == 1
    assert len(ctx.ledger) == 1  # the failed call is not billed


async def test_a_second_overflow_propagates() -> None:
    messages = _conversation(20)
    total = estimate_tokens(messages)
    fn = Recorder(always=True)
    model = CompressingModel(CallableModel(fn), _policy(2 * total, target_tokens=total // 3))
    with pytest.raises(ModelContextOverflow):
        await model.generate(ModelRequest(messages=messages))
    first, second = fn.seen
    assert len(second.messages) < len(first.messages) == len(messages)


async def test_no_retry_when_nothing_can_be_removed() -> None:
    messages = [Message("user", "z" * 4000)]
    fn = Recorder(limit=100)
    model = CompressingModel(CallableModel(fn), CompressionPolicy(model_max_tokens=10**6))
    with pytest.raises(ModelContextOverflow) as info:
        await model.generate(ModelRequest(messages=messages))
    assert len(fn.seen) == 1 and info.value.limit == 100


async def test_nested_layers_compress_and_retry_once_in_all() -> None:
    messages = _conversation(20)
    total = estimate_tokens(messages)
    # never satisfiable, and 3x the estimate, so that each layer would find more to remove
    fn = Recorder(always=True, scale=3.0)
    inner = CompressingModel(CallableModel(fn), _policy(total // 2, target_tokens=total // 4))
    outer = CompressingModel(inner, _policy(total // 2, target_tokens=total // 3))
    with pytest.raises(ModelContextOverflow):
        await outer.generate(ModelRequest(messages=messages))
    assert len(fn.seen) == 2  # one call and one retry, not two each
    assert all(r.precompressed for r in fn.seen)
    # the outer layer compressed; the inner one passed that request straight on
    assert estimate_tokens(list(fn.seen[0].messages)) <= total // 3


async def test_stream_retries_an_overflow_before_the_first_event() -> None:
    messages = _conversation(20)
    total = estimate_tokens(messages)
    fn = Recorder(limit=total // 2)
    model = CompressingModel(CallableModel(fn), CompressionPolicy(model_max_tokens=10 * total))
    events = [e async for e in model.stream(ModelRequest(messages=messages))]
    assert isinstance(events[-1], StreamEnd) and events[-1].response.text == "ok"
    assert len(fn.seen) == 2


async def test_stream_does_not_retry_after_the_first_event() -> None:
    attempts: list[int] = []

    async def late_overflow(request: ModelRequest) -> AsyncIterator[Any]:
        attempts.append(len(request.messages))
        yield "partial"
        raise ModelContextOverflow("overflow mid-stream", tokens=10**6, limit=10)

    model = CompressingModel(
        CallableModel(lambda r: "unused", stream_fn=late_overflow),
        CompressionPolicy(model_max_tokens=10**6),
    )
    seen: list[Any] = []
    with pytest.raises(ModelContextOverflow):
        async for event in model.stream(ModelRequest(messages=_conversation(20))):
            seen.append(event)
    assert len(attempts) == 1 and [e.kind for e in seen] == ["text"]


async def test_calibration_follows_the_providers_count() -> None:
    # the provider counts 3x what chars/4 says (base64, UUIDs): the second call is under the
    # threshold by estimate but over it in the provider's tokens, so it is compressed
    messages = _conversation(10)
    estimate = estimate_tokens(messages)
    fn = Recorder(scale=3.0)
    model = CompressingModel(CallableModel(fn), _policy(2 * estimate, target_tokens=estimate))
    await model.generate(ModelRequest(messages=messages))
    assert fn.seen[0].messages is not None and len(fn.seen[0].messages) == len(messages)
    assert model.ratio == pytest.approx(3.0, rel=0.01)
    await model.generate(ModelRequest(messages=messages))
    assert len(fn.seen[1].messages) < len(messages)
    # compressed to the target in the provider's units
    assert round(estimate_tokens(list(fn.seen[1].messages)) * 3.0) <= estimate


async def test_window_comes_from_the_policy_the_port_or_the_profile() -> None:
    fn = Recorder()
    known = CallableModel(fn, provider="openai", model="gpt-4o-2024-08-06")
    assert CompressingModel(known, CompressionPolicy()).context_window == 128_000
    sized = CallableModel(fn, context_window=9_000)
    assert CompressingModel(sized, CompressionPolicy()).context_window == 9_000
    policy = CompressionPolicy(model_max_tokens=5_000)
    assert CompressingModel(known, policy).context_window == 5_000
    with pytest.raises(ConfigError, match="no context window is known"):
        CompressingModel(CallableModel(fn, model="mystery"), CompressionPolicy())
    # token counts need no window
    assert CompressingModel(CallableModel(fn), _policy(10)).context_window is None


def test_construction_errors() -> None:
    model = CallableModel(Recorder())
    with pytest.raises(ConfigError, match="CompressionPolicy"):
        CompressingModel(model, {"threshold_tokens": 3})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="when"):
        CompressingModel(model, _policy(10), when="always")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="LLMPort"):
        CompressingModel(object(), _policy(10))  # type: ignore[arg-type]


async def test_generate_refuses_a_non_request() -> None:
    model = CompressingModel(CallableModel(Recorder()), _policy(10))
    with pytest.raises(ToolUsageError):
        await model.generate(_conversation(1))  # type: ignore[arg-type]


def test_cache_key_fields_add_the_policy_to_the_ports() -> None:
    def fn(request: ModelRequest) -> str:
        return ""

    inner = CallableModel(fn, provider="openai", model="gpt-4o")
    key = CompressingModel(
        inner, CompressionPolicy(threshold_percent=50, steps=[RemoveOldMessages()])
    ).cache_key_fields()
    assert key["provider"] == "openai" and key["fn"] == inner.cache_key_fields()["fn"]
    assert key["compression"]["threshold_tokens"] == 64_000
    assert key["compression"]["steps"][0]["step"] == RemoveOldMessages.name
    assert key["compression"]["token_counter"].endswith("estimate_tokens")
    other = CompressingModel(inner, CompressionPolicy(threshold_percent=40)).cache_key_fields()
    assert other != key
