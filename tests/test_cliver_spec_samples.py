"""The code samples of the Context Window spec (../shared/spec/000), run as written (their line
breaks were flattened when the page was captured; restored here, nothing else changed), and
the ``cliver`` message format: ``compress_for`` on CLIverMessage lists, approval state kept."""

from __future__ import annotations

import textwrap
from typing import Any

from _cliver_helpers import binding, calls, read_file, wire_messages
from agent_adapter import Message
from agent_adapter.context import (
    CompressionPolicy,
    RemoveOldMessages,
    carries_approval_state,
    compress_for,
)
from agent_adapter.context.formats import convert, detect_format
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import (
    AgentCore,
    CliverConverter,
    CLIverMessage,
    CompactionContext,
    ModelBindings,
    ToolCall,
)

SAMPLE_OVERRIDES = """
agent = AgentCore(bindings, context_compactor=my_compactor) # constructor default
response = await agent.chat(prompt) # uses the default
response = await agent.chat(prompt, context_compactor=other) # per-call override
response = await agent.chat(prompt, context_compactor=None) # disabled for this call
"""

SAMPLE_SEES = """
from cliver_core import CompactionContext
async def my_compactor(context: CompactionContext):
    used = context.last_usage.input_tokens if context.last_usage else 0
    if used < 60_000:
        return None
    return compact(context)
"""

SAMPLE_PLAN = """
from cliver_core import CompactionContext, CompactionPlan
SUMMARIZE = (
    "Summarize the earlier part of this agent run for the same assistant. "
    "Keep facts, decisions, tool results that still matter, and open tasks. "
    "Be compact and do not invent."
)
async def my_compactor(context: CompactionContext) -> CompactionPlan | None:
    used = context.last_usage.input_tokens if context.last_usage else 0
    if used < 60_000:
        return None

    split = context.split_at_user_turn(keep_turns=2)
    if not split.older:  # nothing to drop yet
        return None

    response = await summarizer.chat(f"{SUMMARIZE}\\n\\n{context.render(split.older)}")
    if not response.message.content:
        return None

    return split.plan(summary=response.message.content, usage=response.usage_total)
"""

SAMPLE_LLM_COMPACTOR = """
from cliver_core import AgentCore, LlmCompactor, ModelBindings, presets
# One summarizer per worker / event loop, like any other AgentCore.
summarizer = AgentCore(ModelBindings(llm=presets.deepseek(api_key="...")))
compactor = LlmCompactor(summarizer, threshold_tokens=60_000, keep_turns=2)
agent = AgentCore(bindings, context_compactor=compactor)
"""


