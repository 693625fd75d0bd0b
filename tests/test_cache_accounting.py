"""Cache-aware accounting: the local server caches prompt prefixes as each provider does, the
real providers read the cached counts off its replies, and the ledger prices them at the
price table's cache prices; AnthropicModel(cache_breakpoint="auto") places breakpoints that
make a growing conversation read the cache from its second call on."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from _provider_cases import MODEL, PROTOCOL, Make, build, make, server, srv
from agent_adapter import (
    Message,
    ModelError,
    ModelRequest,
    ModelResponse,
    RunContext,
    StreamEnd,
    TextPart,
    ToolCall,
    Usage,
)
from agent_adapter.context import (
    CompressingModel,
    CompressionPolicy,
    RemoveOldMessages,
    compress_for,
    estimate_tokens,
)
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.testing import PromptCache, ProviderServer, Reply, prompt_tokens

__all__ = ["make", "server", "srv"]

EPHEMERAL = {"type": "ephemeral"}
#: A system prompt of about 4,000 tokens: over every provider's minimum cacheable prefix.
BIG = "".join(f"Rule {i}: keep the build green and the tests honest. " for i in range(300))
COUNTED = Reply(text="noted", input_tokens=None)  # usage as the server counts the request


async def _call(model: Any, request: ModelRequest, stream: bool) -> ModelResponse:
    if not stream:
        reply: ModelResponse = await model.generate(request)
        return reply
    ends = [e async for e in model.stream(request) if isinstance(e, StreamEnd)]
    return ends[-1].response


async def _grow(
    model: Any, srv: ProviderServer, turns: int, *, stream: bool = False, **fields: Any
) -> tuple[list[ModelResponse], RunContext]:
    """A conversation one round longer each call: the replies and the run's context."""
    srv.add(*[COUNTED] * turns)
    ctx = RunContext()
    messages = [Message("system", BIG), Message("user", "question 0")]
    replies = []
    for turn in range(turns):
        reply = await _call(model, ModelRequest(messages=messages, ctx=ctx, **fields), stream)
        replies.append(reply)
        ask = Message("user", f"question {turn + 1}: " + "more details " * 40)
        messages = [*messages, reply.message, ask]
    return replies, ctx


def _reads(replies: list[ModelResponse]) -> list[int]:
    return [r.usage.cache_read_tokens for r in replies]


def _prompt(srv: ProviderServer, i: int) -> int:
    sent = srv.requests[i]
    return prompt_tokens(sent.protocol, sent.body)


# --------------------------------------------------------------------------------------------
# the server's cache, read through each real provider


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("kind", ["chat", "responses"])
async def test_openai_caches_from_1024_tokens_in_steps_of_128(
    kind: str, stream: bool, srv: ProviderServer, make: Make
) -> None:
    replies, _ = await _grow(make(kind), srv, 3, stream=stream)
    assert replies[0].usage.cache_read_tokens == 0
    for i in (1, 2):
        read, before = replies[i].usage.cache_read_tokens, _prompt(srv, i - 1)
        assert replies[i].usage.input_tokens == _prompt(srv, i)
        assert read >= 1024 and (read - 1024) % 128 == 0  # OpenAI's granularity
        assert before - 128 <= read <= before  # the whole previous request, rounded down
    if not stream:  # the wire carries it where the API reference puts it
        usage = replies[2].raw.usage
        details = usage.prompt_tokens_details if kind == "chat" else usage.input_tokens_details
        assert details.cached_tokens == replies[2].usage.cache_read_tokens


async def test_openai_prompts_under_1024_tokens_are_never_cached(
    srv: ProviderServer, make: Make
) -> None:
    srv.add(COUNTED, COUNTED)
    model = make("chat")
    question = ModelRequest(messages=[Message("user", "What is 2 + 2? " * 250)])
    _, again = [await model.generate(question) for _ in range(2)]
    assert 500 < again.usage.input_tokens < 1024 and again.usage.cache_read_tokens == 0


@pytest.mark.parametrize("stream", [False, True])
async def test_gemini_implicit_cache_reads_the_shared_prefix(
    stream: bool, srv: ProviderServer, make: Make
) -> None:
    replies, _ = await _grow(make("gemini"), srv, 3, stream=stream)
    assert replies[0].usage.cache_read_tokens == 0
    for i in (1, 2):
        before = _prompt(srv, i - 1)
        assert before - 1 <= replies[i].usage.cache_read_tokens <= before  # no granularity
    if not stream:
        meta = replies[1].raw.usage_metadata
        assert meta.cached_content_token_count == replies[1].usage.cache_read_tokens


