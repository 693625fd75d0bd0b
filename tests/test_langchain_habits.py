"""A LangChain user's habits (issue 37): LangChain's token counters and chat models taken as
the policy's counter (counting exactly what LangChain counts), a percent policy inside
``CompressionMiddleware`` learning the window from the chat model's profile, and compress()
pointing LangChain messages to compress_for. The real framework: langchain-core's
``count_tokens_approximately`` and fake chat model, ``create_agent`` with ``ChatOpenAI`` over
HTTP to the local server."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from _integration_cases import COUNTER, FINAL, read_file, tool_replies
from agent_adapter import ConfigError
from agent_adapter.context import (
    CompressionPolicy,
    CompressionReport,
    compress,
    compress_for_sync,
)
from agent_adapter.integrations.langchain import CompressionMiddleware
from agent_adapter.testing import ProviderServer


def _history() -> list[Any]:
    return [
        SystemMessage("Be brief."),
        HumanMessage("Read a.py"),
        AIMessage("", tool_calls=[{"name": "read", "args": {"path": "a.py"}, "id": "c1"}]),
        ToolMessage("x = 1\n" * 300, tool_call_id="c1"),
        AIMessage("It sets x."),
        HumanMessage("Thanks"),
    ]


def _words(model_tokens: str) -> list[int]:
    return list(range(len(model_tokens.split())))


@pytest.mark.parametrize(
    "counter",
    [
        count_tokens_approximately,
        functools.partial(count_tokens_approximately, chars_per_token=3.0),
        GenericFakeChatModel(messages=iter(()), custom_get_token_ids=_words),
    ],
    ids=["count_tokens_approximately", "partial", "chat model"],
)
def test_a_langchain_counter_counts_what_langchain_counts(counter: Any) -> None:
    """Regression: ``token_counter=count_tokens_approximately`` was accepted and failed at the
    first count with LangChain's own error (it was handed agent_adapter Messages)."""
    natives = _history()
    expected = (
        counter.get_num_tokens_from_messages(natives)
        if isinstance(counter, GenericFakeChatModel)
        else counter(natives)
    )
    policy = CompressionPolicy(
        threshold_tokens=expected - 50, target_tokens=expected - 100, token_counter=counter
    )
    out, report = compress_for_sync(natives, policy)
    assert report.tokens_before == expected
    assert report.tokens_after <= expected - 100
    assert out[-1] is natives[-1]


def test_something_else_than_a_counter_is_refused_at_construction() -> None:
    with pytest.raises(ConfigError, match="LangChain chat model or a LangChain token counter"):
        CompressionPolicy(threshold_tokens=100, token_counter="count_tokens_approximately")  # type: ignore[arg-type]


def test_compress_points_langchain_messages_to_compress_for() -> None:
    with pytest.raises(ConfigError) as caught:
        asyncio.run(compress(_history(), CompressionPolicy(threshold_tokens=100)))  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith("messages[0] is SystemMessage, not a Message")
    assert "compress_for(messages, policy)" in message and "langchain_core" in message


def _agent(server: ProviderServer, middleware: CompressionMiddleware, profile: Any) -> Any:
    model = ChatOpenAI(
        model="gpt-4o", base_url=server.openai_url, api_key="test", max_retries=0,
        profile=profile,
    )  # fmt: skip
    return create_agent(model, [tool(read_file)], middleware=[middleware])


def test_a_percent_policy_takes_the_window_from_the_models_profile() -> None:
    """Regression: a percent policy raised "no context window is known" although the chat
    model's profile knows it. 75% / 50% of a 4,000-token profile: 3,000 / 2,000."""
    reports: list[CompressionReport] = []
    policy = CompressionPolicy(threshold_percent=75, target_percent=50, token_counter=COUNTER)
    middleware = CompressionMiddleware(policy, on_report=reports.append)
    with ProviderServer(tool_replies()) as server:
        agent = _agent(server, middleware, {"max_input_tokens": 4_000})
        result = agent.invoke({"messages": [HumanMessage("Read src/mod_0.py to mod_5.py")]})
    assert result["messages"][-1].content == FINAL
    assert {(r.threshold_tokens, r.target_tokens) for r in reports} == {(3_000, 2_000)}
    fired = [r for r in reports if r.tokens_before > 3_000]
    assert fired and all(r.tokens_after <= 3_000 for r in fired)


def test_the_default_profile_of_a_known_model_is_used() -> None:
    """ChatOpenAI("gpt-4o") loads its profile from langchain-openai's data: 128,000."""
    reports: list[CompressionReport] = []
    middleware = CompressionMiddleware(CompressionPolicy(), on_report=reports.append)
    with ProviderServer(tool_replies()[-1:]) as server:
        _agent(server, middleware, None).invoke({"messages": [HumanMessage("hi")]})
    assert [(r.threshold_tokens, r.target_tokens) for r in reports] == [(102_400, 76_800)]


def test_without_a_window_anywhere_the_call_says_where_to_give_one() -> None:
    middleware = CompressionMiddleware(CompressionPolicy(threshold_percent=80))
    with ProviderServer(tool_replies()[-1:]) as server:
        agent = _agent(server, middleware, {"name": "no window"})
        with pytest.raises(ConfigError, match=r"no profile with max_input_tokens.*model_max"):
            agent.invoke({"messages": [HumanMessage("hi")]})
