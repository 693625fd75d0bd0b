"""Real agent runs replayed call by call through ``CompressingModel`` on the local wire server.

Each call of a run sends the run's history up to that call (as the agent did) through a
``CompressingModel`` wrapping a real provider class (``OpenAIChatModel`` or
``AnthropicModel``) pointed at :class:`~agent_adapter.testing.ProviderServer`, whose prompt
cache says what each request read from the cache. The summarizer is ``Summarize(model=...)``
with the same port (the conversation's own model), or a slow one (``delay_s``). Every reply
is a ``ContextSummary`` JSON text: a conversation call ignores it (the next call sends the
run's own next history), a summary request parses it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_adapter import Message, ModelRequest, RunContext
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import CompressingModel, CompressionPolicy, Summarize
from agent_adapter.context._steps._summarizer import CONTINUATION_PROMPT
from agent_adapter.context.formats import convert
from agent_adapter.providers import AnthropicModel, OpenAIChatModel
from agent_adapter.providers._base import ProviderModel
from agent_adapter.testing import ProviderServer, Reply

SUMMARY = json.dumps(
    {
        "task": "Fix the reported bug in the repository",
        "files_read": [],
        "open_tasks": ["run the tests again"],
    }
)
MARK = CONTINUATION_PROMPT.split("]")[0] + "]"
PROTOCOLS = ("chat", "anthropic")


def runs(data: Path, n: int) -> list[Path]:
    """The ``n`` largest held-out mini-swe-agent runs."""
    found = sorted(
        (data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"),
        key=lambda p: -p.stat().st_size,
    )
    return found[:n]


def calls(path: Path) -> list[list[Message]]:
    """The history each model call of the run was sent: up to each assistant message."""
    trace = load_trace(path)
    conversion = convert(trace.messages, trace.format)
    messages = conversion.messages
    return [messages[:k] for k, m in enumerate(messages) if k and m.role == "assistant"]


def port(protocol: str, server: ProviderServer) -> ProviderModel:
    if protocol == "chat":
        return OpenAIChatModel("gpt-4o", base_url=server.openai_url, api_key="k", max_retries=0)
    return AnthropicModel(
        "claude-sonnet-4-5", base_url=server.url, api_key="k", max_retries=0, timeout_s=60.0
    )


def options(protocol: str) -> dict[str, Any]:
    """Anthropic's automatic caching (a top-level ``cache_control``), as agents set it."""
    return {"cache_control": {"type": "ephemeral"}} if protocol == "anthropic" else {}


@dataclass
class SummaryCall:
    """One summary request: its input, and what the prompt cache served of it."""

    input_tokens: int
    cache_read_tokens: int

    @property
    def share(self) -> float:
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else 0.0


@dataclass
class Replay:
    """What one replay measured."""

    calls: int = 0
    summaries: list[SummaryCall] = field(default_factory=list)
    continued: int = 0


async def replay_cache(
    path: Path, protocol: str, *, continued: bool, threshold: int, target: int
) -> Replay:
    """The run through ``CompressingModel`` with ``Summarize(model=<its own port>)``; the
    summary requests' input and cache reads (the run's ledger, ``stage="summary"``), and how
    many summary requests continued the conversation."""
    out = Replay()
    with ProviderServer(default=Reply(text=SUMMARY, input_tokens=None)) as server:
        own = port(protocol, server)
        step = Summarize(model=own, keep_recent_messages=6, continue_conversation=continued)
        policy = CompressionPolicy(threshold_tokens=threshold, target_tokens=target, steps=[step])
        model = CompressingModel(own, policy)
        ctx = RunContext(thread_id=path.name)
        for history in calls(path):
            await model.generate(ModelRequest(messages=history, ctx=ctx, options=options(protocol)))
            out.calls += 1
        out.continued = sum(
            MARK in json.dumps(r.body.get("messages", [])[-1:]) for r in server.requests
        )
        out.summaries = [
            SummaryCall(e.usage.input_tokens, e.usage.cache_read_tokens)
            for e in ctx.ledger.entries
            if e.stage == "summary"
        ]
        await own.aclose()
    return out


async def replay_policy(
    path: Path, protocol: str, *, continued: bool, threshold: int, target: int
) -> Replay:
    """The run through ``cliver_core``'s ``AgentCore``: its system prompt, each of its user
    messages a ``chat`` call continuing the one before (``response.messages``), each model
    reply scripted from the run's own assistant messages (text and tool calls; one without
    calls ends a ``chat``), each tool result the run's own, in order, with a
    ``PolicyCompactor`` keyed by the run whose ``Summarize(model=...)`` is the binding's own
    port (the run's model). Compacted at the threshold (``prepare_at=None``: each reply is
    queued just before its request, so a summary request gets the summary and a run call
    its scripted reply). The summary requests' input and cache reads as the server reported
    them."""
    from agent_adapter import ToolCall as WireCall
    from agent_adapter.context import CompactionStates
    from cliver_core import AgentCore, CLIverTool, ModelBinding, ModelBindings, PolicyCompactor

    out = Replay()
    whole = calls(path)[-1]
    system = whole[0].text if whole[0].role == "system" else ""
    users = [m.text for m in whole if m.role == "user"]
    assistants = [m for m in whole if m.role == "assistant"]
    results = [m.text for m in whole if m.role == "tool"]
    names = sorted({c.name for m in assistants for c in m.tool_calls})
    usages: list[Any] = []
    with ProviderServer() as server:
        own = port(protocol, server)
        generate = own.generate
        replies = iter(assistants)

        async def scripted(request: ModelRequest) -> Any:
            if request.stage == "summary":
                server.add(Reply(text=SUMMARY, input_tokens=None))
            else:
                m = next(replies, None)
                wire = [WireCall(c.id, c.name, c.arguments) for c in (m.tool_calls if m else ())]
                text = (m.text if m else "") or ("" if wire else "done")
                server.add(Reply(text=text, tool_calls=wire, input_tokens=None))
            response = await generate(request)
            if request.stage == "summary":
                usages.append(response.usage)
            return response

        own.generate = scripted  # type: ignore[method-assign]  # the same object: the run's port
        given = iter(results)

        def result(**_: Any) -> str:
            return next(given, "")

        tools = [
            CLIverTool(
                name=name,
                description="A tool of the replayed run.",
                parameters={"type": "object"},
                execute=result,
                safety="safe",
            )
            for name in names
        ]
        step = Summarize(model=own, keep_recent_messages=6, continue_conversation=continued)
        policy = CompressionPolicy(threshold_tokens=threshold, target_tokens=target, steps=[step])
        compactor = PolicyCompactor(
            policy, conversation=path.name, states=CompactionStates(prepare_at=None)
        )
        wire_protocol = "anthropic" if protocol == "anthropic" else "openai"
        bound = ModelBinding.llm(
            model=own.model, provider=own, protocol=wire_protocol, **options(protocol)
        )
        async with AgentCore(
            ModelBindings(llm=bound),
            tools,
            builtin_system_prompt=system,
            context_compactor=compactor,
        ) as agent:
            history: list[Any] = []
            for text in users:
                response = await agent.chat(
                    text, conversation=history, max_iterations=len(assistants) + 2
                )
                history = response.messages
        out.calls = len(server.requests) - len(usages)
        out.continued = sum(_continued(r.body) for r in server.requests)
        out.summaries = [SummaryCall(u.input_tokens, u.cache_read_tokens) for u in usages]
        await own.aclose()
    return out


def _continued(body: Any) -> bool:
    """Whether a request body ends with the continued summary request's instruction."""
    return MARK in json.dumps(body.get("messages", [])[-1:])