async def test_gemini_2_0_has_no_implicit_cache(srv: ProviderServer, make: Make) -> None:
    replies, _ = await _grow(make("gemini", model="gemini-2.0-flash"), srv, 2)
    assert _reads(replies) == [0, 0] and replies[1].usage.input_tokens > 4000


async def test_deepseek_reports_its_own_hit_fields(srv: ProviderServer, make: Make) -> None:
    replies, ctx = await _grow(make("deepseek"), srv, 2)
    usage = replies[1].raw.usage
    assert usage.prompt_tokens_details is None  # DeepSeek's words, not OpenAI's
    assert usage.prompt_cache_hit_tokens == replies[1].usage.cache_read_tokens
    assert usage.prompt_cache_hit_tokens + usage.prompt_cache_miss_tokens == usage.prompt_tokens
    before = _prompt(srv, 0)
    assert before - 1 <= replies[1].usage.cache_read_tokens <= before  # the whole first prompt
    price = ctx.prices.find("deepseek", MODEL["deepseek"])
    assert price is not None and ctx.ledger.entries[1].cost_usd == pytest.approx(
        price.cost(replies[1].usage)
    )


async def test_anthropic_caches_nothing_without_a_breakpoint(
    srv: ProviderServer, make: Make
) -> None:
    replies, _ = await _grow(make("anthropic"), srv, 3)
    assert [(r.usage.cache_read_tokens, r.usage.cache_write_tokens) for r in replies] == [
        (0, 0)
    ] * 3


@pytest.mark.parametrize("stream", [False, True])
async def test_anthropic_reads_and_writes_up_to_the_callers_mark(
    stream: bool, srv: ProviderServer, make: Make
) -> None:
    system = Message("system", (TextPart(BIG, {"cache_control": EPHEMERAL}),))
    srv.add(COUNTED, COUNTED)
    model = make("anthropic")
    first, second = [
        await _call(model, ModelRequest(messages=[system, Message("user", q)]), stream)
        for q in ("first question", "a second, other question")
    ]
    marked = srv.requests[0].body["system"][-1]
    assert marked["cache_control"] == EPHEMERAL  # the caller's mark, sent where it was
    assert first.usage.cache_read_tokens == 0 and first.usage.cache_write_tokens > 3000
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens
    assert second.usage.cache_write_tokens == 0
    raw = second.raw.usage  # Anthropic's input_tokens is the uncached rest
    assert raw.input_tokens == second.usage.input_tokens - second.usage.cache_read_tokens
    assert raw.cache_creation.ephemeral_5m_input_tokens == 0


async def test_a_one_hour_mark_is_written_as_such(srv: ProviderServer, make: Make) -> None:
    mark = {"type": "ephemeral", "ttl": "1h"}
    srv.add(COUNTED)
    system = Message("system", (TextPart(BIG, {"cache_control": mark}),))
    reply = await make("anthropic").generate(ModelRequest(messages=[system, Message("user", "q")]))
    creation = reply.raw.usage.cache_creation
    assert creation.ephemeral_1h_input_tokens == reply.usage.cache_write_tokens > 0
    assert creation.ephemeral_5m_input_tokens == 0


async def test_more_than_four_breakpoints_is_the_apis_400(srv: ProviderServer, make: Make) -> None:
    parts = tuple(TextPart(f"part {i} " * 10, {"cache_control": EPHEMERAL}) for i in range(5))
    srv.add(Reply(text="never sent"))
    with pytest.raises(ModelError, match="A maximum of 4 blocks with cache_control"):
        await make("anthropic").generate(ModelRequest(messages=[Message("user", parts)]))
    assert srv.pending == 1  # the API refused it before any reply


# --------------------------------------------------------------------------------------------
# scope, scripts and turning the cache off


async def test_the_cache_is_per_api_key_and_model(srv: ProviderServer) -> None:
    models = [
        build("chat", srv, api_key="key-a"),
        build("chat", srv, api_key="key-b"),
        build("chat", srv, api_key="key-a", model="gpt-4o-mini"),
        build("chat", srv, api_key="key-a"),
    ]
    srv.add(*[COUNTED] * 4)
    request = ModelRequest(messages=[Message("system", BIG), Message("user", "q")])
    reads = [(await m.generate(request)).usage.cache_read_tokens for m in models]
    for model in models:
        await model.aclose()
    assert reads[:3] == [0, 0, 0] and reads[3] > 0


