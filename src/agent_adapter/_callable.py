"""CallableModel: any sync or async function as an LLMPort (tests, local models, your own code).

One mechanism for every function-backed port: :func:`call_fn` runs the function (a sync one
in a worker thread, with the caller's context variables), bounds it with ``timeout_s``, and
translates what it raises: library errors pass through, anything else becomes a
:class:`~agent_adapter.ModelError` with the original as ``__cause__``.

``timeout_s`` bounds the caller's wall time, not only the await: a sync function runs on a
daemon thread of its own (:func:`_in_thread`), never in the loop's default executor, whose
shutdown (``asyncio.run``, ``compress_for_sync``) would join a thread that overran its
timeout (a function that never returns would hang the call). A timed-out thread is
abandoned: Python cannot stop it; it ends when the function returns, and its result is
dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, TypeAlias, TypeVar

from agent_adapter._errors import (
    AgentAdapterError,
    ConfigError,
    ModelError,
    ModelOutputInvalid,
    ModelTimeout,
    ToolUsageError,
)
from agent_adapter._messages import Message, TextPart, ThinkingPart, ToolCall
from agent_adapter._model import (
    FinishReason,
    ModelRequest,
    ModelResponse,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageEvent,
)
from agent_adapter._run import emit_event, record_call
from agent_adapter.context._tokens import estimate_tokens

__all__ = ["CallableModel", "call_fn", "check_name", "check_timeout"]

_T = TypeVar("_T")

#: What a CallableModel function may return.
Reply: TypeAlias = ModelResponse | Message | str


def check_name(value: Any, field: str, owner: str) -> str:
    """``value`` when it is a non-empty str, else a ConfigError naming ``owner.field``."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{owner}.{field} must be a non-empty str, got {value!r}")
    return value


def check_timeout(value: Any, owner: str) -> float | None:
    """``value`` when it is None or a finite number > 0, else a ConfigError."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigError(f"{owner}.timeout_s must be None or a number > 0, got {value!r}")
    return float(value)


def fn_name(fn: Callable[..., Any]) -> str:
    """``module.qualname`` of a function, for cache keys and logs."""
    module = getattr(fn, "__module__", None) or type(fn).__module__
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{name}"


def _in_thread(fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """``fn(*args)`` on a daemon thread of its own, with the caller's context variables: a
    future of the running loop that the thread settles (through ``call_soon_threadsafe``).
    Nothing joins the thread: a caller that stops waiting (a timeout, a cancel) leaves it to
    end on its own, and its outcome is dropped (the loop may be closed by then)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():
            return  # the caller stopped waiting
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def run() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = context.run(fn, *args)
        except BaseException as exc:  # handed to the awaiting caller
            error = exc
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(settle, value, error)

    name = f"agent-adapter-call-{getattr(fn, '__name__', type(fn).__name__)}"
    threading.Thread(target=run, name=name, daemon=True).start()
    return future


async def call_fn(
    fn: Callable[..., _T | Awaitable[_T]],
    *args: Any,
    timeout_s: float | None,
    provider: str,
    model: str,
) -> _T:
    """``fn(*args)``, awaited when it is async, on a daemon thread when it is sync.

    ``timeout_s`` bounds the wall time: a timed-out thread is abandoned, not stopped (Python
    cannot stop a thread) and not joined, so the caller returns at the timeout.

    Raises:
        ModelTimeout: it took longer than ``timeout_s``.
        AgentAdapterError: what fn raised, when it is one of the library's errors.
        ModelError: fn raised anything else (it is the ``__cause__``).
    """
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    ):
        work: Awaitable[Any] = fn(*args)  # type: ignore[assignment]
    else:
        work = _in_thread(fn, *args)
    try:
        result = await asyncio.wait_for(work, timeout_s) if timeout_s is not None else await work
        if inspect.isawaitable(result):  # a sync function returning an awaitable
            result = await (asyncio.wait_for(result, timeout_s) if timeout_s else result)
    except TimeoutError as exc:
        raise ModelTimeout(
            f"the call took longer than timeout_s={timeout_s:g}", provider=provider, model=model
        ) from exc
    except AgentAdapterError:
        raise
    except Exception as exc:
        raise ModelError(
            f"the function raised {type(exc).__name__}: {exc}", provider=provider, model=model
        ) from exc
    return result  # type: ignore[no-any-return]


