"""The context-compactor contract, word for word, against the local wire-protocol server:
placement (once per iteration, before the model call, the first included), what the
compactor sees, plans and full lists, every ValueError of the spec before the model call,
the system message re-attached, usage recorded to the token, streaming, run_timeout."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

import _prefix_cases as pc
from _cliver_helpers import binding, calls, read_file, wire_messages
from agent_adapter import ConfigError
from agent_adapter.context import CompactionStates, CompressionReport
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import (
    SUMMARY_PREFIX,
    AgentCore,
    CLIverMessage,
    CLIverResponse,
    CompactionContext,
    CompactionError,
    CompactionPlan,
    LlmCompactor,
    ModelBindings,
    PolicyCompactor,
    RunTimeout,
    ToolCall,
    UsageInfo,
    tool,
)

SUMMARY_USAGE = UsageInfo(input_tokens=333, output_tokens=44)


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


class Recorder:
    """A compactor that records what it saw and returns what ``decide`` says."""

    def __init__(self, server: ProviderServer, decide: Callable[[CompactionContext], Any]):
        self.server = server
        self.decide = decide
        self.seen: list[CompactionContext] = []
        self.requests_before: list[int] = []

    async def __call__(self, context: CompactionContext) -> Any:
        self.seen.append(context)
        self.requests_before.append(len(self.server.requests))
        return self.decide(context)


async def test_invoked_once_per_iteration_before_the_model_call_first_included() -> None:
    async with ProviderServer() as server:
        server.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=1000, output_tokens=10),
            calls(("c2", "read_file", {"path": "b"}), input_tokens=2000, output_tokens=20),
            Reply(text="done", input_tokens=3000, output_tokens=30),
        )
        recorder = Recorder(server, lambda c: None)
        async with AgentCore(
            ModelBindings(llm=binding(server, model="main")),
            [read_file],
            builtin_system_prompt="you are core",
            context_compactor=recorder,
        ) as agent:
            response = await agent.chat("go")
    assert recorder.requests_before == [0, 1, 2]
    assert [c.iteration for c in recorder.seen] == [0, 1, 2]
    assert {c.run_id for c in recorder.seen} == {response.run_id}
    assert {c.model for c in recorder.seen} == {"main"}
    assert [c.last_usage.input_tokens if c.last_usage else None for c in recorder.seen] == [
        None, 1000, 2000,
    ]  # fmt: skip
    first = recorder.seen[0].messages
    assert [m.role for m in first] == ["user"]  # no system message
    assert [m.role for m in recorder.seen[2].messages] == ["user", "assistant", "tool"] * 1 + [
        "assistant", "tool",
    ]  # fmt: skip


async def test_per_call_override_and_none_on_all_four_entry_points() -> None:
    used: list[str] = []

    def default(context: CompactionContext) -> None:
        used.append("default")

    async def other(context: CompactionContext) -> None:
        used.append("other")

    async with (
        ProviderServer(default=Reply(text='{"ok": true}')) as server,
        AgentCore(ModelBindings(llm=binding(server)), context_compactor=default) as a,
    ):
        await a.chat("x")
        await a.chat("x", context_compactor=other)
        await a.chat("x", context_compactor=None)
        _ = [c async for c in a.stream("x", context_compactor=other)]
        _ = [c async for c in a.stream("x", context_compactor=None)]
        from pathlib import Path

        from cliver_core import Skill

        skill = Skill(name="s", description="", body="b", base_dir=Path("."))
        await a.run_skill(skill, "x", context_compactor=other)
        await a.run_skill(skill, "x", context_compactor=None)
        schema = {"type": "object"}
        await a.chat_structured("x", schema, context_compactor=other)
        await a.chat_structured("x", schema, context_compactor=None)
        await a.chat_structured("x", schema)
    assert used == ["default", "other", "other", "other", "other", "default"]


async def test_plan_builds_summary_first_and_reattaches_the_system_message() -> None:
    history = _conversation(3)
    async with ProviderServer() as server:
        server.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=900, output_tokens=9),
            Reply(text="fin", input_tokens=100, output_tokens=1),
        )

        def plan(context: CompactionContext) -> CompactionPlan | None:
            if context.iteration == 0:
                return None
            split = context.split_at_user_turn(keep_turns=2)
            return split.plan(summary="they read three files", usage=SUMMARY_USAGE)

        async with AgentCore(
            ModelBindings(llm=binding(server)),
            [read_file],
            builtin_system_prompt="sys",
            context_compactor=plan,
        ) as agent:
            response = await agent.chat("now", conversation=history)
        second = wire_messages(server, 1)
    assert second[0] == {"role": "system", "content": "sys"}
    assert second[1] == {"role": "user", "content": f"{SUMMARY_PREFIX}\nthey read three files"}
    assert second[2]["content"] == "question 2"  # the 2nd user turn from the end
    assert len(second) == 1 + 1 + 4 + 1 + 2  # system, summary, last old turn, new user + round
    assert response.usage_total == UsageInfo(input_tokens=900 + 100 + 333, output_tokens=54)
    assert response.messages[0].content == f"{SUMMARY_PREFIX}\nthey read three files"


async def test_full_list_path_and_record_usage() -> None:
    async with ProviderServer() as server:
        server.add(Reply(text="ok", input_tokens=10, output_tokens=2))

        def trim(context: CompactionContext) -> list[CLIverMessage]:
            context.record_usage(UsageInfo(input_tokens=5, output_tokens=1))
            return context.messages[-1:]

        async with AgentCore(ModelBindings(llm=binding(server)), context_compactor=trim) as a:
            response = await a.chat("last", conversation=_conversation(2))
        sent = wire_messages(server, 0)
    assert sent == [{"role": "user", "content": "last"}]
    assert response.usage_total == UsageInfo(input_tokens=15, output_tokens=3)


def _bad_plans() -> list[tuple[Callable[[CompactionContext], Any], str]]:
    def tool_result_first(c: CompactionContext) -> Any:
        return c.messages[2:]

    def dangling_call(c: CompactionContext) -> Any:
        return [*c.messages[:2], c.messages[-1]]

    return [
        (lambda c: CompactionPlan(keep_from=0), "outside the history"),
        (lambda c: CompactionPlan(keep_from=-1), "outside the history"),
        (lambda c: CompactionPlan(keep_from=len(c.messages)), "outside the history"),
        (lambda c: CompactionPlan(keep_from=1), "must point at a user message"),
        (lambda c: c.split_at_user_turn(keep_turns=9).plan(summary="s"), "drops nothing"),
        (lambda c: c.split_at_user_turn(keep_turns=0), "keep_turns must be an int >= 1"),
        (lambda c: [], "is empty"),
        (lambda c: [CLIverMessage(role="system", content="s"), *c.messages], "system message"),
        (tool_result_first, "tool result with no matching assistant tool call"),
        (dangling_call, "without all of its tool results"),
        (lambda c: c.messages[:4], "must end with a user or tool message"),
        (lambda c: "trim", "must return a CompactionPlan"),
    ]


@pytest.mark.parametrize(("decide", "message"), _bad_plans())
async def test_every_value_error_is_raised_before_the_model_call(
    decide: Callable[[CompactionContext], Any], message: str
) -> None:
    async with ProviderServer([Reply(text="never")]) as server:
        async with AgentCore(ModelBindings(llm=binding(server)), context_compactor=decide) as a:
            with pytest.raises(ValueError, match=message) as info:
                await a.chat("now", conversation=_conversation(2))
        assert server.requests == []
    assert isinstance(info.value, CompactionError)


async def test_compactor_exceptions_propagate() -> None:
    class Outage(Exception):
        pass

    def broken(context: CompactionContext) -> None:
        raise Outage("summarizer down")

    async with ProviderServer([Reply(text="never")]) as server:
        async with AgentCore(ModelBindings(llm=binding(server)), context_compactor=broken) as a:
            with pytest.raises(Outage):
                await a.chat("x")
        assert server.requests == []


async def test_streaming_trace_entries_carry_recorded_compaction_usage() -> None:
    async with ProviderServer() as server:
        server.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=70, output_tokens=7),
            Reply(text="streamed", input_tokens=80, output_tokens=8),
        )

        def plan(context: CompactionContext) -> CompactionPlan | None:
            if context.iteration != 1:
                return None
            return context.split_at_user_turn(1).plan(summary="older", usage=SUMMARY_USAGE)

        async with AgentCore(
            ModelBindings(llm=binding(server)), [read_file], context_compactor=plan
        ) as agent:
            chunks = [c async for c in agent.stream("now", conversation=_conversation(1))]
        second = wire_messages(server, 1)
    trace = json.loads(chunks[-1].vendor_ext["__llm_trace__"])
    assert [t["usage_total"]["input_tokens"] for t in trace] == [70, 70 + 333 + 80]
    assert second[0]["content"] == f"{SUMMARY_PREFIX}\nolder"  # visible to the next call
    assert chunks[-1].usage == UsageInfo(input_tokens=483, output_tokens=59)


async def test_run_timeout_fires_inside_a_slow_summarizer() -> None:
    async with ProviderServer() as main, ProviderServer() as slow:
        main.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=90_000),
            Reply(text="never reached"),
        )
        slow.add(Reply(text="late summary", delay_s=30))
        async with (
            AgentCore(ModelBindings(llm=binding(slow, model="cheap"))) as summarizer,
            AgentCore(
                ModelBindings(llm=binding(main)),
                [read_file],
                context_compactor=LlmCompactor(summarizer, threshold_tokens=60_000, keep_turns=1),
                run_timeout=1.5,
            ) as agent,
        ):
            with pytest.raises(RunTimeout) as info:
                await agent.chat("now", conversation=_conversation(2))
        assert len(main.requests) == 1  # the second model call never happened
        assert len(slow.requests) == 1  # the summarizer was called and cut short
    assert isinstance(info.value, TimeoutError) and info.value.timeout_s == 1.5


async def test_llm_compactor_empty_summary_leaves_history_and_records_usage() -> None:
    async with ProviderServer() as main, ProviderServer() as cheap:
        main.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=70_000, output_tokens=1),
            Reply(text="done", input_tokens=71_000, output_tokens=1),
        )
        cheap.add(Reply(text="", input_tokens=11, output_tokens=0))
        async with (
            AgentCore(ModelBindings(llm=binding(cheap))) as summarizer,
            AgentCore(
                ModelBindings(llm=binding(main)),
                [read_file],
                context_compactor=LlmCompactor(summarizer, threshold_tokens=60_000, keep_turns=1),
            ) as agent,
        ):
            response = await agent.chat("now", conversation=_conversation(2))
        assert len(cheap.requests) == 1
        assert len(wire_messages(main, 1)) == len(wire_messages(main, 0)) + 2  # unchanged
    assert response.usage_total == UsageInfo(input_tokens=141_011, output_tokens=2)


class _OldUsage(BaseModel):
    """0.3.0a5's ``UsageInfo`` (a class of its own, not ours)."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int | None = None


