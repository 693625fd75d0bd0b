"""Context compression: shrink the messages sent to a model, under fixed safety invariants.

Each name's module loads on first use: importing the package loads none of them (no numpy,
no stores, no engine until asked for)."""

import typing as _typing

from agent_adapter._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from agent_adapter._model import EmbeddingPort
    from agent_adapter._rerank import RerankerPort, RerankResult
    from agent_adapter.context._compactor import Compactor
    from agent_adapter.context._compress_for import compress_for, compress_for_sync
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
    from agent_adapter.context._stores._base import StoreEntry, StoreError, ToolResultStore
    from agent_adapter.context._stores.memory import MemoryStore
    from agent_adapter.context._stores.recall import recall_tool
    from agent_adapter.context._stores.redis import RedisStore
    from agent_adapter.context._stores.search import SavedPassage, search_saved, search_tool
    from agent_adapter.context._stores.sqlite import SQLiteStore
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
    "DropStaleReads",
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

__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "BM25Scorer": "agent_adapter.context._scorers",
        "BaseCompressionStep": "agent_adapter.context._steps._base",
        "CallableReranker": "agent_adapter.context._reranker",
        "CompactionStates": "agent_adapter.context._state",
        "Compactor": "agent_adapter.context._compactor",
        "CompressingModel": "agent_adapter.context._compressing_model",
        "CompressionLimits": "agent_adapter.context._policy",
        "CompressionPolicy": "agent_adapter.context._policy",
        "CompressionReport": "agent_adapter.context._report",
        "CompressionStep": "agent_adapter.context._steps._base",
        "ContextSummary": "agent_adapter.context._steps._summary_text",
        "CutLongMessages": "agent_adapter.context._steps.cut",
        "DropStaleReads": "agent_adapter.context._steps.stale",
        "EmbeddingPort": "agent_adapter._model",
        "EmbeddingScorer": "agent_adapter.context._scorers",
        "HybridScorer": "agent_adapter.context._scorers",
        "KeepMostRelevant": "agent_adapter.context._steps.relevance",
        "LocalEmbedder": "agent_adapter.context._local_embedder",
        "MemoryStore": "agent_adapter.context._stores.memory",
        "MyOwnStep": "agent_adapter.context._steps.custom",
        "MyScorer": "agent_adapter.context._scorers",
        "Protection": "agent_adapter.context._units",
        "RedisStore": "agent_adapter.context._stores.redis",
        "RemoveDuplicates": "agent_adapter.context._steps.dedup",
        "RemoveOldMessages": "agent_adapter.context._steps.drop",
        "RerankResult": "agent_adapter._rerank",
        "RerankerPort": "agent_adapter._rerank",
        "RerankerScorer": "agent_adapter.context._scorers",
        "SQLiteStore": "agent_adapter.context._stores.sqlite",
        "SavedPassage": "agent_adapter.context._stores.search",
        "Scorer": "agent_adapter.context._scorers",
        "ShrinkToolResults": "agent_adapter.context._steps.tool_results",
        "SkipReason": "agent_adapter.context._report",
        "StepContext": "agent_adapter.context._steps._base",
        "StepFailure": "agent_adapter.context._report",
        "StepReport": "agent_adapter.context._report",
        "StoreEntry": "agent_adapter.context._stores._base",
        "StoreError": "agent_adapter.context._stores._base",
        "Summarize": "agent_adapter.context._steps.summarize",
        "SummarizeLongMessage": "agent_adapter.context._steps.summarize",
        "TokenCounter": "agent_adapter.context._tokens",
        "TokenMeter": "agent_adapter.context._tokens",
        "ToolResultStore": "agent_adapter.context._stores._base",
        "Unit": "agent_adapter.context._units",
        "carries_approval_state": "agent_adapter.context._units",
        "compress": "agent_adapter.context._engine",
        "compress_for": "agent_adapter.context._compress_for",
        "compress_for_sync": "agent_adapter.context._compress_for",
        "default_states": "agent_adapter.context._state",
        "enforce_invariants": "agent_adapter.context._invariants",
        "estimate_tokens": "agent_adapter.context._tokens",
        "has_approval_marker": "agent_adapter.context._units",
        "recall_tool": "agent_adapter.context._stores.recall",
        "search_saved": "agent_adapter.context._stores.search",
        "search_tool": "agent_adapter.context._stores.search",
        "split_units": "agent_adapter.context._units",
        "tiktoken_counter": "agent_adapter.context._tokens",
    },
)
