"""Edges of the model layer, each on the input that showed it: streams cut before their
terminal event, the overflow retry against what the provider says fits, a Chat / Gemini mix
in format detection, which parameter of a ``MyOwnStep`` function gets the context, and the
embedding / rerank ports (root exports, a sync ``embed``, errors and their causes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import pytest

import agent_adapter
from _provider_cases import KINDS, PROTOCOL, Make, make, request, server, srv
from agent_adapter import (
    CallableModel,
    ConfigError,
    Message,
    ModelContextOverflow,
    ModelError,
    ModelOutputInvalid,
    ModelRequest,
    ModelTimeout,
    RunContext,
    StreamEnd,
    TextDelta,
)
from agent_adapter.context import (
    CompressingModel,
    CompressionPolicy,
    EmbeddingScorer,
    MyOwnStep,
    RerankerScorer,
    StepContext,
    compress,
    estimate_tokens,
)
from agent_adapter.context.formats import convert, detect_format
from agent_adapter.testing import ProviderServer, Reply, prompt_tokens

__all__ = ["make", "server", "srv"]

# -- 1. a stream that ends without its terminal event -------------------------------------

STREAMING = ("chat", "responses", "anthropic", "gemini")


@pytest.mark.parametrize("kind", STREAMING)
async def test_a_stream_cut_before_its_terminal_event_is_invalid_and_not_billed(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    # the connection closes cleanly after "The an", "swer is" ... but before the finish
    # chunk / message_stop / response.completed / the response holding finishReason
    srv.add(Reply(text="The answer is 42.", chunk_size=6, truncated=True))
    ctx = RunContext()
    names: list[str] = []
    ctx.subscribe(lambda event: names.append(event.name))
    seen: list[Any] = []
    with pytest.raises(ModelOutputInvalid, match="stream ended without"):
        async for event in make(kind).stream(request(ctx=ctx)):
            seen.append(event)
    text = "".join(e.text for e in seen if isinstance(e, TextDelta))
    assert text.startswith("The an")  # deltas went out; the reply never came
    assert not any(isinstance(e, StreamEnd) for e in seen)
    assert len(ctx.ledger) == 0  # a fragment is not billed
    assert names.count("model.error") == 1 and "model.response" not in names


@pytest.mark.parametrize("kind", STREAMING)
async def test_the_same_stream_with_its_terminal_event_completes(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    srv.add(Reply(text="The answer is 42.", chunk_size=6))
    ctx = RunContext()
    events = [e async for e in make(kind).stream(request(ctx=ctx))]
    end = events[-1]
    assert isinstance(end, StreamEnd)
    assert end.response.text == "The answer is 42." and end.response.finish_reason == "stop"
    assert len(ctx.ledger) == 1


TERMINAL = {
    "chat": ('"finish_reason": "stop"', "[DONE]"),
    "responses": ("response.completed",),
    "anthropic": ("message_delta", "message_stop"),
    "gemini": ("finishReason", "usageMetadata"),
}


@pytest.mark.parametrize("protocol", list(TERMINAL))
def test_the_server_leaves_out_exactly_the_terminal_events(
    protocol: str, srv: ProviderServer
) -> None:
    paths = {
        "chat": f"{srv.openai_url}/chat/completions",
        "responses": f"{srv.openai_url}/responses",
        "anthropic": f"{srv.url}/v1/messages",
        "gemini": f"{srv.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    }
    body = {"model": "m", "stream": True, "stream_options": {"include_usage": True}}
    for truncated in (False, True):
        srv.add(Reply(text="The answer is 42.", chunk_size=6, truncated=truncated))
        text = httpx.post(paths[protocol], json=body).text
        assert "The an" in text
        for marker in TERMINAL[protocol]:
            assert (marker in text) is not truncated, (marker, truncated)


@pytest.mark.parametrize("kind", STREAMING)
async def test_a_truncated_reply_to_a_plain_request_is_whole(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    # truncated only cuts streams: generate() gets the whole body
    srv.add(Reply(text="The answer is 42.", truncated=True))
    assert (await make(kind).generate(request())).text == "The answer is 42."


# -- 2. the overflow retry aims at what the provider says fits ----------------------------


def _long_conversation(rounds: int) -> list[Message]:
    messages = [Message("system", "You are a coding agent."), Message("user", "Fix the bug.")]
    for i in range(rounds):
        messages.append(Message("assistant", f"Step {i}: reading the logs. " + "x" * 400))
        messages.append(Message("user", f"Output {i}: " + "y" * 400))
    return messages


def _prompt(srv: ProviderServer, i: int) -> int:
    sent = srv.requests[i]
    return prompt_tokens(sent.protocol, sent.body)


@pytest.mark.parametrize("kind", [k for k in KINDS if PROTOCOL[k] != "responses"])
async def test_a_token_policy_above_the_providers_limit_retries_to_what_fits(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    # the input: threshold 200k, target 150k; the provider says 6,000 fit
    messages = _long_conversation(40)
    policy = CompressionPolicy(threshold_tokens=200_000, target_tokens=150_000)
    model = CompressingModel(make(kind), policy)
    srv.add(Reply(text="unused"))  # measure what the provider counts for the full request
    await make(kind).generate(ModelRequest(messages=messages))
    full = _prompt(srv, 0)
    assert full > 6_000
    srv.clear()
    srv.add(Reply.overflow(tokens=full, limit=6_000), Reply(text="fixed"))
    ctx = RunContext()
    reply = await model.generate(ModelRequest(messages=messages, ctx=ctx))
    assert reply.text == "fixed"
    assert len(srv.requests) == 2  # one retry
    assert _prompt(srv, 0) == full and _prompt(srv, 1) <= 6_000
    assert len(ctx.ledger) == 1


@pytest.mark.parametrize("kind", [k for k in KINDS if PROTOCOL[k] != "responses"])
async def test_a_provider_counting_over_8x_ours_still_gets_a_retry_that_fits(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    # percent policy on a 1M window; the provider counts 20x the server's chars/4 and says
    # 16x fits: the calibration ratio's clamp at 8 once made the retry compress nothing
    messages = _long_conversation(20)
    model = CompressingModel(make(kind), CompressionPolicy(model_max_tokens=1_000_000))
    srv.add(Reply(text="unused"))
    await make(kind).generate(ModelRequest(messages=messages))
    full = _prompt(srv, 0)
    srv.clear()
    srv.add(Reply.overflow(tokens=20 * full, limit=16 * full), Reply(text="fixed"))
    reply = await model.generate(ModelRequest(messages=messages))
    assert reply.text == "fixed" and len(srv.requests) == 2
    assert 20 * _prompt(srv, 1) <= 16 * full  # what the provider would count now fits


async def test_an_overflow_without_numbers_retries_strictly_smaller_once(
    srv: ProviderServer, make: Make
) -> None:
    # OpenAI Responses says "exceeds the context window" with no numbers; the policy's
    # target (150k) is far above what was sent
    messages = _long_conversation(20)
    policy = CompressionPolicy(threshold_tokens=200_000, target_tokens=150_000)
    model = CompressingModel(make("responses"), policy)
    srv.add(Reply.overflow(), Reply.overflow(), Reply(text="never"))
    with pytest.raises(ModelContextOverflow):
        await model.generate(ModelRequest(messages=messages))
    first, second = _prompt(srv, 0), _prompt(srv, 1)
    assert len(srv.requests) == 2 and second < first  # strictly smaller, and only once
    assert srv.pending == 1


async def test_the_retry_target_is_below_the_limit_with_a_margin() -> None:
    messages = _long_conversation(40)
    sent: list[int] = []

    def provider(request: ModelRequest) -> str:
        tokens = estimate_tokens(list(request.messages))
        sent.append(tokens)
        if tokens > 6_000:
            raise ModelContextOverflow("too long", tokens=tokens, limit=6_000)
        return "ok"

    policy = CompressionPolicy(threshold_tokens=200_000, target_tokens=150_000)
    reply = await CompressingModel(CallableModel(provider), policy).generate(
        ModelRequest(messages=messages)
    )
    assert reply.text == "ok"
    assert len(sent) == 2 and sent[1] <= 0.9 * 6_000 < sent[0]


# -- 3. a Chat Completions / Gemini mix ----------------------------------------------------

CHAT_AND_GEMINI = [
    {"role": "user", "content": "What is the weather in Paris today?"},
    {"role": "model", "parts": [{"text": "Sunny, 24 degrees."}]},
]


@pytest.mark.parametrize("order", [1, -1])
def test_a_chat_message_in_a_gemini_list_is_a_mix(order: int) -> None:
    with pytest.raises(ConfigError, match="mix formats") as info:
        detect_format(CHAT_AND_GEMINI[::order])
    assert "gemini" in str(info.value) and "openai" in str(info.value)
    with pytest.raises(ConfigError, match="mix formats"):
        convert(CHAT_AND_GEMINI[::order])


def test_a_chat_system_message_before_gemini_contents_is_a_mix() -> None:
    natives = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "parts": [{"text": "hi"}]},
    ]
    with pytest.raises(ConfigError, match=r"gemini.*openai"):
        detect_format(natives)


def test_plain_lists_of_one_format_are_still_detected() -> None:
    assert detect_format([{"role": "user", "content": "hi"}]) == "openai"
    gemini = [{"role": "user", "parts": [{"text": "hi"}]}, CHAT_AND_GEMINI[1]]
    assert detect_format(gemini) == "gemini"
    assert detect_format([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]) in (
        "openai",
        "anthropic",
    )


# -- 4. which parameter of a MyOwnStep function gets the StepContext -----------------------


def _messages() -> list[Message]:
    out = [Message("system", "sys"), Message("user", "question " + "q" * 400)]
    for i in range(6):
        out += [Message("assistant", f"a{i} " + "a" * 400), Message("user", f"u{i} " + "u" * 400)]
    return out


async def _run(fn: Any) -> list[Message]:
    policy = CompressionPolicy(threshold_tokens=100, target_tokens=100, steps=[MyOwnStep(fn=fn)])
    out, _ = await compress(_messages(), policy)
    return out


async def test_a_parameter_with_a_default_keeps_its_default() -> None:
    got: list[Any] = []

    def keep_last(messages: list[Message], n: int = 4) -> list[Message]:
        got.append(n)
        return [messages[0], *messages[-n:]]

    out = await _run(keep_last)
    assert got and set(got) == {4}  # once per pass, never the StepContext
    assert len(out) < len(_messages())  # the step ran (it did not fail on a StepContext)


@pytest.mark.parametrize("style", ["positional", "named", "annotated", "keyword_only"])
async def test_the_context_goes_to_the_parameter_meant_for_it(style: str) -> None:
    got: list[Any] = []

    def positional(messages: list[Message], c: Any) -> list[Message]:
        got.append(c)
        return messages

    def named(messages: list[Message], n: int = 4, ctx: Any = None) -> list[Message]:
        got.append(ctx)
        return messages

    def annotated(messages: list[Message], n: int = 4, info: StepContext | None = None) -> Any:
        got.append(info)
        return messages

    def keyword_only(messages: list[Message], n: int = 4, *, context: Any) -> list[Message]:
        got.append(context)
        return messages

    fns = {"positional": positional, "named": named, "annotated": annotated}
    await _run(fns.get(style, keyword_only))
    assert len(got) >= 1 and all(isinstance(c, StepContext) for c in got)


def test_a_required_parameter_it_cannot_fill_fails_at_construction() -> None:
    def needs_two(messages: list[Message], n: int, m: int) -> list[Message]:
        return messages

    with pytest.raises(ConfigError, match=r"\['m'\]"):
        MyOwnStep(fn=needs_two)


# -- 5. the embedding and rerank ports ------------------------------------------------------


def test_the_ports_are_importable_from_the_root() -> None:
    from agent_adapter import EmbeddingPort, RerankerPort, RerankResult, context

    assert (EmbeddingPort, RerankerPort, RerankResult) == (
        context.EmbeddingPort,
        context.RerankerPort,
        context.RerankResult,
    )
    assert {"EmbeddingPort", "RerankerPort", "RerankResult"} <= set(agent_adapter.__all__)


class SyncEmbedder:
    def embed(self, texts: Sequence[str], *, ctx: Any = None) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


class SyncReranker:
    def rerank(self, query: str, texts: Sequence[str], *, ctx: Any = None) -> Any:
        return agent_adapter.RerankResult(scores=[0.5] * len(texts))


def test_a_sync_embed_is_refused_at_construction() -> None:
    with pytest.raises(ConfigError, match="not async"):
        EmbeddingScorer(SyncEmbedder())
    with pytest.raises(ConfigError, match="not async"):
        RerankerScorer(SyncReranker())


class FailingEmbedder:
    def __init__(self, error: Exception) -> None:
        self.error = error

    async def embed(self, texts: Sequence[str], *, ctx: Any = None) -> list[list[float]]:
        raise self.error


class FailingReranker:
    def __init__(self, error: Exception) -> None:
        self.error = error

    async def rerank(self, query: str, texts: Sequence[str], *, ctx: Any = None) -> Any:
        raise self.error


@pytest.mark.parametrize("port", ["embedder", "reranker"])
async def test_a_library_error_of_a_port_is_not_its_own_cause(port: str) -> None:
    error = ModelTimeout("no reply within 5s", provider="acme", model="m")
    scorer: Any = (
        EmbeddingScorer(FailingEmbedder(error))
        if port == "embedder"
        else RerankerScorer(FailingReranker(error))
    )
    with pytest.raises(ModelTimeout) as info:
        await scorer.score("q", ["a", "b"])
    assert info.value is error
    assert info.value.__cause__ is not info.value


@pytest.mark.parametrize("port", ["embedder", "reranker"])
async def test_another_error_of_a_port_is_a_model_error_caused_by_it(port: str) -> None:
    error = RuntimeError("connection reset")
    scorer: Any = (
        EmbeddingScorer(FailingEmbedder(error))
        if port == "embedder"
        else RerankerScorer(FailingReranker(error))
    )
    with pytest.raises(ModelError, match="connection reset") as info:
        await scorer.score("q", ["a"])
    assert info.value.__cause__ is error
