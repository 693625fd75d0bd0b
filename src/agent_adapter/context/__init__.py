"""Context compression: shrink the messages sent to a model, under fixed safety invariants."""

from agent_adapter._model import EmbeddingPort, RerankerPort, RerankResult
from agent_adapter.context._compressing_model import CompressingModel
from agent_adapter.context._engine import compress
from agent_adapter.context._invariants import enforce_invariants
from agent_adapter.context._policy import CompressionLimits, CompressionPolicy
from agent_adapter.context._report import CompressionReport, SkipReason, StepFailure, StepReport
from agent_adapter.context._reranker import CallableReranker
from agent_adapter.context._steps import (
    BaseCompressionStep,
    CompressionStep,
    ContextSummary,
    CutLongMessages,
    MyOwnStep,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    StepContext,
    Summarize,
    SummarizeLongMessage,
)
from agent_adapter.context._stores import (
    MemoryStore,
    RedisStore,
    SQLiteStore,
    StoreEntry,
    StoreError,
    ToolResultStore,
    recall_tool,
)
from agent_adapter.context._tokens import (
    TokenCounter,
    TokenMeter,
    estimate_tokens,
    tiktoken_counter,
)
from agent_adapter.context._units import (
    Protection,
    Unit,
    carries_approval_state,
    has_approval_marker,
    split_units,
)
from agent_adapter.context.formats import compress_for, compress_for_sync  # (formats first)

__all__ = [
    "BaseCompressionStep",
    "CallableReranker",
    "CompressingModel",
    "CompressionLimits",
    "CompressionPolicy",
    "CompressionReport",
    "CompressionStep",
    "ContextSummary",
    "CutLongMessages",
    "EmbeddingPort",
    "MemoryStore",
    "MyOwnStep",
    "Protection",
    "RedisStore",
    "RemoveDuplicates",
    "RemoveOldMessages",
    "RerankResult",
    "RerankerPort",
    "SQLiteStore",
    "ShrinkToolResults",
    "SkipReason",
    "StepContext",
    "StepFailure",
    "StepReport",
    "StoreEntry",
    "StoreError",
    "Summarize",
    "SummarizeLongMessage",
    "TokenCounter",
    "TokenMeter",
    "ToolResultStore",
    "Unit",
    "carries_approval_state",
    "compress",
    "compress_for",
    "compress_for_sync",
    "enforce_invariants",
    "estimate_tokens",
    "has_approval_marker",
    "recall_tool",
    "split_units",
    "tiktoken_counter",
]
