"""Google ADK: :func:`compression_callback`, an ``LlmAgent.before_model_callback``.

Install with ``pip install "agent-adapter[google-adk]"`` (google-adk; it needs google-genai
below 3, so this extra does not go with ``agent-adapter[gemini]``'s google-genai 3).

ADK calls ``before_model_callback(callback_context, llm_request)`` before every model call;
a callback that changes ``llm_request`` and returns ``None`` lets the call go on with the
changed request (https://google.github.io/adk-docs/callbacks/types-of-callbacks/, "Before Model
Callback"). The callback compresses ``llm_request.contents``, the genai ``Content`` objects
ADK built from the session's events, in the ``gemini`` format (``function_call`` /
``function_response`` parts paired by id or name, thought parts and ``thought_signature`` s
kept where Gemini needs them), and sets the compressed list on the request. The session's
events are not touched: they keep the full history, and the next call (or a run resumed from
the session service) compresses it again. The system instruction
(``llm_request.config.system_instruction``) is kept as it is and not counted.

Example::

    from google.adk.agents import LlmAgent
    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.google_adk import compression_callback

    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    agent = LlmAgent(
        name="coder", model="gemini-2.5-flash", tools=[...],
        before_model_callback=compression_callback(policy),
    )
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_adapter._errors import MissingDependency
from agent_adapter.context import CompressionPolicy
from agent_adapter.integrations._core import Compressor, OnReport

try:
    import google.adk  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("google-adk", "google-adk", "compression_callback") from e

__all__ = ["compression_callback"]


def compression_callback(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
) -> Callable[[Any, Any], Awaitable[None]]:
    """A ``before_model_callback`` that compresses ``llm_request.contents`` with ``policy``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model call's
            :class:`~agent_adapter.context.CompressionReport`.

    Returns:
        An async callback returning ``None`` (the model call goes on with the compressed
        request).

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or it is in percents and no window
            is known.
    """
    compressor = Compressor(
        policy, "gemini", "google_adk", model_max_tokens=model_max_tokens, on_report=on_report
    )

    async def before_model_callback(callback_context: Any, llm_request: Any) -> None:
        contents = list(llm_request.contents or [])
        if not contents:
            return None
        agent = getattr(callback_context, "agent_name", None)
        model = getattr(llm_request, "model", None)
        result = await compressor.run(
            contents,
            agent=agent if isinstance(agent, str) else None,
            model=model if isinstance(model, str) else None,
        )
        if result is not contents:
            llm_request.contents = result
        return None

    return before_model_callback
