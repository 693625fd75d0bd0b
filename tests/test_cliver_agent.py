"""AgentCore's loop against the local wire-protocol server through the real providers:
tools (concurrent, one result per call), usage totals to the token, run ids, events, stream,
conversation=, run_skill, chat_structured, stateless concurrent runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from _cliver_helpers import PROTOCOLS, binding, calls, read_file, wire_messages
from agent_adapter import CallableModel, ConfigError, ModelOutputInvalid, ModelRequest
from agent_adapter import ToolCall as WireCall
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import (
    AgentCore,
    CLIverMessage,
    InferenceEvent,
    ModelBinding,
    ModelBindings,
    Skill,
    SkillManager,
    SkillNotFoundError,
    ToolCall,
    ToolEvent,
    UsageInfo,
    presets,
    tool,
)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_tool_loop_usage_total_and_run_id(protocol: str) -> None:
    async with ProviderServer() as server:
        server.add(
            calls(("c1", "read_file", {"path": "a.py"}), ("c2", "read_file", {"path": "b.py"}),
                  input_tokens=120, output_tokens=9, cache_read_tokens=20),
            Reply(text="both read", input_tokens=700, output_tokens=4),
        )  # fmt: skip
        events: list[Any] = []
        async with AgentCore(
            ModelBindings(llm=binding(server, protocol)), [read_file], inference_events=True
        ) as agent:
            response = await agent.chat("read a.py and b.py", on_event=events.append)
    assert response.message.content == "both read"
    assert response.usage == UsageInfo(input_tokens=700, output_tokens=4)
    assert response.usage_total == UsageInfo(
        input_tokens=820, output_tokens=13, cache_read_input_tokens=20
    )
    history = response.messages
    assert [m.role for m in history] == ["user", "assistant", "tool", "tool", "assistant"]
    ids = [c.id for c in history[1].tool_calls or ()]
    assert [m.tool_call_id for m in history[2:4]] == ids and len(ids) == 2
    if protocol != "gemini":  # the Gemini API sends no call ids; the provider makes them up
        assert ids == ["c1", "c2"]
    assert history[2].content is not None and "a.py" in str(history[2].content)
    assert response.run_id and all(e.run_id == response.run_id for e in events)
    names = [e.event.value for e in events]
    assert names.count("inference.started") == 2 and names.count("tool.end") == 2
    trace = response.message.trace
    assert trace is not None and [t["usage_total"]["input_tokens"] for t in trace] == [120, 820]


async def test_parallel_tools_run_one_replys_calls_concurrently_in_call_order() -> None:
    first, second = asyncio.Event(), asyncio.Event()

    @tool(description="Wait for the other call.")
    async def meet(name: str) -> str:
        (first if name == "a" else second).set()
        await (second if name == "a" else first).wait()  # deadlocks unless both run at once
        return f"met {name}"

    async with ProviderServer() as server:
        server.add(
            calls(("c1", "meet", {"name": "a"}), ("c2", "meet", {"name": "b"})),
            Reply(text="ok"),
        )
        async with AgentCore(
            ModelBindings(llm=binding(server)), [meet], run_timeout=20, parallel_tools=True
        ) as agent:
            response = await agent.chat("meet")
            sent = wire_messages(server, 1)
    # a plain str result is JSON-quoted, as 0.3.0a5 sends it
    assert [m["content"] for m in sent if m["role"] == "tool"] == ['"met a"', '"met b"']
    assert response.message.content == "ok"


async def test_stream_yields_text_and_a_terminal_trace_with_usage_totals() -> None:
    async with ProviderServer() as server:
        server.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=50, output_tokens=5),
            Reply(text="streamed answer", input_tokens=90, output_tokens=6),
        )
        async with AgentCore(ModelBindings(llm=binding(server)), [read_file]) as agent:
            chunks = [c async for c in agent.stream("go")]
    text = "".join(c.content or "" for c in chunks)
    assert text == "streamed answer"
    last = chunks[-1]
    trace = json.loads(last.vendor_ext["__llm_trace__"])
    assert [t["usage_total"]["input_tokens"] for t in trace] == [50, 140]
    assert last.usage == UsageInfo(input_tokens=140, output_tokens=11)
    assert last.run_id == trace[0]["run_id"]


async def test_conversation_and_system_prompt_reach_the_model() -> None:
    conversation = [
        CLIverMessage(role="system", content="from the store"),
        CLIverMessage(role="user", content="earlier question"),
        CLIverMessage(role="assistant", content="earlier answer"),
    ]
    async with (
        ProviderServer([Reply(text="now")]) as server,
        AgentCore(ModelBindings(llm=binding(server)), builtin_system_prompt="core") as agent,
    ):
        response = await agent.chat("next", system_prompt="persona", conversation=conversation)
        sent = wire_messages(server, 0)
    assert sent[0] == {"role": "system", "content": "core\n\npersona\n\nfrom the store"}
    assert [m["content"] for m in sent[1:]] == ["earlier question", "earlier answer", "next"]
    assert [m.content for m in response.messages][:2] == ["earlier question", "earlier answer"]
    assert len(conversation) == 3  # the caller's list is not changed


async def test_bad_conversation_names_the_index_when_validation_is_on() -> None:
    agent = AgentCore(
        ModelBindings(llm=ModelBinding.llm(model="m", provider=_echo())),
        validate_conversation=True,
    )
    orphan = [CLIverMessage(role="tool", content="r", tool_call_id="x")]
    with pytest.raises(ConfigError, match=r"messages\[0\]"):
        await agent.chat("q", conversation=orphan)
    middle = [CLIverMessage(role="user", content="a"), CLIverMessage(role="system", content="s")]
    with pytest.raises(ConfigError, match=r"messages\[1\] is a system message"):
        await agent.chat("q", conversation=middle)


async def test_a_conversation_with_a_dangling_call_is_sent_as_given_by_default() -> None:
    # 0.3.0a5 sends a caller's conversation as it is; validation is opt-in
    dangling = [
        CLIverMessage(role="user", content="delete it"),
        CLIverMessage(
            role="assistant", tool_calls=[ToolCall(id="c9", name="delete", args={"p": "x"})]
        ),
    ]
    async with (
        ProviderServer([Reply(text="ok")]) as server,
        AgentCore(ModelBindings(llm=binding(server))) as agent,
    ):
        response = await agent.chat("never mind", conversation=dangling)
        sent = wire_messages(server, 0)
    assert response.message.content == "ok"
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["tool_calls"][0]["id"] == "c9"


def _echo() -> CallableModel:
    def answer(request: ModelRequest) -> str:
        return f"echo {request.messages[-1].text}"

    return CallableModel(answer, provider="echo", model="echo-1")


async def test_concurrent_runs_on_one_agent_never_share_state() -> None:
    async def slow(request: ModelRequest) -> str:
        await asyncio.sleep(0.01 * len(request.messages[-1].text))
        return request.messages[-1].text.upper()

    agent = AgentCore(ModelBindings(llm=ModelBinding.llm(model="m", provider=CallableModel(slow))))
    replies = await asyncio.gather(*(agent.chat(word) for word in ("alpha", "be", "gamma-ray")))
    assert [r.message.content for r in replies] == ["ALPHA", "BE", "GAMMA-RAY"]
    assert len({r.run_id for r in replies}) == 3
    assert all(len(r.messages) == 2 for r in replies)


async def test_permission_denial_is_a_result_and_an_event() -> None:
    @tool(description="Delete a file.")
    def delete(path: str) -> str:
        raise AssertionError("never runs")

    async with ProviderServer() as server:
        server.add(calls(("c1", "delete", {"path": "/"})), Reply(text="I will not."))
        events: list[Any] = []
        async with AgentCore(
            ModelBindings(llm=binding(server)),
            [delete],
            permission_callback=lambda call: f"{call.tool_name} needs approval",
            on_event=events.append,
        ) as agent:
            response = await agent.chat("clean up")
    result = response.messages[2]
    assert result.content == "Error: Permission denied: delete needs approval"
    assert any(
        isinstance(e, ToolEvent) and e.event.value == "tool.permission_denied" for e in events
    )


async def test_consecutive_tool_errors_stop_the_run() -> None:
    async with ProviderServer() as server:
        server.add(*(calls((f"c{i}", "missing", {})) for i in range(2)))
        async with AgentCore(ModelBindings(llm=binding(server)), max_consecutive_errors=2) as agent:
            response = await agent.chat("go")
    assert response.message.content is not None
    assert response.message.content.startswith("Tool calls failed repeatedly")
    assert "Tool 'missing' not found" in str(response.messages[2].content)


async def test_run_skill_pins_instructions_and_narrows_tools(tmp_path: Path) -> None:
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: release\ndescription: Cut a release.\nallowed-tools: [read_file]\n---\n"
        "Bump the version, then tag.\n"
    )

    @tool(description="Push.")
    def push() -> str:
        return "pushed"

    manager = SkillManager([tmp_path])
    async with (
        ProviderServer([Reply(text="released")]) as server,
        AgentCore(ModelBindings(llm=binding(server)), [read_file, push], None, manager) as agent,
    ):
        response = await agent.run_skill("release", "ship it", system_prompt="be careful")
        body = server.requests[0].body
    assert response.message.content == "released"
    system = body["messages"][0]["content"]
    assert system.startswith("be careful") and "Bump the version, then tag." in system
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file"]
    with pytest.raises(SkillNotFoundError, match="release"):
        await agent.run_skill("nope", "x")
    assert Skill.from_file(folder / "SKILL.md").allowed_tools == ["read_file"]


class Verdict(BaseModel):
    passed: bool
    reasons: list[str]


@pytest.mark.parametrize("protocol", ["openai", "gemini"])
async def test_chat_structured_validates_with_one_repair(protocol: str) -> None:
    async with ProviderServer() as server:
        server.add(Reply(text='{"passed": "maybe"}'), Reply(text='{"passed": true, "reasons": []}'))
        async with AgentCore(ModelBindings(llm=binding(server, protocol))) as agent:
            response = await agent.chat_structured("judge", Verdict)
            requests = server.requests
    assert response.parsed == Verdict(passed=True, reasons=[])
    assert len(requests) == 2
    if protocol == "openai":
        assert requests[0].body["response_format"]["type"] == "json_schema"
        repair = requests[1].body["messages"][-1]["content"]
        assert repair.startswith("Your reply does not match the required JSON schema")


async def test_chat_structured_raises_after_the_repair_and_takes_a_json_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    async with ProviderServer() as server:
        server.add(Reply(text="{}"), Reply(text='{"n": "x"}'), Reply(text='{"n": 3}'))
        async with AgentCore(ModelBindings(llm=binding(server))) as agent:
            with pytest.raises(ModelOutputInvalid, match=r"\$\.n"):
                await agent.chat_structured("count", schema)
            assert (await agent.chat_structured("count", schema)).parsed == {"n": 3}


def test_bindings_presets_and_tools_keep_the_0_3_0a5_shapes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "from-env")
    ds = presets.deepseek(temperature=0.2)
    assert (ds.api_key, ds.base_url, ds.protocol, ds.params) == (
        "from-env", "https://api.deepseek.com", "openai", {"temperature": 0.2},
    )  # fmt: skip
    assert presets.deepseek(api_key="").api_key == ""
    assert presets.deepseek_anthropic().base_url == "https://api.deepseek.com/anthropic"
    assert presets.ollama(model="llama3").base_url == "http://localhost:11434/v1"
    assert presets.vllm(model="q").base_url == "http://localhost:8000/v1"
    assert presets.gemini().protocol == "gemini"
    assert presets.openai(responses=True).protocol == "responses"
    with pytest.raises(ConfigError):
        presets.openai_compatible(base_url="", model="m")
    with pytest.raises(TypeError):
        ModelBinding.llm(model="m", path="/x")
    both = ModelBindings(llm=[presets.openai(), presets.anthropic()])
    assert [b.model for b in both.llm_chain] == ["gpt-4o", "claude-sonnet-4-5"]
    with pytest.raises(ConfigError):
        AgentCore(ModelBindings())

    @tool(description="Add.")
    def add(a: int, b: int = 1) -> str:
        return str(a + b)

    assert add.execute(a="2") == "3" and add.parameters["required"] == ["a"]


async def test_inference_events_name_model_and_provider() -> None:
    async with ProviderServer([Reply(text="hi")]) as server:
        events: list[Any] = []
        async with AgentCore(
            ModelBindings(llm=binding(server, model="gpt-x")),
            on_event=events.append,
            inference_events=True,
        ) as agent:
            await agent.chat("hello")
    started = next(e for e in events if isinstance(e, InferenceEvent))
    assert (started.model, started.provider, started.data["attempt"]) == ("gpt-x", "openai", 0)
    assert started.data["message_count"] == 1
    _ = WireCall


def test_native_round_trips_through_the_shared_converters() -> None:
    chat = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
        ],
    }
    message = CLIverMessage.from_native(chat, "openai")
    assert message.tool_calls is not None and message.tool_calls[0].args == {"x": 1}
    assert message.to_native("openai") == chat and message.to_native("openai") is not chat
    assert message.to_native("anthropic") == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {"x": 1}}],
    }
    blocks = {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    assert CLIverMessage.from_native(blocks, "anthropic").content == "hi"
    with pytest.raises(ConfigError, match="unknown protocol"):
        CLIverMessage(role="user", content="x").to_native("smoke-signals")


async def test_a_leading_system_message_of_blocks_reaches_the_model() -> None:
    """Regression: a conversation's leading system message joined the system prompt only
    when its content was a string; one of text blocks (cache_control and all) was dropped
    unsent."""
    lead = CLIverMessage(
        role="system",
        content=[
            {"type": "text", "text": "You are a pirate.", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Answer in pirate speak."},
        ],
    )
    conversation = [lead, CLIverMessage(role="user", content="hello")]
    conversation.append(CLIverMessage(role="assistant", content="Arr!"))
    with ProviderServer([Reply(text="a pirate")]) as server:
        agent = AgentCore(ModelBindings(llm=binding(server)), builtin_system_prompt="SYS")
        await agent.chat("who are you?", conversation=conversation)
        sent = wire_messages(server, 0)
    assert sent[0] == {
        "role": "system",
        "content": "SYS\n\nYou are a pirate.\nAnswer in pirate speak.",
    }
    assert sent[1:3] == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "Arr!"},
    ]
