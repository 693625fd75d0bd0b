"""An agent over real HTTP (the local wire-protocol test server, OpenAI Chat Completions)
finds a fact that compression dropped: it searches, then recalls the span by its id.

Run: ``PYTHONPATH=src python -m pytest -q tests/test_recall_agent.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _recall_cases import FACT, PASSAGE, status_rounds
from agent_adapter import FunctionTool, Message, RunContext, ToolCall, run_tool_loop
from agent_adapter.context import (
    CompressionPolicy,
    MemoryStore,
    RemoveOldMessages,
    SQLiteStore,
    recall_tool,
    search_tool,
)
from agent_adapter.providers import OpenAIChatModel
from agent_adapter.testing import ProviderServer, Reply


def _history() -> list[Message]:
    out = [Message("system", "You are an ops assistant."), Message("user", "help me ship v2")]
    out += [Message("user", f"note: {FACT}"), Message("assistant", "noted")]
    out += [Message(role, text) for role, text in status_rounds()]
    out.append(Message("user", "where does the deploy key live?"))
    return out


def _sent(server: ProviderServer, n: int) -> str:
    return json.dumps(server.requests[n].body)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_an_agent_recalls_a_dropped_fact(kind: str, tmp_path: Path) -> None:
    store: Any = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "saved.sqlite3")
    search, recall = search_tool(store), recall_tool(store, max_chars=2000)
    with ProviderServer() as server:

        async def searching(args: dict[str, Any], ctx: Any = None) -> str:
            found = await search(args, ctx)
            hit = PASSAGE.search(found)  # the scripted model reads the id and offset it got
            if hit is not None:
                id_, offset = hit.group(1), int(hit.group(2))
                call = ToolCall("c2", "recall_context", json.dumps({"id": id_, "offset": offset}))
                server.add(Reply(tool_calls=(call,)), Reply(text="secret/deploy/blue-heron"))
            return found

        tools = [
            FunctionTool(search.name, search.description, search.parameters, searching),
            recall,
        ]
        query = json.dumps({"query": "deploy key vault path"})
        server.add(Reply(tool_calls=(ToolCall("c1", "search_context", query),)))
        model = OpenAIChatModel("gpt-4o", base_url=server.openai_url, api_key="test", max_retries=0)
        policy = CompressionPolicy(
            threshold_tokens=600, target_tokens=400, steps=[RemoveOldMessages(save_to=store)]
        )
        try:
            result = await run_tool_loop(
                model, tools, _history(), compression=policy, ctx=RunContext(thread_id="ops-1")
            )
        finally:
            await model.aclose()
        assert result.text == "secret/deploy/blue-heron" and result.iterations == 3
        first, second = _sent(server, 0), _sent(server, 1)
        assert "blue-heron" not in first  # the fact was dropped before the first call
        assert (
            "search_context(query)" in first and "recall_context(id=" in first
        )  # the note says so
        assert "secret/deploy/blue-heron" in second  # found by search, sent back to the model
        tool_texts = [
            m["content"] for m in server.requests[2].body["messages"] if m["role"] == "tool"
        ]
        assert FACT in tool_texts[-1]  # the recalled transcript
    if kind == "sqlite":
        store.close()
