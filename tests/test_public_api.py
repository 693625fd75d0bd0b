"""The documented public names exist, and nothing undocumented leaks from __all__."""

from __future__ import annotations

import inspect

import agent_adapter
import agent_adapter.context as context
import agent_adapter.context.formats as formats

# agent_adapter.context names of ../shared/spec/002 that this issue builds
SPEC_CONTEXT = {
    "SkipReason",
    "TokenCounter",
    "BaseCompressionStep",
    "CompressionLimits",
    "CompressionPolicy",
    "CompressionReport",
    "CompressionStep",
    "CutLongMessages",
    "DropStaleReads",
    "MyOwnStep",
    "Protection",
    "RemoveDuplicates",
    "RemoveOldMessages",
    "ShrinkToolResults",
    "StepContext",
    "StepFailure",
    "TokenMeter",
    "Unit",
    "carries_approval_state",
    "compress_for",
    "compress_for_sync",
    "enforce_invariants",
    "estimate_tokens",
    "has_approval_marker",
    "recall_tool",
    "split_units",
}
# agent_adapter.context names of ../shared/spec/002 that issue 8 (the model layer) builds
SPEC_CONTEXT_MODELS = {
    "CompressingModel",
    "CallableReranker",
    "EmbeddingPort",
    "RerankerPort",
    "RerankResult",
}
# agent_adapter.context names of ../shared/spec/002 that issue 9 (summaries) builds
SPEC_CONTEXT_SUMMARIES = {"ContextSummary", "Summarize", "SummarizeLongMessage"}
# agent_adapter.context names of ../shared/spec/002 that issue 11 (relevance) builds
SPEC_CONTEXT_RELEVANCE = {
    "Scorer",
    "EmbeddingScorer",
    "RerankerScorer",
    "MyScorer",
    "KeepMostRelevant",
}
SPEC_FORMATS = {
    "FORMATS",
    "FormatName",
    "Pinned",
    "Conversion",
    "convert",
    "detect_format",
    "register_format",
    "registered_names",
    "compress_for",
    "compress_for_sync",
}
# agent_adapter names that ../shared/spec/README.md and 002 refer to as "the rest of
# agent_adapter" (the ports the context module calls, the error classes below)
SPEC_AGENT_ADAPTER = {
    "CallableModel",
    "EmbeddingPort",
    "LLMPort",
    "RerankResult",
    "RerankerPort",
    "RunContext",
    "run_tool_loop",
}
ERRORS = {
    "ConfigError",
    "ToolUsageError",
    "MissingDependency",
    "ModelError",
    "ModelTimeout",
    "ModelOutputInvalid",
    "ModelContextOverflow",
}


def test_spec_names_are_exported() -> None:
    assert set(context.__all__) >= (
        SPEC_CONTEXT | SPEC_CONTEXT_MODELS | SPEC_CONTEXT_SUMMARIES | SPEC_CONTEXT_RELEVANCE
    )
    assert set(formats.__all__) >= SPEC_FORMATS
    assert set(agent_adapter.__all__) >= ERRORS | SPEC_AGENT_ADAPTER
    # the ports are the same objects from the root and from agent_adapter.context
    for name in ("EmbeddingPort", "RerankerPort", "RerankResult"):
        assert getattr(agent_adapter, name) is getattr(context, name)
    for module in (agent_adapter, context, formats):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"
        assert len(set(module.__all__)) == len(module.__all__)


def test_error_hierarchy() -> None:
    for sub in ("ModelTimeout", "ModelOutputInvalid", "ModelContextOverflow"):
        assert issubclass(getattr(agent_adapter, sub), agent_adapter.ModelError)


def test_signatures_match_the_spec() -> None:
    for fn in (context.compress_for, context.compress_for_sync):
        sig = inspect.signature(fn)
        spec = ["messages", "policy", "format", "pinned", "model_max_tokens", "ctx"]
        # the spec's parameters first, in order; anything after is keyword-only with a
        # default (the compaction state's conversation= and states=), so code written
        # from the spec runs unchanged
        assert list(sig.parameters)[: len(spec)] == spec
        for extra in list(sig.parameters.values())[len(spec) :]:
            assert extra.kind is inspect.Parameter.KEYWORD_ONLY, extra
            assert extra.default is not inspect.Parameter.empty, extra
        assert sig.parameters["format"].default == "auto"
    sig = inspect.signature(context.enforce_invariants)
    assert list(sig.parameters) == [
        "before",
        "after",
        "protection",
        "step",
        "allow_system_prompt_shortening",
    ]
    assert list(inspect.signature(formats.convert).parameters) == ["messages", "format", "pinned"]
    assert list(inspect.signature(context.split_units).parameters) == ["messages", "protection"]
    assert formats.FORMATS[0] == "agent_adapter"


