"""What one run of the agent loop is asked for: :class:`RunSpec` (built by ``AgentCore`` from
its settings and the call's), with the compactor and permission callback types. Below the run
(:mod:`cliver_core._run`) and the tool calls it makes (:mod:`cliver_core._tool_calls`), which
both read it."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cliver_core._bindings import ModelBinding
from cliver_core._compaction import CompactionContext
from cliver_core._events import EventHandler
from cliver_core._messages import CLIverMessage
from cliver_core._structured import OutputSpec
from cliver_core._tools import CLIverTool
from cliver_core.policy import ExecutionPolicy, ToolCallContext, ToolCategory

__all__ = ["Compactor", "PermissionCallback", "RunSpec"]

#: A compactor: ``compactor(context)`` returning a plan, a full history or ``None``.
Compactor = Callable[[CompactionContext], Any]
#: ``permission_callback(context)`` for a tool of category ASK: given a
#: :class:`~cliver_core.policy.ToolCallContext`, returns a :class:`~cliver_core.policy.Decision`
#: (0.3.0a5), or True / None to allow and False or a reason (``str``) to deny; sync or async.
PermissionCallback = Callable[[ToolCallContext], Any]


@dataclass
class RunSpec:
    """What one call asks for (built by AgentCore from its settings and the call's)."""

    chain: Sequence[ModelBinding]
    system: str | None
    history: list[CLIverMessage]
    tools: list[CLIverTool]
    options: dict[str, Any]
    max_iterations: int
    compactor: Compactor | None
    handlers: tuple[EventHandler | None, ...]
    run_timeout: float | None
    max_consecutive_errors: int
    permission_callback: PermissionCallback | None = None
    output: OutputSpec | None = None
    parallel_tools: bool = False
    safety_overrides: dict[str, ToolCategory] = field(default_factory=dict)
    execution_policy: ExecutionPolicy | None = None
    #: tools the model may call though they are not advertised (0.3.0a5 runs a registered
    #: builtin by name even when a filter hid it)
    fallback_tools: Callable[[str], CLIverTool | None] | None = None
    #: the MCP client's ``call_tool``: the model's calls of ``mcp__`` names go there
    #: (0.3.0a5), whether or not they were advertised
    mcp_call: Callable[[str, dict[str, Any]], Awaitable[Any]] | None = None
    #: the model-call events (``inference.*``) reach the handlers too (0.3.0a5: tool events
    #: only)
    inference_events: bool = False
    #: after each tool batch: the next iteration's tools (skill activation narrows them)
    retool: Callable[[list[CLIverTool]], list[CLIverTool]] | None = None
    repairs: int = 1
    stage: str = "main"
    extra: dict[str, Any] = field(default_factory=dict)
    #: the agent's logger: a tool that raised is logged there at WARNING, as in 0.3.0a5
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("cliver_core.agent"))
