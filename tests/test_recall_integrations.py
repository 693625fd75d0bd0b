"""Two conversations in one process, one store: with each framework integration (LangChain's
create_agent, LangGraph's prebuilt ReAct agent, pydantic-ai's Agent, the OpenAI Agents SDK's
Runner, Google ADK's Runner) compressing their
histories and search_context / recall_context registered through the integration's tool
converter, each conversation finds what was dropped from its own history, and searching or
recalling the other's answers exactly as an empty store does ("unknown, expired and wrong
owner answer alike"). Driven over real HTTP through the local wire-protocol test server."""

from __future__ import annotations

import importlib
import json
import uuid
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from _cliver_helpers import calls
from _recall_cases import FACT, PASSAGE, buried
from agent_adapter import ConfigError, Message, RunContext
from agent_adapter.context import (
    CompressionPolicy,
    MemoryStore,
    RemoveOldMessages,
    recall_tool,
    search_tool,
)
from agent_adapter.integrations._core import Compressor
from agent_adapter.testing import ProviderServer, Reply

FACTS = {
    "a": FACT,
    "b": "the staging database password rotates every tuesday at noon",
}
QUERIES = {"a": "deploy key vault path", "b": "staging database password rotation"}
OTHER = {"a": "b", "b": "a"}

#: one conversation: (server, store, thread, history as role/text pairs) -> the tool results
#: of the agent's second model request, by tool call id
Run = Callable[[ProviderServer, MemoryStore, str, list[tuple[str, str]]], Awaitable[list[Any]]]


def _history(thread: str) -> list[tuple[str, str]]:
    return buried(FACTS[thread])


def _policy(store: MemoryStore) -> CompressionPolicy:
    return CompressionPolicy(
        threshold_tokens=600, target_tokens=400, steps=[RemoveOldMessages(save_to=store)]
    )


def _tool_results(body: Any, names: list[str]) -> dict[str, str]:
    """The last ``len(names)`` tool results of a request, in call order, by ``names``."""
    if "contents" in body:  # Gemini: function responses (no call ids), in call order
        parts = [p for c in body["contents"] for p in c.get("parts", [])]
        texts = [
            str(p["functionResponse"]["response"]["result"])
            for p in parts
            if "functionResponse" in p
        ]
    else:
        texts = [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]
    return dict(zip(names, texts[-len(names) :], strict=True))


async def _langchain(
    server: ProviderServer, store: MemoryStore, thread: str, history: list[tuple[str, str]]
) -> list[Any]:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    from agent_adapter.integrations.langchain import CompressionMiddleware, langchain_tool

    model = ChatOpenAI(model="gpt-4o", base_url=server.openai_url, api_key="test", max_retries=0)
    tools = [langchain_tool(search_tool(store)), langchain_tool(recall_tool(store, max_chars=2000))]
    agent = create_agent(
        model,
        tools,
        middleware=[CompressionMiddleware(_policy(store))],
        checkpointer=InMemorySaver(),
    )
    messages = [{"role": r, "content": t} for r, t in history]
    messages.append({"role": "user", "content": "what did I note?"})
    # sync: the converter's sync path (StructuredTool.func)
    agent.invoke({"messages": messages}, {"configurable": {"thread_id": thread}})
    return [r.body for r in server.requests]


async def _langgraph(
    server: ProviderServer, store: MemoryStore, thread: str, history: list[tuple[str, str]]
) -> list[Any]:
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import create_react_agent

    from agent_adapter.integrations.langgraph import compression_hook, langchain_tool

    model = ChatOpenAI(model="gpt-4o", base_url=server.openai_url, api_key="test", max_retries=0)
    tools = [langchain_tool(search_tool(store)), langchain_tool(recall_tool(store, max_chars=2000))]
    with warnings.catch_warnings():  # deprecated in LangGraph 1.x in favour of create_agent
        warnings.simplefilter("ignore")
        agent = create_react_agent(
            model,
            tools,
            pre_model_hook=compression_hook(_policy(store)),
            checkpointer=InMemorySaver(),
        )
    messages = [{"role": r, "content": t} for r, t in history]
    messages.append({"role": "user", "content": "what did I note?"})
    await agent.ainvoke({"messages": messages}, {"configurable": {"thread_id": thread}})
    return [r.body for r in server.requests]