# Every public package's names, exactly: the spec's plus the documented extras. Everything
# else lives in private (_named) modules; a new public name is a decision, made here.
PUBLIC = {
    "agent_adapter": {
        *ERRORS,
        *SPEC_AGENT_ADAPTER,
        "AgentAdapterError",
        "FilePart",
        "FunctionTool",
        "ImagePart",
        "Message",
        "OpaquePart",
        "Part",
        "Role",
        "RunContext",
        "TextPart",
        "ThinkingPart",
        "ToolCall",
        "owner_scope",
        # the model layer (issue 8)
        "CallableModel",
        "MaxIterationsExceeded",
        "ToolLoopResult",
        "run_tool_loop",
        "DEFAULT_PRICES",
        "Event",
        "EventBus",
        "FinishReason",
        "JsonSchema",
        "LLMPort",
        "Ledger",
        "LedgerEntry",
        "ModelProfile",
        "ModelRequest",
        "ModelResponse",
        "Price",
        "PriceTable",
        "StreamEnd",
        "StreamEvent",
        "TextDelta",
        "ThinkingDelta",
        "ToolCallDelta",
        "Usage",
        "UsageEvent",
        "model_profile",
        "register_model_profile",
    },
    "agent_adapter.context": {
        *SPEC_CONTEXT,
        *SPEC_CONTEXT_MODELS,
        *SPEC_CONTEXT_SUMMARIES,
        *SPEC_CONTEXT_RELEVANCE,
        # issue 20: where conversations' compaction states live
        "CompactionStates",
        "Compactor",
        "default_states",
        # issue 11: the lexical default, rank fusion, the packaged embedding model
        "BM25Scorer",
        "HybridScorer",
        "LocalEmbedder",
        "CompressionReport",
        "StepReport",
        "compress",
        "MemoryStore",
        "RedisStore",
        "SQLiteStore",
        "StoreEntry",
        "StoreError",
        "ToolResultStore",
        "tiktoken_counter",
        # issue 25: search what compression saved
        "SavedPassage",
        "search_saved",
        "search_tool",
    },
    "agent_adapter.context.formats": {
        *SPEC_FORMATS,
        "AnthropicConverter",
        "Converter",
        "Violation",
        "check",
        "strip_reserved",
    },
    "agent_adapter.cli": {
        "main",
        # the trace loaders (the README's example data), public since issue 11
        "Trace",
        "load_claude_code",
        "load_mini_swe_agent",
        "load_swe_agent",
        "load_tau_bench",
        "load_trace",
    },
    "cliver_core": {
        # the Context Window spec (../shared/spec/000) and cliver-core 0.3.0a5's 53 names
        "AgentCore",
        "CandidateSelector",
        "CapabilityNotSupported",
        "CliverConverter",
        "CLIverMessage",
        "CLIverMessageChunk",
        "CLIverResponse",
        "CLIverTool",
        "CompactionContext",
        "CompactionError",
        "CompactionEvent",
        "CompactionEventType",
        "CompactionPlan",
        "CompactionSplit",
        "Decision",
        "DecisionAction",
        "embed",
        "EnvSpec",
        "EventHandler",
        "ExecutionPolicy",
        "FailurePolicy",
        "generate_image",
        "generate_video",
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
        "presets",
        "rerank",
        "RunTimeout",
        "SAFE_ENV_VARS",
        "Skill",
        "SkillError",
        "SkillManager",
        "SkillNotFoundError",
        "SkillPipeline",
        "SkillSearch",
        "SkillSelector",
        "StepOutput",
        "StepResult",
        "StepRunner",
        "StepRunResult",
        "SUMMARY_PREFIX",
        "text_to_speech",
        "tool",
        "ToolCall",
        "ToolCallChunk",
        "ToolCallContext",
        "ToolCategory",
        "ToolEvent",
        "ToolEventType",
        "ToolRegistry",
        "ToolSelector",
        "transcribe_audio",
        "UsageInfo",
    },
}
#: Public subpackages: an attribute of their parent once imported (by anything, so a name
#: here may or may not be in dir() depending on which tests ran first).
SUBPACKAGES = {
    "agent_adapter": {"context", "cli", "gateway", "providers", "testing", "integrations"},
    "agent_adapter.context": {"formats"},
    # cliver-core 0.3.0a5's modules (``tool`` is the decorator, as there)
    "cliver_core": {
        "agent",
        "bindings",
        "capabilities",
        "constants",
        "errors",
        "events",
        "local",
        "mcp",
        "media",
        "media_jobs",
        "messages",
        "pipeline",
        "policy",
        "provider",
        "skill",
        "skill_tools",
        "tools",
        "util",
    },
}


def test_each_package_exports_exactly_its_documented_names() -> None:
    import importlib

    modules = {name: importlib.import_module(name) for name in PUBLIC}
    for name, module in modules.items():
        assert set(module.__all__) == PUBLIC[name], name
        importable = {n for n in dir(module) if not n.startswith("_")}
        assert importable - SUBPACKAGES.get(name, set()) == PUBLIC[name], name
