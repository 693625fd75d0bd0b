"""run_tool_loop and FunctionTool.from_function, with a real function model (CallableModel)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from agent_adapter import (
    CallableModel,
    ConfigError,
    Event,
    FunctionTool,
    MaxIterationsExceeded,
    Message,
    ModelRequest,
    ModelResponse,
    RunContext,
    ToolCall,
    ToolUsageError,
    Usage,
    run_tool_loop,
)
from agent_adapter.context import (
    CompressionPolicy,
    MemoryStore,
    ShrinkToolResults,
    estimate_tokens,
    recall_tool,
)


def _calls(*calls: tuple[str, str, dict[str, Any]]) -> Message:
    return Message(
        "assistant",
        "",
        tool_calls=tuple(ToolCall(i, name, json.dumps(args)) for i, name, args in calls),
    )


class Script:
    """A model that plays its replies in order and records every request."""

    def __init__(self, *replies: Message) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(
            message=self.replies[len(self.requests) - 1],
            usage=Usage(input_tokens=10, output_tokens=2),
        )


# ---- FunctionTool.from_function ---------------------------------------------------------


class Filter(BaseModel):
    path: str
    depth: int = 1


def search(
    query: str,
    limit: int = 5,
    mode: Literal["fast", "exact"] = "fast",
    tags: list[str] | None = None,
    ctx: Any = None,
) -> list[str]:
    """Search the code base.

    Longer explanation that is not part of the arguments.

    Args:
        query: what to look for,
            over two lines.
        limit (int): how many hits at most.
        mode: how to match.

    Returns:
        The matching paths.
    """
    return [f"{query}:{limit}:{mode}:{tags}:{ctx is not None}"]


def test_schema_from_type_hints_and_docstring() -> None:
    tool = FunctionTool.from_function(search)
    assert tool.name == "search"
    assert tool.description.startswith("Search the code base.")
    assert "Returns" not in tool.description
    schema = tool.parameters
    assert schema["type"] == "object" and schema["required"] == ["query"]
    props = schema["properties"]
    assert set(props) == {"query", "limit", "mode", "tags"}  # ctx is not shown
    assert props["query"] == {"type": "string", "description": "what to look for, over two lines."}
    assert props["limit"]["type"] == "integer" and props["limit"]["default"] == 5
    assert props["limit"]["description"] == "how many hits at most."
    assert props["mode"]["enum"] == ["fast", "exact"]
    assert schema["additionalProperties"] is False


async def test_arguments_are_validated_and_coerced() -> None:
    tool = FunctionTool.from_function(search)
    out = await tool({"query": "x", "limit": "3"}, ctx=RunContext())
    assert json.loads(out) == ["x:3:fast:None:True"]
    with pytest.raises(ToolUsageError, match="limit"):
        await tool({"query": "x", "limit": "many"})
    with pytest.raises(ToolUsageError, match="query"):
        await tool({})
    with pytest.raises(ToolUsageError, match="extra"):
        await tool({"query": "x", "nope": 1})


async def test_pydantic_and_annotated_parameters_and_async_functions() -> None:
    async def inspect_dir(
        where: Filter, note: Annotated[str, Field(description="why")] = ""
    ) -> Filter:
        """Look at a directory."""
        return Filter(path=where.path + note, depth=where.depth + 1)

    tool = FunctionTool.from_function(inspect_dir, name="inspect-dir", description="custom")
    assert (tool.name, tool.description) == ("inspect-dir", "custom")
    assert tool.parameters["properties"]["note"]["description"] == "why"
    assert "$defs" in tool.parameters  # the nested model
    out = await tool({"where": {"path": "src"}, "note": "/x"})
    assert json.loads(out) == {"path": "src/x", "depth": 2}


def test_from_function_rejects_what_has_no_schema() -> None:
    with pytest.raises(ToolUsageError):
        FunctionTool.from_function("search")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="named parameter"):
        FunctionTool.from_function(lambda *args: None, name="star")
    with pytest.raises(ConfigError, match="tool name"):
        FunctionTool.from_function(search, name="has spaces")
    with pytest.raises(ConfigError, match="tool name"):
        FunctionTool.from_function(lambda x: x)  # "<lambda>"


# ---- run_tool_loop ----------------------------------------------------------------------


async def test_parallel_calls_then_a_final_answer() -> None:
    started: list[str] = []
    both_running = asyncio.Event()

    async def fetch(url: str) -> str:
        """Fetch a page."""
        started.append(url)
        if len(started) == 2:
            both_running.set()
        await asyncio.wait_for(both_running.wait(), 5)  # deadlocks unless run in parallel
        return f"page {url}"

    def word_count(text: str) -> int:
        """Count words (sync: runs in a worker thread)."""
        return len(text.split())

    script = Script(
        _calls(("c1", "fetch", {"url": "a"}), ("c2", "fetch", {"url": "b"})),
        _calls(("c3", "word_count", {"text": "one two three"})),
        Message("assistant", "done: 3 words"),
    )
    ctx = RunContext()
    events: list[Event] = []
    ctx.subscribe(events.append)
    prompt = [Message("user", "count the words")]
    result = await run_tool_loop(CallableModel(script), [fetch, word_count], prompt, ctx=ctx)
    assert result.text == "done: 3 words" and result.iterations == 3
    assert prompt == [Message("user", "count the words")]  # the caller's list is untouched
    roles = [(m.role, m.tool_call_id) for m in result.messages]
    assert roles == [
        ("user", None), ("assistant", None), ("tool", "c1"), ("tool", "c2"),
        ("assistant", None), ("tool", "c3"), ("assistant", None),
    ]  # fmt: skip
    assert result.messages[2].text == "page a" and result.messages[5].text == "3"
    assert [t.name for t in script.requests[0].tools] == ["fetch", "word_count"]
    assert script.requests[0].ctx is ctx
    assert len(ctx.ledger) == 3 and result.usage == Usage(input_tokens=30, output_tokens=6)
    names = [e.name for e in events]
    assert names.count("tool.call") == 3 and names.count("tool.result") == 3
    assert names.count("model.response") == 3


async def test_tool_failures_go_back_to_the_model_as_error_results() -> None:
    def explode(n: int) -> str:
        """Always fails."""
        raise ValueError(f"bad n={n}")

    script = Script(
        Message(
            "assistant",
            "",
            tool_calls=(
                ToolCall("c1", "explode", '{"n": 1}'),
                ToolCall("c2", "missing", "{}"),
                ToolCall("c3", "explode", "{not json"),
                ToolCall("c4", "explode", '{"n": "x"}'),
                ToolCall("c5", "explode", "[1]"),
            ),
        ),
        Message("assistant", "sorry"),
    )
    result = await run_tool_loop(CallableModel(script), [explode], "try it")
    errors = [m for m in result.messages if m.role == "tool"]
    assert all(m.extras["is_error"] for m in errors)
    texts = [m.text for m in errors]
    assert texts[0] == "Error: ValueError: bad n=1"
    assert "no tool named 'missing'" in texts[1]
    assert "not valid JSON" in texts[2]
    assert "ToolUsageError" in texts[3] and "n" in texts[3]
    assert "JSON object" in texts[4]
    # the model saw every error on its next call
    assert [m.tool_call_id for m in script.requests[1].messages if m.role == "tool"] == [
        "c1", "c2", "c3", "c4", "c5",
    ]  # fmt: skip


async def test_max_iterations_raises_with_the_conversation_so_far() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    forever = Script(*[_calls((f"c{i}", "ping", {})) for i in range(5)])
    with pytest.raises(MaxIterationsExceeded) as info:
        await run_tool_loop(CallableModel(forever), [ping], "go", max_iterations=3)
    assert info.value.iterations == 3 and len(forever.requests) == 3
    assert info.value.messages[-1].role == "tool" and info.value.messages[-1].text == "pong"


async def test_bad_arguments() -> None:
    model = CallableModel(lambda r: "x")
    with pytest.raises(ConfigError, match="max_iterations"):
        await run_tool_loop(model, [], "go", max_iterations=0)
    with pytest.raises(ConfigError, match="settings"):
        await run_tool_loop(model, [], "go", settings={"temprature": 0})
    with pytest.raises(ConfigError, match=r"tools\[0\]"):
        await run_tool_loop(model, [42], "go")  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="duplicate"):
        await run_tool_loop(model, [search, search], "go")
    with pytest.raises(ConfigError, match=r"messages\[0\]"):
        await run_tool_loop(model, [], ["not a message"])  # type: ignore[list-item]


async def test_settings_reach_every_request() -> None:
    script = Script(Message("assistant", "ok"))
    await run_tool_loop(
        CallableModel(script), [], "go", settings={"temperature": 0.2, "stage": "agent"}
    )
    assert script.requests[0].temperature == 0.2 and script.requests[0].stage == "agent"


# ---- compression mid-loop, and recall_tool ------------------------------------------------

_ID = re.compile(r"recall_context\(id='([^']+)'\)")


class Agent:
    """A scripted coding agent: reads three big files, then recalls the first one (by the id
    the shortened result gives), then answers. It records the tokens it was sent."""

    def __init__(self) -> None:
        self.sent: list[int] = []
        self.recalled = ""

    def __call__(self, request: ModelRequest) -> Message:
        messages = list(request.messages)
        self.sent.append(estimate_tokens(messages))
        step = sum(1 for m in messages if m.role == "assistant")
        if step < 3:
            return _calls((f"r{step}", "read_file", {"path": f"src/file{step}.py"}))
        if step == 3:
            found = [_ID.search(m.text) for m in messages if m.role == "tool"]
            ids = [f.group(1) for f in found if f]
            assert ids, "compression should have shortened an old result by now"
            return _calls(("r3", "recall_context", {"id": ids[0]}))
        self.recalled = messages[-1].text
        return Message("assistant", "all files read")


async def test_a_multi_step_task_through_compression_with_recall() -> None:
    def read_file(path: str) -> str:
        """Read a file."""
        return f"# {path}\n" + "\n".join(f"line {i} of {path}" for i in range(400))

    store = MemoryStore()
    policy = CompressionPolicy(
        threshold_tokens=6_000,
        steps=[ShrinkToolResults(bigger_than_tokens=500, older_than_turns=1, save_to=store)],
    )
    agent = Agent()
    ctx = RunContext(thread_id="t1")
    reports: list[Any] = []
    ctx.subscribe(lambda e: reports.append(e.data["report"]), names={"compression"})
    result = await run_tool_loop(
        CallableModel(agent), [read_file, recall_tool(store)], "read the files",
        compression=policy, ctx=ctx,
    )  # fmt: skip
    assert result.text == "all files read" and result.iterations == 5
    assert reports, "compression fired mid-loop"
    full = [estimate_tokens(result.messages[:i]) for i in (4, 6, 8)]
    assert max(agent.sent) <= 6_000 < max(full)  # the model never saw the full history
    assert agent.recalled.startswith("# src/file0.py") and "line 399 of src/file0.py" in (
        agent.recalled
    )
    # the loop's own conversation keeps every result in full
    assert all("line 399" in m.text for m in result.messages if m.role == "tool")
    assert len(ctx.ledger) == 5
