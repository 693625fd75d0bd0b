"""pydantic-ai with compression_processor: the real Agent loop, OpenAIChatModel and
OpenAIResponsesModel through an OpenAIProvider over real HTTP to the local server; the
``pydantic_ai`` format's round trip; resuming from a history saved as JSON."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from openai import AsyncOpenAI
from pydantic_ai import Agent, ModelMessagesTypeAdapter
from pydantic_ai import messages as pm
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

import _prefix_cases as pc
from _integration_cases import (
    FINAL,
    STEPS,
    assert_all_valid,
    fired,
    history,
    policy,
    read_file,
    request_tokens,
    tool_replies,
)
from agent_adapter import ConfigError
from agent_adapter.context import CompactionStates, CompressionReport
from agent_adapter.context.formats import check, compress_for, convert, detect_format
from agent_adapter.integrations.pydantic_ai import (
    PydanticAIConverter,
    compression_capability,
    compression_processor,
)
from agent_adapter.testing import ProviderServer

TASK = "Read src/mod_0.py to src/mod_5.py one at a time and tell me the retries setting."


def _agent(client: AsyncOpenAI, api: str, reports: list[CompressionReport] | None) -> Agent:
    provider = OpenAIProvider(openai_client=client)
    model: Any = (
        OpenAIResponsesModel("gpt-4o", provider=provider)
        if api == "responses"
        else OpenAIChatModel("gpt-4o", provider=provider)
    )
    processors = (
        [] if reports is None else [compression_capability(policy(), on_report=reports.append)]
    )
    return Agent(
        model,
        instructions="You are a careful code reader.",
        tools=[read_file],
        capabilities=processors,
    )


def _client(server: ProviderServer) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.openai_url, api_key="test", max_retries=0)


def _returns(messages: list[Any]) -> list[Any]:
    return [
        p
        for m in messages
        if isinstance(m, pm.ModelRequest)
        for p in m.parts
        if isinstance(p, pm.ToolReturnPart)
    ]


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_agent_compresses_mid_loop_and_stores_a_valid_history(api: str) -> None:
    reports: list[CompressionReport] = []
    with ProviderServer(tool_replies()) as server:
        async with _client(server) as client:
            result = await _agent(client, api, reports).run(TASK)
        requests = server.requests
    assert result.output == FINAL
    assert len(requests) == len(reports) == STEPS + 1
    assert all(r.protocol == api for r in requests)
    assert_all_valid(requests)
    hits = fired(reports)
    assert hits and 0 < hits[0] < STEPS
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)
    # pydantic-ai keeps what the processor returned: compressed, valid, resumable
    messages = result.all_messages()
    assert check(messages, "pydantic_ai") == []
    assert detect_format(messages) == "pydantic_ai"
    assert isinstance(messages[0], pm.ModelRequest)
    assert isinstance(messages[0].parts[0], pm.UserPromptPart)
    returns = _returns(messages)
    assert len(returns) < STEPS or any(
        r.content != read_file(f"src/mod_{i}.py") for i, r in enumerate(returns)
    )
    assert returns[-1].content == read_file(f"src/mod_{STEPS - 1}.py")  # the newest in full
    assert len(history(requests[-1])) <= len(history(requests[hits[0] - 1])) + 4


async def test_resume_from_a_saved_history() -> None:
    reports: list[CompressionReport] = []
    with ProviderServer(tool_replies()) as server:
        async with _client(server) as client:
            agent = _agent(client, "chat", reports)
            first = await agent.run(TASK)
            saved = first.all_messages_json()
            server.add(*tool_replies(start=STEPS)[-2:])
            restored = ModelMessagesTypeAdapter.validate_json(saved)
            result = await agent.run("And src/mod_6.py?", message_history=restored)
        requests = server.requests
    assert result.output == FINAL
    assert len(requests) == STEPS + 3
    assert_all_valid(requests)
    messages = result.all_messages()
    assert check(messages, "pydantic_ai") == []
    assert [
        p.content
        for m in messages
        if isinstance(m, pm.ModelRequest)
        for p in m.parts
        if isinstance(p, pm.UserPromptPart)
    ][-1] == "And src/mod_6.py?"
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)


async def test_without_the_processor_every_request_carries_the_whole_history() -> None:
    sizes: dict[str, list[int]] = {}
    for name, reports in (("plain", None), ("compressed", [])):
        with ProviderServer(tool_replies()) as server:
            async with _client(server) as client:
                await _agent(client, "chat", reports).run(TASK)
            sizes[name] = [request_tokens(r) for r in server.requests]
    assert sizes["compressed"][0] == sizes["plain"][0]
    assert sizes["compressed"][-1] < sizes["plain"][-1] * 0.7


def _sample() -> list[Any]:
    return [
        pm.ModelRequest(
            parts=[
                pm.SystemPromptPart(content="Be brief."),
                pm.UserPromptPart(content=["Look at this:", pm.ImageUrl(url="https://x/y.png")]),
            ],
            instructions="Answer in English.",
        ),
        pm.ModelResponse(
            parts=[
                pm.ThinkingPart(content="I should read it.", signature="sig_1", id="rs_1"),
                pm.TextPart(content="Reading."),
                pm.ToolCallPart(tool_name="read_file", args={"path": "a.py"}, tool_call_id="c1"),
            ],
            model_name="gpt-4o",
        ),
        pm.ModelRequest(
            parts=[
                pm.ToolReturnPart(
                    tool_name="read_file",
                    content="path must be absolute",
                    tool_call_id="c1",
                    outcome="retried",
                ),
            ]
        ),
        pm.ModelResponse(
            parts=[
                pm.ToolCallPart(tool_name="read_file", args='{"path": "/a.py"}', tool_call_id="c2")
            ]
        ),
        pm.ModelRequest(
            parts=[
                pm.ToolReturnPart(tool_name="read_file", content={"lines": 3}, tool_call_id="c2")
            ]
        ),
        pm.ModelResponse(parts=[pm.TextPart(content="Done.")]),
        pm.ModelRequest(parts=[pm.UserPromptPart(content="Thanks, next?")]),
    ]


def test_the_format_loads_every_part_and_comes_back_as_the_same_objects() -> None:
    natives = _sample()
    conversion = convert(natives, "pydantic_ai")
    roles = [m.role for m in conversion.messages]
    assert roles == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    opener = conversion.messages[2]
    assert [type(p).__name__ for p in opener.parts] == ["ThinkingPart", "TextPart"]
    assert opener.parts[0].signature == "sig_1"
    assert opener.tool_calls[0].arguments == '{"path":"a.py"}'
    retry = conversion.messages[3]
    assert retry.tool_call_id == "c1" and retry.extras["is_error"] is True
    assert conversion.messages[5].text == '{"lines":3}'
    back = conversion.back(conversion.messages)
    assert all(a is b for a, b in zip(back, natives, strict=True))
    assert check(natives, "pydantic_ai") == []


async def test_a_changed_tool_return_keeps_every_field_but_its_text() -> None:
    big = "\n".join(f"line {i}: " + "x" * 80 for i in range(400))
    natives = _sample()
    natives[4] = pm.ModelRequest(
        parts=[
            pm.ToolReturnPart(
                tool_name="read_file", content=big, tool_call_id="c2", metadata={"path": "/a.py"}
            )
        ]
    )
    out, report = await compress_for(natives, policy())
    assert report.messages_changed or report.messages_removed
    assert check(out, "pydantic_ai") == []
    assert out[0] is natives[0] and out[-1] is natives[-1]
    changed = [
        p
        for m in out
        if isinstance(m, pm.ModelRequest)
        for p in m.parts
        if isinstance(p, pm.ToolReturnPart)
    ]
    for part in changed:
        original = natives[4].parts[0]
        assert dataclasses.replace(part, content=original.content) == original
        assert len(part.content) < len(big)
    PydanticAIConverter()  # public and constructible


# -- compact once, then append (issue 20): the conversation id is the key ---------------------


async def _conversation_run(
    api: str, states: Any, conversation_id: str | None = None
) -> tuple[list[Any], list[CompressionReport]]:
    """Two runs of one conversation (the second given the first's messages), ROUNDS tool
    rounds each: past the threshold."""
    reports: list[CompressionReport] = []
    with ProviderServer(pc.turn_replies(0)) as server:
        async with _client(server) as client:
            provider = OpenAIProvider(openai_client=client)
            model: Any = (
                OpenAIResponsesModel("gpt-4o", provider=provider)
                if api == "responses"
                else OpenAIChatModel("gpt-4o", provider=provider)
            )
            cap = compression_capability(pc.policy(), on_report=reports.append, states=states)
            agent = Agent(
                model, instructions=pc.INSTRUCTIONS, tools=[pc.read_file], capabilities=[cap]
            )
            first = await agent.run(pc.TURNS[0], conversation_id=conversation_id)
            server.add(*pc.turn_replies(1))
            result = await agent.run(pc.TURNS[1], message_history=first.all_messages())
            assert result.output == pc.FINAL
            assert check(result.all_messages(), "pydantic_ai") == []
        requests = server.requests
    return requests, reports


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_each_request_starts_with_the_previous_one_between_compactions(api: str) -> None:
    requests, reports = await _conversation_run(api, CompactionStates())
    assert len(requests) == len(reports) == 2 * (pc.ROUNDS + 1)
    assert_all_valid(requests)
    assert pc.measure(requests, reports).compactions >= 2
    assert pc.assert_appends(requests, reports, keeps_sent=True) >= len(requests) // 2
    before = pc.measure(*await _conversation_run(api, False))
    after = pc.measure(requests, reports)
    print(f"\n{before.line(f'pydantic-ai ({api}) before (states=False)')}")
    print(after.line(f"pydantic-ai ({api}) after"))
    # pydantic-ai keeps what the processor returns as the history: it appends either way
    assert after.share >= before.share


async def test_the_conversation_id_is_the_key() -> None:
    """One state a conversation across its runs (the second inherits the id from the
    history); another conversation id, another state."""
    states = CompactionStates()
    await _conversation_run("chat", states, "conv-1")
    assert len(states) == 1
    await _conversation_run("chat", states, "conv-2")
    assert len(states) == 2


async def test_the_bare_processor_takes_the_run_context() -> None:
    from pydantic_ai.capabilities import ProcessHistory

    reports: list[CompressionReport] = []
    processor = compression_processor(pc.policy(), on_report=reports.append, states=False)
    with ProviderServer(pc.one_long_turn()) as server:
        async with _client(server) as client:
            model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
            agent = Agent(model, tools=[pc.read_file], capabilities=[ProcessHistory(processor)])
            await agent.run(pc.TURNS[0])
        requests = server.requests
    assert len(reports) == len(requests) and any(pc.compacted(r) for r in reports)
    assert all(r.prefix_tokens == 0 for r in reports)  # states=False: nothing remembered
    with pytest.raises(ConfigError, match="states must be a CompactionStates"):
        compression_capability(policy(), states=object())  # type: ignore[arg-type]
