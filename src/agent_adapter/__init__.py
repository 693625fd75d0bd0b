"""agent_adapter: context window management for LLM agents.

The message model (:class:`Message` and its parts), the error classes, the model port
(:class:`LLMPort` with its request, response, usage and stream events), the ports relevance
scoring calls (:class:`EmbeddingPort`, :class:`RerankerPort` and its :class:`RerankResult`),
the run context with its events, ledger and price table, model profiles, and
:mod:`agent_adapter.context`, the compression toolkit.

:func:`run_tool_loop` (which can wrap the model in a ``CompressingModel``), its result and its
error, and :class:`RerankerPort` with :class:`RerankResult` (a pydantic model) load on first
use: importing the package loads neither the compression engine nor pydantic.
"""

import typing as _typing
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
from agent_adapter._lazy import lazy_exports as _lazy_exports
from agent_adapter._ledger import Ledger, LedgerEntry
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

if _typing.TYPE_CHECKING:
    from agent_adapter._loop import MaxIterationsExceeded, ToolLoopResult, run_tool_loop
    from agent_adapter._rerank import RerankerPort, RerankResult

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

__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "MaxIterationsExceeded": "agent_adapter._loop",
        "RerankResult": "agent_adapter._rerank",
        "RerankerPort": "agent_adapter._rerank",
        "ToolLoopResult": "agent_adapter._loop",
        "run_tool_loop": "agent_adapter._loop",
    },
)
