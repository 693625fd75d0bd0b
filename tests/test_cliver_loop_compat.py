"""The agent loop behaves as cliver-core 0.3.0a5's (issue 21), each on the real OpenAI provider
against the local wire-protocol server: tools run in order, ``tool.end`` / ``tool.error`` as
0.3.0a5 emits them, a handler's exception fails the run, the trace and ``request_info`` keys,
``max_tokens`` and unknown options on the wire, no ``name`` on tool messages, permission
callbacks with ``ToolCallContext`` / ``Decision``, ``safety_overrides``, the ambient
execution policy, selectors, and the streaming inference events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from _cliver_helpers import binding, calls, read_file, wire_messages
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import (
    AgentCore,
    CLIverTool,
    InferenceEvent,
    ModelBindings,
    ToolEvent,
    tool,
)
from cliver_core.policy import (
    Decision,
    ExecutionPolicy,
    ToolCallContext,
    ToolCategory,
    current_policy,
)


def _tool_events(events: list[Any]) -> list[tuple[str, str]]:
    return [(e.event.value, e.tool_name) for e in events if isinstance(e, ToolEvent)]


async def test_one_replys_calls_run_in_order_one_at_a_time() -> None:
    log: list[str] = []

    @tool(description="Step.")
    async def step(name: str) -> str:
        log.append(f"start {name}")
        await asyncio.sleep(0.01)
        log.append(f"end {name}")
        return name

    async with ProviderServer() as server:
        server.add(calls(("c1", "step", {"name": "a"}), ("c2", "step", {"name": "b"})))
        server.add(Reply(text="ok"))
        async with AgentCore(ModelBindings(llm=binding(server)), [step]) as agent:
            await agent.chat("go")
    assert log == ["start a", "end a", "start b", "end b"]


async def test_tool_end_for_error_results_and_unknown_tools_tool_error_when_it_raises() -> None:
    @tool(description="Fails softly.")
    def soft() -> list[dict[str, str]]:
        return [{"error": "no such row"}]

    @tool(description="Raises.")
    def hard() -> str:
        raise RuntimeError("disk on fire")

    events: list[Any] = []
    async with ProviderServer() as server:
        server.add(calls(("c1", "soft", {}), ("c2", "nope", {}), ("c3", "hard", {})))
        server.add(Reply(text="ok"))
        async with AgentCore(
            ModelBindings(llm=binding(server)), [soft, hard], on_event=events.append
        ) as agent:
            response = await agent.chat("go")
        sent = wire_messages(server, 1)
    assert _tool_events(events) == [
        ("tool.start", "soft"),
        ("tool.end", "soft"),
        ("tool.start", "nope"),
        ("tool.end", "nope"),
        ("tool.start", "hard"),
        ("tool.error", "hard"),
    ]
    ends = [e for e in events if isinstance(e, ToolEvent) and e.event.value != "tool.start"]
    assert (
        ends[0].result == "Error: no such row" and ends[1].result == "Error: Tool 'nope' not found"
    )
    assert ends[2].error == "disk on fire" and ends[2].result is None
    results = [m for m in sent if m["role"] == "tool"]
    assert [m["content"] for m in results] == [
        "Error: no such row",
        "Error: Tool 'nope' not found",
        "Error: disk on fire",
    ]
    # 0.3.0a5 sends a tool message as role, content and tool_call_id: no `name`
    assert all(set(m) == {"role", "content", "tool_call_id"} for m in results)
    assert response.message.content == "ok"


async def test_a_handler_raising_on_tool_start_fails_the_run() -> None:
    async def handler(event: Any) -> None:
        if isinstance(event, ToolEvent) and event.event.value == "tool.start":
            raise RuntimeError("monitor down")

    async with ProviderServer() as server:
        server.add(calls(("c1", "read_file", {"path": "a"})), Reply(text="ok"))
        async with AgentCore(
            ModelBindings(llm=binding(server)), [read_file], on_event=handler
        ) as agent:
            with pytest.raises(RuntimeError, match="monitor down"):
                await agent.chat("go")


async def test_a_handler_raising_on_tool_end_makes_the_call_a_tool_error() -> None:
    # 0.3.0a5 emits tool.end inside the call's try: the handler's exception becomes the result
    events: list[Any] = []

    async def handler(event: Any) -> None:
        events.append(event)
        if isinstance(event, ToolEvent) and event.event.value == "tool.end":
            raise RuntimeError("monitor down")

    async with ProviderServer() as server:
        server.add(calls(("c1", "read_file", {"path": "a"})), Reply(text="ok"))
        async with AgentCore(
            ModelBindings(llm=binding(server)), [read_file], on_event=handler
        ) as agent:
            response = await agent.chat("go")
    assert _tool_events(events) == [
        ("tool.start", "read_file"),
        ("tool.end", "read_file"),
        ("tool.error", "read_file"),
    ]
    assert response.messages[2].content == "Error: monitor down"
    assert response.message.content == "ok"


async def test_model_call_events_reach_handlers_only_when_asked() -> None:
    async with ProviderServer() as server:
        server.add(Reply(text="a"), Reply(text="b"))
        quiet: list[Any] = []
        loud: list[Any] = []
        async with AgentCore(ModelBindings(llm=binding(server)), on_event=quiet.append) as a:
            await a.chat("x")
        async with AgentCore(
            ModelBindings(llm=binding(server)), on_event=loud.append, inference_events=True
        ) as b:
            await b.chat("x")
    assert quiet == []
    assert [e.event.value for e in loud] == ["inference.started", "inference.completed"]


async def test_trace_and_request_info_carry_0_3_0a5s_keys() -> None:
    async with ProviderServer() as server:
        server.add(calls(("c1", "read_file", {"path": "a"})), Reply(text="ok"))
        async with AgentCore(
            ModelBindings(llm=binding(server, temperature=0.2)),
            [read_file],
            builtin_system_prompt="core",
        ) as agent:
            response = await agent.chat("go", options={"max_tokens": 99})
    trace = response.message.trace
    assert trace is not None and len(trace) == 2
    first = trace[0]
    assert {"iteration", "model", "provider", "request", "response", "message"} <= set(first)
    request = first["request"]
    assert set(request) >= {"model", "provider", "options", "system_prompt", "messages", "tools"}
    assert request["system_prompt"] == "core"
    assert request["options"] == {"temperature": 0.2, "max_tokens": 99}
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert request["tools"][0]["name"] == "read_file" and "execute" not in request["tools"][0]
    assert first["response"]["tool_calls"][0]["function"]["name"] == "read_file"
    assert [m["role"] for m in trace[1]["request"]["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
    info = response.request_info
    assert info is not None and info["system_prompt"] == "core" and info["run_id"]


async def test_max_tokens_keeps_its_name_and_unknown_options_reach_the_body() -> None:
    async with ProviderServer() as server:
        server.add(Reply(text="a"), Reply(text="b"))
        async with AgentCore(ModelBindings(llm=binding(server))) as agent:
            await agent.chat("x", options={"max_tokens": 64, "reasoning_split": True})
            await agent.chat("y", options={"max_completion_tokens": 32})
        first, second = (r.body for r in server.requests)
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["max_tokens"] == 64 and "max_completion_tokens" not in first
    assert first["reasoning_split"] is True
    assert second["max_completion_tokens"] == 32 and "max_tokens" not in second


async def test_permission_callback_gets_a_context_and_returns_a_decision() -> None:
    seen: list[ToolCallContext] = []

    async def ask(context: ToolCallContext) -> Decision:
        seen.append(context)
        if context.tool_name == "delete":
            return Decision.deny("not on prod")
        return Decision.allow()

    @tool(description="Delete.")
    def delete(path: str) -> str:
        raise AssertionError("never runs")

    @tool(description="Write.")
    def write(path: str) -> str:
        return f"wrote {path}"

    @tool(description="Count.")
    def count() -> str:
        return "3"

    events: list[Any] = []
    async with ProviderServer() as server:
        server.add(
            calls(
                ("c1", "read_file", {"path": "a"}),
                ("c2", "delete", {"path": "/"}),
                ("c3", "write", {"path": "b"}),
                ("c4", "count", {}),
            ),
            Reply(text="done"),
        )
        async with AgentCore(
            ModelBindings(llm=binding(server)),
            [read_file, delete, write, count],
            permission_callback=ask,
            safety_overrides={"count": ToolCategory.SAFE},
            on_event=events.append,
        ) as agent:
            response = await agent.chat("go")
    # read_file is safe, count is overridden to SAFE: neither asks
    assert [(c.tool_name, c.args, c.category) for c in seen] == [
        ("delete", {"path": "/"}, ToolCategory.ASK),
        ("write", {"path": "b"}, ToolCategory.ASK),
    ]
    results = [m.content for m in response.messages if m.role == "tool"]
    assert results[1] == "Error: Permission denied: not on prod"
    assert results[2:] == ['"wrote b"', '"3"']  # a str result JSON-quoted, as 0.3.0a5
    denied = [e for e in events if isinstance(e, ToolEvent) and "denied" in e.event.value]
    assert len(denied) == 1 and denied[0].error == "Permission denied: not on prod"
    assert ("tool.end", "delete") in _tool_events(events)


async def test_a_permission_callback_that_raises_denies() -> None:
    async def broken(context: ToolCallContext) -> Decision:
        raise RuntimeError("prompt closed")

    @tool(description="Write.")
    def write(path: str) -> str:
        raise AssertionError("never runs")

    async with ProviderServer() as server:
        server.add(calls(("c1", "write", {"path": "b"})), Reply(text="done"))
        async with AgentCore(
            ModelBindings(llm=binding(server)), [write], permission_callback=broken
        ) as agent:
            response = await agent.chat("go")
    assert response.messages[2].content == (
        "Error: Permission denied: permission callback failed: prompt closed"
    )


async def test_the_execution_policy_is_ambient_while_tools_run(tmp_path: Any) -> None:
    seen: list[Any] = []

    @tool(description="Where.", safety="safe")
    def where() -> str:
        seen.append(current_policy())
        return "here"

    policy = ExecutionPolicy(cwd=tmp_path)
    override = ExecutionPolicy(cwd=tmp_path / "sub")
    async with ProviderServer() as server:
        server.add(calls(("c1", "where", {})), Reply(text="a"))
        server.add(calls(("c2", "where", {})), Reply(text="b"))
        async with AgentCore(
            ModelBindings(llm=binding(server)), [where], execution_policy=policy
        ) as agent:
            await agent.chat("go")
            await agent.chat("go", execution_policy=override)
    assert seen == [policy, override]
    assert current_policy() is None


async def test_tool_selector_and_tool_filter_narrow_the_advertised_tools() -> None:
    @tool(description="Other.")
    def other() -> str:
        return "o"

    def selector(tools: Any, query: str) -> list[CLIverTool]:
        assert query == "read it"
        return [t for t in tools if t.name != "other"]

    async with ProviderServer([Reply(text="ok")]) as server:
        async with AgentCore(
            ModelBindings(llm=binding(server)), [read_file, other], tool_selector=selector
        ) as agent:
            await agent.chat("read it")
        body = server.requests[0].body
    assert isinstance(body, dict)
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file"]


async def test_an_extra_tool_replaces_a_builtin_of_its_name() -> None:
    @tool(name="read_file", description="Read a file (sandboxed).", safety="safe")
    def sandboxed(path: str) -> str:
        return "sandboxed"

    async with ProviderServer() as server:
        server.add(calls(("c1", "read_file", {"path": "a"})), Reply(text="ok"))
        async with AgentCore(ModelBindings(llm=binding(server)), [read_file]) as agent:
            response = await agent.chat("go", extra_tools=[sandboxed])
        body = server.requests[0].body
    assert isinstance(body, dict)
    assert [t["function"]["description"] for t in body["tools"]] == ["Read a file (sandboxed)."]
    assert response.messages[2].content == '"sandboxed"'  # JSON-quoted, as 0.3.0a5


async def test_the_calls_after_the_error_limit_are_not_run_but_answered() -> None:
    ran: list[str] = []

    @tool(description="Fails.", safety="safe")
    def bad(n: int) -> list[dict[str, str]]:
        ran.append(str(n))
        return [{"error": f"bad {n}"}]

    async with ProviderServer() as server:
        server.add(calls(*((f"c{i}", "bad", {"n": i}) for i in range(4))))
        async with AgentCore(
            ModelBindings(llm=binding(server)), [bad], max_consecutive_errors=2
        ) as agent:
            response = await agent.chat("go")
    assert ran == ["0", "1"]
    assert response.message.content.startswith("Tool calls failed repeatedly")
    results = [m for m in response.messages if m.role == "tool"]
    assert [m.tool_call_id for m in results] == ["c0", "c1", "c2", "c3"]
    assert results[2].content.startswith("Error: not run")


async def test_streaming_emits_first_token_and_tool_call_events() -> None:
    events: list[Any] = []
    async with ProviderServer() as server:
        server.add(calls(("c1", "read_file", {"path": "a"})), Reply(text="done"))
        async with AgentCore(
            ModelBindings(llm=binding(server)),
            [read_file],
            on_event=events.append,
            inference_events=True,
        ) as agent:
            chunks = [c async for c in agent.stream("go")]
    kinds = [e.event.value for e in events if isinstance(e, InferenceEvent)]
    assert kinds.count("inference.first_token") == 2
    calls_seen = [e.data for e in events if e.event.value == "inference.tool_call"]
    assert calls_seen == [{"tool_name": "read_file", "tool_call_id": "c1"}]
    trace = json.loads(chunks[-1].vendor_ext["__llm_trace__"])
    assert "provider" not in trace[0]["request"] and trace[0]["request"]["messages"]
    # chunks carry text (and reasoning) only, as 0.3.0a5 yields them
    assert all(c.content or c.vendor_ext for c in chunks)
    assert "".join(c.content or "" for c in chunks) == "done"


async def test_an_mcp_client_of_the_callers_own_is_used_as_0_3_0a5_uses_it() -> None:
    """Any object with MCPClient's start / get_tools / call_tool serves: started before the
    run, its tools offered, the model's ``mcp__`` calls sent to it (an unadvertised one
    too, as 0.3.0a5 routes every ``mcp__`` name there)."""
    from cliver_core import CLIverTool

    class Fake:
        def __init__(self) -> None:
            self.log: list[Any] = []

        async def start(self) -> None:
            self.log.append("start")

        async def get_tools(self, servers: list[str] | None = None) -> list[CLIverTool]:
            self.log.append(["get_tools", servers])
            return [CLIverTool(name="mcp__s__t", description="T.", parameters={},
                               execute=lambda **kw: None, safety="safe")]  # fmt: skip

        async def call_tool(self, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
            self.log.append(["call", name, args])
            return [{"text": f"{name} ran"}]

    fake = Fake()
    replies = [calls(("c1", "mcp__s__t", {"a": 1}), ("c2", "mcp__s__hidden", {})),
               Reply(text="done")]  # fmt: skip
    async with ProviderServer(replies) as server:
        agent = AgentCore(ModelBindings(llm=binding(server)), mcp_client=fake)
        assert agent.mcp_client is fake
        await agent.chat("go", mcp_servers=["s"])
        body = server.requests[0].body
        results = server.requests[1].body
    assert isinstance(body, dict) and isinstance(results, dict)
    assert [t["function"]["name"] for t in body["tools"]] == ["mcp__s__t"]
    assert fake.log == [
        "start", ["get_tools", ["s"]],
        ["call", "mcp__s__t", {"a": 1}], ["call", "mcp__s__hidden", {}],
    ]  # fmt: skip
    assert [m["content"] for m in results["messages"][-2:]] == [
        "mcp__s__t ran", "mcp__s__hidden ran"
    ]  # fmt: skip


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_an_image_attached_as_media_reaches_each_provider_inline(protocol: str) -> None:
    # 0.3.0a5 attaches an image as an OpenAI-style data URL block; Anthropic's Messages API
    # takes inline bytes as a base64 source (its url source fetches https URLs only)
    from cliver_core.media import MediaContent, MediaType

    png = "iVBORw0KGgo="
    image = MediaContent(type=MediaType.IMAGE, data=png, mime_type="image/png")
    async with ProviderServer([Reply(text="a cat")]) as server:
        async with AgentCore(ModelBindings(llm=binding(server, protocol))) as agent:
            response = await agent.chat("what is this?", media=[image])
        body = server.requests[0].body
    assert isinstance(body, dict) and response.message.content == "a cat"
    blocks = body["messages"][-1]["content"]
    if protocol == "anthropic":
        assert blocks[1] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": png},
        }
    else:
        assert blocks[1]["image_url"]["url"] == f"data:image/png;base64,{png}"


async def test_a_dict_tool_choice_goes_on_the_wire_as_given() -> None:
    choice = {"type": "function", "function": {"name": "read_file"}}
    async with ProviderServer([Reply(text="ok")]) as server:
        async with AgentCore(ModelBindings(llm=binding(server)), [read_file]) as agent:
            await agent.chat("x", options={"tool_choice": choice})
        body = server.requests[0].body
    assert isinstance(body, dict) and body["tool_choice"] == choice


async def test_temperature_reaches_an_anthropic_binding() -> None:
    async with ProviderServer([Reply(text="ok")]) as server:
        async with AgentCore(ModelBindings(llm=binding(server, "anthropic"))) as agent:
            await agent.chat("x", options={"temperature": 0.2, "top_p": 0.5})
        body = server.requests[0].body
    assert isinstance(body, dict)
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.2, 0.5, 4096)


async def test_a_conversation_of_dicts_is_read_as_messages() -> None:
    conversation: list[Any] = [
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "noted"},
    ]
    async with ProviderServer([Reply(text="ok")]) as server:
        async with AgentCore(ModelBindings(llm=binding(server))) as agent:
            await agent.chat("now", conversation=conversation)
        sent = wire_messages(server, 0)
    assert [(m["role"], m["content"]) for m in sent] == [
        ("user", "earlier"),
        ("assistant", "noted"),
        ("user", "now"),
    ]


def test_an_async_tool_dumps_to_json() -> None:
    @tool(description="Wait.")
    async def wait(seconds: int) -> str:
        return "done"

    dumped = json.loads(json.dumps(wait.model_dump(exclude={"execute"})))
    assert dumped["name"] == "wait" and "aexecute" not in dumped


async def test_anthropic_thinking_streams_under_0_3_0a5s_key() -> None:
    async with (
        ProviderServer([Reply(text="hi", thinking="let me see")]) as server,
        AgentCore(ModelBindings(llm=binding(server, "anthropic"))) as agent,
    ):
        chunks = [c async for c in agent.stream("x")]
    assert "".join(c.vendor_ext.get("thinking", "") for c in chunks) == "let me see"


async def test_zero_iterations_answer_the_limit_without_a_request() -> None:
    async with ProviderServer() as server:
        async with AgentCore(ModelBindings(llm=binding(server))) as agent:
            response = await agent.chat("x", max_iterations=0)
        assert server.requests == []
    assert response.message.content == "Reached maximum iterations without a final answer."
    assert response.usage is None


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_a_tool_name_providers_reject_goes_out_valid_and_comes_back_declared(
    protocol: str,
) -> None:
    @tool(name="docs.search", description="Search the docs.", safety="safe")
    def search(q: str) -> str:
        return f"found {q}"

    events: list[Any] = []
    wire = "docs_search"
    async with ProviderServer() as server:
        server.add(calls(("c1", wire, {"q": "cache"})), Reply(text="ok"))
        async with AgentCore(
            ModelBindings(llm=binding(server, protocol)), [search], on_event=events.append
        ) as agent:
            response = await agent.chat("look it up")
        first, second = (r.body for r in server.requests)
    assert isinstance(first, dict) and isinstance(second, dict)
    names = [t["function"]["name"] if protocol == "openai" else t["name"] for t in first["tools"]]
    assert names == [wire]
    assert _tool_events(events) == [("tool.start", "docs.search"), ("tool.end", "docs.search")]
    assert response.messages[1].tool_calls is not None
    assert response.messages[1].tool_calls[0].name == "docs.search"
    assert response.messages[2].content == '"found cache"'  # JSON-quoted, as 0.3.0a5
    replayed = json.dumps(second["messages"])
    assert wire in replayed and "docs.search" not in replayed


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_a_model_failure_is_the_sdks_exception_and_a_model_error(protocol: str) -> None:
    # 0.3.0a5 lets the SDK's exception out; ours is a ModelError with it as the cause: the
    # run raises one object that is both
    import anthropic
    import openai

    from agent_adapter import ModelContextOverflow, ModelError

    sdk: Any = openai if protocol == "openai" else anthropic
    async with ProviderServer([Reply.rate_limited()]) as server:
        async with AgentCore(ModelBindings(llm=binding(server, protocol))) as agent:
            with pytest.raises(sdk.RateLimitError) as limited:
                await agent.chat("x")
        server.add(Reply.overflow(tokens=300_000, limit=200_000))
        async with AgentCore(ModelBindings(llm=binding(server, protocol))) as agent:
            with pytest.raises(sdk.BadRequestError) as overflow:
                await agent.chat("x")
    assert isinstance(limited.value, ModelError) and limited.value.status_code == 429
    assert isinstance(overflow.value, ModelContextOverflow)
    assert overflow.value.status_code == 400 and overflow.value.limit == 200_000
