"""One run of the agent loop: compaction, the model call over the failover chain, the tools.

Everything a run changes lives on its :class:`Run`, made per call; nothing is stored on the
agent, so concurrent runs on one event loop never see each other's state. Per iteration:

1. the compactor (if any) sees a :class:`~cliver_core.CompactionContext` and its result
   replaces the history, through the guard;
2. the model is called with the core-owned system message and the history, binding after
   binding until one answers (a failover reuses the compacted history);
3. a reply without tool calls ends the run; otherwise its calls run concurrently and one
   result per call is appended, in call order.

``run_timeout`` bounds every await of the run (compactor, model, tools) with one deadline.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agent_adapter import (
    Message,
    ModelOutputInvalid,
    ModelRequest,
    ModelResponse,
    RunContext,
    StreamEnd,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
)
from agent_adapter import ToolCall as AAToolCall
from cliver_core._bindings import ModelBinding
from cliver_core._compaction import (
    CompactionContext,
    CompactionError,
    CompactionPlan,
    apply_plan,
    validate_history,
)
from cliver_core._errors import RunTimeout
from cliver_core._events import (
    CompactionEvent,
    CompactionEventType,
    EventHandler,
    ToolEvent,
    ToolEventType,
    emit,
)
from cliver_core._failover import Attempts
from cliver_core._format import DENIED_PREFIX, from_message, to_messages
from cliver_core._messages import (
    CLIverMessage,
    CLIverMessageChunk,
    CLIverResponse,
    ToolCallChunk,
    UsageInfo,
)
from cliver_core._structured import OutputSpec
from cliver_core._tools import CLIverTool, format_result, run_tool

__all__ = ["Compactor", "PermissionCallback", "Run", "RunSpec"]

_T = TypeVar("_T")

#: A compactor: ``compactor(context)`` returning a plan, a full history or ``None``.
Compactor = Callable[[CompactionContext], Any]
#: ``permission_callback(call)`` for a non-safe tool: True / None allow, False or a reason
#: (``str``) deny; sync or async.
PermissionCallback = Callable[[Any], Any]

_FIELDS = {"temperature", "top_p", "stop", "seed", "tool_choice"}
_MAX_TOKENS = ("max_output_tokens", "max_tokens", "max_completion_tokens")
_FAILED = (
    "Tool calls failed repeatedly. Please check the tool arguments or try a different approach."
)
_MAX_ITER = "Reached maximum iterations without a final answer."
_REPAIR = (
    "Your reply does not match the required JSON schema: {error}\n"
    "Reply again with only the JSON object, nothing else."
)


def request_fields(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Call options split into :class:`~agent_adapter.ModelRequest` fields and the rest
    (passed to the SDK call as they are)."""
    fields: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in options.items():
        if key in _FIELDS:
            if value is not None:
                fields[key] = value
        elif key in _MAX_TOKENS:
            if value is not None:
                fields["max_output_tokens"] = value
        else:
            rest[key] = value
    return fields, rest


@dataclass
class RunSpec:
    """What one call asks for (built by AgentCore from its settings and the call's)."""

    chain: Sequence[ModelBinding]
    system: str | None
    history: list[CLIverMessage]
    tools: list[CLIverTool]
    options: dict[str, Any]
    max_iterations: int
    compactor: Compactor | None
    handlers: tuple[EventHandler | None, ...]
    run_timeout: float | None
    max_consecutive_errors: int
    permission_callback: PermissionCallback | None = None
    output: OutputSpec | None = None
    repairs: int = 1
    stage: str = "main"
    extra: dict[str, Any] = field(default_factory=dict)


