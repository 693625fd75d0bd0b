"""LangGraph prebuilt ReAct agents: :func:`compression_hook`, a ``pre_model_hook``.

Install with ``pip install "agent-adapter[langgraph]"`` (langgraph, langchain-core).

``create_react_agent(model, tools, pre_model_hook=compression_hook(policy))`` runs the hook
before every model call. It returns ``{"llm_input_messages": compressed}``, the key LangGraph
documents for "messages sent to the model but not stored": the graph state and its
checkpoints keep the full ``messages`` (returning ``messages`` instead would need
``RemoveMessage`` and lose them for good), and a thread resumed in another process is
compressed again from the full record. (LangGraph 1.x marks ``create_react_agent`` deprecated
in favour of LangChain's ``create_agent``; for that one use
:class:`~agent_adapter.integrations.langchain.CompressionMiddleware`.)

Example::

    from langgraph.prebuilt import create_react_agent
    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.langgraph import compression_hook

    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    agent = create_react_agent(model, tools, pre_model_hook=compression_hook(policy))

The hook is a ``RunnableLambda`` with a sync and an async body, so ``invoke`` and ``ainvoke``
both work.

**Compact once, then append.** The conversation's compaction state (see
:func:`~agent_adapter.context.compress_for`) is keyed by the thread,
``config["configurable"]["thread_id"]`` (with the subgraph's path when the agent runs inside
another graph): once a thread was compressed, every later model call of it is sent as the
request sent then plus the new messages, byte for byte, until that is over the threshold, so the
provider's prompt cache keeps hitting. Without a thread id the key is a fingerprint of the first
messages. ``states=`` says where the states live (``False``: none).
"""

from __future__ import annotations

from typing import Any

from agent_adapter._errors import MissingDependency
from agent_adapter.context import CompressionPolicy
from agent_adapter.integrations._core import Compressor, OnReport, States, langgraph_thread

try:
    from langchain_core.runnables import RunnableConfig, RunnableLambda
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("langchain-core", "langgraph", "compression_hook") from e

__all__ = ["compression_hook"]


def _messages(state: Any) -> list[Any]:
    messages = state.get("messages") if isinstance(state, dict) else state.messages
    return list(messages or [])


def compression_hook(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
    states: States = None,
) -> Any:
    """A ``pre_model_hook`` that sends the state's messages compressed with ``policy``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model call's
            :class:`~agent_adapter.context.CompressionReport` (``prefix_tokens`` counts what
            the request shares with the thread's previous one).
        states: where the threads' compaction states live: ``None`` for the process-wide
            :func:`~agent_adapter.context.default_states`, a
            :class:`~agent_adapter.context.CompactionStates`, or ``False`` for none (every
            call compresses the full history).

    Returns:
        A ``RunnableLambda`` node returning ``{"llm_input_messages": [...]}``.

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or it is in percents and no window
            is known; ``states`` is none of the above.
    """
    compressor = Compressor(
        policy,
        "langchain",
        "langgraph",
        model_max_tokens=model_max_tokens,
        on_report=on_report,
        states=states,
    )

    # RunnableLambda passes the run's config to a function with a ``config`` parameter
    def hook(state: Any, config: RunnableConfig) -> dict[str, Any]:
        thread = langgraph_thread(config)
        return {"llm_input_messages": compressor.run_sync(_messages(state), conversation=thread)}

    async def ahook(state: Any, config: RunnableConfig) -> dict[str, Any]:
        thread = langgraph_thread(config)
        return {"llm_input_messages": await compressor.run(_messages(state), conversation=thread)}

    return RunnableLambda(hook, afunc=ahook, name="agent_adapter_compression")
