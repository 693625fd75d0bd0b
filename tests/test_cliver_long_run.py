"""30-turn tool-using runs that cross the compaction threshold several times, with
LlmCompactor (a second AgentCore as the summarizer) and with PolicyCompactor (the compression
engine), all through the real providers against the local wire-protocol server.

Each turn is one ``chat`` call continuing from the previous ``response.messages``. The server
reports, for each turn's first call, the real size of the request it received (estimated from
the history the test passes), so the threshold is crossed where the history really grows."""

from __future__ import annotations

from typing import Any

from _cliver_helpers import binding, calls, read_file, wire_messages
from agent_adapter.context import CompressionPolicy, estimate_tokens
from agent_adapter.context.formats import convert
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import (
    SUMMARY_PREFIX,
    AgentCore,
    CLIverMessage,
    CompactionEvent,
    LlmCompactor,
    ModelBindings,
    PolicyCompactor,
    UsageInfo,
)

TURNS = 30
THRESHOLD = 1_500
SYSTEM = "You are a careful coding agent."
SUMMARY = Reply(text="Summary: files 0..n were read; all tasks done.", input_tokens=400,
                output_tokens=25)  # fmt: skip


def _tokens(history: list[CLIverMessage], prompt: str) -> int:
    sent = [CLIverMessage(role="system", content=SYSTEM), *history]
    sent.append(CLIverMessage(role="user", content=prompt))
    return estimate_tokens(convert(sent, "cliver").messages)


def _queue_turn(server: ProviderServer, turn: int, first_input: int) -> None:
    server.add(
        calls((f"r{turn}", "read_file", {"path": f"src/mod_{turn}.py"}),
              input_tokens=first_input, output_tokens=12),
        Reply(text=f"Done with task {turn}.", input_tokens=first_input + 160, output_tokens=8),
    )  # fmt: skip


async def test_thirty_turns_with_llm_compactor() -> None:
    summarizer_events: list[Any] = []
    main_events: list[Any] = []
    async with (
        ProviderServer() as main,
        ProviderServer(default=SUMMARY) as cheap,
        AgentCore(
            ModelBindings(llm=binding(cheap, model="cheap")),
            on_event=summarizer_events.append,
            inference_events=True,
        ) as summarizer,
        AgentCore(
            ModelBindings(llm=binding(main, model="main")),
            [read_file],
            builtin_system_prompt=SYSTEM,
            context_compactor=LlmCompactor(summarizer, THRESHOLD, keep_turns=2),
            on_event=main_events.append,
        ) as agent,
    ):
        history: list[CLIverMessage] = []
        compacted_turns: list[int] = []
        for turn in range(TURNS):
            prompt = f"task {turn}: read src/mod_{turn}.py"
            first_input = _tokens(history, prompt)
            _queue_turn(main, turn, first_input)
            users = sum(m.role == "user" for m in history) + 1
            expected = first_input >= THRESHOLD and users > 2
            summaries = len(cheap.requests)
            response = await agent.chat(prompt, conversation=history)
            compacted = len(cheap.requests) > summaries
            assert compacted == expected, turn
            extra = (400, 25) if compacted else (0, 0)
            assert response.usage_total == UsageInfo(
                input_tokens=first_input + first_input + 160 + extra[0],
                output_tokens=12 + 8 + extra[1],
            ), turn
            if compacted:
                compacted_turns.append(turn)
                sent = wire_messages(main, len(main.requests) - 1)
                assert sent[0] == {"role": "system", "content": SYSTEM}
                assert sent[1]["content"].startswith(SUMMARY_PREFIX)
                assert [m["content"] for m in sent if m["role"] == "user"][1:] == [
                    f"task {turn - 1}: read src/mod_{turn - 1}.py",
                    prompt,
                ]
                rendered = cheap.requests[-1].body["messages"][-1]["content"]
                assert (
                    "[assistant called] read_file(" in rendered and "[read_file result]" in rendered
                )
                assert response.messages[0].content.startswith(SUMMARY_PREFIX)
            history = response.messages
    assert len(compacted_turns) >= 3, compacted_turns
    # the summarizer's runs are runs of their own
    main_runs = {e.run_id for e in main_events}
    summary_runs = {e.run_id for e in summarizer_events}
    assert len(summary_runs) == len(compacted_turns) and not main_runs & summary_runs
    applied = [e for e in main_events if isinstance(e, CompactionEvent)]
    assert len(applied) == len(compacted_turns)
    assert all(e.data["messages_after"] < e.data["messages_before"] for e in applied)


async def test_thirty_turns_with_policy_compactor_keeps_approval_state() -> None:
    policy = CompressionPolicy(threshold_tokens=THRESHOLD, target_tokens=1_000, recent_turns=2)
    refused = "Error: Permission denied: deleting src/ needs the user's approval"
    async with (
        ProviderServer() as main,
        AgentCore(
            ModelBindings(llm=binding(main, model="main")),
            [read_file],
            builtin_system_prompt=SYSTEM,
            context_compactor=PolicyCompactor(policy),
        ) as agent,
    ):
        history: list[CLIverMessage] = []
        sizes: list[int] = []
        compactions = 0
        for turn in range(TURNS):
            prompt = f"task {turn}: read src/mod_{turn}.py"
            first_input = _tokens(history, prompt)
            _queue_turn(main, turn, first_input)
            before = len(main.requests)
            response = await agent.chat(prompt, conversation=history)
            assert response.usage_total == UsageInfo(
                input_tokens=2 * first_input + 160, output_tokens=20
            )
            for n in range(before, len(main.requests)):
                sent = wire_messages(main, n)
                sizes.append(len(sent))
                assert sent[0] == {"role": "system", "content": SYSTEM}
            if len(response.messages) < len(history) + 4:
                compactions += 1
            history = response.messages
            if turn == 3:  # a refused call the user decided on: approval state
                history = [
                    *history,
                    CLIverMessage(role="user", content="delete src/"),
                    CLIverMessage(
                        role="assistant",
                        tool_calls=[{"id": "d1", "name": "delete", "args": {"path": "src"}}],
                    ),
                    CLIverMessage(role="tool", content=refused, tool_call_id="d1"),
                    CLIverMessage(role="assistant", content="I need your approval first."),
                ]
            if turn > 3:
                assert any(m.content == refused for m in history), turn
    assert compactions >= 3
    assert max(sizes) < 4 * 30  # bounded, never the whole 30-turn history