class Run:
    """One run's state (see the module docstring)."""

    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.run_id = uuid.uuid4().hex
        self.ctx = RunContext(run_id=self.run_id)
        self.history = spec.history
        self.system = Message("system", spec.system) if spec.system else None
        self.total = Usage()
        self.last_usage: UsageInfo | None = None
        self.trace: list[dict[str, Any]] = []
        self.deadline = (
            asyncio.get_running_loop().time() + spec.run_timeout
            if spec.run_timeout is not None
            else None
        )
        self.by_name = {t.name: t for t in spec.tools}
        self.function_tools = [t.function_tool() for t in spec.tools]
        self.errors = 0
        self.denials = 0
        self._messages: list[Message] = []
        self.attempts = Attempts(spec.chain, spec.handlers, self.run_id, self._request)

    # -- deadline ------------------------------------------------------------------------

    async def bounded(self, awaitable: Awaitable[_T]) -> _T:
        """``await awaitable`` within the run's deadline (RunTimeout when it passes)."""
        if self.deadline is None:
            return await awaitable
        try:
            async with asyncio.timeout_at(self.deadline) as scope:
                return await awaitable
        except TimeoutError:
            if scope.expired():
                raise RunTimeout(self.run_id, self.spec.run_timeout or 0.0) from None
            raise

    # -- usage ---------------------------------------------------------------------------

    def record(self, usage: UsageInfo) -> None:
        """Fold usage a compactor recorded into the run's total."""
        self.total = self.total + usage.to_usage()

    @property
    def usage_total(self) -> UsageInfo:
        """Every model call of the run so far, plus recorded compaction usage."""
        return UsageInfo.of(self.total)

    # -- one iteration -------------------------------------------------------------------

    async def compact(self, iteration: int) -> None:
        """Run the compactor and apply its result (through the guard)."""
        compactor = self.spec.compactor
        if compactor is None:
            return
        context = CompactionContext(
            messages=list(self.history),
            iteration=iteration,
            run_id=self.run_id,
            model=self.spec.chain[0].model,
            last_usage=self.last_usage,
            _record=self.record,
        )

        async def call() -> Any:
            result = compactor(context)
            if inspect.isawaitable(result):
                result = await result
            return result

        result = await self.bounded(call())
        if result is None:
            return
        before = len(self.history)
        if isinstance(result, CompactionPlan):
            history = apply_plan(result, self.history)
            if result.usage is not None:
                self.record(result.usage)
            kind = "plan"
        elif isinstance(result, list):
            history = validate_history(result)
            kind = "list"
        else:
            raise CompactionError(
                "a compactor must return a CompactionPlan, a list of CLIverMessage or None, "
                f"got {type(result).__name__}"
            )
        self.history = history
        await emit(
            self.spec.handlers,
            CompactionEvent(
                event=CompactionEventType.APPLIED,
                run_id=self.run_id,
                data={
                    "iteration": iteration,
                    "kind": kind,
                    "messages_before": before,
                    "messages_after": len(history),
                },
            ),
        )

    def prepare(self) -> None:
        """Convert the history for this iteration's model call (once, for every attempt)."""
        messages = to_messages(self.history)
        self._messages = [self.system, *messages] if self.system is not None else messages

    def _request(self, binding: ModelBinding) -> ModelRequest:
        fields, rest = request_fields({**binding.params, **self.spec.options})
        return ModelRequest(
            messages=self._messages,
            tools=self.function_tools,
            response_format=self.spec.output.schema if self.spec.output else None,
            stage=self.spec.stage,
            ctx=self.ctx,
            options=rest,
            **fields,
        )

    def answered(self, iteration: int, response: ModelResponse) -> CLIverMessage:
        """Account for one model reply; its message, added to the trace."""
        usage = UsageInfo.of(response.usage)
        self.total = self.total + response.usage
        self.last_usage = usage
        message = from_message(response.message)
        binding = self.attempts.answered
        self.trace.append(
            {
                "iteration": iteration,
                "run_id": self.run_id,
                "model": response.model or binding.model,
                "provider": response.provider,
                "request": {"message_count": len(self._messages), "tools": len(self.by_name)},
                "message": message.model_dump(exclude={"native", "native_protocol", "trace"}),
                "usage": usage.model_dump(exclude_none=True),
                "usage_total": self.usage_total.model_dump(exclude_none=True),
            }
        )
        return message

    async def _permitted(self, call: AAToolCall, tool: CLIverTool) -> str | None:
        """``None`` when the call may run, else the denial reason."""
        check = self.spec.permission_callback
        if check is None or tool.safety == "safe":
            return None
        try:
            verdict = check(call)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as e:  # a broken permission prompt never widens permissions
            return f"permission callback failed: {e}"
        if verdict is None or verdict is True:
            return None
        return verdict if isinstance(verdict, str) and verdict else "denied by permission callback"

    async def _one(self, call: AAToolCall) -> tuple[CLIverMessage, str]:
        handlers, run_id = self.spec.handlers, self.run_id
        start = time.perf_counter()
        try:
            args = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError:
            args = None
        await emit(
            handlers,
            ToolEvent(
                event=ToolEventType.START,
                tool_name=call.name,
                tool_call_id=call.id,
                run_id=run_id,
                args=args if isinstance(args, dict) else None,
            ),
        )
        tool = self.by_name.get(call.name)
        status = "error"
        if tool is None:
            text = f"Error: Tool '{call.name}' not found"
        elif not isinstance(args, dict):
            text = "Error: the arguments are not a JSON object"
        elif (reason := await self._permitted(call, tool)) is not None:
            text, status = f"{DENIED_PREFIX} {reason}", "denied"
            await emit(
                handlers,
                ToolEvent(
                    event=ToolEventType.PERMISSION_DENIED,
                    tool_name=call.name,
                    tool_call_id=call.id,
                    run_id=run_id,
                    error=text,
                ),
            )
        else:
            try:
                text, failed = format_result(await run_tool(tool, args))
                status = "error" if failed else "ok"
            except Exception as e:  # returned to the model, which may recover
                text = f"Error: {e}"
        seconds = (time.perf_counter() - start) * 1000
        kind = ToolEventType.END if status != "error" else ToolEventType.ERROR
        await emit(
            handlers,
            ToolEvent(
                event=kind,
                tool_name=call.name,
                tool_call_id=call.id,
                run_id=run_id,
                result=text[:500] if status != "error" else None,
                error=text if status == "error" else None,
                duration_ms=seconds,
            ),
        )
        return CLIverMessage(role="tool", content=text, tool_call_id=call.id), status

    async def run_tools(self, calls: Sequence[AAToolCall]) -> bool:
        """Run one reply's calls concurrently, append one result per call in call order;
        True when the consecutive error (or denial) limit stops the run."""
        done = await self.bounded(asyncio.gather(*(self._one(c) for c in calls)))
        stop = False
        limit = self.spec.max_consecutive_errors
        for message, status in done:
            self.history.append(message)
            if status == "denied":
                self.errors, self.denials = 0, self.denials + 1
            elif status == "error":
                self.errors, self.denials = self.errors + 1, 0
            else:
                self.errors = self.denials = 0
            stop = stop or self.errors >= limit or self.denials >= limit
        return stop

    def check_output(self, message: CLIverMessage) -> tuple[bool, Any]:
        """For chat_structured: (done, parsed). A bad reply with a repair left appends the
        repair request and returns (False, None).

        Raises:
            ModelOutputInvalid: the reply is still invalid after the repair retry.
        """
        spec = self.spec.output
        if spec is None:
            return True, None
        value, error = spec.parse(message.text or "")
        if error is None:
            return True, value
        if self.spec.repairs <= 0:
            raise ModelOutputInvalid(f"the reply does not match the schema after a repair: {error}")
        self.spec.repairs -= 1
        self.history.append(message)
        self.history.append(CLIverMessage(role="user", content=_REPAIR.format(error=error)))
        return False, None

    def response(
        self, message: CLIverMessage, last: ModelResponse | None, parsed: Any = None
    ) -> CLIverResponse:
        """The run's response."""
        message.trace = self.trace
        return CLIverResponse(
            message=message,
            usage=UsageInfo.of(last.usage) if last is not None else None,
            request_info={
                "model": last.model if last is not None else self.spec.chain[0].model,
                "provider": last.provider if last is not None else "",
                "message_count": len(self._messages),
                "run_id": self.run_id,
            },
            usage_total=self.usage_total,
            run_id=self.run_id,
            messages=[*self.history, message],
            parsed=parsed,
        )

    # -- the loops -----------------------------------------------------------------------

    async def chat(self) -> CLIverResponse:
        """The whole run, non-streaming."""
        last: ModelResponse | None = None
        for i in range(self.spec.max_iterations):
            await self.compact(i)
            self.prepare()
            last = await self.bounded(self.attempts.generate(i))
            message = self.answered(i, last)
            calls = last.message.tool_calls
            if not calls:
                done, parsed = self.check_output(message)
                if done:
                    return self.response(message, last, parsed)
                continue
            self.history.append(message)
            if await self.run_tools(calls):
                return self.response(CLIverMessage(role="assistant", content=_FAILED), last)
        return self.response(CLIverMessage(role="assistant", content=_MAX_ITER), last)

    async def stream(self) -> AsyncIterator[CLIverMessageChunk]:
        """The whole run as chunks; the last one carries the trace, usage_total and run_id."""
        for i in range(self.spec.max_iterations):
            await self.compact(i)
            self.prepare()
            events = self.attempts.stream(i)
            last: ModelResponse | None = None
            try:
                while True:
                    try:
                        event = await self.bounded(_next(events))
                    except StopAsyncIteration:
                        break
                    if isinstance(event, TextDelta):
                        yield CLIverMessageChunk(content=event.text)
                    elif isinstance(event, ThinkingDelta):
                        if event.text:
                            yield CLIverMessageChunk(vendor_ext={"reasoning_content": event.text})
                    elif isinstance(event, ToolCallDelta):
                        piece = ToolCallChunk(
                            index=event.index,
                            id=event.id,
                            name=event.name,
                            args_delta=event.arguments,
                        )
                        yield CLIverMessageChunk(tool_call_chunks=[piece])
                    elif isinstance(event, StreamEnd):
                        last = event.response
            finally:
                await events.aclose()  # type: ignore[attr-defined]
            if last is None:
                raise ModelOutputInvalid("the stream ended without its reply")
            message = self.answered(i, last)
            calls = last.message.tool_calls
            if not calls:
                done, _parsed = self.check_output(message)
                if done:
                    yield self._terminal()
                    return
                continue
            self.history.append(message)
            if await self.run_tools(calls):
                yield CLIverMessageChunk(content=_FAILED)
                yield self._terminal()
                return
        yield CLIverMessageChunk(content=_MAX_ITER)
        yield self._terminal()

    def _terminal(self) -> CLIverMessageChunk:
        return CLIverMessageChunk(
            vendor_ext={"__llm_trace__": json.dumps(self.trace, default=str)},
            usage=self.usage_total,
            run_id=self.run_id,
        )


def _next(events: AsyncIterator[_T]) -> Coroutine[Any, Any, _T]:
    async def step() -> _T:
        return await events.__anext__()

    return step()