async def test_scripted_counts_are_reported_as_scripted(srv: ProviderServer, make: Make) -> None:
    srv.add(COUNTED, Reply(text="a", input_tokens=None, cache_read_tokens=7), Reply(text="b"))
    model = make("chat")
    request = ModelRequest(messages=[Message("system", BIG), Message("user", "q")])
    first, scripted_read, scripted_size = [await model.generate(request) for _ in range(3)]
    assert first.usage.cache_read_tokens == 0
    assert scripted_read.usage.cache_read_tokens == 7
    assert scripted_read.usage.input_tokens == first.usage.input_tokens  # counted
    assert scripted_size.usage == Usage(input_tokens=10, output_tokens=5)  # Reply's defaults


@pytest.mark.parametrize("kind", ["chat", "responses", "gemini", "anthropic"])
async def test_prompt_cache_false_turns_it_off(kind: str) -> None:
    async with ProviderServer(prompt_cache=False) as own:
        assert own.prompt_cache is None
        model = build(kind, own, **({"cache_breakpoint": "auto"} if kind == "anthropic" else {}))
        replies, _ = await _grow(model, own, 3)
        await model.aclose()
    assert [(r.usage.cache_read_tokens, r.usage.cache_write_tokens) for r in replies] == [
        (0, 0)
    ] * 3
    assert replies[2].usage.input_tokens == prompt_tokens(PROTOCOL[kind], own.requests[2].body)


async def test_clear_empties_the_cache_and_entries_expire() -> None:
    cache = PromptCache(ttl_s=0.05)
    async with ProviderServer(prompt_cache=cache) as own:
        model = build("chat", own)
        request = ModelRequest(messages=[Message("system", BIG), Message("user", "q")])
        own.add(*[COUNTED] * 4)
        warm = [(await model.generate(request)).usage.cache_read_tokens for _ in range(2)]
        own.clear()
        own.add(COUNTED)
        cleared = (await model.generate(request)).usage.cache_read_tokens
        await asyncio.sleep(0.1)
        own.add(COUNTED)
        expired = (await model.generate(request)).usage.cache_read_tokens
        await model.aclose()
    assert warm[0] == 0 and warm[1] > 0 and cleared == 0 and expired == 0


# --------------------------------------------------------------------------------------------
# the ledger prices the cache


@pytest.mark.parametrize("kind", ["chat", "responses", "gemini", "deepseek"])
async def test_the_ledger_prices_cached_input_at_the_cached_price(
    kind: str, srv: ProviderServer
) -> None:
    cached_model = build(kind, srv)
    cached, ctx = await _grow(cached_model, srv, 3)
    await cached_model.aclose()
    async with ProviderServer(prompt_cache=False) as cold:
        cold_model = build(kind, cold)
        uncached, cold_ctx = await _grow(cold_model, cold, 3)
        await cold_model.aclose()
    provider = cached_model.provider
    price = ctx.prices.find(provider, MODEL[kind])
    assert price is not None and price.cached_input is not None
    assert price.cached_input < price.input
    for entry, reply in zip(ctx.ledger.entries, cached, strict=True):
        assert entry.cache_read_tokens == reply.usage.cache_read_tokens
        plain = entry.input_tokens - entry.cache_read_tokens
        expected = (
            plain * price.input
            + entry.cache_read_tokens * price.cached_input
            + entry.output_tokens * price.output
        ) / 1_000_000
        assert entry.cost_usd == pytest.approx(expected)
    # the same conversation (but for the reply ids each server numbers): the same sizes
    for hot, cold_reply in zip(cached, uncached, strict=True):
        assert abs(hot.usage.input_tokens - cold_reply.usage.input_tokens) <= 2
    assert ctx.ledger.usage.cache_read_tokens > 0 == cold_ctx.ledger.usage.cache_read_tokens
    assert ctx.ledger.cost_usd < cold_ctx.ledger.cost_usd


async def test_anthropic_writes_cost_more_and_reads_less(srv: ProviderServer) -> None:
    model = build("anthropic", srv, cache_breakpoint="auto")
    _, ctx = await _grow(model, srv, 4)
    await model.aclose()
    price = ctx.prices.find("anthropic", MODEL["anthropic"])
    assert price is not None and price.cache_write == pytest.approx(price.input * 1.25)
    assert price.cached_input == pytest.approx(price.input / 10)
    entries = ctx.ledger.entries
    for entry in entries:
        u = entry.usage
        plain = u.input_tokens - u.cache_read_tokens - u.cache_write_tokens
        expected = (
            plain * price.input
            + u.cache_read_tokens * price.cached_input
            + u.cache_write_tokens * price.cache_write
            + u.output_tokens * price.output
        ) / 1_000_000
        assert entry.cost_usd == pytest.approx(expected)
    full = [
        price.cost(Usage(input_tokens=e.input_tokens, output_tokens=e.output_tokens))
        for e in entries
    ]
    assert entries[0].cost_usd is not None and entries[0].cost_usd > full[0]  # the write premium
    assert all(
        e.cost_usd is not None and e.cost_usd < f
        for e, f in zip(entries[1:], full[1:], strict=True)
    )
    assert ctx.ledger.cost_usd < sum(full)


