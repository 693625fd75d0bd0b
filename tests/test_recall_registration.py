"""search_context and recall_context registered as plain tools outside run_tool_loop: with
cliver_core's AgentCore (its PolicyCompactor saves, its tools read them back under the same
owner) and with pydantic-ai's Agent (pydantic_ai_tool; the compression capability saves under
the run's conversation_id), each driven over real HTTP through the local wire-protocol test
server: the model searches, then recalls the span by the id the search gave, and the dropped
fact reaches it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from _cliver_helpers import binding, calls, wire_messages
from _recall_cases import FACT, PASSAGE, buried
from agent_adapter import FunctionTool, Message
from agent_adapter import ToolCall as WireCall
from agent_adapter.context import (
    CompressionPolicy,
    MemoryStore,
    RemoveOldMessages,
    recall_tool,
    search_tool,
)
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import AgentCore, ModelBindings, PolicyCompactor

QUERY = {"query": "deploy key vault path"}


def _history() -> list[Message]:
    return [Message(role, text) for role, text in buried()]


def _policy(store: MemoryStore) -> CompressionPolicy:
    return CompressionPolicy(
        threshold_tokens=600, target_tokens=400, steps=[RemoveOldMessages(save_to=store)]
    )


def _scripted(search: FunctionTool, server: ProviderServer) -> FunctionTool:
    """``search`` that, once it answered, scripts the model's next two replies: a
    recall_context call with the first passage's id and offset, then the answer."""

    async def searching(args: dict[str, Any], ctx: Any = None) -> str:
        found = await search(args, ctx)
        hit = PASSAGE.search(found)
        if hit is not None:
            recall = {"id": hit.group(1), "offset": int(hit.group(2))}
            server.add(
                Reply(tool_calls=(WireCall("c2", "recall_context", json.dumps(recall)),)),
                Reply(text="secret/deploy/blue-heron"),
            )
        return found

    return FunctionTool(search.name, search.description, search.parameters, searching)


def _tool_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


@pytest.mark.parametrize("conversation", [None, "chat-7"])
async def test_agent_core_registers_both_tools_and_reads_what_its_compactor_saved(
    conversation: str | None,
) -> None:
    store = MemoryStore()
    compactor = PolicyCompactor(_policy(store), conversation=conversation)
    async with ProviderServer() as server:
        server.add(calls(("c1", "search_context", QUERY)))
        tools = [_scripted(search_tool(store), server), recall_tool(store, max_chars=2000)]
        async with AgentCore(
            ModelBindings(llm=binding(server)), tools, context_compactor=compactor
        ) as agent:
            response = await agent.chat("where does the deploy key live?", conversation=_history())
        assert response.message.content == "secret/deploy/blue-heron"
        first, second, third = (wire_messages(server, n) for n in range(3))
    assert "blue-heron" not in json.dumps(first)  # dropped before the first call
    assert "search_context(query)" in json.dumps(first)  # the note says it can be searched
    assert "secret/deploy/blue-heron" in _tool_texts(second)[-1]  # the search found it
    assert FACT in _tool_texts(third)[-1]  # and recall_context read the span back


async def test_agent_core_tools_read_only_their_own_conversation() -> None:
    store = MemoryStore()
    async with ProviderServer() as server:
        server.add(calls(("c1", "search_context", QUERY)), Reply(text="done"))
        async with AgentCore(
            ModelBindings(llm=binding(server)),
            [search_tool(store)],
            context_compactor=PolicyCompactor(_policy(store), conversation="chat-a"),
        ) as agent:
            await agent.chat("first", conversation=_history())
        server.add(calls(("c1", "search_context", QUERY)), Reply(text="done"))
        async with AgentCore(
            ModelBindings(llm=binding(server)),
            [search_tool(store)],
            context_compactor=PolicyCompactor(_policy(store), conversation="chat-b"),
        ) as agent:
            await agent.chat("second", conversation=_history()[-4:])
        own, other = _tool_texts(wire_messages(server, 1)), _tool_texts(wire_messages(server, 3))
    assert "blue-heron" in own[-1]
    assert other[-1] == f"Nothing saved matches {QUERY['query']!r}."


async def test_pydantic_ai_agent_registers_both_tools_from_their_schemas() -> None:
    pytest.importorskip("pydantic_ai")
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai import messages as pm
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from agent_adapter.integrations.pydantic_ai import compression_capability, pydantic_ai_tool

    store = MemoryStore()

    history: list[Any] = []
    for m in _history():
        if m.role == "user":
            history.append(pm.ModelRequest(parts=[pm.UserPromptPart(content=m.text)]))
        else:
            history.append(pm.ModelResponse(parts=[pm.TextPart(content=m.text)]))
    with ProviderServer() as server:
        server.add(Reply(tool_calls=(WireCall("c1", "search_context", json.dumps(QUERY)),)))
        tools = [_scripted(search_tool(store), server), recall_tool(store, max_chars=2000)]
        client = AsyncOpenAI(base_url=server.openai_url, api_key="test", max_retries=0)
        async with client:
            model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
            agent = Agent(
                model,
                tools=[pydantic_ai_tool(t) for t in tools],
                capabilities=[compression_capability(_policy(store))],
            )
            result = await agent.run("where does the deploy key live?", message_history=history)
        assert result.output == "secret/deploy/blue-heron"
        bodies = [r.body["messages"] for r in server.requests]
    assert "blue-heron" not in json.dumps(bodies[0])
    assert "secret/deploy/blue-heron" in _tool_texts(bodies[1])[-1]
    assert FACT in _tool_texts(bodies[2])[-1]
