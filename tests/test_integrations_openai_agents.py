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
from agent_adapter import ConfigError, ToolCall
from agent_adapter.context import CompactionStates, CompressionReport
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


def _config(reports: list[CompressionReport] | None, **kw: Any) -> RunConfig:
    if reports is None:
        return RunConfig(tracing_disabled=True)
    return RunConfig(
        tracing_disabled=True,
        call_model_input_filter=compression_filter(policy(), on_report=reports.append, **kw),
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
            config = _config(reports, session=session)
            await Runner.run(agent, TASK, run_config=config, session=session)
            first = len(server.requests)
            server.add(
                Reply(tool_calls=[ToolCall("call_9", "read_file", '{"path": "src/mod_9.py"}')]),
                Reply(text="mod_9 sets retries=3 too."),
            )
            # another process: the same session, no compaction state
            config = _config(reports, session=session, states=CompactionStates())
            result = await Runner.run(
                agent, "And src/mod_9.py?", run_config=config, session=session
            )
        requests = server.requests
    assert result.final_output == "mod_9 sets retries=3 too."
    assert first == STEPS + 1 and len(requests) == STEPS + 3
    assert_all_valid(requests)
    resumed = reports[first:]
    assert all(r.tokens_after <= r.threshold_tokens for r in resumed)
    # compressed again from the session's full record
    assert not resumed[0].skipped and resumed[0].prefix_tokens == 0
    assert resumed[0].messages_before >= 2 * STEPS + 3
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


# -- compact once, then append (issue 20): the session is the conversation --------------------


async def _session_run(
    api: str, states: Any, session_id: str = "prefix"
) -> tuple[list[Any], list[CompressionReport]]:
    """Two runs of one session, ROUNDS tool rounds each: a conversation past the threshold."""
    reports: list[CompressionReport] = []
    session = SQLiteSession(session_id)
    with ProviderServer(pc.turn_replies(0)) as server:
        async with _client(server) as client:
            model: Any = (
                OpenAIResponsesModel(model="gpt-4o", openai_client=client)
                if api == "responses"
                else OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)
            )
            agent = Agent(
                name="reader",
                instructions=pc.INSTRUCTIONS,
                model=model,
                tools=[function_tool(pc.read_file)],
            )
            flt = compression_filter(
                pc.policy(), on_report=reports.append, session=session, states=states
            )
            config = RunConfig(tracing_disabled=True, call_model_input_filter=flt)
            for turn, text in enumerate(pc.TURNS):
                if turn:
                    server.add(*pc.turn_replies(turn))
                result = await Runner.run(
                    agent, text, run_config=config, session=session, max_turns=pc.ROUNDS + 2
                )
                assert result.final_output == pc.FINAL
        requests = server.requests
    return requests, reports


@pytest.mark.parametrize("api", ["responses", "chat"])
async def test_each_call_sends_the_previous_request_plus_the_new_items(api: str) -> None:
    requests, reports = await _session_run(api, CompactionStates())
    assert len(requests) == len(reports) == 2 * (pc.ROUNDS + 1)
    assert_all_valid(requests)
    assert pc.measure(requests, reports).compactions >= 2
    assert pc.assert_appends(requests, reports) >= len(requests) // 2
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)
    before = pc.measure(*await _session_run(api, False))
    pc.assert_better(f"OpenAI Agents SDK ({api})", pc.measure(requests, reports), before)


async def test_the_session_is_the_conversation_key() -> None:
    """One state a session, whatever its items (the first items' fingerprint changes while
    the history is shorter than them); two sessions, two states."""
    states = CompactionStates()
    await _session_run("responses", states, "k1")
    assert len(states) == 1
    await _session_run("responses", states, "k2")
    assert len(states) == 2


async def test_without_a_session_the_key_is_the_first_items() -> None:
    reports: list[CompressionReport] = []
    with ProviderServer(pc.one_long_turn()) as server:
        async with _client(server) as client:
            agent = Agent(
                name="reader",
                instructions=pc.INSTRUCTIONS,
                model=OpenAIResponsesModel(model="gpt-4o", openai_client=client),
                tools=[function_tool(pc.read_file)],
            )
            flt = compression_filter(
                pc.policy(), on_report=reports.append, states=CompactionStates()
            )
            config = RunConfig(tracing_disabled=True, call_model_input_filter=flt)
            await Runner.run(agent, pc.TURNS[0], run_config=config, max_turns=2 * pc.ROUNDS + 2)
        requests = server.requests
    assert any(pc.compacted(r) for r in reports)
    assert pc.assert_appends(requests, reports, keyed=False) >= len(requests) // 2


def test_a_session_must_have_an_id() -> None:
    assert compression_filter(policy(), session="user-42")
    with pytest.raises(ConfigError, match="session must be"):
        compression_filter(policy(), session=object())
    with pytest.raises(ConfigError, match="session must be"):
        compression_filter(policy(), session="  ")
    with pytest.raises(ConfigError, match="states must be a CompactionStates"):
        compression_filter(policy(), states="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["auto_previous_response_id", "previous_response_id"])
async def test_a_run_on_server_state_sends_its_new_items_unchanged(mode: str) -> None:
    """Regression: with the conversation kept on the server, the SDK gives the filter only the
    new items (the second call's input is the function_call_output alone); the filter read
    that as a result answering no call and the ConfigError killed the run."""
    replies = [Reply(tool_calls=[ToolCall("call_0", "read_file", '{"path": "a.py"}')])]
    replies.append(Reply(text="retries=3"))
    kw: dict[str, Any] = {"auto_previous_response_id": True}
    if mode == "previous_response_id":
        kw = {"previous_response_id": "resp_earlier"}
    with ProviderServer(replies) as server:
        async with _client(server) as client:
            result = await Runner.run(
                _agent(client, "responses"), "What is retries in a.py?",
                run_config=_config([]), **kw,
            )  # fmt: skip
        second = server.requests[-1].body
    assert result.final_output == "retries=3"
    assert isinstance(second, dict)
    assert [item["type"] for item in second["input"]] == ["function_call_output"]
