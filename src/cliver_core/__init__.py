"""cliver_core: the agent loop with a pluggable context compactor.

:class:`AgentCore` runs the tool-calling loop on :mod:`agent_adapter`'s shared model layer
(its providers, message model, compression engine and ledger): one library, two public
packages. ``context_compactor=`` (on the constructor and per call) is invoked once per loop
iteration before the model call with a :class:`CompactionContext`; it returns a
:class:`CompactionPlan`, a full history or ``None``. :class:`LlmCompactor` summarizes older
turns with a second model, :class:`PolicyCompactor` runs any
:class:`agent_adapter.context.CompressionPolicy`; ``CLIverMessage`` lists are the ``cliver``
format of :func:`agent_adapter.context.compress_for`.
"""

from cliver_core import presets
from cliver_core._agent import AgentCore
from cliver_core._bindings import ModelBinding, ModelBindings
from cliver_core._compaction import (
    SUMMARY_PREFIX,
    CompactionContext,
    CompactionError,
    CompactionPlan,
    CompactionSplit,
)
from cliver_core._compactors import LlmCompactor, PolicyCompactor
from cliver_core._errors import CapabilityNotSupported, RunTimeout
from cliver_core._events import (
    CompactionEvent,
    CompactionEventType,
    EventHandler,
    InferenceEvent,
    InferenceEventType,
    ToolEvent,
    ToolEventType,
)
from cliver_core._format import CliverConverter
from cliver_core._messages import (
    CLIverMessage,
    CLIverMessageChunk,
    CLIverResponse,
    ToolCall,
    ToolCallChunk,
    UsageInfo,
)
from cliver_core._skills import Skill, SkillError, SkillManager, SkillNotFoundError
from cliver_core._tools import CLIverTool, ToolRegistry, tool

__all__ = [
    "SUMMARY_PREFIX",
    "AgentCore",
    "CLIverMessage",
    "CLIverMessageChunk",
    "CLIverResponse",
    "CLIverTool",
    "CapabilityNotSupported",
    "CliverConverter",
    "CompactionContext",
    "CompactionError",
    "CompactionEvent",
    "CompactionEventType",
    "CompactionPlan",
    "CompactionSplit",
    "EventHandler",
    "InferenceEvent",
    "InferenceEventType",
    "LlmCompactor",
    "ModelBinding",
    "ModelBindings",
    "PolicyCompactor",
    "RunTimeout",
    "Skill",
    "SkillError",
    "SkillManager",
    "SkillNotFoundError",
    "ToolCall",
    "ToolCallChunk",
    "ToolEvent",
    "ToolEventType",
    "ToolRegistry",
    "UsageInfo",
    "presets",
    "tool",
]
