"""``cliver_core.events``: the events of a run (0.3.0a5's module, plus compaction events)."""

from cliver_core._events import (
    CompactionEvent,
    CompactionEventType,
    EventHandler,
    InferenceEvent,
    InferenceEventType,
    PipelineEvent,
    PipelineEventType,
    ToolEvent,
    ToolEventType,
)

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
]
