"""0.3.0a5 behaviours a user's program relies on, each once a bug found by running such
programs against both versions: DeepSeek tool turns sent back as DeepSeek takes them, a hidden
tool asked for, the SDK's reply dump whole, tool failures on the agent's logger,
``max_consecutive_errors=0``, and ``chat_structured`` never returning ``parsed=None``."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel

from _cliver_helpers import binding, calls
from agent_adapter import ModelOutputInvalid
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import AgentCore, CLIverMessage, Decision, ModelBindings, presets, tool


@tool(name="Peek", description="Peek.", safety="safe")
def peek() -> str:
    """Peek."""
    return "secret"


@tool(name="Boom", description="Boom.", safety="safe")
def boom() -> str:
    """Boom."""
    raise RuntimeError("kaboom")


@pytest.mark.parametrize("face", ["chat", "stream"])
async def test_a_deepseek_tool_turn_goes_back_as_deepseek_takes_it(face: str) -> None:
    """Regression: the assistant turn of a reply with reasoning and text went back as a list
    of parts (DeepSeek: 422 "invalid type: sequence, expected a string") and without its
    reasoning_content (DeepSeek's thinking mode: a 400 for a tool-call turn)."""
    replies = [calls(("c1", "Peek", {}), text="Let me check.", thinking="plan")]
    replies.append(Reply(text="done"))
    with ProviderServer(replies) as server:
        llm = presets.deepseek(api_key="k", base_url=server.openai_url)
        agent = AgentCore(ModelBindings(llm=llm), [peek])
        if face == "chat":
            await agent.chat("hi")
        else:
            _ = [c async for c in agent.stream("hi")]
        body = server.requests[1].body
    assert isinstance(body, dict)
    turn = body["messages"][1]
    assert turn["role"] == "assistant" and turn["content"] == "Let me check."
    assert turn["reasoning_content"] == "plan"


async def test_any_openai_protocol_turn_goes_back_with_its_reasoning_content() -> None:
    """Regression: only a ``provider_name="deepseek"`` binding sent reasoning back (and
    only on tool-call turns); 0.3.0a5 replays every reply's wire message, and GLM and
    DeepSeek behind a plain OpenAI-compatible binding reject a tool-call turn without it."""
    replies = [calls(("c1", "Peek", {}), text="Let me check.", thinking="plan")]
    replies.append(Reply(text="done", thinking="it is done"))
    replies.append(Reply(text="bye"))
    with ProviderServer(replies) as server:
        agent = AgentCore(ModelBindings(llm=binding(server)), [peek])
        first = await agent.chat("hi")
        await agent.chat("thanks", conversation=[CLIverMessage(role="user", content="hi"),
                                                 first.message])  # fmt: skip
        bodies = [r.body for r in server.requests]
    assert isinstance(bodies[1], dict) and isinstance(bodies[2], dict)
    assert bodies[1]["messages"][1]["content"] == "Let me check."
    assert bodies[1]["messages"][1]["reasoning_content"] == "plan"
    assert bodies[2]["messages"][1]["reasoning_content"] == "it is done"


async def test_a_safe_tool_hidden_from_the_model_is_asked_for() -> None:
    """Regression: a safe builtin hidden by tool_filter that the model called anyway ran
    from the registry without asking (0.3.0a5 asks: the advertised lookup finds nothing,
    so the category is ASK, fail closed)."""
    asked: list[str] = []

    async def permission(context: Any) -> Decision:
        asked.append(context.tool_name)
        return Decision.deny("no")

    with ProviderServer([calls(("c1", "Peek", {})), Reply(text="done")]) as server:
        agent = AgentCore(
            ModelBindings(llm=binding(server)), [peek], permission_callback=permission
        )
        await agent.chat("hi", tool_filter=lambda t: t.name != "Peek")
        body = server.requests[1].body
    assert asked == ["Peek"]
    assert isinstance(body, dict)
    results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    assert results == ["Error: Permission denied: no"]


async def test_the_replys_native_is_the_sdks_whole_dump() -> None:
    """Regression: None fields were left out, so ``trace[0]["response"]["content"]`` of a
    tool-call reply was a KeyError (0.3.0a5 keeps the SDK's model_dump() whole)."""
    with ProviderServer([calls(("c1", "Peek", {})), Reply(text="done")]) as server:
        response = await AgentCore(ModelBindings(llm=binding(server)), [peek]).chat("hi")
    assert response.message.trace is not None
    first = response.message.trace[0]["response"]
    assert first["content"] is None and first["refusal"] is None and first["tool_calls"]


async def test_a_tool_that_raises_is_logged_on_the_agents_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("myapp.agent")
    with ProviderServer([calls(("c1", "Boom", {})), Reply(text="done")]) as server:
        agent = AgentCore(ModelBindings(llm=binding(server)), [boom], logger=log)
        with caplog.at_level(logging.WARNING, logger="myapp.agent"):
            await agent.chat("hi")
    assert [r.getMessage() for r in caplog.records if r.name == "myapp.agent"] == [
        "Tool 'Boom' failed: kaboom"
    ]


async def test_max_consecutive_errors_zero_stops_at_the_first_failure() -> None:
    with ProviderServer([calls(("c1", "Boom", {})), Reply(text="never")]) as server:
        agent = AgentCore(ModelBindings(llm=binding(server)), [boom], max_consecutive_errors=0)
        response = await agent.chat("hi")
        assert len(server.requests) == 1
    assert response.message.content is not None
    assert response.message.content.startswith("Tool calls failed repeatedly")


class _City(BaseModel):
    city: str


async def test_chat_structured_without_an_iteration_for_its_repair_raises() -> None:
    """Regression: with max_iterations=1 a reply off the schema came back as parsed=None and
    "Reached maximum iterations" instead of the documented ModelOutputInvalid."""
    with ProviderServer([Reply(text="not json"), Reply(text='{"city": "Rome"}')]) as server:
        agent = AgentCore(ModelBindings(llm=binding(server)))
        with pytest.raises(ModelOutputInvalid, match="no iteration for a repair"):
            await agent.chat_structured("where?", _City, max_iterations=1)
        parsed = await agent.chat_structured("where?", _City, max_iterations=2)
    assert parsed.parsed == _City(city="Rome")
