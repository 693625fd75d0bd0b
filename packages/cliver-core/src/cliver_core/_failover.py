"""One model call over the failover chain: each binding in order until one answers.

Retryable (the next binding is tried): HTTP 408, 409, 429 and 5xx once the SDK's own retries
on that endpoint are spent, timeouts, connection errors. Not retryable (raised at once):
authentication and permission errors (401, 403), bad requests (400, 404, 422, a context
overflow), an unreadable reply, and anything that is not a
:class:`~agent_adapter.ModelError` (a bad setting, a missing SDK). The HTTP status is read
off the SDK exception the provider raised the ``ModelError`` from (``status_code`` of the
OpenAI and Anthropic SDKs, ``code`` of google-genai), the vendors' own retry rules: OpenAI's
and Anthropic's SDKs retry 408, 409, 429 and >= 500 and connection errors ("Retries" in their
READMEs); Gemini's troubleshooting guide names 429 RESOURCE_EXHAUSTED, 500 INTERNAL and
503 UNAVAILABLE as the transient ones.

Every attempt is an ``inference.started`` event (a stream's first delta an
``inference.first_token``, each streamed call's id an ``inference.tool_call``, as 0.3.0a5's
providers emit them), every failure an ``inference.error`` and
every move to the next binding an ``inference.failover``. A stream fails over only before its
first event reached the caller (later, the caller has already shown part of a reply).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agent_adapter import (
    ModelContextOverflow,
    ModelError,
    ModelOutputInvalid,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from cliver_core._bindings import ModelBinding
from cliver_core._events import EventHandler, InferenceEvent, InferenceEventType, emit
from cliver_core._messages import UsageInfo
from cliver_core._sdk_errors import sdk_compatible

__all__ = ["Attempts", "is_retryable"]

_RETRY_STATUS = frozenset({408, 409, 429})
_CONNECTION = frozenset(
    {"APIConnectionError", "TransportError", "ConnectError", "ConnectionError", "NetworkError"}
)


def _status(error: BaseException) -> int | None:
    for attr in ("status_code", "code", "status"):
        value = getattr(error, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


def is_retryable(error: BaseException) -> bool:
    """True when another endpoint may well answer the call that failed with ``error``."""
    if isinstance(error, ModelTimeout):
        return True
    if isinstance(error, ModelContextOverflow | ModelOutputInvalid):
        return False
    if not isinstance(error, ModelError):
        return False
    cause: BaseException | None = error.__cause__
    seen = 0
    while cause is not None and seen < 5:
        status = _status(cause)
        if status is not None:
            return status in _RETRY_STATUS or status >= 500
        if any(c.__name__ in _CONNECTION for c in type(cause).__mro__):
            return True
        if isinstance(cause, TimeoutError):
            return True
        cause, seen = cause.__cause__, seen + 1
    return False


class Attempts:
    """The failover chain of one run, with its event handlers.

    Args:
        chain: the llm bindings, in the order to try them.
        handlers: the run's event handlers.
        run_id: the run's id, on every event.
        build: ``build(binding) -> ModelRequest`` for one attempt (options differ by binding).
    """

    def __init__(
        self,
        chain: Sequence[ModelBinding],
        handlers: Sequence[EventHandler | None],
        run_id: str,
        build: Callable[[ModelBinding], ModelRequest],
    ) -> None:
        self.chain = tuple(chain)
        self.handlers = handlers
        self.run_id = run_id
        self.build = build
        #: the binding that answered the last call
        self.answered: ModelBinding = self.chain[0]

    def _event(self, kind: InferenceEventType, binding: ModelBinding, **data: Any) -> Any:
        port = binding._port()
        return emit(
            self.handlers,
            InferenceEvent(
                event=kind,
                model=binding.model,
                provider=getattr(port, "provider", "") or "",
                run_id=self.run_id,
                data=data,
            ),
        )

    async def _failed(
        self, k: int, binding: ModelBinding, error: ModelError, iteration: int
    ) -> None:
        retry = is_retryable(error)
        await self._event(
            InferenceEventType.ERROR,
            binding,
            attempt=k,
            iteration=iteration,
            error=type(error).__name__,
            message=str(error),
            retryable=retry,
        )
        if not retry or k == len(self.chain) - 1:
            raise sdk_compatible(error) from error.__cause__
        nxt = self.chain[k + 1]
        await self._event(
            InferenceEventType.FAILOVER,
            binding,
            iteration=iteration,
            from_model=binding.name,
            to_model=nxt.name,
            error=type(error).__name__,
        )

    async def _started(self, k: int, binding: ModelBinding, request: ModelRequest, i: int) -> float:
        await self._event(
            InferenceEventType.STARTED,
            binding,
            attempt=k,
            iteration=i,
            message_count=len(request.messages),
            tool_count=len(request.tools),
        )
        return time.perf_counter()

    async def _completed(
        self, k: int, binding: ModelBinding, response: ModelResponse, i: int, t0: float
    ) -> None:
        self.answered = binding
        await self._event(
            InferenceEventType.COMPLETED,
            binding,
            attempt=k,
            iteration=i,
            usage=UsageInfo.of(response.usage).model_dump(exclude_none=True),
            total_latency_ms=(time.perf_counter() - t0) * 1000,
        )

    async def generate(self, iteration: int) -> ModelResponse:
        """One reply, from the first binding of the chain that gives one.

        Raises:
            ModelError: the last binding failed, or a binding failed with an error that is
                not retryable.
        """
        for k, binding in enumerate(self.chain):
            request = self.build(binding)
            port = binding._port()
            t0 = await self._started(k, binding, request, iteration)
            try:
                response = await port.generate(request)
            except ModelError as error:
                await self._failed(k, binding, error, iteration)
                continue
            await self._completed(k, binding, response, iteration, t0)
            return response
        raise AssertionError("unreachable: the chain is never empty")  # pragma: no cover

    async def stream(self, iteration: int) -> AsyncIterator[StreamEvent]:
        """The reply's events, from the first binding that streams one; ends with
        :class:`~agent_adapter.StreamEnd`.

        Raises:
            ModelError: as :meth:`generate`, or any failure after the first event.
        """
        for k, binding in enumerate(self.chain):
            request = self.build(binding)
            port = binding._port()
            t0 = await self._started(k, binding, request, iteration)
            started = False
            first = True
            try:
                async for event in port.stream(request):
                    if isinstance(event, StreamEnd):
                        await self._completed(k, binding, event.response, iteration, t0)
                    elif first and isinstance(event, TextDelta | ThinkingDelta | ToolCallDelta):
                        first = False
                        await self._event(
                            InferenceEventType.FIRST_TOKEN,
                            binding,
                            attempt=k,
                            iteration=iteration,
                            latency_ms=(time.perf_counter() - t0) * 1000,
                        )
                    if isinstance(event, ToolCallDelta) and event.id:
                        await self._event(
                            InferenceEventType.TOOL_CALL,
                            binding,
                            tool_name=event.name or "?",
                            tool_call_id=event.id,
                        )
                    started = True
                    yield event
                return
            except ModelError as error:
                if started:
                    raise sdk_compatible(error) from error.__cause__
                await self._failed(k, binding, error, iteration)
                continue