class _OldResponse(BaseModel):
    """The shape of a 0.3.0a5 ``CLIverResponse``: ``message`` and ``usage``, no
    ``usage_total``."""

    message: CLIverMessage
    usage: Any = None


class _Summarizer:
    def __init__(self, response: Any) -> None:
        self.response = response

    async def chat(self, prompt: str) -> Any:
        return self.response


@pytest.mark.parametrize(
    "response",
    [
        # a 0.3.0a5-shaped response: only `usage`, of its own usage class
        _OldResponse(
            message=CLIverMessage(role="assistant", content="the summary"),
            usage=_OldUsage(input_tokens=900, output_tokens=40),
        ),
        # ours with only `usage` set: its zero `usage_total` must not hide it
        CLIverResponse(
            message=CLIverMessage(role="assistant", content="the summary"),
            usage=UsageInfo(input_tokens=900, output_tokens=40),
        ),
    ],
    ids=["0.3.0a5-shaped", "usage-only"],
)
async def test_llm_compactor_records_a_summarizer_usage_set_only_as_usage(response: Any) -> None:
    async with ProviderServer() as main:
        main.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=70_000, output_tokens=1),
            Reply(text="done", input_tokens=5_000, output_tokens=1),
        )
        async with AgentCore(
            ModelBindings(llm=binding(main)),
            [read_file],
            context_compactor=LlmCompactor(_Summarizer(response), 60_000, keep_turns=1),
        ) as agent:
            result = await agent.chat("now", conversation=_conversation(2))
        assert wire_messages(main, 1)[0]["content"].startswith(SUMMARY_PREFIX)
    assert result.usage_total == UsageInfo(input_tokens=75_900, output_tokens=42)


