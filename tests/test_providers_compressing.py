"""CompressingModel around each real provider: the provider's real overflow error (over HTTP,
from the local server) is recovered with exactly one retry, strictly smaller on the wire."""

from __future__ import annotations

from typing import Any

import pytest

from _provider_cases import KINDS, Make, make, server, srv
from agent_adapter import Message, ModelContextOverflow, ModelRequest, RunContext, StreamEnd
from agent_adapter.context import CompressingModel, CompressionPolicy, estimate_tokens
from agent_adapter.testing import ProviderServer, Reply

__all__ = ["make", "server", "srv"]

pytestmark = pytest.mark.parametrize("kind", KINDS)


def _conversation(rounds: int = 20) -> list[Message]:
    messages = [Message("system", "You are a coding agent."), Message("user", "Fix the bug.")]
    for i in range(rounds):
        messages.append(Message("assistant", f"Step {i}: reading the logs. " + "x" * 400))
        messages.append(Message("user", f"Output {i}: " + "y" * 400))
    return messages


def _setup(kind: str, make: Make) -> tuple[CompressingModel, list[Message], RunContext, Any]:
    messages = _conversation()
    total = estimate_tokens(messages)
    # under the threshold the request goes out whole; the provider's window is smaller
    policy = CompressionPolicy(threshold_tokens=2 * total, target_tokens=total // 3)
    ctx = RunContext()
    names: list[str] = []
    ctx.subscribe(lambda event: names.append(event.name))
    return CompressingModel(make(kind), policy), messages, ctx, names


def _sent_messages(body: dict[str, Any]) -> int:
    return len(body.get("messages") or body.get("input") or body.get("contents") or ())


def _check_one_smaller_retry(srv: ProviderServer, names: list[str], ctx: RunContext) -> None:
    first, second = srv.requests
    assert second.size < first.size
    assert _sent_messages(second.body) < _sent_messages(first.body)
    assert names.count("model.retry") == 1 and names.count("model.error") == 1
    assert len(ctx.ledger) == 1  # the overflowed call is not billed


async def test_overflow_recovered_with_one_smaller_retry(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    model, messages, ctx, names = _setup(kind, make)
    total = estimate_tokens(messages)
    srv.add(Reply.overflow(tokens=total, limit=total // 2), Reply(text="fixed"))
    reply = await model.generate(ModelRequest(messages=messages, ctx=ctx))
    assert reply.text == "fixed"
    _check_one_smaller_retry(srv, names, ctx)
    assert len(messages) == 42  # the caller's list is untouched


async def test_streamed_overflow_recovered_with_one_smaller_retry(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    model, messages, ctx, names = _setup(kind, make)
    total = estimate_tokens(messages)
    srv.add(Reply.overflow(tokens=total, limit=total // 2), Reply(text="fixed"))
    events = [e async for e in model.stream(ModelRequest(messages=messages, ctx=ctx))]
    assert isinstance(events[-1], StreamEnd) and events[-1].response.text == "fixed"
    _check_one_smaller_retry(srv, names, ctx)


async def test_a_second_overflow_propagates(kind: str, srv: ProviderServer, make: Make) -> None:
    model, messages, ctx, _ = _setup(kind, make)
    srv.add(Reply.overflow(), Reply.overflow(), Reply(text="never"))
    with pytest.raises(ModelContextOverflow):
        await model.generate(ModelRequest(messages=messages, ctx=ctx))
    assert len(srv.requests) == 2 and srv.pending == 1


async def test_an_overflow_reported_mid_stream_before_any_content_is_retried(
    kind: str, srv: ProviderServer, make: Make
) -> None:
    model, messages, ctx, names = _setup(kind, make)
    srv.add(Reply.overflow(in_stream=True), Reply(text="fixed"))
    events = [e async for e in model.stream(ModelRequest(messages=messages, ctx=ctx))]
    assert events[-1].response.text == "fixed"
    _check_one_smaller_retry(srv, names, ctx)
