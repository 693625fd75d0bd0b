"""``LlmCompactor(continue_run=True)``: the summary request continues the run's cached
conversation (issue 35, item 3). The documented default (``summarizer.chat`` of the rendered
older turns) is unchanged; the option asks the run's own model with the run's last request,
byte for byte, plus the instruction."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from _cliver_helpers import binding, calls, read_file, wire_messages
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import (
    SUMMARY_PREFIX,
    AgentCore,
    CLIverMessage,
    CLIverResponse,
    CompactionContext,
    CompactionError,
    LlmCompactor,
    ModelBindings,
    ToolCall,
    UsageInfo,
)


def _conversation(turns: int) -> list[CLIverMessage]:
    out: list[CLIverMessage] = []
    for i in range(turns):
        out.append(CLIverMessage(role="user", content=f"question {i}"))
        out.append(
            CLIverMessage(
                role="assistant",
                tool_calls=[ToolCall(id=f"t{i}", name="read_file", args={"path": f"{i}.py"})],
            )
        )
        out.append(CLIverMessage(role="tool", content=f"file {i}", tool_call_id=f"t{i}"))
        out.append(CLIverMessage(role="assistant", content=f"answer {i}"))
    return out


class _Never:
    async def chat(self, user_input: str, /) -> Any:
        raise AssertionError("the summarizer is not called with continue_run=True")


async def test_continue_run_sends_the_last_request_plus_the_instruction() -> None:
    async with ProviderServer() as server:
        server.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=70_000, output_tokens=1),
            Reply(text="We read 0.py, 1.py and 2.py.", input_tokens=70_100, output_tokens=9),
            Reply(text="done", input_tokens=900, output_tokens=1),
        )
        compactor = LlmCompactor(_Never(), threshold_tokens=60_000, keep_turns=1, continue_run=True)
        async with AgentCore(
            ModelBindings(llm=binding(server)), [read_file], context_compactor=compactor
        ) as agent:
            response = await agent.chat("now", conversation=_conversation(3))
        first, summary, after = (wire_messages(server, n) for n in range(3))
        assert summary[:-1] == first  # the run's last request, byte for byte
        assert summary[-1]["role"] == "user" and compactor.prompt in summary[-1]["content"]
        assert server.requests[1].body.get("tools") == server.requests[0].body.get("tools")
        texts = [m.get("content") for m in after]
        assert any(
            isinstance(t, str) and t.startswith(SUMMARY_PREFIX) and "2.py" in t for t in texts
        )
        assert len(after) < len(first)  # the older turns went
    assert response.usage_total == UsageInfo(input_tokens=141_000, output_tokens=11)


async def test_the_default_stays_the_documented_summarizer_chat() -> None:
    assert LlmCompactor(_Never()).continue_run is False
    with pytest.raises(ValueError, match="continue_run must be a bool"):
        LlmCompactor(_Never(), continue_run="yes")  # type: ignore[arg-type]
    context = CompactionContext(messages=[], iteration=0, run_id="r", model="m", last_usage=None)
    with pytest.raises(CompactionError, match="belongs to no run"):
        await context.continue_run("summarize")


class _Counting:
    """A summarizer that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, user_input: str, /) -> CLIverResponse:
        self.calls += 1
        return CLIverResponse(
            message=CLIverMessage(role="assistant", content="Prepared: read 0.py and 1.py."),
            usage=UsageInfo(input_tokens=100, output_tokens=10),
        )


async def test_prepare_at_summarizes_early_and_plans_with_it_at_the_threshold() -> None:
    summarizer = _Counting()
    async with ProviderServer() as server:
        server.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=50_000, output_tokens=1),
            calls(("c2", "read_file", {"path": "b"}), input_tokens=55_000, output_tokens=1),
            calls(("c3", "read_file", {"path": "c"}), input_tokens=62_000, output_tokens=1),
            Reply(text="done", input_tokens=900, output_tokens=1),
        )
        compactor = LlmCompactor(summarizer, threshold_tokens=60_000, keep_turns=1, prepare_at=0.8)
        async with AgentCore(
            ModelBindings(llm=binding(server)), [read_file], context_compactor=compactor
        ) as agent:
            response = await agent.chat("now", conversation=_conversation(2))
        assert summarizer.calls == 1  # prepared at 50k (>= 0.8 x 60k), used at 62k
        last, before = wire_messages(server, 3), wire_messages(server, 2)
        assert last[0]["content"].startswith(SUMMARY_PREFIX) and "1.py" in last[0]["content"]
        # exactly the older turns went: from "now" on everything stays, the new rounds too
        now = next(k for k, m in enumerate(before) if m.get("content") == "now")
        assert last[1 : 1 + len(before) - now] == before[now:]
        assert len(last) == 1 + len(before) - now + 2  # and the round after it
    assert response.usage_total.input_tokens == 50_000 + 55_000 + 62_000 + 900 + 100


async def test_prepare_at_drops_a_summary_of_a_history_the_run_no_longer_extends() -> None:
    summarizer = _Counting()
    compactor = LlmCompactor(summarizer, threshold_tokens=100, keep_turns=1, prepare_at=0.5)
    history = [*_conversation(2), CLIverMessage(role="user", content="now")]
    usage = UsageInfo(input_tokens=60, output_tokens=1)
    first = CompactionContext(list(history), 1, "run-1", "m", usage)
    assert await compactor(first) is None
    await asyncio.sleep(0)  # the prepared summary's task runs
    assert summarizer.calls == 1
    edited = [CLIverMessage(role="user", content="another start"), *history[1:]]
    over = CompactionContext(edited, 2, "run-1", "m", UsageInfo(input_tokens=120))
    plan = await compactor(over)
    assert summarizer.calls == 2  # the prepared summary was not used: written anew
    assert plan is not None and plan.keep_from == len(edited) - 1
    with pytest.raises(ValueError, match="prepare_at"):
        LlmCompactor(summarizer, prepare_at=1.5)
