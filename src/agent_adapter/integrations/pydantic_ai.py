"""pydantic-ai: :func:`compression_capability` / :func:`compression_processor` (a history
processor) and the ``pydantic_ai`` message format.

Install with ``pip install "agent-adapter[pydantic-ai]"`` (pydantic-ai-slim; add the model
extra you use, e.g. ``pydantic-ai-slim[openai]``).

``Agent(..., capabilities=[compression_capability(policy)])`` runs the processor before every
model request with pydantic-ai's own ``ModelMessage`` list. pydantic-ai 2 takes history
processors as the ``ProcessHistory`` capability (``history_processors=`` was removed in v2);
:func:`compression_capability` is ``ProcessHistory(compression_processor(policy))``, and the bare
processor suits any hook that takes one (https://ai.pydantic.dev/message-history/,
"Processing Message History"). pydantic-ai stores
what a processor returns as the run's history (``ctx.messages[:] = processed``), so
``result.all_messages()`` is the compressed history: a valid ``ModelMessage`` list (calls and
returns paired, the last message a ``ModelRequest``) that ``message_history=`` takes to go on,
as pydantic-ai expects of a processor. The request's ``instructions`` are kept as they are and
are not counted (pydantic-ai adds them to the request after the processors).

Importing this module registers the ``pydantic_ai`` format
(:class:`~agent_adapter.integrations._pydantic_ai_format.PydanticAIConverter`), so
``compress_for(messages, policy)`` and ``check(messages)`` take pydantic-ai lists too.

Example::

    from pydantic_ai import Agent
    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.pydantic_ai import compression_processor

    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    agent = Agent("openai:gpt-4o", capabilities=[compression_capability(policy)])
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_adapter._errors import MissingDependency
from agent_adapter.context import CompressionPolicy
from agent_adapter.context.formats import register_format
from agent_adapter.integrations._core import Compressor, OnReport

try:
    from pydantic_ai.capabilities import ProcessHistory

    from agent_adapter.integrations._pydantic_ai_format import PydanticAIConverter, is_pydantic_ai
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("pydantic-ai-slim", "pydantic-ai", "compression_processor") from e

__all__ = ["PydanticAIConverter", "compression_capability", "compression_processor"]

register_format("pydantic_ai", PydanticAIConverter(), detect=is_pydantic_ai)


def compression_processor(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
) -> Callable[[list[Any]], Awaitable[list[Any]]]:
    """A pydantic-ai history processor that compresses the messages with ``policy``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model request's
            :class:`~agent_adapter.context.CompressionReport`.

    Returns:
        An async ``list[ModelMessage] -> list[ModelMessage]`` for ``history_processors``.

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or it is in percents and no window
            is known.
    """
    compressor = Compressor(
        policy, "pydantic_ai", "pydantic_ai", model_max_tokens=model_max_tokens, on_report=on_report
    )

    async def compress_history(messages: list[Any]) -> list[Any]:
        return await compressor.run(messages)

    return compress_history


def compression_capability(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
) -> ProcessHistory[Any]:
    """``ProcessHistory(compression_processor(...))``: for ``Agent(capabilities=[...])``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model request's
            :class:`~agent_adapter.context.CompressionReport`.

    Raises:
        ConfigError: as :func:`compression_processor`.
    """
    processor = compression_processor(
        policy, model_max_tokens=model_max_tokens, on_report=on_report
    )
    return ProcessHistory(processor)
