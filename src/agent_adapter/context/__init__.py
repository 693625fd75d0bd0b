"""Context compression: shrink the messages sent to a model, under fixed safety invariants."""

from agent_adapter._model import EmbeddingPort, RerankerPort, RerankResult
from agent_adapter.context._compressing_model import CompressingModel
from agent_adapter.context._engine import compress
from agent_adapter.context._invariants import enforce_invariants
from agent_adapter.context._local_embedder import LocalEmbedder
from agent_adapter.context._policy import CompressionLimits, CompressionPolicy
from agent_adapter.context._report import CompressionReport, SkipReason, StepFailure, StepReport
from agent_adapter.context._reranker import CallableReranker
from agent_adapter.context._scorers import (
    BM25Scorer,
    EmbeddingScorer,
    HybridScorer,
    MyScorer,
    RerankerScorer,
    Scorer,
)
from agent_adapter.context._state import CompactionStates, default_states
from agent_adapter.context._steps import (
    BaseCompressionStep,
    CompressionStep,
    ContextSummary,
    CutLongMessages,
    KeepMostRelevant,
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
    SavedPassage,
    SQLiteStore,
    StoreEntry,
    StoreError,
    ToolResultStore,
    recall_tool,
    search_saved,
    search_tool,
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

# isort: split
from agent_adapter.context._compactor import Compactor  # over compress_for (formats first)

__all__ = [
    "BM25Scorer",
    "BaseCompressionStep",
    "CallableReranker",
    "CompactionStates",
    "Compactor",
    "CompressingModel",
    "CompressionLimits",
    "CompressionPolicy",
    "CompressionReport",
    "CompressionStep",
    "ContextSummary",
    "CutLongMessages",
    "EmbeddingPort",
    "EmbeddingScorer",
    "HybridScorer",
    "KeepMostRelevant",
    "LocalEmbedder",
    "MemoryStore",
    "MyOwnStep",
    "MyScorer",
    "Protection",
    "RedisStore",
    "RemoveDuplicates",
    "RemoveOldMessages",
    "RerankResult",
    "RerankerPort",
    "RerankerScorer",
    "SQLiteStore",
    "SavedPassage",
    "Scorer",
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
    "default_states",
    "enforce_invariants",
    "estimate_tokens",
    "has_approval_marker",
    "recall_tool",
    "search_saved",
    "search_tool",
    "split_units",
    "tiktoken_counter",
]
