"""Shared setup for the provider tests: one ProviderServer, and each provider pointed at it.

The providers are the real classes on the real SDKs, talking HTTP to the local server; only
the base URL and a dummy API key differ from production use.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from agent_adapter import FunctionTool, Message, ModelRequest, RunContext, ToolCall
from agent_adapter.providers import (
    AnthropicModel,
    DeepSeekModel,
    GeminiModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
)
from agent_adapter.providers._base import ProviderModel
from agent_adapter.testing import ProviderServer

#: The providers every contract test runs against, by the protocol each speaks.
KINDS = ("chat", "responses", "anthropic", "gemini", "deepseek")
PROTOCOL = {
    "chat": "chat",
    "deepseek": "chat",
    "responses": "responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}
MODEL = {
    "chat": "gpt-4o",
    "deepseek": "deepseek-chat",
    "responses": "gpt-4o",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
}
CALL = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')


async def _weather(args: dict[str, Any], ctx: Any) -> str:
    return f"sunny in {args['city']}"


WEATHER = FunctionTool(
    name="get_weather",
    description="The weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    fn=_weather,
)


@pytest.fixture(scope="module")
def server() -> Iterator[ProviderServer]:
    """One server per test module; each test starts with an empty queue and record."""
    with ProviderServer() as running:
        yield running


@pytest.fixture
def srv(server: ProviderServer) -> ProviderServer:
    server.clear()
    return server


Make = Callable[..., ProviderModel]


@pytest.fixture
async def make(srv: ProviderServer) -> AsyncIterator[Make]:
    """``make(kind, **kwargs)``: the provider ``kind`` on the server, closed after the test."""
    built: list[ProviderModel] = []

    def factory(kind: str, **kwargs: Any) -> ProviderModel:
        model = build(kind, srv, **kwargs)
        built.append(model)
        return model

    yield factory
    for model in built:
        await model.aclose()


def build(kind: str, server: ProviderServer, **kwargs: Any) -> ProviderModel:
    """The provider ``kind`` on ``server`` (no SDK retries, a short timeout, unless given)."""
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("timeout_s", 10.0)
    kwargs.setdefault("api_key", "test-key")
    model = kwargs.pop("model", MODEL[kind])
    if kind == "chat":
        return OpenAIChatModel(model, base_url=server.openai_url, **kwargs)
    if kind == "deepseek":
        return DeepSeekModel(model, base_url=server.openai_url, **kwargs)
    if kind == "responses":
        return OpenAIResponsesModel(model, base_url=server.openai_url, **kwargs)
    if kind == "anthropic":
        return AnthropicModel(model, base_url=server.url, **kwargs)
    if kind == "gemini":
        return GeminiModel(model, base_url=server.url, **kwargs)
    raise AssertionError(kind)


def request(*messages: Message, ctx: Any = None, **kwargs: Any) -> ModelRequest:
    """A request with a system prompt and ``messages`` (default: one user question)."""
    convo = messages or (Message("user", "What is the weather in Paris?"),)
    return ModelRequest(
        messages=[Message("system", "You are terse."), *convo],
        ctx=ctx if ctx is not None else RunContext(),
        **kwargs,
    )
