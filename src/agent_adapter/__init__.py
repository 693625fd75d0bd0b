"""agent_adapter: context window management for LLM agents.

The message model (:class:`Message` and its parts), the error classes, the model port
(:class:`LLMPort` with its request, response, usage and stream events), the ports relevance
scoring calls (:class:`EmbeddingPort`, :class:`RerankerPort` and its :class:`RerankResult`),
the run context with its events, ledger and price table, model profiles, and
:mod:`agent_adapter.context`, the compression toolkit.
"""

from pkgutil import extend_path as _extend_path

from agent_adapter._callable import CallableModel
from agent_adapter._errors import (
    AgentAdapterError,
    ConfigError,
    MissingDependency,
    ModelContextOverflow,
    ModelError,
    ModelOutputInvalid,
    ModelTimeout,
    ToolUsageError,
)
from agent_adapter._events import Event, EventBus
from agent_adapter._ledger import Ledger, LedgerEntry
from agent_adapter._loop import MaxIterationsExceeded, ToolLoopResult, run_tool_loop
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter._model import (
    EmbeddingPort,
    FinishReason,
    JsonSchema,
    LLMPort,
    ModelRequest,
    ModelResponse,
    RerankerPort,
    RerankResult,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)
from agent_adapter._prices import DEFAULT_PRICES, Price, PriceTable
from agent_adapter._profiles import ModelProfile, model_profile, register_model_profile
from agent_adapter._run import RunContext, owner_scope
from agent_adapter._tools import FunctionTool

__version__ = "0.1.0"

# one import package, more than one distribution: ``agent_adapter.cli`` ships in
# agent-adapter-cli, so the package's path takes in every ``agent_adapter`` folder on sys.path
__path__ = _extend_path(__path__, __name__)

__all__ = [
    "DEFAULT_PRICES",
    "AgentAdapterError",
    "CallableModel",
    "ConfigError",
    "EmbeddingPort",
    "Event",
    "EventBus",
    "FilePart",
    "FinishReason",
    "FunctionTool",
    "ImagePart",
    "JsonSchema",
    "LLMPort",
    "Ledger",
    "LedgerEntry",
    "MaxIterationsExceeded",
    "Message",
    "MissingDependency",
    "ModelContextOverflow",
    "ModelError",
    "ModelOutputInvalid",
    "ModelProfile",
    "ModelRequest",
    "ModelResponse",
    "ModelTimeout",
    "OpaquePart",
    "Part",
    "Price",
    "PriceTable",
    "RerankResult",
    "RerankerPort",
    "Role",
    "RunContext",
    "StreamEnd",
    "StreamEvent",
    "TextDelta",
    "TextPart",
    "ThinkingDelta",
    "ThinkingPart",
    "ToolCall",
    "ToolCallDelta",
    "ToolLoopResult",
    "ToolUsageError",
    "Usage",
    "UsageEvent",
    "model_profile",
    "owner_scope",
    "register_model_profile",
    "run_tool_loop",
]