async def _pydantic_ai(
    server: ProviderServer, store: MemoryStore, thread: str, history: list[tuple[str, str]]
) -> list[Any]:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai import messages as pm
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from agent_adapter.integrations.pydantic_ai import compression_capability, pydantic_ai_tool

    natives: list[Any] = [
        pm.ModelRequest(parts=[pm.UserPromptPart(content=t)])
        if r == "user"
        else pm.ModelResponse(parts=[pm.TextPart(content=t)])
        for r, t in history
    ]
    client = AsyncOpenAI(base_url=server.openai_url, api_key="test", max_retries=0)
    async with client:
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
        tools = [pydantic_ai_tool(search_tool(store)), pydantic_ai_tool(recall_tool(store))]
        agent = Agent(model, tools=tools, capabilities=[compression_capability(_policy(store))])
        await agent.run("what did I note?", message_history=natives, conversation_id=thread)
    return [r.body for r in server.requests]


async def _openai_agents(
    server: ProviderServer, store: MemoryStore, thread: str, history: list[tuple[str, str]]
) -> list[Any]:
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
    from openai import AsyncOpenAI

    from agent_adapter.integrations.openai_agents import agents_tool, compression_filter

    client = AsyncOpenAI(base_url=server.openai_url, api_key="test", max_retries=0)
    async with client:
        model = OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)
        tools = [agents_tool(search_tool(store)), agents_tool(recall_tool(store))]
        agent = Agent(name="reader", model=model, tools=tools)
        config = RunConfig(
            tracing_disabled=True,
            call_model_input_filter=compression_filter(_policy(store), session=thread),
        )
        items: list[Any] = [{"role": r, "content": t} for r, t in history]
        items.append({"role": "user", "content": "what did I note?"})
        await Runner.run(agent, items, run_config=config)
    return [r.body for r in server.requests]


async def _google_adk(
    server: ProviderServer, store: MemoryStore, thread: str, history: list[tuple[str, str]]
) -> list[Any]:
    from google.adk.agents import LlmAgent
    from google.adk.events import Event
    from google.adk.models import Gemini
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from agent_adapter.integrations.google_adk import adk_tool, compression_callback

    agent = LlmAgent(
        name="reader",
        model=Gemini(model="gemini-2.5-flash", base_url=server.url),
        tools=[adk_tool(search_tool(store)), adk_tool(recall_tool(store))],
        before_model_callback=compression_callback(_policy(store)),
    )
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u", session_id=thread)
    for r, t in history:
        role = "user" if r == "user" else "model"
        content = types.Content(role=role, parts=[types.Part(text=t)])
        event = Event(invocation_id="h", author="user" if r == "user" else "reader")
        event.content = content
        await service.append_event(session, event)
    runner = Runner(agent=agent, app_name="app", session_service=service)
    message = types.Content(role="user", parts=[types.Part(text="what did I note?")])
    async for _ in runner.run_async(user_id="u", session_id=thread, new_message=message):
        pass
    return [r.body for r in server.requests]


FRAMEWORKS: dict[str, Run] = {
    "langchain": _langchain,
    "langgraph": _langgraph,
    "pydantic_ai": _pydantic_ai,
    "openai_agents": _openai_agents,
    "google_adk": _google_adk,
}
MODULES = {
    "langchain": "langchain",
    "langgraph": "langgraph",
    "pydantic_ai": "pydantic_ai",
    "openai_agents": "agents",
    "google_adk": "google.adk",
}


#: LangGraph also takes int and uuid.UUID thread ids: a UUID one was read as no id (the
#: shared default owner), so the other thread's search found this one's dropped history
_CASES = [(f, "str") for f in sorted(FRAMEWORKS)] + [("langchain", "uuid"), ("langgraph", "uuid")]


