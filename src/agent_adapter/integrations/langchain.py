"""LangChain v1 agents: :class:`CompressionMiddleware` for ``create_agent(middleware=[...])``.

Install with ``pip install "agent-adapter[langchain-agents]"`` (langchain, langchain-core).

**Hook choice: ``wrap_model_call``**, not ``before_model``. ``before_model`` returns a state
update, and ``messages`` is reduced by LangGraph's ``add_messages``: dropping messages there
means ``RemoveMessage`` entries, so the checkpointed history itself would lose them for good.
``wrap_model_call`` receives the :class:`~langchain.agents.middleware.ModelRequest` the agent is
about to send and passes ``request.override(messages=...)`` to the handler: only what is sent
changes, the state and every checkpoint keep the full history, and a thread resumed in another
process is compressed again from the full record. The system prompt
(``request.system_message``) is counted with the messages (it is sent with them) and never
changed.

**Compact once, then append.** The conversation's compaction state (see
:func:`~agent_adapter.context.compress_for`) is keyed by the run's LangGraph thread,
``config["configurable"]["thread_id"]`` (with the subgraph's path when the agent runs inside
another graph): once a thread was compressed, every later model call of it is sent as the
request sent then plus the new messages, byte for byte, until that is over the threshold, so the
provider's prompt cache keeps hitting. Without a thread id the key is a fingerprint of the first
messages. ``states=`` says where the states live (``False``: none).

Example::

    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.langchain import CompressionMiddleware

    model = ChatOpenAI(model="gpt-4o", api_key="sk-...")
    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    agent = create_agent(model, tools=[], middleware=[CompressionMiddleware(policy)])

Sync (``invoke``) and async (``ainvoke``) agents both work.

**Dropped history, searched back.** A step's ``save_to=`` saves are owned by the thread
(``thread:<thread_id>``; without a thread id, the process-wide ``"default"`` owner). Register
``search_tool(store)`` / ``recall_tool(store)`` as :func:`langchain_tool` (``tools=[...]``):
each call runs under its run's thread, so a thread reads only what was dropped from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_adapter._errors import ConfigError, MissingDependency
from agent_adapter.context import CompressionPolicy
from agent_adapter.integrations._core import Compressor, OnReport, States, langgraph_thread
from agent_adapter.integrations._langchain_tools import langchain_tool

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest
    from langgraph.config import get_config
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("langchain", "langchain-agents", "CompressionMiddleware") from e

__all__ = ["CompressionMiddleware", "langchain_tool"]


def _model_name(model: Any) -> str | None:
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return name if isinstance(name, str) else None


def _profile_window(model: Any) -> int | None:
    """The chat model's context window from its LangChain profile (``model.profile``, a
    ``ModelProfile`` whose ``max_input_tokens`` is the input limit: langchain-core's
    "Model profiles", loaded from the provider package's data), else ``None``."""
    profile = getattr(model, "profile", None)
    window = profile.get("max_input_tokens") if isinstance(profile, dict) else None
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        return window
    return None


def _thread(request: Any) -> str | None:
    """The conversation key of the agent run ``request`` belongs to: its LangGraph thread."""
    try:
        config = get_config()
    except RuntimeError:  # called outside a graph run (a test, a handler of its own)
        info = getattr(getattr(request, "runtime", None), "execution_info", None)
        ids = {k: getattr(info, k, None) for k in ("thread_id", "checkpoint_ns")}
        config = {"configurable": ids}
    return langgraph_thread(config)


class CompressionMiddleware(AgentMiddleware):
    """Compresses the messages of every model call of a LangChain agent with ``policy``.

    A policy in percents takes the window from ``model_max_tokens``, else the policy's
    own, else the chat model's LangChain profile (``max_input_tokens``) at each call: a
    ``ChatOpenAI("gpt-4o")`` agent compresses at 80% of 128,000 with no number written. A
    LangChain counter (``count_tokens_approximately``, or the chat model) is taken as the
    policy's ``token_counter``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents (else the
            policy's own ``model_max_tokens``, else the model's profile).
        on_report: called with the :class:`~agent_adapter.context.CompressionReport` of every
            model call (also when nothing was compressed; ``prefix_tokens`` counts what the
            request shares with the thread's previous one).
        states: where the threads' compaction states live: ``None`` for its own
            bounded in-memory one (never one of the process), a
            :class:`~agent_adapter.context.CompactionStates`, or ``False`` for none (every
            call compresses the full history).

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or ``states`` is none of the
            above; at a call, a policy in percents whose window is known from none of the
            three.
    """

    def __init__(
        self,
        policy: CompressionPolicy,
        *,
        model_max_tokens: int | None = None,
        on_report: OnReport | None = None,
        states: States = None,
    ) -> None:
        super().__init__()
        self._compressor = Compressor(
            policy,
            "langchain",
            "langchain",
            model_max_tokens=model_max_tokens,
            on_report=on_report,
            states=states,
            window_at_call=True,
        )

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph."""
        return "AgentAdapterCompression"

    def _window(self, model: Any) -> int | None:
        """This call's window when the middleware and the policy give none.

        Raises:
            ConfigError: the policy is in percents and the model's profile has none.
        """
        compressor = self._compressor
        policy = compressor.policy
        if compressor.model_max_tokens or policy.model_max_tokens or not policy.uses_percent:
            return None
        window = _profile_window(model)
        if window is None:
            raise ConfigError(
                "CompressionMiddleware: the policy is in percents and no context window is "
                f"known: the chat model ({type(model).__name__} "
                f"{_model_name(model) or ''}) has no profile with max_input_tokens; pass "
                "CompressionMiddleware(policy, model_max_tokens=...) or a policy in tokens"
            )
        return window

    def _apply(self, request: Any, result: list[Any]) -> Any:
        if request.system_message is None:
            return request.override(messages=result)
        return request.override(system_message=result[0], messages=result[1:])

    @staticmethod
    def _natives(request: Any) -> list[Any]:
        head = [] if request.system_message is None else [request.system_message]
        return [*head, *request.messages]

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[Any], Any]) -> Any:
        """Send ``request`` with its messages compressed (sync agents)."""
        natives = self._natives(request)
        result = self._compressor.run_sync(
            natives,
            model=_model_name(request.model),
            conversation=_thread(request),
            model_max_tokens=self._window(request.model),
        )
        return handler(request if result is natives else self._apply(request, result))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        """Send ``request`` with its messages compressed (async agents)."""
        natives = self._natives(request)
        result = await self._compressor.run(
            natives,
            model=_model_name(request.model),
            conversation=_thread(request),
            model_max_tokens=self._window(request.model),
        )
        return await handler(request if result is natives else self._apply(request, result))