async def _run(source: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run ``source`` as the body of an async function (the samples use top-level await)."""
    body = textwrap.indent(source.strip(), "    ")
    code = f"async def __sample():\n{body}\n    return locals()\n"
    exec(compile(code, "<spec sample>", "exec"), namespace)
    found: dict[str, Any] = await namespace["__sample"]()
    return found


def _history() -> list[CLIverMessage]:
    out: list[CLIverMessage] = []
    for i in range(3):
        out.append(CLIverMessage(role="user", content=f"turn {i}"))
        out.append(CLIverMessage(role="assistant", content=f"reply {i}"))
    return out


async def test_override_sample_runs_as_written() -> None:
    seen: list[str] = []

    async with ProviderServer(default=Reply(text="ok")) as server:
        namespace: dict[str, Any] = {
            "AgentCore": AgentCore,
            "bindings": ModelBindings(llm=binding(server)),
            "prompt": "hello",
            "my_compactor": lambda context: seen.append("default"),
            "other": lambda context: seen.append("other"),
        }
        found = await _run(SAMPLE_OVERRIDES, namespace)
        await found["agent"].aclose()
    assert seen == ["default", "other"]
    assert found["response"].message.content == "ok"


async def test_what_the_compactor_sees_sample_runs_as_written() -> None:
    compacted: list[int] = []

    def compact(context: CompactionContext) -> None:
        compacted.append(context.iteration)

    found = await _run(SAMPLE_SEES, {"compact": compact})
    async with ProviderServer() as server:
        server.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=59_999),
            calls(("c2", "read_file", {"path": "b"}), input_tokens=60_000),
            Reply(text="done"),
        )
        async with AgentCore(
            ModelBindings(llm=binding(server)), [read_file], context_compactor=found["my_compactor"]
        ) as agent:
            await agent.chat("go")
    assert compacted == [2]


async def test_declarative_plan_sample_runs_as_written() -> None:
    async with ProviderServer() as server, ProviderServer() as cheap:
        cheap.add(Reply(text="The user asked three things.", input_tokens=50, output_tokens=7))
        server.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=61_000, output_tokens=3),
            Reply(text="done", input_tokens=100, output_tokens=2),
        )
        async with AgentCore(ModelBindings(llm=binding(cheap))) as summarizer:
            found = await _run(SAMPLE_PLAN, {"summarizer": summarizer})
            async with AgentCore(
                ModelBindings(llm=binding(server)),
                [read_file],
                context_compactor=found["my_compactor"],
            ) as agent:
                response = await agent.chat("now", conversation=_history())
        second = wire_messages(server, 1)
    assert second[0]["content"] == "[Compacted earlier context]\nThe user asked three things."
    assert [m["content"] for m in second[1:3]] == ["turn 2", "reply 2"]
    assert response.usage_total.input_tokens == 61_000 + 100 + 50
    assert response.usage_total.output_tokens == 3 + 2 + 7


async def test_llm_compactor_sample_runs_as_written() -> None:
    async with ProviderServer(default=Reply(text="fine")) as server:
        found = await _run(SAMPLE_LLM_COMPACTOR, {"bindings": ModelBindings(llm=binding(server))})
        async with found["agent"] as agent, found["summarizer"]:
            response = await agent.chat("hello", conversation=_history())
    assert response.message.content == "fine"  # silent on the first iteration: no DeepSeek call
    assert found["compactor"].threshold_tokens == 60_000


def test_cliver_is_a_registered_format_and_denials_are_approval_state() -> None:
    refused = "Error: Permission denied: rm -rf needs approval"
    messages = [
        CLIverMessage(role="user", content="clean"),
        CLIverMessage(role="assistant", tool_calls=[ToolCall(id="x", name="rm", args={})]),
        CLIverMessage(role="tool", content=refused, tool_call_id="x"),
        CLIverMessage(role="assistant", content="Asked for approval."),
        CLIverMessage(role="user", content="ok"),
    ]
    assert detect_format(messages) == "cliver"
    loaded = convert(messages, "cliver").messages
    assert all(isinstance(m, Message) for m in loaded)
    assert loaded[2].name == "rm" and carries_approval_state(loaded[2])
    assert not carries_approval_state(loaded[3])
    assert isinstance(CliverConverter().dump(loaded[3]), CLIverMessage)


async def test_compress_for_keeps_objects_and_protects_the_refusal() -> None:
    refused = "Error: Permission denied: pushing to main needs approval"
    messages: list[CLIverMessage] = []
    for i in range(12):
        messages.append(CLIverMessage(role="user", content=f"step {i} " + "y" * 300))
        messages.append(
            CLIverMessage(role="assistant", tool_calls=[ToolCall(id=f"t{i}", name="git", args={})])
        )
        content = refused if i == 1 else f"output {i} " + "z" * 600
        messages.append(CLIverMessage(role="tool", content=content, tool_call_id=f"t{i}"))
        messages.append(CLIverMessage(role="assistant", content=f"done {i}"))
    messages.append(CLIverMessage(role="user", content="finish"))
    policy = CompressionPolicy(threshold_tokens=800, target_tokens=600, steps=[RemoveOldMessages()])
    out, report = await compress_for(messages, policy)
    assert len(out) < len(messages)
    assert any(m.content == refused for m in out)
    kept = {id(m) for m in messages}
    assert all(isinstance(m, CLIverMessage) for m in out)
    assert sum(id(m) in kept for m in out) >= len(out) - 2  # kept ones are the same objects
    assert out[-1] is messages[-1]
    assert report.tokens_after < report.tokens_before