# --------------------------------------------------------------------------------------------
# AnthropicModel(cache_breakpoint="auto")


def _marks(body: dict[str, Any]) -> list[tuple[str, int]]:
    """Where a request body's cache_control marks are: ("system", i) or ("messages", i)."""
    found = [("system", i) for i, b in enumerate(body.get("system") or ()) if "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list):
            found += [("messages", i) for b in content if "cache_control" in b]
    return found


@pytest.mark.parametrize("stream", [False, True])
async def test_auto_reads_the_cache_from_the_second_call(
    stream: bool, srv: ProviderServer, make: Make
) -> None:
    replies, _ = await _grow(make("anthropic", cache_breakpoint="auto"), srv, 4, stream=stream)
    assert replies[0].usage.cache_read_tokens == 0 and replies[0].usage.cache_write_tokens > 0
    assert replies[1].usage.cache_read_tokens == replies[0].usage.cache_write_tokens
    for i in range(1, 4):
        usage = replies[i].usage
        # everything the previous call sent is read; only the new round is written
        assert usage.cache_read_tokens >= _prompt(srv, i - 1) - 1
        assert 0 < usage.cache_write_tokens < 200
    bodies = [r.body for r in srv.requests]
    assert _marks(bodies[0]) == [("messages", 0)]  # the tail; nothing was stable yet
    assert _marks(bodies[1]) == [("messages", 0), ("messages", 2)]  # stable end, tail
    assert _marks(bodies[3]) == [("messages", 4), ("messages", 6)]
    for body in bodies:
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else ():
                assert block.get("cache_control", EPHEMERAL) == EPHEMERAL


async def test_without_auto_the_same_conversation_never_reads(
    srv: ProviderServer, make: Make
) -> None:
    replies, _ = await _grow(make("anthropic"), srv, 4)
    assert _reads(replies) == [0, 0, 0, 0]


async def test_auto_keeps_the_callers_marks_and_the_limit_of_four(
    srv: ProviderServer, make: Make
) -> None:
    model = make("anthropic", cache_breakpoint="auto")
    system = Message("system", (TextPart(BIG, {"cache_control": EPHEMERAL}),))
    convo: list[Message] = []
    for i in range(3):
        convo.append(Message("user", (TextPart(f"note {i} " * 20, {"cache_control": EPHEMERAL}),)))
        convo.append(Message("assistant", f"seen {i}"))
    srv.add(COUNTED, COUNTED)
    await model.generate(ModelRequest(messages=[system, *convo[:4], Message("user", "q")]))
    await model.generate(ModelRequest(messages=[system, *convo, Message("user", "q")]))
    three, four = (r.body for r in srv.requests)
    # three marks of the caller's: one left, for the tail
    assert _marks(three) == [("system", 0), ("messages", 0), ("messages", 2), ("messages", 4)]
    assert three["messages"][4]["content"][-1]["cache_control"] == EPHEMERAL
    # four of the caller's: all kept, none added (the API takes no fifth)
    assert _marks(four) == [("system", 0), ("messages", 0), ("messages", 2), ("messages", 4)]
    assert four["messages"][6]["content"] == "q"


async def test_auto_never_changes_the_callers_objects(srv: ProviderServer) -> None:
    natives = [
        {"role": "user", "content": [{"type": "text", "text": "look " * 50}]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "and now?"}]},
    ]
    before = json.dumps(natives, sort_keys=True)
    messages, _ = AnthropicConverter().load_all(natives)
    model = build("anthropic", srv, cache_breakpoint="auto")
    srv.add(COUNTED, COUNTED)
    await model.generate(ModelRequest(messages=[Message("system", BIG), *messages]))
    await model.generate(ModelRequest(messages=[Message("system", BIG), *messages]))
    await model.aclose()
    assert json.dumps(natives, sort_keys=True) == before
    assert all("cache_control" not in m.extras for m in messages)
    assert _marks(srv.requests[1].body) == [("messages", 2)]  # the same request: one mark