class CallableModel:
    """Any function as an :class:`~agent_adapter.LLMPort`: ``fn(request)``, sync or async.

    ``fn`` gets the :class:`~agent_adapter.ModelRequest` and returns a
    :class:`~agent_adapter.ModelResponse`, an assistant :class:`~agent_adapter.Message` or a
    ``str`` (the reply's text). For the last two the usage is estimated like pydantic-ai's
    ``FunctionModel`` does: the request's and the reply's chars/4 (``estimate_tokens``). A
    sync ``fn`` runs in a worker thread (a daemon thread of its own); ``timeout_s`` bounds
    each call's wall time (a timed-out thread is abandoned, not stopped nor joined). Each
    completed call adds a ledger entry priced as ``provider:model`` and emits
    ``model.request`` / ``model.response`` (``model.error`` on failure) on the request's
    ``ctx``.

    ``stream(request)`` uses ``stream_fn(request)`` when given: an async or sync iterable of
    ``str`` chunks and stream events, assembled into the final response; without it, the
    reply of ``fn`` is sent as one text delta, one delta per tool call, the usage, the end.

    Args:
        fn: ``fn(request) -> ModelResponse | Message | str``, sync or async.
        provider: the provider name in the ledger and price lookups.
        model: the model name in the ledger, price and profile lookups.
        timeout_s: seconds one call may take (``None``: no limit).
        stream_fn: ``stream_fn(request) -> iterable of str | StreamEvent`` for ``stream``.
        context_window: the window ``CompressingModel`` uses when its policy gives none.

    Raises:
        ToolUsageError: fn (or stream_fn) is not callable.
        ConfigError: a bad provider, model, timeout_s or context_window.

    Example:
        >>> import asyncio
        >>> from agent_adapter import CallableModel, Message, ModelRequest
        >>> model = CallableModel(lambda request: "hi " + request.messages[-1].text)
        >>> reply = asyncio.run(model.generate(ModelRequest(messages=[Message("user", "you")])))
        >>> reply.text
        'hi you'
    """

    def __init__(
        self,
        fn: Callable[[ModelRequest], Reply | Awaitable[Reply]],
        *,
        provider: str = "callable",
        model: str = "function",
        timeout_s: float | None = None,
        stream_fn: Callable[[ModelRequest], Any] | None = None,
        context_window: int | None = None,
    ) -> None:
        if not callable(fn):
            raise ToolUsageError(f"CallableModel: fn must be callable, got {type(fn).__name__}")
        if stream_fn is not None and not callable(stream_fn):
            raise ToolUsageError("CallableModel: stream_fn must be callable")
        self.fn = fn
        self.stream_fn = stream_fn
        self.provider = check_name(provider, "provider", "CallableModel")
        self.model = check_name(model, "model", "CallableModel")
        self.timeout_s = check_timeout(timeout_s, "CallableModel")
        if context_window is not None and (
            isinstance(context_window, bool)
            or not isinstance(context_window, int)
            or context_window <= 0
        ):
            raise ConfigError(
                f"CallableModel.context_window must be an int > 0, got {context_window!r}"
            )
        self.context_window = context_window

    def __repr__(self) -> str:
        return (
            f"CallableModel({fn_name(self.fn)}, provider={self.provider!r}, model={self.model!r})"
        )

    def cache_key_fields(self) -> Mapping[str, Any]:
        """Provider, model and the function's qualified name."""
        return {"provider": self.provider, "model": self.model, "fn": fn_name(self.fn)}

    def _response(self, request: ModelRequest, reply: Any) -> ModelResponse:
        if isinstance(reply, ModelResponse):
            return reply
        if isinstance(reply, str):
            reply = Message("assistant", reply)
        if not isinstance(reply, Message) or reply.role != "assistant":
            raise ModelOutputInvalid(
                "the function must return a ModelResponse, an assistant Message or a str, "
                f"got {type(reply).__name__}",
                provider=self.provider,
                model=self.model,
            )
        usage = Usage(
            input_tokens=estimate_tokens(list(request.messages)),
            output_tokens=estimate_tokens([reply]),
        )
        finish: FinishReason = "tool_calls" if reply.tool_calls else "stop"
        return ModelResponse(
            message=reply, usage=usage, model=self.model, provider=self.provider,
            finish_reason=finish,
        )  # fmt: skip

    async def _finish(
        self, request: ModelRequest, response: ModelResponse, t0: float
    ) -> ModelResponse:
        seconds = time.perf_counter() - t0
        ctx = request.ctx
        cost = record_call(
            ctx, provider=self.provider, model=self.model, stage=request.stage,
            usage=response.usage, seconds=seconds, cost_usd=response.cost_usd,
        )  # fmt: skip
        if (cost, response.provider, response.model) != (
            response.cost_usd,
            self.provider,
            response.model or self.model,
        ):
            response = replace(
                response, cost_usd=cost, provider=self.provider,
                model=response.model or self.model,
            )  # fmt: skip
        await emit_event(
            ctx, "model.response", provider=self.provider, model=self.model, stage=request.stage,
            usage=response.usage, cost_usd=response.cost_usd, seconds=seconds,
            finish_reason=response.finish_reason,
        )  # fmt: skip
        return response

    async def _failed(self, request: ModelRequest, exc: BaseException, t0: float) -> None:
        await emit_event(
            request.ctx, "model.error", provider=self.provider, model=self.model,
            stage=request.stage, error=type(exc).__name__, seconds=time.perf_counter() - t0,
        )  # fmt: skip

    def _check(self, request: Any) -> ModelRequest:
        if not isinstance(request, ModelRequest):
            raise ToolUsageError(
                f"{type(self).__name__}: request must be a ModelRequest, got "
                f"{type(request).__name__}"
            )
        return request

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """The function's reply to ``request``.

        Raises:
            ToolUsageError: request is not a ModelRequest.
            ModelTimeout: the call took longer than timeout_s.
            ModelOutputInvalid: the function returned something else than a reply.
            ModelError: the function raised a non-adapter error (it is the ``__cause__``);
                the library's own errors (``ModelContextOverflow``...) pass as they are.
        """
        request = self._check(request)
        t0 = time.perf_counter()
        await emit_event(
            request.ctx, "model.request", provider=self.provider, model=self.model,
            stage=request.stage, messages=len(request.messages),
        )  # fmt: skip
        try:
            reply = await call_fn(
                self.fn, request, timeout_s=self.timeout_s, provider=self.provider,
                model=self.model,
            )  # fmt: skip
            response = self._response(request, reply)
        except Exception as exc:
            await self._failed(request, exc, t0)
            raise
        return await self._finish(request, response, t0)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The reply as events, ending with one :class:`~agent_adapter.StreamEnd`.

        Raises:
            ModelError: as generate.
        """
        request = self._check(request)
        t0 = time.perf_counter()
        await emit_event(
            request.ctx, "model.request", provider=self.provider, model=self.model,
            stage=request.stage, messages=len(request.messages),
        )  # fmt: skip
        try:
            if self.stream_fn is None:
                reply = await call_fn(
                    self.fn, request, timeout_s=self.timeout_s, provider=self.provider,
                    model=self.model,
                )  # fmt: skip
                response = self._response(request, reply)
                for event in _events_of(response):
                    yield event
            else:
                assembler = _Assembler()
                async for event in self._stream_events(request):
                    assembler.add(event)
                    if not isinstance(event, StreamEnd):
                        yield event
                response = assembler.response(self, request)
        except Exception as exc:
            await self._failed(request, exc, t0)
            raise
        response = await self._finish(request, response, t0)
        yield StreamEnd(response=response)

    async def _stream_events(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        assert self.stream_fn is not None
        try:
            source = self.stream_fn(request)
        except AgentAdapterError:
            raise
        except Exception as exc:
            raise ModelError(
                f"stream_fn raised {type(exc).__name__}: {exc}",
                provider=self.provider, model=self.model,
            ) from exc  # fmt: skip
        iterator = _aiter(source)
        while True:
            try:
                nxt = iterator.__anext__()
                item = await (asyncio.wait_for(nxt, self.timeout_s) if self.timeout_s else nxt)
            except StopAsyncIteration:
                return
            except TimeoutError as exc:
                raise ModelTimeout(
                    f"no stream event within timeout_s={self.timeout_s:g}",
                    provider=self.provider, model=self.model,
                ) from exc  # fmt: skip
            except AgentAdapterError:
                raise
            except Exception as exc:
                raise ModelError(
                    f"stream_fn raised {type(exc).__name__}: {exc}",
                    provider=self.provider, model=self.model,
                ) from exc  # fmt: skip
            if isinstance(item, str):
                yield TextDelta(text=item)
            elif isinstance(
                item, TextDelta | ThinkingDelta | ToolCallDelta | UsageEvent | StreamEnd
            ):
                yield item
            else:
                raise ModelOutputInvalid(
                    f"stream_fn yielded {type(item).__name__}, not a str or stream event",
                    provider=self.provider, model=self.model,
                )  # fmt: skip


async def _aiter(source: Any) -> AsyncIterator[Any]:
    if hasattr(source, "__aiter__"):
        async for item in source:
            yield item
    elif isinstance(source, Iterable) and not isinstance(source, str | bytes):
        for item in source:
            yield item
    else:
        raise ModelOutputInvalid(f"stream_fn returned {type(source).__name__}, not an iterable")


def _events_of(response: ModelResponse) -> Iterable[StreamEvent]:
    """A complete reply as the events a provider would have streamed (the end excluded)."""
    message = response.message
    for part in message.parts:
        if isinstance(part, ThinkingPart):
            yield ThinkingDelta(text=part.text, signature=part.signature)
    if message.text:
        yield TextDelta(text=message.text)
    for i, call in enumerate(message.tool_calls):
        yield ToolCallDelta(index=i, id=call.id, name=call.name, arguments=call.arguments)
    yield UsageEvent(usage=response.usage)


class _Assembler:
    """Stream events folded into the reply they make up."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.signature: str | None = None
        self.calls: dict[int, list[Any]] = {}
        self.usage: Usage | None = None
        self.end: ModelResponse | None = None

    def add(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self.text.append(event.text)
        elif isinstance(event, ThinkingDelta):
            self.thinking.append(event.text)
            self.signature = event.signature or self.signature
        elif isinstance(event, ToolCallDelta):
            slot = self.calls.setdefault(event.index, [None, None, []])
            slot[0] = event.id or slot[0]
            slot[1] = event.name or slot[1]
            slot[2].append(event.arguments)
        elif isinstance(event, UsageEvent):
            self.usage = event.usage
        else:
            self.end = event.response

    def response(self, port: CallableModel, request: ModelRequest) -> ModelResponse:
        if self.end is not None:
            return self.end
        calls = []
        for index in sorted(self.calls):
            call_id, name, args = self.calls[index]
            if not name:
                raise ModelOutputInvalid(
                    f"tool call {index} streamed without a name",
                    provider=port.provider, model=port.model,
                )  # fmt: skip
            calls.append(ToolCall(call_id or f"call_{index}", name, "".join(args) or "{}"))
        parts: list[Any] = []
        if self.thinking:
            parts.append(ThinkingPart("".join(self.thinking), signature=self.signature))
        text = "".join(self.text)
        content: Any = text
        if parts:
            content = (*parts, TextPart(text)) if text else tuple(parts)
        message = Message("assistant", content, tool_calls=tuple(calls))
        response = port._response(request, message)
        if self.usage is not None:
            response = replace(response, usage=self.usage)
        return response
