"""The closing note's figures: each framework's real agent loop on the tool task of
``_integration_cases``, once without and once with its integration, against the local server.

Prints, per framework, the tokens (o200k, of the JSON body) the server received for each model
call without and with the integration, and whether every request passed check(). Run from the
repository root: ``python tests/_integration_figures.py``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _integration_cases import assert_all_valid, request_tokens, tool_replies
from agent_adapter.context import CompressionReport
from agent_adapter.testing import ProviderServer, RecordedRequest, Reply

TASK = "Read src/mod_0.py to src/mod_5.py one at a time and tell me the retries setting."
Run = Callable[[ProviderServer, "list[CompressionReport] | None"], Awaitable[None]]


async def langchain_run(server: ProviderServer, reports: list[CompressionReport] | None) -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    from _integration_cases import policy, read_file
    from agent_adapter.integrations.langchain import CompressionMiddleware

    mw = [] if reports is None else [CompressionMiddleware(policy(), on_report=reports.append)]
    model = ChatOpenAI(model="gpt-4o", base_url=server.openai_url, api_key="test")
    agent = create_agent(model, [tool(read_file)], middleware=mw)
    await agent.ainvoke({"messages": [{"role": "user", "content": TASK}]})


async def langgraph_run(server: ProviderServer, reports: list[CompressionReport] | None) -> None:
    import warnings

    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    from _integration_cases import policy, read_file
    from agent_adapter.integrations.langgraph import compression_hook

    model = ChatOpenAI(model="gpt-4o", base_url=server.openai_url, api_key="test")
    hook = None if reports is None else compression_hook(policy(), on_report=reports.append)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, [tool(read_file)], pre_model_hook=hook)
    await agent.ainvoke({"messages": [{"role": "user", "content": TASK}]})


async def agents_run(server: ProviderServer, reports: list[CompressionReport] | None) -> None:
    from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, function_tool
    from openai import AsyncOpenAI

    from _integration_cases import policy, read_file
    from agent_adapter.integrations.openai_agents import compression_filter

    async with AsyncOpenAI(base_url=server.openai_url, api_key="test") as client:
        agent = Agent(
            name="reader",
            instructions="You are a careful code reader.",
            model=OpenAIResponsesModel(model="gpt-4o", openai_client=client),
            tools=[function_tool(read_file)],
        )
        flt = None if reports is None else compression_filter(policy(), on_report=reports.append)
        config = RunConfig(tracing_disabled=True, call_model_input_filter=flt)
        await Runner.run(agent, TASK, run_config=config)


async def pydantic_ai_run(server: ProviderServer, reports: list[CompressionReport] | None) -> None:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from _integration_cases import policy, read_file
    from agent_adapter.integrations.pydantic_ai import compression_capability

    async with AsyncOpenAI(base_url=server.openai_url, api_key="test") as client:
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
        caps = (
            [] if reports is None else [compression_capability(policy(), on_report=reports.append)]
        )
        await Agent(model, tools=[read_file], capabilities=caps).run(TASK)


def _signed(replies: list[Reply]) -> list[Reply]:
    return [
        Reply(
            thinking=f"step {i}",
            signature=base64.b64encode(f"sig_{i}".encode()).decode(),
            tool_calls=r.tool_calls,
        )
        if r.tool_calls
        else r
        for i, r in enumerate(replies)
    ]


async def adk_run(server: ProviderServer, reports: list[CompressionReport] | None) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.models import Gemini
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from _integration_cases import policy, read_file
    from agent_adapter.integrations.google_adk import compression_callback

    os.environ.setdefault("GOOGLE_API_KEY", "test")
    callback = None if reports is None else compression_callback(policy(), on_report=reports.append)
    agent = LlmAgent(
        name="reader",
        model=Gemini(model="gemini-2.5-flash", base_url=server.url),
        tools=[read_file],
        before_model_callback=callback,
    )
    service = InMemorySessionService()
    session = await service.create_session(app_name="a", user_id="u")
    runner = Runner(agent=agent, app_name="a", session_service=service)
    message = types.Content(role="user", parts=[types.Part(text=TASK)])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass


RUNS: list[tuple[str, str, Run, Callable[[], list[Reply]]]] = [
    ("LangChain create_agent", "langchain", langchain_run, tool_replies),
    ("LangGraph create_react_agent", "langgraph", langgraph_run, tool_replies),
    ("OpenAI Agents SDK (Responses)", "agents", agents_run, tool_replies),
    ("pydantic-ai (Chat)", "pydantic_ai", pydantic_ai_run, tool_replies),
    ("Google ADK (Gemini)", "google.adk", adk_run, lambda: _signed(tool_replies(with_ids=False))),
]


async def _measure(run: Run, replies: list[Reply], with_it: bool) -> list[RecordedRequest]:
    with ProviderServer(replies) as server:
        await run(server, [] if with_it else None)
        return server.requests


async def main() -> None:
    import importlib.util

    print("| framework | model calls | tokens received per call, without -> with | valid |")
    print("| --- | --- | --- | --- |")
    for label, module, run, replies in RUNS:
        if importlib.util.find_spec(module.split(".")[0]) is None or (
            "." in module and importlib.util.find_spec(module) is None
        ):
            print(f"| {label} | not installed | | |")
            continue
        plain = await _measure(run, replies(), False)
        compressed = await _measure(run, replies(), True)
        valid = "yes"
        try:
            assert_all_valid(plain)
            assert_all_valid(compressed)
        except AssertionError as e:
            valid = f"NO: {e}"
        pairs = ", ".join(
            f"{request_tokens(a)}->{request_tokens(b)}"
            for a, b in zip(plain, compressed, strict=True)
        )
        print(f"| {label} | {len(compressed)} | {pairs} | {valid} |")


if __name__ == "__main__":
    asyncio.run(main())
