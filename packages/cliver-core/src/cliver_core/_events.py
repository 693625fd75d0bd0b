"""Events of a run: model calls (each attempt, each failover), tool calls and compactions.

Event names are dotted, as in 0.3.0a5. Each event carries the ``run_id`` of its run (the
same id as the response and the :class:`~cliver_core.CompactionContext`). Handlers are given
to the :class:`~cliver_core.AgentCore` constructor and per call (``on_event=``); both see every
event, the constructor's first. A handler may be sync or async (0.3.0a5 takes async handlers
only); an exception it raises propagates out of the run, as in 0.3.0a5.

``data`` keys:

* ``inference.first_token`` (streaming): attempt, iteration, latency_ms
* ``inference.tool_call`` (streaming, once a call's id arrives): tool_name, tool_call_id
* ``inference.started``: attempt (0-based over the run's bindings for this iteration),
  iteration, message_count, tool_count
* ``inference.completed``: attempt, iteration, usage, total_latency_ms
* ``inference.error``: attempt, iteration, error (class name), message, retryable
* ``inference.failover``: iteration, from_model, to_model, error
* ``compaction.applied``: iteration, kind (``"plan"`` or ``"list"``), messages_before,
  messages_after
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from enum import Enum
from typing import Any, TypeAlias

from pydantic import BaseModel, Field

__all__ = [
    "CompactionEvent",
    "CompactionEventType",
    "EventHandler",
    "InferenceEvent",
    "InferenceEventType",
    "PipelineEvent",
    "PipelineEventType",
    "ToolEvent",
    "ToolEventType",
    "emit",
]


class InferenceEventType(str, Enum):  # noqa: UP042 - str() and format() as 0.3.0a5's
    """Model-call events."""

    STARTED = "inference.started"
    FIRST_TOKEN = "inference.first_token"
    CHUNK = "inference.chunk"
    TOOL_CALL = "inference.tool_call"
    COMPLETED = "inference.completed"
    ERROR = "inference.error"
    FAILOVER = "inference.failover"


class ToolEventType(str, Enum):  # noqa: UP042 - str() and format() as 0.3.0a5's
    """Tool-call events."""

    START = "tool.start"
    END = "tool.end"
    ERROR = "tool.error"
    PERMISSION_DENIED = "tool.permission_denied"


class PipelineEventType(str, Enum):  # noqa: UP042 - str() and format() as 0.3.0a5's
    """Skill-pipeline events (0.3.0a5 names; pipelines are out of this version's scope, so
    none is emitted)."""

    START = "pipeline.start"
    STEP_START = "pipeline.step_start"
    STEP_END = "pipeline.step_end"
    STEP_ERROR = "pipeline.step_error"
    END = "pipeline.end"


class CompactionEventType(str, Enum):  # noqa: UP042 - str() and format() as 0.3.0a5's
    """Compaction events."""

    APPLIED = "compaction.applied"


class InferenceEvent(BaseModel):
    """One model-call event."""

    event: InferenceEventType
    model: str
    provider: str
    run_id: str = ""
    request_id: str = ""
    data: dict[str, Any] | None = None
    timestamp: float = Field(default_factory=time.monotonic)


class ToolEvent(BaseModel):
    """One tool-call event."""

    event: ToolEventType
    tool_name: str
    tool_call_id: str
    run_id: str = ""
    args: dict[str, Any] | None = None
    result: str | None = None
    error: str | None = None
    duration_ms: float | None = None
    timestamp: float = Field(default_factory=time.monotonic)


class CompactionEvent(BaseModel):
    """A compactor changed the history."""

    event: CompactionEventType
    run_id: str = ""
    data: dict[str, Any] | None = None
    timestamp: float = Field(default_factory=time.monotonic)


class PipelineEvent(BaseModel):
    """A skill-pipeline event (0.3.0a5's model; never emitted by this version)."""

    event: PipelineEventType
    step_name: str | None = None
    step_index: int | None = None
    data: dict[str, Any] | None = None
    error: str | None = None
    duration_ms: float | None = None
    timestamp: float = Field(default_factory=time.monotonic)


AnyEvent: TypeAlias = InferenceEvent | ToolEvent | CompactionEvent | PipelineEvent
EventHandler: TypeAlias = Callable[[AnyEvent], Awaitable[None] | None]


async def emit(handlers: Sequence[EventHandler | None], event: AnyEvent) -> None:
    """Deliver ``event`` to each handler in order; a handler's exception propagates (the
    run fails with it, as in 0.3.0a5, whose ``_emit`` awaits handlers unguarded)."""
    for handler in handlers:
        if handler is None:
            continue
        result = handler(event)
        if inspect.isawaitable(result):
            await result