@pytest.mark.parametrize("blank", ["", "  \n"])
async def test_a_blank_summary_leaves_the_history_and_the_run_goes_on(blank: str) -> None:
    """Regression: the documented example compactor (``if not response.message.content:
    return None``) lets a whitespace summary through, and ``split.plan(summary="  \n")``
    raised, failing the run; nothing may be dropped without its summary either."""

    def example(context: CompactionContext) -> CompactionPlan | None:
        split = context.split_at_user_turn(1)
        return split.plan(summary=blank, usage=SUMMARY_USAGE) if split.older else None

    conversation = _conversation(2)
    async with ProviderServer([Reply(text="done", input_tokens=5, output_tokens=1)]) as server:
        async with AgentCore(ModelBindings(llm=binding(server)), context_compactor=example) as a:
            result = await a.chat("now", conversation=conversation)
        sent = wire_messages(server, 0)
    assert len(sent) == len(conversation) + 1 and sent[0] == {
        "role": "user",
        "content": "question 0",
    }
    assert result.usage_total == UsageInfo(input_tokens=338, output_tokens=45)


async def test_a_plan_keeps_a_callers_system_message_past_the_first_turn() -> None:
    """Regression: the plan's history was checked as a returned list, which may not hold a
    system message, so a caller's operator note in the kept turns failed the run (the plan
    checks are the tool pairs and the last role)."""
    note = CLIverMessage(role="system", content="operator: the user is a gold member")
    conversation = [*_conversation(2), CLIverMessage(role="user", content="to Paris"), note]
    conversation.append(CLIverMessage(role="assistant", content="which date?"))

    def keep_last(context: CompactionContext) -> CompactionPlan:
        return context.split_at_user_turn(2).plan(summary="they read two files")

    async with ProviderServer([Reply(text="done")]) as server:
        async with AgentCore(ModelBindings(llm=binding(server)), context_compactor=keep_last) as a:
            await a.chat("tomorrow", conversation=conversation)
        sent = wire_messages(server, 0)
    assert sent[1:] == [
        {"role": "user", "content": "to Paris"},
        {"role": "system", "content": "operator: the user is a gold member"},
        {"role": "assistant", "content": "which date?"},
        {"role": "user", "content": "tomorrow"},
    ]


