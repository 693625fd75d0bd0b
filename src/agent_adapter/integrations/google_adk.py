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
        name="coder", model="gemini-2.5-flash", tools=[],
        before_model_callback=compression_callback(policy),
    )

**Dropped history, searched back.** A step's ``save_to=`` saves are owned by the same session
and agent key (``thread:<app/user/session/agent>``; without a session, the process-wide
``"default"`` owner). Register ``search_tool(store)`` / ``recall_tool(store)`` as
:func:`adk_tool` (``LlmAgent(tools=[...])``): each call runs under its tool context's session
and agent, so a session reads only what was dropped from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_adapter._errors import MissingDependency
from agent_adapter._tools import FunctionTool
from agent_adapter.context import CompressionPolicy
from agent_adapter.integrations._core import (
    Compressor,
    OnReport,
    States,
    function_tool,
    owner_context,
)

try:
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("google-adk", "google-adk", "compression_callback") from e

__all__ = ["adk_tool", "compression_callback"]


def _agent_name(context: Any) -> str | None:
    name = getattr(context, "agent_name", None)
    return name if isinstance(name, str) else None


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
        states: where the sessions' compaction states live: ``None`` for its own
            bounded in-memory one (never one of the process), a
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
        agent = _agent_name(callback_context)
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


class _AdkTool(BaseTool):
    """A FunctionTool as an ADK tool (see :func:`adk_tool`)."""

    def __init__(self, tool: FunctionTool) -> None:
        super().__init__(name=tool.name, description=tool.description)
        self._tool = tool

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self._tool.name,
            description=self._tool.description,
            parameters_json_schema=self._tool.parameters,
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        conversation = _session_key(tool_context, _agent_name(tool_context))
        return await self._tool(args, owner_context(conversation))


def adk_tool(tool: FunctionTool) -> BaseTool:
    """``tool`` as an ADK tool for ``LlmAgent(tools=[...])``.

    The tool is called with the context whose owner is its tool context's session and agent,
    the key :func:`compression_callback` saves under, so ``search_tool(store)`` and
    ``recall_tool(store)`` read only their own session's dropped history; another session's
    saves answer as nothing saved. The model's arguments are passed as they come
    (``tool.parameters`` is the schema it sees).

    Args:
        tool: the agent_adapter tool.

    Returns:
        An ADK ``BaseTool`` of the same name, description and JSON schema.

    Raises:
        ConfigError: ``tool`` is not a FunctionTool.
    """
    tool = function_tool(tool, "adk_tool")
    return _AdkTool(tool)
