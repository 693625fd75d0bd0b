"""The compression steps; each stops as soon as the target is reached."""

from agent_adapter.context._steps._base import BaseCompressionStep, CompressionStep, StepContext
from agent_adapter.context._steps._summary_text import ContextSummary
from agent_adapter.context._steps.custom import MyOwnStep
from agent_adapter.context._steps.cut import CutLongMessages
from agent_adapter.context._steps.dedup import RemoveDuplicates
from agent_adapter.context._steps.drop import RemoveOldMessages
from agent_adapter.context._steps.relevance import KeepMostRelevant
from agent_adapter.context._steps.summarize import Summarize, SummarizeLongMessage
from agent_adapter.context._steps.tool_results import ShrinkToolResults

__all__ = [
    "BaseCompressionStep",
    "CompressionStep",
    "ContextSummary",
    "CutLongMessages",
    "KeepMostRelevant",
    "MyOwnStep",
    "RemoveDuplicates",
    "RemoveOldMessages",
    "ShrinkToolResults",
    "StepContext",
    "Summarize",
    "SummarizeLongMessage",
]