# -- PolicyCompactor: compact once, then append (issue 20) ------------------------------------


@tool(name="read_file", description="Read one file of the project.", safety="safe")
def _read_lines(path: str) -> str:
    """Read one file of the project.

    Args:
        path: the file's path.
    """
    return pc.read_file(path)


def _chat_reply(turn: int) -> Reply:
    """A long answer (about 330 tokens) a chat front end keeps in its transcript."""
    return Reply(text=f"answer {turn}: " + " ".join(f"point {turn}.{i} holds." for i in range(60)))


async def _tool_run(states: Any) -> tuple[list[Any], list[CompressionReport]]:
    """One run of 2 * ROUNDS tool rounds: past the threshold within the run."""
    reports: list[CompressionReport] = []
    compactor = PolicyCompactor(pc.policy(), states=states, on_report=reports.append)
    async with ProviderServer(pc.one_long_turn()) as server:
        async with AgentCore(
            ModelBindings(llm=binding(server, model="main")),
            [_read_lines],
            builtin_system_prompt=pc.INSTRUCTIONS,
            context_compactor=compactor,
        ) as agent:
            response = await agent.chat(pc.TURNS[0], max_iterations=2 * pc.ROUNDS + 2)
        assert response.message.content == pc.FINAL
        requests = server.requests
    return requests, reports


