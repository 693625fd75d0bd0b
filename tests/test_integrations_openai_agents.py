"""OpenAI Agents SDK with compression_filter: the real Runner loop, OpenAIResponsesModel and
OpenAIChatCompletionsModel on an AsyncOpenAI client over real HTTP to the local server, an
SQLiteSession to resume from."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    SQLiteSession,
    function_tool,
)
from openai import AsyncOpenAI

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
from agent_adapter import ToolCall
from agent_adapter.context import CompressionReport
from agent_adapter.context.formats import check
from agent_adapter.integrations.openai_agents import compression_filter
from agent_adapter.testing import ProviderServer, Reply

TASK = "Read src/mod_0.py to src/mod_5.py one at a time and tell me the retries setting."
INSTRUCTIONS = "You are a careful code reader."


def _client(server: ProviderServer) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.openai_url, api_key="test", max_retries=0)


def _agent(client: AsyncOpenAI, api: str) -> Agent[Any]:
    model: Any = (
        OpenAIResponsesModel(model="gpt-4o", openai_client=client)
        if api == "responses"
        else OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)
    )
    return Agent(
        name="reader", instructions=INSTRUCTIONS, model=model, tools=[function_tool(read_file)]
    )


def _config(reports: list[CompressionReport] | None) -> RunConfig:
    if reports is None:
        return RunConfig(tracing_disabled=True)
    return RunConfig(
        tracing_disabled=True,
        call_model_input_filter=compression_filter(policy(), on_report=reports.append),
    )


def _thinking_replies() -> list[Reply]:
    """tool_replies() whose calls come with a signed reasoning item each."""
    return [
        Reply(
            thinking=f"step {i}: read the next file",
            signature=f"enc_{i}",
            tool_calls=r.tool_calls,
            input_tokens=r.input_tokens,
        )
        if r.tool_calls
        else r
        for i, r in enumerate(tool_replies())
    ]


@pytest.mark.parametrize("api", ["responses", "chat"])
async def test_runner_compresses_mid_loop_and_keeps_the_run_items(api: str) -> None:
    reports: list[CompressionReport] = []
    with ProviderServer(_thinking_replies()) as server:
        async with _client(server) as client:
            result = await Runner.run(
                _agent(client, api), TASK, run_config=_config(reports), max_turns=STEPS + 2
            )
        requests = server.requests
    assert result.final_output == FINAL
    assert len(requests) == len(reports) == STEPS + 1
    assert all(r.protocol == api for r in requests)
    assert_all_valid(requests)
    hits = fired(reports)
    assert hits and 0 < hits[0] < STEPS
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)
    # the instructions go out untouched
    if api == "responses":
        assert all(r.body["instructions"] == INSTRUCTIONS for r in requests)
    else:
        assert all(
            r.body["messages"][0] == {"role": "system", "content": INSTRUCTIONS} for r in requests
        )
    # what the run keeps is the full history: every call, every output in full
    items = result.to_input_list()
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs] == [read_file(f"src/mod_{i}.py") for i in range(STEPS)]
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    assert calls == [o["call_id"] for o in outputs]
    assert len(history(requests[-1])) < len(items)


async def test_resume_from_a_session_is_compressed_again() -> None:
    reports: list[CompressionReport] = []
    session = SQLiteSession("reader-1")
    with ProviderServer(tool_replies()) as server:
        async with _client(server) as client:
            agent = _agent(client, "responses")
            await Runner.run(agent, TASK, run_config=_config(reports), session=session)
            first = len(server.requests)
            server.add(
                Reply(tool_calls=[ToolCall("call_9", "read_file", '{"path": "src/mod_9.py"}')]),
                Reply(text="mod_9 sets retries=3 too."),
            )
            result = await Runner.run(
                agent, "And src/mod_9.py?", run_config=_config(reports), session=session
            )
        requests = server.requests
    assert result.final_output == "mod_9 sets retries=3 too."
    assert first == STEPS + 1 and len(requests) == STEPS + 3
    assert_all_valid(requests)
    resumed = reports[first:]
    assert all(not r.skipped and r.tokens_after <= r.threshold_tokens for r in resumed)
    stored = await session.get_items()
    outputs = [i for i in stored if i.get("type") == "function_call_output"]
    assert len(outputs) == STEPS + 1  # the session holds both runs whole
    assert outputs[0]["output"] == read_file("src/mod_0.py")


async def test_without_the_filter_every_request_carries_the_whole_history() -> None:
    sizes: dict[str, list[int]] = {}
    for name, reports in (("plain", None), ("compressed", [])):
        with ProviderServer(tool_replies()) as server:
            async with _client(server) as client:
                await Runner.run(_agent(client, "responses"), TASK, run_config=_config(reports))
            sizes[name] = [request_tokens(r) for r in server.requests]
    assert len(sizes["plain"]) == len(sizes["compressed"]) == STEPS + 1
    assert sizes["compressed"][0] == sizes["plain"][0]
    assert sizes["compressed"][-1] < sizes["plain"][-1] * 0.7


async def test_the_filter_keeps_mcp_approvals_and_reasoning_with_their_calls() -> None:
    from agents.run_config import CallModelData, ModelInputData

    items: list[Any] = [{"role": "user", "content": TASK}]
    items += [
        {
            "type": "mcp_approval_request",
            "id": "mcpr_1",
            "server_label": "fs",
            "name": "delete_tmp",
            "arguments": "{}",
        },
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    ]
    for i in range(STEPS):
        items += [
            {"type": "reasoning", "id": f"rs_{i}", "summary": [], "encrypted_content": f"enc_{i}"},
            {"type": "function_call", "call_id": f"c{i}", "name": "read_file", "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"c{i}", "output": read_file(f"m{i}")},
        ]
    reports: list[CompressionReport] = []
    flt = compression_filter(policy(), on_report=reports.append)
    agent = Agent(name="reader", instructions=INSTRUCTIONS)
    before = [dict(i) for i in items]
    data = ModelInputData(input=items, instructions=INSTRUCTIONS)
    out = await flt(CallModelData(model_data=data, agent=agent, context=None))
    assert items == before  # the SDK's list is not mutated
    assert out.instructions == INSTRUCTIONS
    assert reports[0].tokens_after < reports[0].tokens_before
    assert check(out.input, "openai") == []
    kinds = [i.get("type") for i in out.input]
    assert "mcp_approval_request" in kinds and "mcp_approval_response" in kinds
    # a reasoning item never goes without the call after it, nor a call without its reasoning
    for k, item in enumerate(out.input):
        if item.get("type") == "reasoning":
            assert out.input[k + 1]["type"] == "function_call"
        if item.get("type") == "function_call":
            assert out.input[k - 1]["type"] == "reasoning"


async def test_a_streamed_run_is_compressed_the_same_way() -> None:
    reports: list[CompressionReport] = []
    with ProviderServer(tool_replies()) as server:
        async with _client(server) as client:
            run = Runner.run_streamed(
                _agent(client, "responses"), TASK, run_config=_config(reports)
            )
            async for _ in run.stream_events():
                pass
        requests = server.requests
    assert run.final_output == FINAL
    assert all(r.stream for r in requests) and len(requests) == len(reports) == STEPS + 1
    assert_all_valid(requests)
    hits = fired(reports)
    assert hits and 0 < hits[0] < STEPS
