"""LangChain v1 agents: :class:`CompressionMiddleware` for ``create_agent(middleware=[...])``.

Install with ``pip install "agent-adapter[langchain-agents]"`` (langchain, langchain-core).

**Hook choice: ``wrap_model_call``**, not ``before_model``. ``before_model`` returns a state
update, and ``messages`` is reduced by LangGraph's ``add_messages``: dropping messages there
means ``RemoveMessage`` entries, so the checkpointed history itself would lose them for good.
``wrap_model_call`` receives the :class:`~langchain.agents.middleware.ModelRequest` the agent is
about to send and passes ``request.override(messages=...)`` to the handler: only what is sent
changes, the state and every checkpoint keep the full history, and a resumed thread compresses
it again from the full record. The system prompt (``request.system_message``) is counted with the
messages (it is sent with them) and never changed.

Example::

    from langchain.agents import create_agent
    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.langchain import CompressionMiddleware

    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    agent = create_agent(model, tools, middleware=[CompressionMiddleware(policy)])

Sync (``invoke``) and async (``ainvoke``) agents both work.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_adapter._errors import MissingDependency
from agent_adapter.context import CompressionPolicy
from agent_adapter.integrations._core import Compressor, OnReport

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("langchain", "langchain-agents", "CompressionMiddleware") from e

__all__ = ["CompressionMiddleware"]


def _model_name(model: Any) -> str | None:
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return name if isinstance(name, str) else None


class CompressionMiddleware(AgentMiddleware):
    """Compresses the messages of every model call of a LangChain agent with ``policy``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents (else the
            policy's own ``model_max_tokens``).
        on_report: called with the :class:`~agent_adapter.context.CompressionReport` of every
            model call (also when nothing was compressed).

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or it is in percents and no window
            is known.
    """

    def __init__(
        self,
        policy: CompressionPolicy,
        *,
        model_max_tokens: int | None = None,
        on_report: OnReport | None = None,
    ) -> None:
        super().__init__()
        self._compressor = Compressor(
            policy, "langchain", "langchain", model_max_tokens=model_max_tokens, on_report=on_report
        )

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph."""
        return "AgentAdapterCompression"

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
        result = self._compressor.run_sync(natives, model=_model_name(request.model))
        return handler(request if result is natives else self._apply(request, result))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        """Send ``request`` with its messages compressed (async agents)."""
        natives = self._natives(request)
        result = await self._compressor.run(natives, model=_model_name(request.model))
        return await handler(request if result is natives else self._apply(request, result))
