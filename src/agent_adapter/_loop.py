"""run_tool_loop: call the model, run the tools it asks for, repeat until it answers.

The loop every agent has, in its plain form: the model's tool calls of one turn run in
parallel (``asyncio.gather``), each result goes back as a ``tool`` message, and the model is
called again until a reply without tool calls. A tool's exception is returned to the model as
an error result (the model can recover or explain); the loop's own limit raises.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter._errors import AgentAdapterError, ConfigError
from agent_adapter._messages import Message, ToolCall
from agent_adapter._model import LLMPort, ModelRequest, ModelResponse, Usage
from agent_adapter._run import emit_event
from agent_adapter._tools import FunctionTool
from agent_adapter.context._compressing_model import CompressingModel
from agent_adapter.context._policy import CompressionPolicy

__all__ = ["MaxIterationsExceeded", "ToolLoopResult", "run_tool_loop"]

#: Model calls one run_tool_loop makes at most by default (the OpenAI Agents SDK's
#: ``DEFAULT_MAX_TURNS`` is 10 as well).
DEFAULT_MAX_ITERATIONS = 10
_SETTINGS = frozenset(
    {"tool_choice", "response_format", "max_output_tokens", "temperature", "top_p", "stop",
     "seed", "stage", "options"}
)  # fmt: skip


class MaxIterationsExceeded(AgentAdapterError):
    """run_tool_loop made ``max_iterations`` model calls and the model still calls tools.

    Attributes:
        messages: the conversation so far (the last tool results included), to continue from.
        iterations: how many model calls were made.
    """

    def __init__(self, messages: list[Message], iterations: int) -> None:
        self.messages = messages
        self.iterations = iterations
        super().__init__(
            f"the model still called tools after {iterations} iterations (max_iterations); "
            "the conversation so far is in .messages"
        )


@dataclass(frozen=True, slots=True)
class ToolLoopResult:
    """What run_tool_loop ended with.

    Attributes:
        messages: the whole conversation: the input, then every assistant turn and tool
            result, ending with the final reply (a new list; the input is never changed).
        response: the final model response (the reply without tool calls).
        iterations: model calls made.
        usage: the usage of every model call, summed.
    """

    messages: list[Message]
    response: ModelResponse
    iterations: int
    usage: Usage

    @property
    def text(self) -> str:
        """The final reply's text."""
        return self.response.text


def _tool_list(tools: Sequence[FunctionTool | Callable[..., Any]]) -> list[FunctionTool]:
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise ConfigError("run_tool_loop: tools must be a sequence of functions or FunctionTool")
    out: list[FunctionTool] = []
    for i, tool in enumerate(tools):
        if isinstance(tool, FunctionTool):
            out.append(tool)
        elif callable(tool):
            out.append(FunctionTool.from_function(tool))
        else:
            raise ConfigError(f"run_tool_loop: tools[{i}] is {type(tool).__name__}, not a tool")
    names = [t.name for t in out]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"run_tool_loop: duplicate tool names {duplicates}")
    return out


def _error_result(call: ToolCall, text: str) -> Message:
    """A tool result saying the call failed (``extras["is_error"]``, as Anthropic's
    ``tool_result.is_error``)."""
    return Message("tool", text, tool_call_id=call.id, name=call.name, extras={"is_error": True})


