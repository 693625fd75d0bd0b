"""pydantic-ai: :func:`compression_capability` / :func:`compression_processor` (a history
processor) and the ``pydantic_ai`` message format.

Install with ``pip install "agent-adapter[pydantic-ai]"`` (pydantic-ai-slim; add the model
extra you use, e.g. ``pydantic-ai-slim[openai]``).

``Agent(..., capabilities=[compression_capability(policy)])`` runs the processor before every
model request with pydantic-ai's own ``ModelMessage`` list. pydantic-ai 2 takes history
processors as the ``ProcessHistory`` capability (``history_processors=`` was removed in v2);
:func:`compression_capability` is ``ProcessHistory(compression_processor(policy))``, and the bare
processor, in pydantic-ai's ``(ctx, messages)`` form, suits any hook that takes one
(https://ai.pydantic.dev/message-history/, "Processing Message History"). pydantic-ai stores
what a processor returns as the run's history (``ctx.messages[:] = processed``), so
``result.all_messages()`` is the compressed history: a valid ``ModelMessage`` list (calls and
returns paired, the last message a ``ModelRequest``) that ``message_history=`` takes to go on,
as pydantic-ai expects of a processor. The request's ``instructions`` are kept as they are and
are not counted (pydantic-ai adds them to the request after the processors).

**Compact once, then append.** The processor takes pydantic-ai's ``RunContext`` and keys the
conversation's compaction state (see :func:`~agent_adapter.context.compress_for`) by its
``conversation_id`` (``Agent.run(conversation_id=...)``, else the one on ``message_history``,
else a fresh one per run); a context without one falls back to the fingerprint of the first
messages. As pydantic-ai keeps what the processor returns as the run's history, the next request
starts with the one sent either way: that history extends the request sent, not the history
compressed, so the state starts over from it (the same request; that call's report counts no
``prefix_tokens``). The state carries a conversation whose history is the full record again:
one the caller keeps of its own and passes as ``message_history=``, with the same
``conversation_id``. ``states=`` says where the states live (``False``: none).

**Dropped history, searched back.** A step's ``save_to=`` saves are owned by the same
``conversation_id`` (``thread:<conversation_id>``). Register ``search_tool(store)`` /
``recall_tool(store)`` as :func:`pydantic_ai_tool` (``Agent(tools=[...])``): each call runs under
its run's ``conversation_id``, so a conversation reads only what was dropped from it (a later
run reads an earlier one's saves when it has its ``conversation_id``: passed, or on
``message_history``).

Importing this module registers the ``pydantic_ai`` format
(:class:`~agent_adapter.integrations._pydantic_ai_format.PydanticAIConverter`), so
``compress_for(messages, policy)`` and ``check(messages)`` take pydantic-ai lists too.

Example (docs/frameworks/pydantic-ai.md runs it against the local test server)::

    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.pydantic_ai import compression_capability

    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(api_key="sk-..."))
    agent = Agent(model, capabilities=[compression_capability(policy)])
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_adapter._errors import MissingDependency
from agent_adapter._tools import FunctionTool
from agent_adapter.context import CompressionPolicy
from agent_adapter.context.formats import register_format
from agent_adapter.integrations._core import (
    Compressor,
    OnReport,
    States,
    conversation_id,
    function_tool,
    owner_context,
)

try:
    from pydantic_ai import RunContext, Tool
    from pydantic_ai.capabilities import ProcessHistory

    from agent_adapter.integrations._pydantic_ai_format import PydanticAIConverter, is_pydantic_ai
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("pydantic-ai-slim", "pydantic-ai", "compression_processor") from e

__all__ = [
    "PydanticAIConverter",
    "compression_capability",
    "compression_processor",
    "pydantic_ai_tool",
]

register_format("pydantic_ai", PydanticAIConverter(), detect=is_pydantic_ai)


def _conversation(ctx: RunContext[Any]) -> str | None:
    """The conversation key of a pydantic-ai run: its ``conversation_id``."""
    return conversation_id(getattr(ctx, "conversation_id", None))


def compression_processor(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
    states: States = None,
) -> Callable[[RunContext[Any], list[Any]], Awaitable[list[Any]]]:
    """A pydantic-ai history processor that compresses the messages with ``policy``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model request's
            :class:`~agent_adapter.context.CompressionReport` (``prefix_tokens`` counts what
            the request shares with the conversation's previous one).
        states: where the conversations' compaction states live: ``None`` for its own
            bounded in-memory one (never one of the process), a
            :class:`~agent_adapter.context.CompactionStates`, or ``False`` for none.

    Returns:
        An async ``(RunContext, list[ModelMessage]) -> list[ModelMessage]``, the processor
        form pydantic-ai passes its run context to.

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or it is in percents and no window
            is known; ``states`` is none of the above.
    """
    compressor = Compressor(
        policy,
        "pydantic_ai",
        "pydantic_ai",
        model_max_tokens=model_max_tokens,
        on_report=on_report,
        states=states,
    )

    async def compress_history(ctx: RunContext[Any], messages: list[Any]) -> list[Any]:
        return await compressor.run(messages, conversation=_conversation(ctx))

    return compress_history


def compression_capability(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
    states: States = None,
) -> ProcessHistory[Any]:
    """``ProcessHistory(compression_processor(...))``: for ``Agent(capabilities=[...])``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model request's
            :class:`~agent_adapter.context.CompressionReport`.
        states: as :func:`compression_processor`.

    Raises:
        ConfigError: as :func:`compression_processor`.
    """
    processor = compression_processor(
        policy, model_max_tokens=model_max_tokens, on_report=on_report, states=states
    )
    return ProcessHistory(processor)


def pydantic_ai_tool(tool: FunctionTool) -> Tool[Any]:
    """``tool`` as a pydantic-ai ``Tool`` for ``Agent(tools=[...])``.

    The tool is called with the context whose owner is the run's ``conversation_id``, the one
    :func:`compression_processor` saves under, so ``search_tool(store)`` and
    ``recall_tool(store)`` read only their own conversation's dropped history; another
    conversation's saves answer as nothing saved. The model's arguments are passed as they
    come (``tool.parameters`` is the schema it sees).

    Args:
        tool: the agent_adapter tool.

    Returns:
        A ``Tool`` of the same name, description and JSON schema.

    Raises:
        ConfigError: ``tool`` is not a FunctionTool.

    Example::

        from agent_adapter.context import recall_tool, search_tool

        tools = [pydantic_ai_tool(search_tool(store)), pydantic_ai_tool(recall_tool(store))]
        agent = Agent(model, tools=tools, capabilities=[compression_capability(policy)])
    """
    tool = function_tool(tool, "pydantic_ai_tool")

    async def call(ctx: RunContext[Any], **kwargs: Any) -> str:
        return await tool(kwargs, owner_context(_conversation(ctx)))

    return Tool.from_schema(call, tool.name, tool.description, tool.parameters, takes_ctx=True)
