"""The one path every integration compresses through: compress_for (with the conversation's
compaction state and owner), the report callback and the OpenTelemetry span.

**The owner of what is saved.** A step's ``save_to=`` saves (and ``recall_tool`` /
``search_tool`` reads) are keyed by :func:`~agent_adapter.owner_scope` of the context they
run under. The compressor runs under :func:`owner_context` of the framework's conversation id
(``thread:<conversation>``), so one conversation's tools never read another's saves; the
integrations' tool converters call a :class:`~agent_adapter.FunctionTool` under the same
context. Without a conversation id the context is ``None``: saves go to the process-wide
``"default"`` owner, which a tool called without a context reads (conversations without ids
are not told apart).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agent_adapter._errors import ConfigError
from agent_adapter._run import RunContext
from agent_adapter._tools import FunctionTool
from agent_adapter.context import CompactionStates, CompressionPolicy, CompressionReport
from agent_adapter.context._policy import check_window
from agent_adapter.context.formats import compress_for, compress_for_sync
from agent_adapter.integrations._telemetry import record_span

__all__ = [
    "Compressor",
    "OnReport",
    "States",
    "conversation_id",
    "function_tool",
    "langgraph_thread",
    "owner_context",
]

OnReport = Callable[[CompressionReport], None]
#: Where an integration keeps its conversations' compaction states: ``None`` for a bounded
#: in-memory one of the integration's own (never one of the process), a
#: :class:`~agent_adapter.context.CompactionStates` of your own, or ``False`` for none (every
#: model call compresses the history it is given).
States = CompactionStates | Literal[False] | None


def conversation_id(*parts: Any) -> str | None:
    """The conversation key made of ``parts`` (the framework's ids, most significant first):
    the non-empty strings among them joined with ``/``; ``None`` when the first is not a
    non-empty string (the framework has no id: compress_for's default key applies)."""
    if not parts or not isinstance(parts[0], str) or not parts[0]:
        return None
    return "/".join(p for p in parts if isinstance(p, str) and p)


def owner_context(conversation: str | None) -> RunContext | None:
    """The context a conversation's compressions and tools run under: its owner scope is
    ``thread:<conversation>``; ``None`` (the ``"default"`` owner) without a conversation id.
    """
    return RunContext(thread_id=conversation) if conversation else None


def function_tool(tool: Any, who: str) -> FunctionTool:
    """``tool``, checked to be a :class:`~agent_adapter.FunctionTool` (what every
    integration's tool converter, ``who``, takes).

    Raises:
        ConfigError: it is not one.
    """
    if not isinstance(tool, FunctionTool):
        raise ConfigError(f"{who}: tool must be a FunctionTool, got {type(tool).__name__}")
    return tool


def langgraph_thread(config: Any) -> str | None:
    """The conversation key of a LangGraph run: ``config["configurable"]["thread_id"]``, with
    the path of the subgraph the node runs in when it is not the root graph (two agents of one
    thread keep states of their own); ``None`` without a thread id.

    A node's ``checkpoint_ns`` is ``"node:task_id"`` segments joined by ``|``, the last one the
    node itself; task ids change every step, so only the names are kept.
    """
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(configurable, Mapping):
        return None
    thread = configurable.get("thread_id")
    if thread is not None and not isinstance(thread, str):
        # LangGraph takes a str, int or uuid.UUID (its checkpointers store str(thread_id)):
        # each is its own conversation, never the shared default a missing id falls back to
        thread = str(thread)
    ns = configurable.get("checkpoint_ns")
    path = [s.split(":", 1)[0] for s in ns.split("|")][:-1] if isinstance(ns, str) and ns else []
    return conversation_id(thread, "|".join(path))


def _check_states(framework: str, states: Any) -> None:
    if states is not None and states is not False and not isinstance(states, CompactionStates):
        raise ConfigError(
            f"{framework}: states must be a CompactionStates, False or None, got "
            f"{type(states).__name__}"
        )


@dataclass(frozen=True)
class Compressor:
    """A policy bound to one framework's format (what each integration holds).

    Attributes:
        policy: the compression policy.
        format: the message format name of the framework's history.
        framework: the name the span and errors use.
        model_max_tokens: the context window, for a policy in percents (else the policy's).
        on_report: called with each compression's report (also when nothing was compressed;
            its ``prefix_tokens`` counts what the request shares with the previous one).
        states: where the conversations' compaction states live (see :data:`States`).
        window_at_call: the framework tells each call's context window (a model's profile),
            so a policy in percents without ``model_max_tokens`` is not refused here but at
            a call whose window is unknown.
    """

    policy: CompressionPolicy
    format: str
    framework: str
    model_max_tokens: int | None = None
    on_report: OnReport | None = None
    states: States = None
    window_at_call: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.policy, CompressionPolicy):
            raise ConfigError(
                f"{self.framework}: policy must be a CompressionPolicy, got "
                f"{type(self.policy).__name__}"
            )
        if self.on_report is not None and not callable(self.on_report):
            raise ConfigError(f"{self.framework}: on_report must be callable")
        _check_states(self.framework, self.states)
        if self.states is None:  # the integration's own: its conversations, no one else's
            object.__setattr__(self, "states", CompactionStates())
        # a bad window, or a percent policy without one, fails here, not at the first call
        check_window(self.model_max_tokens, self.framework)
        if not (self.window_at_call and self.policy.uses_percent):
            self.policy.limits(self.model_max_tokens)

    def _done(
        self,
        report: CompressionReport,
        started: int,
        agent: str | None,
        model: str | None,
        conversation: str | None,
    ) -> None:
        record_span(
            report,
            framework=self.framework,
            started_ns=started,
            agent=agent,
            model=model,
            conversation=conversation,
        )
        if self.on_report is not None:
            self.on_report(report)

    async def run(
        self,
        messages: Sequence[Any],
        *,
        agent: str | None = None,
        model: str | None = None,
        conversation: str | None = None,
        model_max_tokens: int | None = None,
    ) -> list[Any]:
        """The natives to send (the caller's list object when nothing changed).

        ``model_max_tokens`` is this call's context window when the compressor has none of
        its own (the model's profile: see ``window_at_call``).

        ``conversation`` is the framework's conversation id (``None``: the history's
        opening; conversations that share it keep branches of their own in the states): a
        history that extends the one remembered for it is sent as the request sent then plus
        the new messages, until over the threshold. It is also the owner of the steps'
        ``save_to=`` saves (see :func:`owner_context`): ``None`` saves under the
        ``"default"`` owner.
        """
        started = time.time_ns()
        result, report = await compress_for(
            messages,
            self.policy,
            format=self.format,
            model_max_tokens=self.model_max_tokens or model_max_tokens,
            ctx=owner_context(conversation),
            conversation=conversation or None,
            states=self.states,
        )
        self._done(report, started, agent, model, conversation)
        return result

    def run_sync(
        self,
        messages: Sequence[Any],
        *,
        agent: str | None = None,
        model: str | None = None,
        conversation: str | None = None,
        model_max_tokens: int | None = None,
    ) -> list[Any]:
        """:meth:`run` for sync code (see :func:`compress_for_sync`)."""
        started = time.time_ns()
        result, report = compress_for_sync(
            messages,
            self.policy,
            format=self.format,
            model_max_tokens=self.model_max_tokens or model_max_tokens,
            ctx=owner_context(conversation),
            conversation=conversation or None,
            states=self.states,
        )
        self._done(report, started, agent, model, conversation)
        return result