@pytest.mark.parametrize(("framework", "ids"), _CASES)
async def test_two_conversations_read_only_their_own_dropped_history(
    framework: str, ids: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip(MODULES[framework])
    key: dict[str, Any] = {"a": "a", "b": "b"}
    if ids == "uuid":
        key = {"a": uuid.uuid4(), "b": uuid.uuid4()}
    if framework == "google_adk":
        monkeypatch.setenv("GOOGLE_API_KEY", "test")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    run = FRAMEWORKS[framework]
    store = MemoryStore()
    found: dict[str, dict[str, str]] = {}
    own_id: dict[str, str] = {}
    for thread in ("a", "b"):
        other = OTHER[thread]
        wanted = [
            ("own", "search_context", {"query": QUERIES[thread]}),
            ("other", "search_context", {"query": QUERIES[other]}),
        ]
        if other in own_id:  # the id the other conversation's search gave it
            wanted.append(("recall", "recall_context", {"id": own_id[other]}))
        with ProviderServer() as server:
            server.add(calls(*wanted), Reply(text="done"))
            bodies = await run(server, store, key[thread], _history(thread))
        assert FACTS[thread] not in json.dumps(bodies[0])  # dropped before the first call
        found[thread] = _tool_results(bodies[1], [name for name, _, _ in wanted])
        hit = PASSAGE.search(found[thread]["own"])
        assert hit is not None, found[thread]["own"]
        own_id[thread] = hit.group(1)
    empty = MemoryStore()
    for thread in ("a", "b"):
        assert FACTS[thread].split()[-1] in found[thread]["own"]  # its own fact, found
        nothing = await search_tool(empty)({"query": QUERIES[OTHER[thread]]})
        assert found[thread]["other"] == nothing  # the other's: as nothing saved
    unknown = await recall_tool(empty, max_chars=2000)({"id": own_id["a"]})
    assert found["b"]["recall"] == unknown  # the other's id: as an unknown one
    # and under the owner it was saved for, that id reads the fact back
    owner = "app/u/a/reader" if framework == "google_adk" else str(key["a"])  # ADK: app/user/...
    recalled = await recall_tool(store)({"id": own_id["a"]}, RunContext(thread_id=owner))
    assert FACTS["a"] in recalled


@pytest.mark.parametrize("mode", ["async", "sync"])
async def test_compressor_saves_under_the_conversation_and_default_without_one(mode: str) -> None:
    query = {"query": QUERIES["a"]}
    nothing = await search_tool(MemoryStore())(query)
    for conversation in ("c1", None):
        store = MemoryStore()
        compressor = Compressor(_policy(store), "agent_adapter", "test", states=False)
        history = [Message(r, t) for r, t in _history("a")]
        if mode == "sync":
            compressor.run_sync(history, conversation=conversation)
        else:
            await compressor.run(history, conversation=conversation)
        search = search_tool(store)
        own, default = await search(query, RunContext(thread_id="c1")), await search(query)
        if conversation is None:  # no id: the process-wide default owner, as before
            assert "blue-heron" in default and own == nothing
        else:
            assert "blue-heron" in own and default == nothing
        assert await search(query, RunContext(thread_id="c2")) == nothing


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("langchain", "langchain_tool"),
        ("langgraph", "langchain_tool"),
        ("pydantic_ai", "pydantic_ai_tool"),
        ("openai_agents", "agents_tool"),
        ("google_adk", "adk_tool"),
    ],
)
def test_each_tool_converter_takes_only_a_function_tool(module: str, name: str) -> None:
    pytest.importorskip(MODULES[module])  # google-adk is not in the dev extra (.ci/run adds it)
    convert = getattr(importlib.import_module(f"agent_adapter.integrations.{module}"), name)
    with pytest.raises(ConfigError, match=rf"\A{name}: tool must be a FunctionTool, got dict\Z"):
        convert({"name": "search_context"})
