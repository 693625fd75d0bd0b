"""OpenAI Agents SDK: CompressingSession keeps a session's stored items bounded. The real
``Runner`` over ``OpenAIResponsesModel`` (HTTP to the local server) and a real
``SQLiteSession``: several runs of one session, each reading files with a tool."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, SQLiteSession, function_tool
from openai import AsyncOpenAI

from _integration_cases import COUNTER, policy, read_file
from agent_adapter import ConfigError, ToolCall
from agent_adapter.context import CompressionReport
from agent_adapter.context.formats import check, convert
from agent_adapter.integrations.openai_agents import CompressingSession
from agent_adapter.testing import ProviderServer, Reply

RUNS = 4


def _replies() -> list[Reply]:
    """Per run: two file reads (about 820 tokens each), then the answer."""
    out = []
    for run in range(RUNS):
        for i in range(2):
            call = ToolCall(
                id=f"call_{run}_{i}",
                name="read_file",
                arguments=json.dumps({"path": f"src/mod_{run}_{i}.py"}),
            )
            out.append(Reply(tool_calls=[call]))
        out.append(Reply(text=f"Run {run}: retries=3."))
    return out


def _tokens(items: list[Any]) -> int:
    return COUNTER(convert(items, "openai").messages)


async def _runs(session: Any) -> list[int]:
    """The stored history's tokens after each run."""
    sizes = []
    with ProviderServer(_replies()) as server:
        client = AsyncOpenAI(base_url=server.openai_url, api_key="test", max_retries=0)
        agent = Agent(
            name="reader",
            instructions="You read code.",
            model=OpenAIResponsesModel(model="gpt-4o", openai_client=client),
            tools=[function_tool(read_file)],
        )
        for run in range(RUNS):
            result = await Runner.run(
                agent, f"Read the two files of run {run}.", session=session,
                run_config=RunConfig(tracing_disabled=True),
            )  # fmt: skip
            assert result.final_output == f"Run {run}: retries=3."
            stored = await session.get_items()
            assert check(stored, "openai") == []
            sizes.append(_tokens(stored))
        await client.close()
        assert server.pending == 0
    return sizes


async def test_stored_items_stay_under_the_threshold(tmp_path: Any) -> None:
    plain = await _runs(SQLiteSession("plain", str(tmp_path / "plain.db")))
    reports: list[CompressionReport] = []
    inner = SQLiteSession("bounded", str(tmp_path / "bounded.db"))
    session = CompressingSession(inner, policy(), on_report=reports.append)
    bounded = await _runs(session)
    # without the wrapper the history grows by a run's reads every run; with it, it never
    # stays over the 3,000-token threshold
    assert plain == sorted(plain) and plain[-1] > 3 * 3_000 // 2
    assert all(size <= 3_000 for size in bounded), bounded
    assert reports and all(r.tokens_before > 3_000 for r in reports)
    # the wrapped SQLiteSession holds the compressed history itself (reloaded from disk)
    reopened = SQLiteSession("bounded", str(tmp_path / "bounded.db"))
    assert _tokens(await reopened.get_items()) == bounded[-1]
    assert session.session_id == "bounded"


async def test_pop_and_clear_are_the_wrapped_sessions(tmp_path: Any) -> None:
    inner = SQLiteSession("s", str(tmp_path / "s.db"))
    session = CompressingSession(inner, policy())
    await session.add_items([{"role": "user", "content": "hi"}])
    assert await inner.get_items() == [{"role": "user", "content": "hi"}]
    assert await session.pop_item() == {"role": "user", "content": "hi"}
    await session.add_items([{"role": "user", "content": "again"}])
    await session.clear_session()
    assert await inner.get_items() == []


def test_a_session_is_required() -> None:
    with pytest.raises(ConfigError, match="must be an agents Session"):
        CompressingSession(object(), policy())