def _tool_round(turn: int, calls: int) -> list[Message]:
    ids = [f"call_{turn}_{i}" for i in range(calls)]
    assistant = Message(
        "assistant",
        f"Reading {calls} files.",
        tool_calls=tuple(ToolCall(i, "read", json.dumps({"path": i})) for i in ids),
    )
    results = [Message("tool", f"contents of {i} " * 10, tool_call_id=i) for i in ids]
    return [assistant, *results]


async def test_auto_reads_past_the_twenty_block_lookback(srv: ProviderServer) -> None:
    """A round of 12 parallel calls adds over 20 blocks: the automatic (tail-only) breakpoint's
    lookback does not reach the previous write, the stable-prefix mark reads it exactly."""
    reads: dict[str, list[int]] = {}
    prompts: list[int] = []
    for name, kwargs, options in (
        ("auto", {"cache_breakpoint": "auto"}, {}),
        ("tail only", {}, {"cache_control": EPHEMERAL}),
    ):
        model = build("anthropic", srv, **kwargs)
        srv.add(*[COUNTED] * 3)
        messages = [Message("system", BIG), Message("user", "read them all")]
        reads[name] = []
        for turn in range(3):
            reply = await model.generate(ModelRequest(messages=messages, options=options))
            reads[name].append(reply.usage.cache_read_tokens)
            messages = [*messages, *_tool_round(turn, 12)]
        await model.aclose()
        prompts = [_prompt(srv, i) for i in range(3)]
        srv.clear()
    assert reads["auto"][0] == 0
    assert all(read >= before - 1 for read, before in zip(reads["auto"][1:], prompts, strict=False))
    assert reads["tail only"] == [0, 0, 0]


# --------------------------------------------------------------------------------------------
# compression keeps the caller's marks, and its stable prefix is read from the cache


def _marked_history(rounds: int) -> list[dict[str, Any]]:
    natives: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": BIG, "cache_control": EPHEMERAL},
                {"type": "text", "text": "Fix the failing test."},
            ],
        }
    ]
    for i in range(rounds):
        natives.append({"role": "assistant", "content": f"Step {i}: " + "reading logs " * 60})
        natives.append({"role": "user", "content": f"Output {i}: " + "log line " * 60})
    return natives


async def test_compression_keeps_the_callers_cache_control_marks() -> None:
    natives = _marked_history(12)
    converter = AnthropicConverter()
    assert converter.dump_all(converter.load_all(natives)[0]) == natives  # the round trip
    policy = CompressionPolicy(
        threshold_tokens=2500, target_tokens=1800, steps=[RemoveOldMessages(keep_first=1)]
    )
    compressed, report = await compress_for(natives, policy, format="anthropic", states=False)
    assert len(compressed) < len(natives) and report.tokens_saved > 0
    assert compressed[0] is natives[0]  # kept as the caller's own object, mark and all
    assert compressed[0]["content"][0]["cache_control"] == EPHEMERAL


async def test_a_compressed_conversation_reads_its_stable_prefix(srv: ProviderServer) -> None:
    """CompressingModel compacts, then appends: the provider's cache reads the caller's marked
    head on every later call, and all the previous call sent while the compaction holds."""
    history, _ = AnthropicConverter().load_all(_marked_history(12))
    total = estimate_tokens(history)
    policy = CompressionPolicy(
        threshold_tokens=total - 500,
        target_tokens=total - 2000,
        steps=[RemoveOldMessages(keep_first=1)],
    )
    model = build("anthropic", srv, cache_breakpoint="auto")
    wrapped = CompressingModel(model, policy)
    ctx = RunContext(thread_id="cache-accounting")
    srv.add(*[COUNTED] * 4)
    replies = []
    for turn in range(4):
        reply = await wrapped.generate(ModelRequest(messages=history, ctx=ctx))
        replies.append(reply)
        history = [*history, reply.message, Message("user", f"next {turn}: " + "more " * 30)]
    await model.aclose()
    first = srv.requests[0].body["messages"][0]["content"][0]
    assert first["cache_control"] == EPHEMERAL and first["text"] == BIG  # the caller's mark
    assert "earlier messages removed" in json.dumps(srv.requests[0].body)  # it was compressed
    head = len(BIG) // 4
    reads = _reads(replies)
    assert reads[0] == 0 and all(read >= head for read in reads[1:])
    whole = [read >= _prompt(srv, i) - 1 for i, read in enumerate(reads[1:])]
    assert whole[-2:] == [True, True]  # appended to the compacted request: all of it read
    assert ctx.ledger.usage.cache_read_tokens == sum(reads)
