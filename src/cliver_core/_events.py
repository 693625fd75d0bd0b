"""Events of a run: model calls (each attempt, each failover), tool calls and compactions.

Event names are dotted, as in 0.3.0a5. Each event carries the ``run_id`` of its run (the
same id as the response and the :class:`~cliver_core.CompactionContext`). Handlers are given
to the :class:`~cliver_core.AgentCore` constructor and per call (``on_event=``); both see every
event, the constructor's first. A handler may be sync or async; its exception is logged
(logger ``cliver_core.events``) and never breaks the run.

``data`` keys:

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
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from enum import StrEnum
from typing import Any, TypeAlias

from pydantic import BaseModel, Field

__all__ = [
    "CompactionEvent",
    "CompactionEventType",
    "EventHandler",
    "InferenceEvent",
    "InferenceEventType",
    "ToolEvent",
    "ToolEventType",
    "emit",
]

_log = logging.getLogger("cliver_core.events")


class InferenceEventType(StrEnum):
    """Model-call events."""

    STARTED = "inference.started"
    COMPLETED = "inference.completed"
    ERROR = "inference.error"
    FAILOVER = "inference.failover"


class ToolEventType(StrEnum):
    """Tool-call events."""

    START = "tool.start"
    END = "tool.end"
    ERROR = "tool.error"
    PERMISSION_DENIED = "tool.permission_denied"


class CompactionEventType(StrEnum):
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


AnyEvent: TypeAlias = InferenceEvent | ToolEvent | CompactionEvent
EventHandler: TypeAlias = Callable[[AnyEvent], Awaitable[None] | None]


async def emit(handlers: Sequence[EventHandler | None], event: AnyEvent) -> None:
    """Deliver ``event`` to each handler in order (a failing handler is logged)."""
    for handler in handlers:
        if handler is None:
            continue
        try:
            result = handler(event)
            if inspect.isawaitable(result):
                await result
        except Exception:
            _log.exception("event handler %r failed on %s", handler, event.event.value)
