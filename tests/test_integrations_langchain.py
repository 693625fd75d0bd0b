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

import _prefix_cases as pc
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
from agent_adapter import ConfigError
from agent_adapter.context import CompactionStates, CompressionReport
from agent_adapter.integrations.langchain import CompressionMiddleware
from agent_adapter.integrations.langgraph import compression_hook
from agent_adapter.testing import ProviderServer, RecordedRequest

TASK = "Read src/mod_0.py to src/mod_5.py one at a time and tell me the retries setting."
read_file_tool = tool(read_file)


def _model(server: ProviderServer) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4o", base_url=server.openai_url, api_key="test", max_retries=0)


def _agent(
    server: ProviderServer,
    reports: list[CompressionReport] | None,
    *,
    saver: InMemorySaver | None = None,
    states: CompactionStates | None = None,
) -> Any:
    middleware = (
        []
        if reports is None
        else [CompressionMiddleware(policy(), on_report=reports.append, states=states)]
    )
    return create_agent(
        _model(server),
        [read_file_tool],
        system_prompt="You are a careful code reader.",
        middleware=middleware,
        checkpointer=saver or InMemorySaver(),
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
    saver = InMemorySaver()
    with ProviderServer(tool_replies()) as server:
        agent = _agent(server, reports, saver=saver)
        await agent.ainvoke({"messages": [{"role": "user", "content": TASK}]}, config)
        first = len(server.requests)
        server.add(*tool_replies(start=STEPS)[-3:])  # two more rounds, then the answer
        await agent.ainvoke(
            {"messages": [{"role": "user", "content": "And the two after those?"}]}, config
        )
        second = len(server.requests)
        # a restarted process: the same checkpoints, no compaction state
        server.add(*tool_replies(start=STEPS + 2)[-3:])
        restarted = _agent(server, reports, saver=saver, states=CompactionStates())
        state = await restarted.ainvoke(
            {"messages": [{"role": "user", "content": "And two more?"}]}, config
        )
        requests = server.requests
    assert first == STEPS + 1 and second == STEPS + 4 and len(requests) == STEPS + 7
    assert_all_valid(requests)
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)
    # the same process: the thread goes on from the request it sent last
    assert reports[first].prefix_tokens > 0
    # restarted: compressed again from the full checkpoint
    assert reports[second].prefix_tokens == 0 and not reports[second].skipped
    assert reports[second].messages_before >= 2 * STEPS + 3 + 4 + 3
    messages = state["messages"]
    assert len(messages) == (2 + 2 * STEPS) + 2 * (1 + 2 * 2 + 1)
    assert sum(isinstance(m, ToolMessage) for m in messages) == STEPS + 4


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


# -- compact once, then append (issue 20): the thread is the conversation ---------------------


def _prefix_middleware(reports: list[CompressionReport], states: Any) -> CompressionMiddleware:
    return CompressionMiddleware(pc.policy(), on_report=reports.append, states=states)


async def _two_turns(
    agent: Any, server: ProviderServer, config: dict[str, Any] | None
) -> list[RecordedRequest]:
    """The growing conversation: two user turns of ROUNDS tool rounds each on one thread."""
    for turn, text in enumerate(pc.TURNS):
        if turn:
            server.add(*pc.turn_replies(turn))
        await agent.ainvoke({"messages": [{"role": "user", "content": text}]}, config)
    return server.requests


async def _create_agent_run(
    states: Any, thread: str = "prefix"
) -> tuple[list[RecordedRequest], list[CompressionReport]]:
    reports: list[CompressionReport] = []
    with ProviderServer(pc.turn_replies(0)) as server:
        agent = create_agent(
            _model(server),
            [tool(pc.read_file)],
            system_prompt=pc.INSTRUCTIONS,
            middleware=[_prefix_middleware(reports, states)],
            checkpointer=InMemorySaver(),
        )
        requests = await _two_turns(agent, server, {"configurable": {"thread_id": thread}})
    return requests, reports


async def test_create_agent_sends_the_previous_request_plus_the_new_messages() -> None:
    requests, reports = await _create_agent_run(CompactionStates())
    assert len(requests) == len(reports) == 2 * (pc.ROUNDS + 1)
    assert_all_valid(requests)
    assert pc.measure(requests, reports).compactions >= 2
    assert pc.assert_appends(requests, reports) >= len(requests) // 2
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)
    before = pc.measure(*await _create_agent_run(False))
    pc.assert_better("LangChain create_agent", pc.measure(requests, reports), before)


def _react_agent(server: ProviderServer, reports: list[CompressionReport], states: Any) -> Any:
    from langgraph.prebuilt import create_react_agent

    hook = compression_hook(pc.policy(), on_report=reports.append, states=states)
    with warnings.catch_warnings():  # deprecated in LangGraph 1.x in favour of create_agent
        warnings.simplefilter("ignore")
        return create_react_agent(
            _model(server), [tool(pc.read_file)], pre_model_hook=hook, checkpointer=InMemorySaver()
        )


