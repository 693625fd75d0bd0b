"""OpenAI Agents SDK: :func:`compression_filter`, a ``RunConfig.call_model_input_filter``, and
:class:`CompressingSession`, a ``Session`` whose stored items stay bounded (the library's
counterpart of the SDK's ``OpenAIResponsesCompactionSession``).

Install with ``pip install "agent-adapter[openai-agents]"`` (openai-agents).

The SDK calls the filter before every model call with the Responses input items it is about to
send (:class:`agents.run_config.CallModelData`) and sends the
:class:`agents.run_config.ModelInputData` it returns
(https://openai.github.io/openai-agents-python/running_agents/, "Call model input filter").
A run that keeps its conversation on the server (``previous_response_id=``,
``auto_previous_response_id=True``, ``conversation_id=``) gives the filter only the new items,
whose tool results answer calls the server holds: those go out unchanged (what they continue
is not the client's to compress; the server's own ``truncation`` setting governs it).
The items are compressed in the ``openai`` format (Responses items: ``reasoning`` items with
their ``encrypted_content``, ``function_call`` / ``function_call_output`` pairs, MCP approval
requests and responses kept with the state they carry). The instructions go out untouched: they
are counted with the items (they are sent with them) and never changed. Only what is sent
changes: the run's items, ``result.to_input_list()`` and a session keep the full history. The
same filter serves ``OpenAIResponsesModel`` and ``OpenAIChatCompletionsModel`` (the SDK converts
the items for Chat Completions after the filter).

**Compact once, then append.** The conversation's compaction state (see
:func:`~agent_adapter.context.compress_for`) remembers what was compressed and sent: a later
model call whose items extend the remembered ones (the next turn of the run, the next run of the
session) is sent as the request sent then plus the new items, byte for byte, until that is over
the threshold, so the provider's prompt cache keeps hitting. The SDK does not tell a filter
which session the run uses, so pass it: ``compression_filter(policy, session=session)`` (the
``Session`` given to ``Runner.run``, or its id) keys the state by ``session.session_id``, as the
SDK groups a session's runs for its own ``prompt_cache_key``. Without one the key is a
fingerprint of the first items (the instructions and the first input), which a run continued
from ``result.to_input_list()`` keeps. A run resumed in another process, or after the state was
evicted, is compressed again from the full record (``states=False``: every call is).

Example::

    from agents import Agent, RunConfig, Runner, SQLiteSession
    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.openai_agents import compression_filter

    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    session = SQLiteSession("user-42")
    config = RunConfig(call_model_input_filter=compression_filter(policy, session=session))
    agent = Agent(name="coder", model="gpt-4o")

    async def fix():  # each run of the session: its stored items, compressed as sent
        return await Runner.run(agent, "Fix the failing test", run_config=config, session=session)

**Dropped history, searched back.** A step's ``save_to=`` saves are owned by the filter's
session (``thread:<session_id>``; without one, the process-wide ``"default"`` owner). Register
``search_tool(store)`` / ``recall_tool(store)`` as :func:`agents_tool`: each call runs under the
session of its run's filter, so a session reads only what was dropped from it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from agent_adapter._errors import ConfigError, MissingDependency
from agent_adapter._tools import FunctionTool
from agent_adapter.context import CompressionPolicy
from agent_adapter.context.formats._openai._items import is_call, output_call_id
from agent_adapter.integrations._core import (
    Compressor,
    OnReport,
    States,
    function_tool,
    owner_context,
)

try:
    from agents import FunctionTool as AgentsFunctionTool
    from agents.run_config import CallModelData, ModelInputData
    from agents.tool_context import ToolContext
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("openai-agents", "openai-agents", "compression_filter") from e

from agent_adapter.integrations._openai_agents_session import CompressingSession

__all__ = ["CompressingSession", "agents_tool", "compression_filter"]


def _model_name(agent: Any) -> str | None:
    model = getattr(agent, "model", None)
    if isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None


def _session_id(session: Any) -> str | None:
    """The conversation key of ``session`` (a ``Session`` or its id); ``None`` for none.

    Raises:
        ConfigError: ``session`` is neither a non-empty str nor has a non-empty ``session_id``.
    """
    if session is None:
        return None
    key = session if isinstance(session, str) else getattr(session, "session_id", None)
    if not isinstance(key, str) or not key.strip():
        raise ConfigError(
            "compression_filter: session must be an agents Session (with a non-empty "
            f"session_id) or a non-empty str, got {type(session).__name__}"
        )
    return key.strip()


def compression_filter(
    policy: CompressionPolicy,
    *,
    model_max_tokens: int | None = None,
    on_report: OnReport | None = None,
    session: Any = None,
    states: States = None,
) -> Callable[[CallModelData[Any]], Awaitable[ModelInputData]]:
    """A ``call_model_input_filter`` that compresses the input items with ``policy``.

    Args:
        policy: the compression policy.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with each model call's
            :class:`~agent_adapter.context.CompressionReport` (``prefix_tokens`` counts what
            the request shares with the conversation's previous one).
        session: the ``agents`` ``Session`` the runs use (or its id): the conversation the
            compaction state is kept for (``None``: a fingerprint of the first items).
        states: where the conversations' compaction states live: ``None`` for its own
            bounded in-memory one (never one of the process), a
            :class:`~agent_adapter.context.CompactionStates`, or ``False`` for none (every
            call compresses the full history).

    Returns:
        An async filter for ``RunConfig(call_model_input_filter=...)``.

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, or it is in percents and no window
            is known; ``session`` or ``states`` is not one of the above.
    """
    compressor = Compressor(
        policy,
        "openai",
        "openai_agents",
        model_max_tokens=model_max_tokens,
        on_report=on_report,
        states=states,
    )
    return _InputFilter(compressor, _session_id(session))


class _InputFilter:
    """The filter :func:`compression_filter` returns; ``conversation`` is its session's id,
    which :func:`agents_tool` reads from the run's ``RunConfig``."""

    def __init__(self, compressor: Compressor, conversation: str | None) -> None:
        self.compressor = compressor
        self.conversation = conversation

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        if _continues_server_state(model_data.input):
            return model_data
        instructions = model_data.instructions
        head: list[Any] = []
        if instructions:  # counted with the items, as it is sent with them
            head = [{"role": "system", "content": instructions}]
        items = [*head, *model_data.input]
        agent = data.agent
        result = await self.compressor.run(
            items,
            agent=getattr(agent, "name", None),
            model=_model_name(agent),
            conversation=self.conversation,
        )
        if result is items:
            return model_data
        if head:  # a leading system message is never removed: drop it, send the original
            result = result[1:]
        return ModelInputData(input=result, instructions=instructions)


def _continues_server_state(items: Sequence[Any]) -> bool:
    """True when an output item answers a call that is not among ``items``: the run keeps
    its conversation on the server (``previous_response_id``, ``auto_previous_response_id``,
    ``conversation_id``) and the SDK sends only the new items, whose calls the server holds.
    Such a delta is sent as it is: what it continues is not here to compress, and it is no
    request on its own (its results would read as answering nothing)."""
    calls: set[str] = set()
    for item in items:
        if not isinstance(item, Mapping):
            item = getattr(item, "__dict__", {})
        answered = output_call_id(item)
        if answered is not None and answered not in calls:
            return True
        if is_call(item):
            calls.add(item["call_id"])
    return False


def agents_tool(tool: FunctionTool) -> AgentsFunctionTool:
    """``tool`` as an Agents SDK ``FunctionTool`` for ``Agent(tools=[...])``.

    The tool is called with the context whose owner is the session of the run's
    :func:`compression_filter` (``RunConfig.call_model_input_filter``), the one its
    compressions save under, so ``search_tool(store)`` and ``recall_tool(store)`` read only
    their own session's dropped history; another session's saves answer as nothing saved. A
    run without that filter, or whose filter has no session, calls the tool without a
    context (the ``"default"`` owner, as the compression saves then). The model's arguments
    are passed as they come (``tool.parameters`` is the schema it sees, not made strict).

    Args:
        tool: the agent_adapter tool.

    Returns:
        An ``agents.FunctionTool`` of the same name, description and JSON schema.

    Raises:
        ConfigError: ``tool`` is not a FunctionTool.

    Example::

        from agent_adapter.context import recall_tool, search_tool

        tools = [agents_tool(search_tool(store)), agents_tool(recall_tool(store))]
        agent = Agent(name="coder", model=model, tools=tools)
        config = RunConfig(call_model_input_filter=compression_filter(policy, session=session))
        await Runner.run(agent, "where is the deploy key?", run_config=config, session=session)
    """
    tool = function_tool(tool, "agents_tool")

    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        config = getattr(ctx, "run_config", None)
        filter_ = getattr(config, "call_model_input_filter", None)
        conversation = filter_.conversation if isinstance(filter_, _InputFilter) else None
        args = json.loads(arguments) if arguments else {}
        return await tool(args if isinstance(args, dict) else {}, owner_context(conversation))

    return AgentsFunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=tool.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
