"""One run of the agent loop: compaction, the model call over the failover chain, the tools.

Everything a run changes lives on its :class:`Run`, made per call; nothing is stored on the
agent, so concurrent runs on one event loop never see each other's state. Per iteration:

1. the compactor (if any) sees a :class:`~cliver_core.CompactionContext` and its result
   replaces the history, through the guard;
2. the model is called with the core-owned system message and the history, binding after
   binding until one answers (a failover reuses the compacted history);
3. a reply without tool calls ends the run; otherwise its calls run one after the other
   (as in 0.3.0a5; concurrently with ``parallel_tools=True``) and one result per call is
   appended, in call order.

``run_timeout`` bounds every await of the run (compactor, model, tools) with one deadline.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Coroutine, Sequence
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
    Usage,
)
from agent_adapter import ToolCall as AAToolCall
from agent_adapter.context._steps._continuation import Continuation, continuing
from cliver_core._bindings import ModelBinding, binding_fields, traced_provider
from cliver_core._compaction import (
    CompactionContext,
    CompactionError,
    CompactionPlan,
    apply_plan,
    blank_summary,
    validate_history,
)
from cliver_core._errors import RunTimeout
from cliver_core._events import (
    CompactionEvent,
    CompactionEventType,
    emit,
)
from cliver_core._failover import Attempts
from cliver_core._format import from_message, to_messages
from cliver_core._messages import (
    CLIverMessage,
    CLIverMessageChunk,
    CLIverResponse,
    UsageInfo,
)
from cliver_core._provider_port import VENDOR_EXT
from cliver_core._request import request_echo, response_native
from cliver_core._run_spec import Compactor, PermissionCallback, RunSpec
from cliver_core._tool_calls import run_call
from cliver_core._tool_names import WireNames
from cliver_core._tools import CLIverTool
from cliver_core.policy import (
    policy_scope,
)

__all__ = ["Compactor", "PermissionCallback", "Run", "RunSpec"]

_T = TypeVar("_T")

_FAILED = (
    "Tool calls failed repeatedly. Please check the tool arguments or try a different approach."
)
_MAX_ITER = "Reached maximum iterations without a final answer."
_NOT_RUN = "Error: not run: the run stopped after repeated tool failures"
#: ``max_tokens`` of an Anthropic call that sets none (the Messages API requires it; 0.3.0a5
#: sends 4096)
_ANTHROPIC_MAX_TOKENS = 4096
_REPAIR = (
    "Your reply does not match the required JSON schema: {error}\n"
    "Reply again with only the JSON object, nothing else."
)


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
        self._retool(list(spec.tools))
        self.calls: tuple[AAToolCall, ...] = ()
        self._echo: dict[str, Any] = {}
        self.errors = 0
        self.denials = 0
        self._messages: list[Message] = []
        #: the history the last request was made of (the natives of ``_messages``)
        self._sent: tuple[CLIverMessage, ...] = ()
        #: the last request an attempt sent, and its binding
        self._last: tuple[ModelBinding, ModelRequest] | None = None
        self.attempts = Attempts(
            spec.chain, spec.handlers if spec.inference_events else (), self.run_id, self._attempt
        )

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
            _continue=self.continue_run,
            _continuation=self.continuation,
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
            if blank_summary(result):
                return  # a blank summary: the history stays as it is (nothing applied)
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

    def _last_request(self) -> tuple[ModelBinding, ModelRequest]:
        """The binding that answered last and the run's last request to it (what the
        previous iteration sent, byte for byte; on the first iteration the request the next
        call would send, over the messages converted last)."""
        binding = self.attempts.answered
        last = self._last
        if last is not None and last[0] is binding:
            return last
        return binding, self._request(binding)

    async def continue_run(self, prompt: str) -> CLIverResponse:
        """The run's last request with ``prompt`` as a last user message, sent to the
        binding that answered last, ``stage="summary"``: see
        :meth:`CompactionContext.continue_run`."""
        if not self._messages:
            self.prepare()
        binding, last = self._last_request()
        request = dataclasses.replace(
            last, messages=[*last.messages, Message("user", prompt)], stage="summary"
        )
        response = await binding._port().generate(request)
        reply = self.names.restore(response.message) if self.names else response.message
        usage = UsageInfo.of(response.usage)
        text = reply.text if not reply.tool_calls else ""
        return CLIverResponse(
            message=CLIverMessage(role="assistant", content=text),
            usage=usage,
            usage_total=usage,
            run_id=self.run_id,
        )

    def continuation(self, ctx: RunContext) -> Continuation:
        """The run's last request as a summary request may continue it (see
        :meth:`CompactionContext._continuing`): the binding that answered last, its port
        standing for the run's model, the request it was sent (system, tools, options)
        with the compression's messages as the run sends them (:meth:`wire`) and the
        instruction appended, recorded in ``ctx``; the history that request was made of
        is its ``sent_natives``."""
        binding, last = self._last_request()
        port = binding._port()
        own = continuing(dataclasses.replace(last, ctx=ctx), port, wire=self.wire)
        return own.after_sent_natives(self._sent)

    def wire(self, messages: Sequence[Message]) -> list[Message]:
        """The history's messages as the run sends them: tool results without the tool's
        name (as 0.3.0a5 sends them: OpenAI's tool message has role, content and
        tool_call_id; Gemini's converter names a result by its call; the name stays known
        to the cliver format and compaction), tools under their wire names, the system
        message first."""
        out = [
            dataclasses.replace(m, name=None) if m.role == "tool" and m.name else m
            for m in messages
        ]
        if self.names is not None:
            out = self.names.to_wire(out)
        return [self.system, *out] if self.system is not None else out

    def prepare(self) -> None:
        """Convert the history for this iteration's model call (once, for every attempt)."""
        self._sent = tuple(self.history)
        self._messages = self.wire(to_messages(self.history))
        self._echo = {}

    def options(self, binding: ModelBinding) -> dict[str, Any]:
        """The call options for ``binding``: its ``params`` under the call's ``options``."""
        return {**binding.params, **self.spec.options}

    def echo(
        self, binding: ModelBinding, *, streaming: bool = False, raw: Any = None
    ) -> dict[str, Any] | None:
        """The trace's request echo (0.3.0a5's keys), built once an iteration; a user
        provider's own ``request_info`` when it answered (0.3.0a5 traces that)."""
        if isinstance(raw, CLIverResponse) and not streaming:
            return raw.request_info
        if not self._echo:
            self._echo = request_echo(
                model=binding.model,
                provider=traced_provider(binding),
                options=self.options(binding),
                system=self.spec.system,
                history=self.history,
                tools=self.tools,
                streaming=streaming,
            )
        return self._echo

    def _attempt(self, binding: ModelBinding) -> ModelRequest:
        """The request an attempt sends to ``binding``, remembered as the run's last."""
        request = self._request(binding)
        self._last = (binding, request)
        return request

    def _request(self, binding: ModelBinding) -> ModelRequest:
        fields, rest = binding_fields(self.options(binding), binding)
        if binding.protocol == "anthropic" and "max_output_tokens" not in fields:
            fields["max_output_tokens"] = _ANTHROPIC_MAX_TOKENS
        return ModelRequest(
            messages=self._messages,
            tools=self.function_tools,
            response_format=self.spec.output.schema if self.spec.output else None,
            stage=self.spec.stage,
            ctx=self.ctx,
            options=rest,
            **fields,
        )

    def answered(
        self, iteration: int, response: ModelResponse, *, streaming: bool = False
    ) -> CLIverMessage:
        """Account for one model reply; its message, added to the trace."""
        usage = UsageInfo.of(response.usage)
        self.total = self.total + response.usage
        self.last_usage = usage
        reply = self.names.restore(response.message) if self.names else response.message
        self.calls = reply.tool_calls
        message = from_message(reply)
        binding = self.attempts.answered
        native = response_native(response, binding.protocol)
        if binding.protocol in ("openai", "anthropic") or isinstance(response.raw, CLIverResponse):
            # the reply's wire form, as 0.3.0a5 keeps it (sending the message back still goes
            # through the Message it came from)
            message.native = native
            message.native_protocol = (
                response.raw.message.native_protocol
                if isinstance(response.raw, CLIverResponse)
                else binding.protocol
            )
        entry: dict[str, Any] = {
            "iteration": iteration,
            "model": binding.model,
            "provider": traced_provider(binding),
            "request": self.echo(binding, streaming=streaming, raw=response.raw),
        }
        if streaming:
            entry["message"] = message.model_dump(exclude={"native", "native_protocol"})
            entry["usage"] = usage.model_dump()
        else:
            entry["response"] = native
            entry["message"] = message.model_dump(exclude={"native", "native_protocol", "trace"})
            entry["usage"] = usage.model_dump(exclude_none=True)
        entry["run_id"] = self.run_id
        entry["usage_total"] = self.usage_total.model_dump(exclude_none=True)
        self.trace.append(entry)
        return message

    async def _one(self, call: AAToolCall) -> tuple[CLIverMessage, str]:
        advertised = tool = self.by_name.get(call.name)
        if tool is None and self.spec.fallback_tools is not None:
            tool = self.spec.fallback_tools(call.name)
        return await run_call(self.spec, self.run_id, call, tool, advertised)

    def _count(self, status: str) -> bool:
        """Fold one result into the error / denial streaks; True when one hits the limit."""
        if status == "denied":
            self.errors, self.denials = 0, self.denials + 1
        elif status == "error":
            self.errors, self.denials = self.errors + 1, 0
        else:
            self.errors = self.denials = 0
        limit = max(1, self.spec.max_consecutive_errors)  # 0: the first failure stops it
        return self.errors >= limit or self.denials >= limit

    async def run_tools(self, calls: Sequence[AAToolCall]) -> bool:
        """Run one reply's calls, appending one result per call in call order; True when the
        consecutive error (or denial) limit stops the run.

        In order, one at a time, as 0.3.0a5 does (the batch stops at the call that reaches
        the limit, as there); with ``parallel_tools`` all at once. The execution policy is
        ambient around the tools only (``policy_scope``: tools in worker threads see it).
        """
        with policy_scope(self.spec.execution_policy):
            if self.spec.parallel_tools:
                done = await self.bounded(asyncio.gather(*(self._one(c) for c in calls)))
                stop = False
                for message, status in done:
                    self.history.append(message)
                    stop = self._count(status) or stop
            else:
                stop = False
                for k, call in enumerate(calls):
                    message, status = await self.bounded(self._one(call))
                    self.history.append(message)
                    if self._count(status):
                        stop = True
                        # the calls after it are not run (no events, as in 0.3.0a5); each
                        # still gets a result, so the history stays a valid conversation
                        self.history.extend(
                            CLIverMessage(role="tool", content=_NOT_RUN, tool_call_id=c.id)
                            for c in calls[k + 1 :]
                        )
                        break
        if self.spec.retool is not None:
            self._retool(self.spec.retool(self.tools))
        return stop

    def _retool(self, tools: list[CLIverTool]) -> None:
        """Advertise ``tools`` from the next model call (each under its wire name)."""
        self.tools = tools
        self.by_name = {t.name: t for t in tools}
        self.names = WireNames.of([t.name for t in tools])
        names = self.names
        self.function_tools = [
            names.tool(t.function_tool()) if names else t.function_tool() for t in tools
        ]

    def check_output(self, message: CLIverMessage, iteration: int) -> tuple[bool, Any]:
        """For chat_structured: (done, parsed). A bad reply with a repair left (and an
        iteration to make it in) appends the repair request and returns (False, None).

        Raises:
            ModelOutputInvalid: the reply is still invalid after the repair retry, or no
                iteration is left for one (``max_iterations`` reached): never ``parsed=None``.
        """
        spec = self.spec.output
        if spec is None:
            return True, None
        value, error = spec.parse(message.text or "")
        if error is None:
            return True, value
        if self.spec.repairs <= 0:
            raise ModelOutputInvalid(f"the reply does not match the schema after a repair: {error}")
        if iteration + 1 >= self.spec.max_iterations:
            raise ModelOutputInvalid(
                f"the reply does not match the schema and max_iterations="
                f"{self.spec.max_iterations} leaves no iteration for a repair: {error}"
            )
        self.spec.repairs -= 1
        self.history.append(message)
        self.history.append(CLIverMessage(role="user", content=_REPAIR.format(error=error)))
        return False, None

    def response(
        self, message: CLIverMessage, last: ModelResponse | None, parsed: Any = None
    ) -> CLIverResponse:
        """The run's response."""
        message.trace = self.trace
        echo = self.echo(self.attempts.answered, raw=last.raw) if last is not None else None
        info = dict(echo or {})
        info.update(message_count=len(self._messages), run_id=self.run_id)
        return CLIverResponse(
            message=message,
            usage=UsageInfo.of(last.usage) if last is not None else None,
            request_info=info,
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
            calls = self.calls
            if not calls:
                done, parsed = self.check_output(message, i)
                if done:
                    return self.response(message, last, parsed)
                continue
            self.history.append(message)
            if await self.run_tools(calls):
                return self.response(CLIverMessage(role="assistant", content=_FAILED), last)
        # no usage on the limit's answer (0.3.0a5's has none; usage_total has every call)
        return self.response(CLIverMessage(role="assistant", content=_MAX_ITER), None)

    async def stream(self) -> AsyncIterator[CLIverMessageChunk]:
        """The whole run as chunks; the last one carries the trace, usage_total and run_id."""
        for i in range(self.spec.max_iterations):
            await self.compact(i)
            self.prepare()
            events = self.attempts.stream(i)
            # 0.3.0a5's names: Anthropic's thinking deltas, the Chat servers' reasoning_content;
            # a user provider's protocol is its own (0.3.0a5 ignores the binding's for it)
            first = self.spec.chain[0]
            own = getattr(first.provider, "protocol", None) if first.provider is not None else None
            protocol = own if isinstance(own, str) else first.protocol
            thinking_key = "thinking" if protocol == "anthropic" else "reasoning_content"
            last: ModelResponse | None = None
            ext: list[dict[str, str]] = []  # a user provider's other vendor_ext, in order
            try:
                while True:
                    listening = VENDOR_EXT.set(ext)
                    try:
                        event = await self.bounded(_next(events))
                    except StopAsyncIteration:
                        break
                    finally:
                        VENDOR_EXT.reset(listening)
                    for entry in ext:
                        yield CLIverMessageChunk(vendor_ext=entry)
                    ext.clear()
                    if isinstance(event, TextDelta):
                        yield CLIverMessageChunk(content=event.text)
                    elif isinstance(event, ThinkingDelta):
                        if event.text:
                            yield CLIverMessageChunk(vendor_ext={thinking_key: event.text})
                    elif isinstance(event, StreamEnd):
                        last = event.response
            finally:
                await events.aclose()  # type: ignore[attr-defined]
            if last is None:
                raise ModelOutputInvalid("the stream ended without its reply")
            message = self.answered(i, last, streaming=True)
            calls = self.calls
            if not calls:
                done, _parsed = self.check_output(message, i)
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
