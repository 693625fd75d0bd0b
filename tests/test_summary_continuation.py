"""The summary request reuses the conversation's cache (issue 35, item 3).

When ``Summarize``'s model is the conversation's own (a ``CompressingModel``'s), the summary
request is the conversation's request byte for byte (system, tools, messages) with the
instruction appended as a last user message. Measured on the wire: the local server's prompt
cache serves >= 90% of the summary request's input, and its messages start with the previous
request's messages exactly.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agent_adapter import (
    CallableModel,
    ConfigError,
    FunctionTool,
    Message,
    ModelRequest,
    ModelResponse,
    RunContext,
    ToolCall,
)
from agent_adapter.context import (
    CompactionStates,
    CompressingModel,
    CompressionPolicy,
    Summarize,
)
from agent_adapter.context._steps._summarizer import CONTINUATION_PROMPT
from agent_adapter.providers import AnthropicModel, OpenAIChatModel
from agent_adapter.providers._base import ProviderModel
from agent_adapter.testing import ProviderServer, Reply

SUMMARY = json.dumps(
    {"task": "Fix the failing tests", "files_read": ["src/f0.py"], "open_tasks": ["run pytest"]}
)
MARK = CONTINUATION_PROMPT.split("]")[0] + "]"


async def _noop(args: dict[str, Any], ctx: Any) -> str:
    return ""


BASH = FunctionTool(
    name="bash",
    description="Run a shell command.",
    parameters={"type": "object", "properties": {"cmd": {"type": "string"}}},
    fn=_noop,
)


def _port(kind: str, server: ProviderServer) -> ProviderModel:
    if kind == "chat":
        return OpenAIChatModel("gpt-4o", base_url=server.openai_url, api_key="k", max_retries=0)
    return AnthropicModel("claude-sonnet-4-5", base_url=server.url, api_key="k", max_retries=0)


def _messages(body: dict[str, Any]) -> list[Any]:
    out: list[Any] = body["messages"]
    return out


def _is_summary_request(body: dict[str, Any]) -> bool:
    last = _messages(body)[-1]
    content = last["content"]
    text = content if isinstance(content, str) else json.dumps(content)
    return MARK in text


async def _loop(
    model: CompressingModel, kind: str, ctx: RunContext, rounds: int = 16
) -> list[Message]:
    history = [Message("system", "You are a coding agent."), Message("user", "Fix the tests")]
    options = {"cache_control": {"type": "ephemeral"}} if kind == "anthropic" else {}
    for i in range(rounds):
        call = ToolCall(f"c{i}", "bash", json.dumps({"cmd": f"cat src/f{i}.py"}))
        history.append(Message("assistant", "", tool_calls=(call,)))
        body = f"# src/f{i}.py\n" + f"def f{i}(x):\n    return x + {i}\n" * 60
        history.append(Message("tool", body, tool_call_id=call.id))
        request = ModelRequest(messages=list(history), tools=[BASH], ctx=ctx, options=options)
        await model.generate(request)
    return history


def _policy(summarizer: Any, **step: Any) -> CompressionPolicy:
    return CompressionPolicy(
        threshold_tokens=6000,
        target_tokens=3000,
        steps=[Summarize(model=summarizer, keep_recent_messages=4, **step)],
    )


@pytest.mark.parametrize("kind", ["chat", "anthropic"])
async def test_summary_request_continues_the_cached_conversation(kind: str) -> None:
    with ProviderServer(default=Reply(text=SUMMARY, input_tokens=None)) as server:
        port = _port(kind, server)
        # compacted at the threshold (the background case is the next test's)
        states = CompactionStates(prepare_at=None)
        model = CompressingModel(port, _policy(port), states=states)
        ctx = RunContext()
        await _loop(model, kind, ctx)
        bodies = [r.body for r in server.requests]
        at = [k for k, b in enumerate(bodies) if _is_summary_request(b)]
        assert len(at) == 1, "one compaction, one summary request"
        summary, previous = bodies[at[0]], bodies[at[0] - 1]
        sent = _messages(summary)
        # byte for byte: the previous request with the same system and tools, and the
        # instruction as one last user message
        assert sent[:-1] == _messages(previous)
        assert summary.get("tools") == previous.get("tools")
        assert summary.get("system") == previous.get("system")
        assert sent[-1]["role"] == "user"
        usage = [e.usage for e in ctx.ledger.entries if e.stage == "summary"]
        assert len(usage) == 1
        assert usage[0].cache_read_tokens >= 0.9 * usage[0].input_tokens
        # the compaction happened: the next request holds our summary, not the old rounds
        after = _messages(bodies[at[0] + 1])
        assert len(after) < len(sent) - 1
        assert "Fix the failing tests" in json.dumps(after)
        await port.aclose()


async def test_a_summary_prepared_in_the_background_continues_a_sent_request() -> None:
    with ProviderServer(default=Reply(text=SUMMARY, input_tokens=None)) as server:
        port = _port("anthropic", server)
        model = CompressingModel(port, _policy(port))
        ctx = RunContext()
        await _loop(model, "anthropic", ctx, rounds=20)
        await asyncio.sleep(0)
        bodies = [r.body for r in server.requests]
        at = [k for k, b in enumerate(bodies) if _is_summary_request(b)]
        assert at
        for k in at:  # the request the conversation sent before, byte for byte, plus one
            sent = _messages(bodies[k])
            assert any(sent[:-1] == _messages(b) for b in bodies[:k])
        usage = [e.usage for e in ctx.ledger.entries if e.stage == "summary"]
        assert usage and all(u.cache_read_tokens >= 0.9 * u.input_tokens for u in usage)
        await port.aclose()


async def test_fresh_request_when_asked_or_when_the_summarizer_is_another_model() -> None:
    with ProviderServer(default=Reply(text=SUMMARY, input_tokens=None)) as server:
        port = _port("chat", server)
        other = _port("chat", server)
        for summarizer, step in ((port, {"continue_conversation": False}), (other, {})):
            server.clear()
            states = CompactionStates(prepare_at=None)
            model = CompressingModel(port, _policy(summarizer, **step), states=states)
            ctx = RunContext()
            await _loop(model, "chat", ctx)
            bodies = [r.body for r in server.requests]
            assert not any(_is_summary_request(b) for b in bodies)
            fresh = [b for b in bodies if "<transcript>" in json.dumps(b)]
            assert len(fresh) == 1 and "tools" not in fresh[0]
        await port.aclose()
        await other.aclose()


async def test_a_reply_that_is_no_summary_falls_back_to_the_fresh_request() -> None:
    # the continuation may answer with a tool call (the conversation's tools are offered):
    # that is no summary, so the span's transcript is summarized by a fresh request instead
    seen: list[ModelRequest] = []

    def reply(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        last = request.messages[-1].text
        if MARK in last:
            call = ToolCall("x1", "bash", '{"cmd": "ls"}')
            return ModelResponse(message=Message("assistant", "", tool_calls=(call,)))
        return ModelResponse(message=Message("assistant", SUMMARY))

    port = CallableModel(reply)
    model = CompressingModel(port, _policy(port))
    ctx = RunContext()
    await _loop(model, "chat", ctx)
    stages = [(r.stage, MARK in r.messages[-1].text) for r in seen if r.stage == "summary"]
    assert stages == [("summary", True), ("summary", False)]  # continued, then the fallback
    fresh = next(r for r in seen if r.stage == "summary" and MARK not in r.messages[-1].text)
    assert "<transcript>" in fresh.messages[-1].text and not fresh.tools
    assert any("Fix the failing tests" in m.text for m in seen[-1].messages)


def test_continue_conversation_is_a_bool() -> None:
    with pytest.raises(ConfigError, match="continue_conversation"):
        Summarize(continue_conversation="yes")  # type: ignore[arg-type]
