"""cliver_core: the agent loop with a pluggable context compactor.

A drop-in successor of cliver-core 0.3.0a5: its modules (``cliver_core.agent``,
``.bindings``, ``.events``, ``.messages``, ``.provider``, ``.skill``, ``.skill_tools``,
``.tool``, ``.tools``, ``.policy``, ``.errors``, ``.capabilities``, ``.presets``...) and the 53
names of its ``__all__`` are here with the same signatures, on :mod:`agent_adapter`'s shared
model layer (its providers, message model, compression engine and ledger): one library, two
public packages. What 0.3.0a5 does that this version does not (image, video and speech
generation, media jobs, skill pipelines, MCP, local models) is importable and raises
:class:`CapabilityNotSupported` naming what is missing.

On top of 0.3.0a5: ``context_compactor=`` (on the constructor and per call) is invoked once
per loop iteration before the model call with a :class:`CompactionContext`; it returns a
:class:`CompactionPlan`, a full history or ``None``. :class:`LlmCompactor` summarizes older
turns with a second model, :class:`PolicyCompactor` runs any
:class:`agent_adapter.context.CompressionPolicy`; ``CLIverMessage`` lists are the ``cliver``
format of :func:`agent_adapter.context.compress_for`.
"""

# submodules first, then the names: ``cliver_core.tool`` must end up the decorator, not the
# module of the same name (as in 0.3.0a5)
from cliver_core import presets  # noqa: I001
from cliver_core import tool as _tool_module  # noqa: F401
from cliver_core.agent import AgentCore, CandidateSelector, ToolSelector
from cliver_core.bindings import ModelBinding, ModelBindings
from cliver_core.capabilities import (
    embed,
    generate_image,
    generate_video,
    rerank,
    text_to_speech,
    transcribe_audio,
)
from cliver_core._compaction import (
    SUMMARY_PREFIX,
    CompactionContext,
    CompactionError,
    CompactionPlan,
    CompactionSplit,
)
from cliver_core._compactors import LlmCompactor, PolicyCompactor
from cliver_core.errors import CapabilityNotSupported, RunTimeout
from cliver_core.events import (
    CompactionEvent,
    CompactionEventType,
    EventHandler,
    InferenceEvent,
    InferenceEventType,
    ToolEvent,
    ToolEventType,
)
from cliver_core._format import CliverConverter
from cliver_core.media import MediaContent
from cliver_core.media_jobs import MediaJob
from cliver_core.messages import (
    CLIverMessage,
    CLIverMessageChunk,
    CLIverResponse,
    ToolCall,
    ToolCallChunk,
    UsageInfo,
)
from cliver_core.pipeline import (
    FailurePolicy,
    InputBuilder,
    PipelineContext,
    PipelineResult,
    PipelineStep,
    SkillPipeline,
    StepOutput,
    StepResult,
    StepRunResult,
    StepRunner,
)
from cliver_core.policy import (
    SAFE_ENV_VARS,
    Decision,
    DecisionAction,
    EnvSpec,
    ExecutionPolicy,
    PermissionCallback,
    ToolCallContext,
    ToolCategory,
)
from cliver_core.skill import Skill, SkillError, SkillManager, SkillNotFoundError
from cliver_core.skill_tools import SkillSearch, SkillSelector
from cliver_core.tool import CLIverTool, ToolRegistry, tool

__all__ = [
    "SAFE_ENV_VARS",
    "SUMMARY_PREFIX",
    "AgentCore",
    "CLIverMessage",
    "CLIverMessageChunk",
    "CLIverResponse",
    "CLIverTool",
    "CandidateSelector",
    "CapabilityNotSupported",
    "CliverConverter",
    "CompactionContext",
    "CompactionError",
    "CompactionEvent",
    "CompactionEventType",
    "CompactionPlan",
    "CompactionSplit",
    "Decision",
    "DecisionAction",
    "EnvSpec",
    "EventHandler",
    "ExecutionPolicy",
    "FailurePolicy",
    "InferenceEvent",
    "InferenceEventType",
    "InputBuilder",
    "LlmCompactor",
    "MediaContent",
    "MediaJob",
    "ModelBinding",
    "ModelBindings",
    "PermissionCallback",
    "PipelineContext",
    "PipelineResult",
    "PipelineStep",
    "PolicyCompactor",
    "RunTimeout",
    "Skill",
    "SkillError",
    "SkillManager",
    "SkillNotFoundError",
    "SkillPipeline",
    "SkillSearch",
    "SkillSelector",
    "StepOutput",
    "StepResult",
    "StepRunResult",
    "StepRunner",
    "ToolCall",
    "ToolCallChunk",
    "ToolCallContext",
    "ToolCategory",
    "ToolEvent",
    "ToolEventType",
    "ToolRegistry",
    "ToolSelector",
    "UsageInfo",
    "embed",
    "generate_image",
    "generate_video",
    "presets",
    "rerank",
    "text_to_speech",
    "tool",
    "transcribe_audio",
]
