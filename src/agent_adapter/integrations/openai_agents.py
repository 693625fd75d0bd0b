"""OpenAI Agents SDK: :func:`compression_filter`, a ``RunConfig.call_model_input_filter``.

Install with ``pip install "agent-adapter[openai-agents]"`` (openai-agents).

The SDK calls the filter before every model call with the Responses input items it is about to
send (:class:`agents.run_config.CallModelData`) and sends the
:class:`agents.run_config.ModelInputData` it returns
(https://openai.github.io/openai-agents-python/running_agents/, "Call model input filter").
The items are compressed in the ``openai`` format (Responses items: ``reasoning`` items with
their ``encrypted_content``, ``function_call`` / ``function_call_output`` pairs, MCP approval
requests and responses kept with the state they carry). The instructions go out untouched: they
are counted with the items (they are sent with them) and never changed. Only what is sent
changes: the run's items, ``result.to_input_list()`` and a session keep the full history, and a
run resumed from a session is compressed again from the full record. The same filter serves
``OpenAIResponsesModel`` and ``OpenAIChatCompletionsModel`` (the SDK converts the items for
Chat Completions after the filter).

Example::

    from agents import Agent, RunConfig, Runner
    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.openai_agents import compression_filter

    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    config = RunConfig(call_model_input_filter=compression_filter(policy))
    result = await Runner.run(agent, "Fix the failing test", run_config=config)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_adapter._errors import MissingDependency
from agent_adapter.context import CompressionPolicy
from agent_adapter.integrations._core import Compressor, OnReport

try:
    from agents.run_config import CallModelData, ModelInputData
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("openai-agents", "openai-agents", "compression_filter") from e

__all__ = ["compression_filter"]


def _model_name(agent: Any) -> str | None:
    model = getattr(agent, "model", None)
    if isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None


def compression_filter(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
) -> Callable[[CallModelData[Any]], Awaitable[ModelInputData]]:
    """A ``call_model_input_filter`` that compresses the input items with ``policy``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model call's
            :class:`~agent_adapter.context.CompressionReport`.

    Returns:
        An async filter for ``RunConfig(call_model_input_filter=...)``.

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or it is in percents and no window
            is known.
    """
    compressor = Compressor(
        policy,
        "openai",
        "openai_agents",
        model_max_tokens=model_max_tokens,
        on_report=on_report,
    )

    async def call_model_input_filter(data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        instructions = model_data.instructions
        head: list[Any] = []
        if instructions:  # counted with the items, as it is sent with them
            head = [{"role": "system", "content": instructions}]
        items = [*head, *model_data.input]
        agent = data.agent
        result = await compressor.run(
            items, agent=getattr(agent, "name", None), model=_model_name(agent)
        )
        if result is items:
            return model_data
        if head:  # a leading system message is never removed: drop it, send the original
            result = result[1:]
        return ModelInputData(input=result, instructions=instructions)

    return call_model_input_filter
