"""The compression steps; each stops as soon as the target is reached.

Each step's module loads on first use."""

import typing as _typing

from agent_adapter._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from agent_adapter.context._steps._base import BaseCompressionStep, CompressionStep, StepContext
    from agent_adapter.context._steps._summary_text import ContextSummary
    from agent_adapter.context._steps.custom import MyOwnStep
    from agent_adapter.context._steps.cut import CutLongMessages
    from agent_adapter.context._steps.dedup import RemoveDuplicates
    from agent_adapter.context._steps.drop import RemoveOldMessages
    from agent_adapter.context._steps.relevance import KeepMostRelevant
    from agent_adapter.context._steps.stale import DropStaleReads
    from agent_adapter.context._steps.summarize import Summarize, SummarizeLongMessage
    from agent_adapter.context._steps.tool_results import ShrinkToolResults

__all__ = [
    "BaseCompressionStep",
    "CompressionStep",
    "ContextSummary",
    "CutLongMessages",
    "DropStaleReads",
    "KeepMostRelevant",
    "MyOwnStep",
    "RemoveDuplicates",
    "RemoveOldMessages",
    "ShrinkToolResults",
    "StepContext",
    "Summarize",
    "SummarizeLongMessage",
]

__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "BaseCompressionStep": "agent_adapter.context._steps._base",
        "CompressionStep": "agent_adapter.context._steps._base",
        "ContextSummary": "agent_adapter.context._steps._summary_text",
        "CutLongMessages": "agent_adapter.context._steps.cut",
        "DropStaleReads": "agent_adapter.context._steps.stale",
        "KeepMostRelevant": "agent_adapter.context._steps.relevance",
        "MyOwnStep": "agent_adapter.context._steps.custom",
        "RemoveDuplicates": "agent_adapter.context._steps.dedup",
        "RemoveOldMessages": "agent_adapter.context._steps.drop",
        "ShrinkToolResults": "agent_adapter.context._steps.tool_results",
        "StepContext": "agent_adapter.context._steps._base",
        "Summarize": "agent_adapter.context._steps.summarize",
        "SummarizeLongMessage": "agent_adapter.context._steps.summarize",
    },
)
