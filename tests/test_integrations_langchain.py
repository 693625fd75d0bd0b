"""LangChain v1 ``create_agent`` with CompressionMiddleware, and LangGraph's prebuilt ReAct
agent with compression_hook: their real agent loops, ChatOpenAI over real HTTP to the local
server, an InMemorySaver checkpointer."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")
pytest.importorskip("langgraph.prebuilt")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from _integration_cases import (
    FINAL,
    STEPS,
    assert_all_valid,
    fired,
    policy,
    read_file,
    request_tokens,
    tool_replies,
)
from agent_adapter.context import CompressionReport
from agent_adapter.integrations.langchain import CompressionMiddleware
from agent_adapter.integrations.langgraph import compression_hook
from agent_adapter.testing import ProviderServer

TASK = "Read src/mod_0.py to src/mod_5.py one at a time and tell me the retries setting."
read_file_tool = tool(read_file)


def _model(server: ProviderServer) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4o", base_url=server.openai_url, api_key="test", max_retries=0)


def _agent(server: ProviderServer, reports: list[CompressionReport] | None) -> Any:
    middleware = (
        [] if reports is None else [CompressionMiddleware(policy(), on_report=reports.append)]
    )
    return create_agent(
        _model(server),
        [read_file_tool],
        system_prompt="You are a careful code reader.",
        middleware=middleware,
        checkpointer=InMemorySaver(),
    )


def _assert_full_history(messages: list[Any], rounds: int) -> None:
    """The checkpointed history: every message of the run, tool results in full."""
    assert isinstance(messages[0], HumanMessage)
    tools = [m for m in messages if isinstance(m, ToolMessage)]
    assert len(tools) == rounds
    assert all(m.content == read_file(f"src/mod_{i}.py") for i, m in enumerate(tools))
    calls = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    assert calls == [m.tool_call_id for m in tools]
    assert isinstance(messages[-1], AIMessage) and messages[-1].content == FINAL


def test_create_agent_compresses_mid_loop_and_keeps_the_checkpoint_whole() -> None:
    reports: list[CompressionReport] = []
    config = {"configurable": {"thread_id": "t1"}}
    with ProviderServer(tool_replies()) as server:
        agent = _agent(server, reports)
        state = agent.invoke({"messages": [{"role": "user", "content": TASK}]}, config)
        requests = server.requests
    assert len(requests) == STEPS + 1 == len(reports)
    assert_all_valid(requests)
    hits = fired(reports)
    assert hits and 0 < hits[0] < STEPS  # mid-loop, not only at the end
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)
    # the system prompt went out untouched every time
    assert all(
        r.body["messages"][0] == {"role": "system", "content": "You are a careful code reader."}
        for r in requests
    )
    # what was sent shrank; what was stored did not
    assert len(requests[-1].body["messages"]) < len(state["messages"]) + 1
    _assert_full_history(state["messages"], STEPS)


async def test_create_agent_async_resumes_from_the_checkpoint() -> None:
    reports: list[CompressionReport] = []
    config = {"configurable": {"thread_id": "t2"}}
    with ProviderServer(tool_replies()) as server:
        agent = _agent(server, reports)
        await agent.ainvoke({"messages": [{"role": "user", "content": TASK}]}, config)
        first = len(server.requests)
        server.add(*tool_replies(start=STEPS)[-3:])  # two more rounds, then the answer
        state = await agent.ainvoke(
            {"messages": [{"role": "user", "content": "And the two after those?"}]}, config
        )
        requests = server.requests
    assert first == STEPS + 1 and len(requests) == STEPS + 4
    assert_all_valid(requests)
    # the resumed thread starts from the full checkpoint and is compressed again
    resumed = reports[first:]
    assert all(r.messages_before >= 2 * STEPS + 3 for r in resumed)
    assert all(not r.skipped and r.tokens_after <= r.threshold_tokens for r in resumed)
    messages = state["messages"]
    assert len(messages) == (2 + 2 * STEPS) + (1 + 2 * 2 + 1)
    assert sum(isinstance(m, ToolMessage) for m in messages) == STEPS + 2


def test_without_the_middleware_every_request_carries_the_whole_history() -> None:
    with ProviderServer(tool_replies()) as server:
        _agent(server, None).invoke(
            {"messages": [{"role": "user", "content": TASK}]}, {"configurable": {"thread_id": "b"}}
        )
        plain = server.requests
    with ProviderServer(tool_replies()) as server:
        _agent(server, []).invoke(
            {"messages": [{"role": "user", "content": TASK}]}, {"configurable": {"thread_id": "c"}}
        )
        compressed = server.requests
    assert len(plain) == len(compressed) == STEPS + 1
    before = [request_tokens(r) for r in plain]
    after = [request_tokens(r) for r in compressed]
    assert after[0] == before[0]  # under the threshold: sent as is
    assert after[-1] < before[-1] * 0.7


def _react(server: ProviderServer, reports: list[CompressionReport]) -> Any:
    from langgraph.prebuilt import create_react_agent

    with warnings.catch_warnings():  # deprecated in LangGraph 1.x in favour of create_agent
        warnings.simplefilter("ignore")
        return create_react_agent(
            _model(server),
            [read_file_tool],
            pre_model_hook=compression_hook(policy(), on_report=reports.append),
            checkpointer=InMemorySaver(),
        )


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_langgraph_pre_model_hook(mode: str) -> None:
    reports: list[CompressionReport] = []
    config = {"configurable": {"thread_id": "r1"}}
    with ProviderServer(tool_replies()) as server:
        agent = _react(server, reports)
        inputs = {"messages": [{"role": "user", "content": TASK}]}
        if mode == "sync":
            state = agent.invoke(inputs, config)
        else:
            state = await agent.ainvoke(inputs, config)
        server.add(*tool_replies(start=STEPS)[-2:])
        state = await agent.ainvoke(
            {"messages": [{"role": "user", "content": "One more?"}]}, config
        )
        requests = server.requests
    assert len(requests) == len(reports) == STEPS + 3
    assert_all_valid(requests)
    hits = fired(reports)
    assert hits and 0 < hits[0] < STEPS
    # llm_input_messages only: the checkpoint holds every message of both runs
    messages = state["messages"]
    assert len(messages) == (2 + 2 * STEPS) + 4
    assert [m.content for m in messages if isinstance(m, ToolMessage)][:STEPS] == [
        read_file(f"src/mod_{i}.py") for i in range(STEPS)
    ]
    assert len(requests[-1].body["messages"]) < len(messages)


async def test_a_streamed_agent_is_compressed_the_same_way() -> None:
    reports: list[CompressionReport] = []
    with ProviderServer(tool_replies()) as server:
        model = ChatOpenAI(
            model="gpt-4o", base_url=server.openai_url, api_key="test", streaming=True
        )
        agent = create_agent(
            model,
            [read_file_tool],
            middleware=[CompressionMiddleware(policy(), on_report=reports.append)],
        )
        chunks = [
            c
            async for c in agent.astream(
                {"messages": [{"role": "user", "content": TASK}]}, stream_mode="messages"
            )
        ]
        requests = server.requests
    assert chunks
    assert all(r.stream for r in requests) and len(requests) == len(reports) == STEPS + 1
    assert_all_valid(requests)
    hits = fired(reports)
    assert hits and 0 < hits[0] < STEPS