async def test_policy_compactor_appends_between_compactions_within_a_run() -> None:
    requests, reports = await _tool_run(CompactionStates())
    assert len(requests) == len(reports) == 2 * pc.ROUNDS + 1
    assert pc.measure(requests, reports).compactions >= 2
    assert pc.assert_appends(requests, reports, keeps_sent=True) >= len(requests) // 2
    # core keeps the compactor's history: within a run it appends with or without the state
    before = pc.measure(*await _tool_run(False))
    after = pc.measure(requests, reports)
    print(f"\n{before.line('cliver_core run before (states=False)')}")
    print(after.line("cliver_core run after"))
    assert after.shared == before.shared


async def _chat_runs(
    states: Any, conversation: str | None, runs: int = 16
) -> tuple[list[Any], list[CompressionReport]]:
    """``runs`` chat turns without tools, each given the caller's own full transcript (not
    ``response.messages``, which holds the compactions)."""
    reports: list[CompressionReport] = []
    compactor = PolicyCompactor(
        pc.policy(), conversation=conversation, states=states, on_report=reports.append
    )
    transcript: list[CLIverMessage] = []
    async with ProviderServer([_chat_reply(t) for t in range(runs)]) as server:
        async with AgentCore(
            ModelBindings(llm=binding(server, model="main")),
            builtin_system_prompt=pc.INSTRUCTIONS,
            context_compactor=compactor,
        ) as agent:
            for turn in range(runs):
                text = f"question {turn}: and what about part {turn}?"
                response = await agent.chat(text, conversation=transcript)
                # what this run added, from its own user message on (the newest turn is
                # never compacted away)
                start = max(i for i, m in enumerate(response.messages) if m.content == text)
                transcript = [*transcript, *response.messages[start:]]
        requests = server.requests
    return requests, reports


async def test_a_conversation_key_carries_the_state_across_runs() -> None:
    """A chat front end passing its own full transcript each turn: keyed by the
    conversation, a run goes on from the request the last one sent."""
    states = CompactionStates()
    requests, reports = await _chat_runs(states, "chat-1")
    assert len(requests) == len(reports) == 16
    assert pc.measure(requests, reports).compactions >= 2
    assert pc.assert_appends(requests, reports) >= len(requests) // 2
    assert len(states) == 1
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)
    before = pc.measure(*await _chat_runs(False, "chat-1"))
    pc.assert_better("cliver_core chat runs", pc.measure(requests, reports), before)
    # keyed by the run (no conversation given), every run over the threshold starts afresh
    per_run = pc.measure(*await _chat_runs(CompactionStates(), None))
    assert per_run.compactions == before.compactions


def test_policy_compactor_checks_its_options() -> None:
    with pytest.raises(ConfigError, match="conversation must be a non-empty str"):
        PolicyCompactor(pc.policy(), conversation="")
    with pytest.raises(ConfigError, match="states must be a CompactionStates"):
        PolicyCompactor(pc.policy(), states=True)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="on_report must be callable"):
        PolicyCompactor(pc.policy(), on_report="print")  # type: ignore[arg-type]