async def _react_run(states: Any) -> tuple[list[RecordedRequest], list[CompressionReport]]:
    reports: list[CompressionReport] = []
    with ProviderServer(pc.turn_replies(0)) as server:
        agent = _react_agent(server, reports, states)
        requests = await _two_turns(agent, server, {"configurable": {"thread_id": "prefix"}})
    return requests, reports


async def test_langgraph_hook_sends_the_previous_request_plus_the_new_messages() -> None:
    requests, reports = await _react_run(CompactionStates())
    assert len(requests) == len(reports) == 2 * (pc.ROUNDS + 1)
    assert_all_valid(requests)
    assert pc.measure(requests, reports).compactions >= 2
    assert pc.assert_appends(requests, reports) >= len(requests) // 2
    before = pc.measure(*await _react_run(False))
    pc.assert_better("LangGraph create_react_agent", pc.measure(requests, reports), before)


async def test_the_thread_is_the_conversation_key() -> None:
    """One state a thread, whatever its messages (a fingerprint of the first messages would
    change while the thread is shorter than them); without a thread id, the fingerprint."""
    states = CompactionStates()
    await _create_agent_run(states, "a")
    assert len(states) == 1
    await _create_agent_run(states, "b")
    assert len(states) == 2
    # another conversation under b's id takes a branch of its own (it never replaces, nor is
    # taken for, the first one's state)
    await _create_agent_run(states, "b")
    assert len(states) == 3
    loose = CompactionStates()
    reports: list[CompressionReport] = []
    with ProviderServer(pc.one_long_turn()) as server:
        agent = create_agent(
            _model(server), [tool(pc.read_file)], middleware=[_prefix_middleware(reports, loose)]
        )
        await agent.ainvoke({"messages": [{"role": "user", "content": pc.TURNS[0]}]})
        requests = server.requests
    assert any(pc.compacted(r) for r in reports)
    assert pc.assert_appends(requests, reports, keyed=False) >= len(requests) // 2
    assert len(loose) >= 1


def test_two_agents_of_one_thread_keep_states_of_their_own() -> None:
    """Agents run inside a parent graph's nodes share its thread id; the key adds the
    subgraph's path, so each goes on from its own previous request."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class Task(TypedDict, total=False):
        task: str
        answers: list[str]

    states = CompactionStates()
    reports: dict[str, list[CompressionReport]] = {"reader_a": [], "reader_b": []}
    with ProviderServer([*pc.one_long_turn(), *pc.one_long_turn()]) as server:

        def node(name: str) -> Any:
            agent = create_agent(
                _model(server),
                [tool(pc.read_file)],
                middleware=[_prefix_middleware(reports[name], states)],
            )

            def run(state: Task) -> Task:
                text = f"{name}: {state['task']}"
                out = agent.invoke({"messages": [{"role": "user", "content": text}]})
                return {"answers": [*state.get("answers", []), out["messages"][-1].content]}

            return run

        graph = StateGraph(Task)
        graph.add_node("reader_a", node("reader_a"))
        graph.add_node("reader_b", node("reader_b"))
        graph.add_edge(START, "reader_a")
        graph.add_edge("reader_a", "reader_b")
        graph.add_edge("reader_b", END)
        app = graph.compile(checkpointer=InMemorySaver())
        app.invoke({"task": pc.TURNS[0]}, {"configurable": {"thread_id": "parent"}})
        requests = server.requests
    n = 2 * pc.ROUNDS + 1
    assert len(requests) == 2 * n
    assert len(states) == 2
    for k, name in enumerate(reports):
        assert any(pc.compacted(r) for r in reports[name])
        assert pc.assert_appends(requests[k * n : (k + 1) * n], reports[name]) >= n // 2


def test_the_sync_hook_keys_the_state_by_the_thread() -> None:
    states = CompactionStates()
    for thread in ("s1", "s2"):
        reports: list[CompressionReport] = []
        with ProviderServer(pc.one_long_turn()) as server:
            agent = _react_agent(server, reports, states)
            agent.invoke(
                {"messages": [{"role": "user", "content": pc.TURNS[0]}]},
                {"configurable": {"thread_id": thread}},
            )
            assert pc.assert_appends(server.requests, reports) >= len(reports) // 2
        assert any(pc.compacted(r) for r in reports)
    assert len(states) == 2


def test_states_must_be_compaction_states() -> None:
    with pytest.raises(ConfigError, match="states must be a CompactionStates"):
        CompressionMiddleware(policy(), states={})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="states must be a CompactionStates"):
        compression_hook(policy(), states=True)  # type: ignore[arg-type]
