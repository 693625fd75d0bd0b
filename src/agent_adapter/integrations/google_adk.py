"""Google ADK: :func:`compression_callback`, an ``LlmAgent.before_model_callback``.

Install with ``pip install "agent-adapter[google-adk]"`` (google-adk 2.13 declares
google-genai below 3 but runs on google-genai 3.6, which ``agent-adapter[gemini]`` pins: this
project's tests install it with ``--no-deps`` beside 3.6 and pass).

ADK calls ``before_model_callback(callback_context, llm_request)`` before every model call;
a callback that changes ``llm_request`` and returns ``None`` lets the call go on with the
changed request (https://google.github.io/adk-docs/callbacks/types-of-callbacks/, "Before Model
Callback"). The callback compresses ``llm_request.contents``, the genai ``Content`` objects
ADK built from the session's events, in the ``gemini`` format (``function_call`` /
``function_response`` parts paired by id or name, thought parts and ``thought_signature`` s
kept where Gemini needs them), and sets the compressed list on the request. The session's
events are not touched: they keep the full history. The system instruction
(``llm_request.config.system_instruction``) is kept as it is and not counted.

**Compact once, then append.** The conversation's compaction state (see
:func:`~agent_adapter.context.compress_for`) is keyed by the callback context's session
(``app_name/user_id/session.id``) and agent (ADK builds each agent's contents of its own from
the session's events): once a session was compressed, every later model call of it (the next
step, the next user turn) is sent as the request sent then plus the new contents, byte for byte,
until that is over the threshold, so the provider's prompt cache keeps hitting. A context
without a session falls back to the fingerprint of the first contents; a session resumed in
another process is compressed again from the full record. ``states=`` says where the states live
(``False``: none, every call compresses the full history).

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
from agent_adapter.integrations._core import Compressor, OnReport, States

try:
    import google.adk  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("google-adk", "google-adk", "compression_callback") from e

__all__ = ["compression_callback"]


def _session_key(callback_context: Any, agent: str | None) -> str | None:
    """The conversation key of the model call: ``app_name/user_id/session_id/agent`` (ADK's
    session ids are unique per app and user); ``None`` without a session id."""
    session = getattr(callback_context, "session", None)
    ident = getattr(session, "id", None)
    if not isinstance(ident, str) or not ident:
        return None
    app, user = getattr(session, "app_name", None), getattr(session, "user_id", None)
    return "/".join(p for p in (app, user, ident, agent) if isinstance(p, str) and p)


def compression_callback(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
    states: States = None,
) -> Callable[[Any, Any], Awaitable[None]]:
    """A ``before_model_callback`` that compresses ``llm_request.contents`` with ``policy``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model call's
            :class:`~agent_adapter.context.CompressionReport` (``prefix_tokens`` counts what
            the request shares with the session's previous one).
        states: where the sessions' compaction states live: ``None`` for the process-wide
            :func:`~agent_adapter.context.default_states`, a
            :class:`~agent_adapter.context.CompactionStates`, or ``False`` for none.

    Returns:
        An async callback returning ``None`` (the model call goes on with the compressed
        request).

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or it is in percents and no window
            is known; ``states`` is none of the above.
    """
    compressor = Compressor(
        policy,
        "gemini",
        "google_adk",
        model_max_tokens=model_max_tokens,
        on_report=on_report,
        states=states,
    )

    async def before_model_callback(callback_context: Any, llm_request: Any) -> None:
        contents = list(llm_request.contents or [])
        if not contents:
            return None
        name = getattr(callback_context, "agent_name", None)
        agent = name if isinstance(name, str) else None
        model = getattr(llm_request, "model", None)
        result = await compressor.run(
            contents,
            agent=agent,
            model=model if isinstance(model, str) else None,
            conversation=_session_key(callback_context, agent),
        )
        if result is not contents:
            llm_request.contents = result
        return None

    return before_model_callback