async def _run_call(call: ToolCall, tools: Mapping[str, FunctionTool], ctx: Any) -> Message:
    t0 = time.perf_counter()
    await emit_event(ctx, "tool.call", name=call.name, call_id=call.id)
    ok = False
    tool = tools.get(call.name)
    if tool is None:
        result = _error_result(
            call, f"Error: no tool named {call.name!r}; the tools are {sorted(tools)}."
        )
    else:
        try:
            args = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            result = _error_result(call, f"Error: the arguments are not valid JSON: {exc}")
        else:
            if not isinstance(args, dict):
                result = _error_result(call, "Error: the arguments must be a JSON object.")
            else:
                try:
                    text = await tool(args, ctx)
                except Exception as exc:  # returned to the model, which may recover
                    result = _error_result(call, f"Error: {type(exc).__name__}: {exc}")
                else:
                    if not isinstance(text, str):
                        text = str(text)
                    result = Message("tool", text, tool_call_id=call.id, name=call.name)
                    ok = True
    await emit_event(
        ctx, "tool.result", name=call.name, call_id=call.id, ok=ok,
        seconds=time.perf_counter() - t0,
    )  # fmt: skip
    return result


async def run_tool_loop(
    model: LLMPort,
    tools: Sequence[FunctionTool | Callable[..., Any]],
    messages: Sequence[Message] | str,
    *,
    compression: CompressionPolicy | None = None,
    ctx: Any = None,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    settings: Mapping[str, Any] | None = None,
) -> ToolLoopResult:
    """Call ``model`` with ``tools`` until it replies without tool calls.

    Each iteration sends the whole conversation so far; the tool calls of one reply run in
    parallel and their results follow the reply in call order. A tool that raises, an unknown
    tool name or arguments that are not a JSON object become an error result for the model
    (``"Error: ..."``, ``extras["is_error"] = True``), not an exception. Each model call writes
    its ledger entry and events through the port; each tool call emits ``tool.call`` and
    ``tool.result`` on ``ctx``. ``recall_tool(store)`` is a tool like any other.

    Args:
        model: the model port.
        tools: plain functions (turned into tools with :meth:`FunctionTool.from_function`)
            or :class:`FunctionTool` s.
        messages: the conversation to start from, or a user prompt.
        compression: compress every request with this policy: the model is wrapped in a
            ``CompressingModel`` (an inner one passes those requests straight through).
        ctx: the run context, passed to the model (``request.ctx``) and to the tools.
        max_iterations: model calls at most; hitting it raises.
        settings: other :class:`ModelRequest` fields for every call (``temperature``,
            ``max_output_tokens``, ``tool_choice``, ``stage``, ``options``...).

    Returns:
        The conversation, the final response, the iterations and the summed usage.

    Raises:
        ConfigError: bad tools, settings or max_iterations; as ``CompressingModel``.
        MaxIterationsExceeded: the model still called tools after max_iterations calls
            (as the OpenAI Agents SDK's ``MaxTurnsExceeded``); ``.messages`` holds the
            conversation so far.
        ModelError: a model call failed.
    """
    if (
        isinstance(max_iterations, bool)
        or not isinstance(max_iterations, int)
        or max_iterations < 1
    ):
        raise ConfigError(
            f"run_tool_loop: max_iterations must be an int >= 1, got {max_iterations!r}"
        )
    extra = dict(settings or {})
    unknown = sorted(set(extra) - _SETTINGS)
    if unknown:
        raise ConfigError(
            f"run_tool_loop: unknown settings {unknown}; allowed: {sorted(_SETTINGS)}"
        )
    tool_list = _tool_list(tools)
    by_name = {t.name: t for t in tool_list}
    if isinstance(messages, str):
        conversation = [Message("user", messages)]
    else:
        conversation = list(ModelRequest(messages=messages).messages)  # validated, copied
    if compression is not None:
        model = CompressingModel(model, compression)
    usage = Usage()
    for iteration in range(1, max_iterations + 1):
        request = ModelRequest(messages=conversation, tools=tool_list, ctx=ctx, **extra)
        response = await model.generate(request)
        usage = usage + response.usage
        conversation.append(response.message)
        calls = response.message.tool_calls
        if not calls:
            return ToolLoopResult(conversation, response, iteration, usage)
        results = await asyncio.gather(*(_run_call(c, by_name, ctx) for c in calls))
        conversation.extend(results)
    raise MaxIterationsExceeded(conversation, max_iterations)
