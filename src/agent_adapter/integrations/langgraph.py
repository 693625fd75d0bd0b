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

    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent
    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.langgraph import compression_hook

    model = ChatOpenAI(model="gpt-4o", api_key="sk-...")
    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    agent = create_react_agent(model, [], pre_model_hook=compression_hook(policy))

The hook is a ``RunnableLambda`` with a sync and an async body, so ``invoke`` and ``ainvoke``
both work.

**The system prompt.** ``create_react_agent(prompt=...)`` is applied after the
``pre_model_hook``, so the hook does not see it in the state: pass the same prompt as
``compression_hook(policy, prompt=...)`` and it is counted with the messages (it is sent with
them) and never changed or sent by the hook (LangGraph adds it). Without ``prompt=`` the
threshold and the target are compared with the messages alone.

**Compact once, then append.** The conversation's compaction state (see
:func:`~agent_adapter.context.compress_for`) is keyed by the thread,
``config["configurable"]["thread_id"]`` (with the subgraph's path when the agent runs inside
another graph): once a thread was compressed, every later model call of it is sent as the
request sent then plus the new messages, byte for byte, until that is over the threshold, so the
provider's prompt cache keeps hitting. Without a thread id the key is a fingerprint of the first
messages. ``states=`` says where the states live (``False``: none).

**Dropped history, searched back.** A step's ``save_to=`` saves are owned by the thread
(``thread:<thread_id>``; without a thread id, the process-wide ``"default"`` owner). Register
``search_tool(store)`` / ``recall_tool(store)`` as :func:`langchain_tool` (in the agent's
``tools``): each call runs under its run's thread, so a thread reads only what was dropped from
it.
"""

from __future__ import annotations

from typing import Any

from agent_adapter._errors import ConfigError, MissingDependency
from agent_adapter.context import CompressionPolicy
from agent_adapter.integrations._core import Compressor, OnReport, States, langgraph_thread
from agent_adapter.integrations._langchain_tools import langchain_tool

try:
    from langchain_core.messages import SystemMessage
    from langchain_core.runnables import RunnableConfig, RunnableLambda
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("langchain-core", "langgraph", "compression_hook") from e

__all__ = ["compression_hook", "langchain_tool"]


def _messages(state: Any) -> list[Any]:
    messages = state.get("messages") if isinstance(state, dict) else state.messages
    return list(messages or [])


def compression_hook(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
    states: States = None,
    prompt: str | SystemMessage | None = None,
) -> Any:
    """A ``pre_model_hook`` that sends the state's messages compressed with ``policy``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model call's
            :class:`~agent_adapter.context.CompressionReport` (``prefix_tokens`` counts what
            the request shares with the thread's previous one).
        states: where the threads' compaction states live: ``None`` for its own
            bounded in-memory one (never one of the process), a
            :class:`~agent_adapter.context.CompactionStates`, or ``False`` for none (every
            call compresses the full history).
        prompt: the agent's ``prompt=`` (a str or a ``SystemMessage``), counted with the
            messages as the model is sent it before them; the hook never returns it
            (``create_react_agent`` adds it). ``None``: the messages alone are counted.

    Returns:
        A ``RunnableLambda`` node returning ``{"llm_input_messages": [...]}``.

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or it is in percents and no window
            is known; ``states`` is none of the above; ``prompt`` is none of the above.
    """
    if prompt is not None and not isinstance(prompt, str | SystemMessage):
        raise ConfigError(
            f"langgraph: prompt must be a str or a SystemMessage, got {type(prompt).__name__}"
        )
    # one object for every call, so the thread's remembered request keeps matching
    head = [SystemMessage(content=prompt) if isinstance(prompt, str) else prompt] if prompt else []
    compressor = Compressor(
        policy,
        "langchain",
        "langgraph",
        model_max_tokens=model_max_tokens,
        on_report=on_report,
        states=states,
    )

    def natives(state: Any) -> tuple[list[Any], list[Any]]:
        """The state's messages, and what is compressed: the prompt before them."""
        messages = _messages(state)
        return messages, [*head, *messages] if head else messages

    def sent(messages: list[Any], natives: list[Any], result: list[Any]) -> dict[str, Any]:
        """The hook's update: ``result`` without the prompt (LangGraph adds it)."""
        if result is natives:
            return {"llm_input_messages": messages}
        return {"llm_input_messages": result[len(head) :]}

    # RunnableLambda passes the run's config to a function with a ``config`` parameter
    def hook(state: Any, config: RunnableConfig) -> dict[str, Any]:
        messages, sent_list = natives(state)
        result = compressor.run_sync(sent_list, conversation=langgraph_thread(config))
        return sent(messages, sent_list, result)

    async def ahook(state: Any, config: RunnableConfig) -> dict[str, Any]:
        messages, sent_list = natives(state)
        result = await compressor.run(sent_list, conversation=langgraph_thread(config))
        return sent(messages, sent_list, result)

    return RunnableLambda(hook, afunc=ahook, name="agent_adapter_compression")
