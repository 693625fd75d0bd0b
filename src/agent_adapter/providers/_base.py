"""What every provider shares: the LLMPort calls, events, ledger entries and error translation.

A provider subclass supplies three things: the SDK client (:meth:`ProviderModel._make_client`),
the wire adapter (:meth:`~ProviderModel._send` and :meth:`~ProviderModel._parse` for one reply,
:meth:`~ProviderModel._deltas` for a stream) and the vendor-error mapping
(:meth:`~ProviderModel._vendor_error`). This base does the rest the same way for all of them:
``model.request`` / ``model.response`` / ``model.error`` events, one ledger entry per
completed call (priced with the run's price table), and the error contract: vendor exceptions
never leak; each becomes a :class:`~agent_adapter.ModelError` raised ``from`` it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from agent_adapter._errors import (
    ConfigError,
    MissingDependency,
    ModelError,
    ModelOutputInvalid,
    ModelTimeout,
    ToolUsageError,
)
from agent_adapter._messages import Message
from agent_adapter._model import (
    FinishReason,
    ModelRequest,
    ModelResponse,
    StreamEnd,
    StreamEvent,
    Usage,
    UsageEvent,
)
from agent_adapter._run import emit_event, record_call
from agent_adapter.providers._retry import Retry, backoff, header_wait, max_wait, retryable

__all__ = [
    "Parsed",
    "ProviderModel",
    "StreamState",
    "call_failed",
    "call_finished",
    "call_parameters",
    "call_started",
    "checked_options",
    "closed_at_loop_end",
    "import_sdk",
    "sdk_options",
    "split_system",
    "stainless_retry",
    "tool_arguments",
]

#: Exceptions that mean the reply could not be read (bad JSON, missing fields, a message that
#: fails validation): ``ModelOutputInvalid``.
_UNUSABLE = (ValueError, KeyError, IndexError, AttributeError, TypeError)


def closed_at_loop_end(
    close: Callable[[Any], Awaitable[None]], client: Any
) -> AsyncGenerator[None, None]:
    """An async generator, started here and left at its ``yield``, whose ``finally`` closes
    ``client``. Started inside the running loop, the loop's async-generator hooks register
    it, and ``asyncio.run`` (``loop.shutdown_asyncgens()``) closes it before the loop ends:
    so a loop's SDK client closes its connections in its own loop, not later from another
    one, where its finalizer would fail ("Event loop is closed")."""

    async def closer() -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            await close(client)

    gen = closer()
    with contextlib.suppress(StopIteration):  # runs to the yield: nothing awaits before it
        gen.asend(None).send(None)
    return gen


@dataclass
class Parsed:
    """One parsed reply, before the base prices and records it."""

    message: Message
    usage: Usage
    finish_reason: FinishReason
    model: str = ""
    raw: Any = None


@dataclass
class StreamState:
    """What a stream adapter fills in as events arrive; :attr:`reply` is set at the end."""

    reply: Parsed | None = None
    usage: Usage | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class ProviderModel(ABC):
    """Base of the real providers (an :class:`~agent_adapter.LLMPort`).

    Args:
        model: the model name the provider knows.
        client: a ready SDK async client (then ``api_key``, ``base_url``, ``timeout_s`` and
            ``max_retries`` only name what it was built with, for cache keys and errors).
        api_key: the API key (default: the SDK's environment variable).
        base_url: another server speaking the protocol (a proxy, a local server).
        timeout_s: seconds the SDK waits for each read before :class:`ModelTimeout`; also
            the longest wait between two attempts, whatever a server's ``Retry-After`` asks
            (a longer ask fails the call at once: see :mod:`agent_adapter.providers._retry`).
        max_retries: retries of 408 / 409 / 429 / 5xx, timeouts and connection errors, the
            same way for every provider (the SDK's own retries are turned off).
        context_window: the window in tokens, when the model profiles do not know it (a
            self-hosted model); ``CompressingModel`` reads it.
        provider: the provider's name in the ledger, events and price lookups.

    Raises:
        ConfigError: a setting is invalid.
        MissingDependency: the provider's SDK is not installed (names the extra).
    """

    #: The default ``provider`` name of the class.
    default_provider = ""

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 600.0,
        max_retries: int = 2,
        context_window: int | None = None,
        provider: str | None = None,
    ) -> None:
        provider = _checked_settings(
            type(self).__name__,
            model,
            timeout_s=timeout_s,
            max_retries=max_retries,
            context_window=context_window,
            provider=self.default_provider if provider is None else provider,
            api_key=api_key,
            base_url=base_url,
        )
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.context_window = context_window
        self._given_client = client
        self._api_key = api_key
        # made now, so a missing key or SDK fails at construction; the first loop takes it
        self._first_client = client if client is not None else self._make_client(api_key)
        self._first_taken = False
        self._loop_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[Any, AsyncGenerator[None, None]]
        ] = weakref.WeakKeyDictionary()
        self._clients_lock = threading.Lock()

    @property
    def _client(self) -> Any:
        """The SDK client of the running event loop.

        The SDKs' async clients keep pooled connections tied to the loop that opened them:
        reused from a second ``asyncio.run`` (as ``compress_for_sync`` does on every call)
        or another thread's loop, a call fails with "Event loop is closed" or a connection
        error. So each loop gets a client of its own, closed inside that loop when it shuts
        down (see :func:`closed_at_loop_end`); a client given as ``client`` is always used
        as is (keeping it to one loop is then the caller's)."""
        if self._given_client is not None:
            return self._given_client
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # outside a loop: introspection only (call_parameters)
            return self._first_client
        with self._clients_lock:
            entry = self._loop_clients.get(loop)
            if entry is None:
                if self._first_taken:
                    client = self._make_client(self._api_key)
                else:
                    client, self._first_taken = self._first_client, True
                entry = (client, closed_at_loop_end(self._close, client))
                self._loop_clients[loop] = entry
            return entry[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, provider={self.provider!r})"

    async def aclose(self) -> None:
        """Close the SDK client's connections in this event loop (a client given as
        ``client`` is the caller's to close and is left open); clients of loops that have
        ended were dropped with them. The model stays usable: a later call opens a new
        client."""
        if self._given_client is not None:
            return
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            entry = self._loop_clients.pop(loop, None)
            unused = None if self._first_taken else self._first_client
            self._first_taken = True
        if entry is not None:
            await entry[1].aclose()  # its finally closes the client
        if unused is not None:
            await self._close(unused)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _close(self, client: Any) -> None:
        """Close ``client`` (the OpenAI and Anthropic SDKs: ``await client.close()``)."""
        await client.close()

    # -- what subclasses supply --------------------------------------------------------

    @abstractmethod
    def _make_client(self, api_key: str | None) -> Any:
        """The SDK's async client (imports the SDK; MissingDependency when absent)."""

    @abstractmethod
    def _request(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK call's keyword arguments (ConfigError for what the API cannot take)."""

    @abstractmethod
    async def _send(self, kwargs: dict[str, Any]) -> Any:
        """One non-streaming SDK call."""

    @abstractmethod
    def _parse(self, raw: Any) -> Parsed:
        """The reply read off the SDK's response object."""

    @abstractmethod
    def _deltas(self, kwargs: dict[str, Any], state: StreamState) -> AsyncIterator[StreamEvent]:
        """The stream's text / thinking / tool-call deltas; sets ``state.reply`` at the end."""

    @abstractmethod
    def _vendor_error(self, error: BaseException) -> ModelError | None:
        """The library error for an SDK exception, ``None`` for anything else."""

    def _retry(self, error: BaseException) -> Retry | None:
        """What an SDK exception says of another attempt (``None``: not retried)."""
        return None

    def _next_attempt(self, error: BaseException, retries_taken: int) -> tuple[float | None, str]:
        """The seconds to wait before retrying after ``error`` (``None``: no retry), and,
        when the server asked for a longer wait than this model allows, what it asked (for
        the error's message). See :mod:`agent_adapter.providers._retry`."""
        if self._given_client is not None or retries_taken >= self.max_retries:
            return None, ""
        hint = self._retry(error) if isinstance(error, Exception) else None
        if hint is None or not hint.retryable:
            return None, ""
        limit = max_wait(self.timeout_s)
        asked = hint.server_wait_s
        if asked is None:
            return min(backoff(retries_taken), limit), ""
        if asked > limit:
            return None, (
                f"the server asked to retry after {asked:g}s, longer than the {limit:g}s "
                "this model waits between attempts (timeout_s): not retried"
            )
        return asked, ""

    # -- LLMPort -----------------------------------------------------------------------

    def cache_key_fields(self) -> Mapping[str, Any]:
        """Provider, model and base URL: what changes the reply besides the request."""
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url}

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """The model's reply to ``request``.

        Raises:
            ConfigError: the request asks for something this API cannot do.
            ModelContextOverflow: the provider says the request exceeds the window (with its
                ``tokens`` and ``limit`` when the error states them).
            ModelTimeout: a read took longer than ``timeout_s``.
            ModelOutputInvalid: the reply could not be read.
            ModelError: any other failure of the call (the SDK error is the ``__cause__``).
        """
        request = _checked(request)
        kwargs = self._request(request)
        start = await call_started(self, request)
        taken = 0
        while True:
            try:
                raw = await self._send(kwargs)
                reply = self._parse(raw)
                break
            except BaseException as e:
                wait, note = self._next_attempt(e, taken)
                if wait is not None:
                    taken += 1
                    await asyncio.sleep(wait)
                    continue
                error = await self._failed(e, note, request, start)
                if error is None or error is e:
                    raise
                raise error from e
        return await call_finished(self, request, reply, start)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The reply as events: text, thinking and tool-call deltas, one
        :class:`~agent_adapter.UsageEvent`, then one :class:`~agent_adapter.StreamEnd`
        holding what :meth:`generate` would have returned.

        Raises:
            ModelOutputInvalid: also when the stream ends before the protocol's terminal
                event (each adapter's ``_deltas`` names it): the text so far is a fragment,
                neither returned nor billed.
            As :meth:`generate`, before or during the stream.
        """
        request = _checked(request)
        kwargs = self._request(request)
        start = await call_started(self, request)
        taken = 0
        while True:
            state = StreamState()
            sent = False  # an event reached the caller: a failure is no longer retried
            try:
                async for event in self._deltas(kwargs, state):
                    sent = True
                    yield event
                if state.reply is None:
                    raise ModelOutputInvalid(
                        "the stream ended before the reply was complete",
                        provider=self.provider,
                        model=self.model,
                    )
                break
            except BaseException as e:
                wait, note = (None, "") if sent else self._next_attempt(e, taken)
                if wait is not None:
                    taken += 1
                    await asyncio.sleep(wait)
                    continue
                error = await self._failed(e, note, request, start)
                if error is None or error is e:
                    raise
                raise error from e
        response = await call_finished(self, request, state.reply, start)
        yield UsageEvent(usage=response.usage)
        yield StreamEnd(response=response)

    # -- shared steps ------------------------------------------------------------------

    async def _failed(
        self, e: BaseException, note: str, request: ModelRequest, start: float
    ) -> ModelError | None:
        """A call that will not be retried: ``e`` as the library's error (``None``: it passes
        unchanged, see :meth:`_translate`), recorded as the call's failure."""
        error = self._translate(e, note)
        if error is not None:
            await call_failed(self, request, error, start)
        return error

    def _translate(self, e: BaseException, note: str = "") -> ModelError | None:
        """The library error for ``e``; ``None`` for what must pass unchanged (a
        cancellation, a generator being closed, KeyboardInterrupt). ``note`` is added to a
        plain ``ModelError``'s message (why it was not retried)."""
        if isinstance(e, ModelError):
            return e
        if not isinstance(e, Exception) or isinstance(e, ConfigError):
            return None
        where = {"provider": self.provider, "model": self.model}
        vendor = self._vendor_error(e)
        if vendor is not None and note and type(vendor) is ModelError:
            suffix = f" ({self.provider}:{self.model})"
            return ModelError(f"{str(vendor).removesuffix(suffix)}; {note}", **where)
        if vendor is not None:
            return vendor
        if isinstance(e, TimeoutError | asyncio.TimeoutError):
            return ModelTimeout(f"no reply within {self.timeout_s:g}s", **where)
        if isinstance(e, json.JSONDecodeError):
            return ModelOutputInvalid(f"the reply is not valid JSON: {e}", **where)
        if isinstance(e, _UNUSABLE):
            return ModelOutputInvalid(f"unusable reply: {type(e).__name__}: {e}", **where)
        return ModelError(f"{type(e).__name__}: {e}", **where)


async def call_started(port: Any, request: ModelRequest) -> float:
    """The ``model.request`` event of a call by ``port`` (its ``provider`` and ``model``);
    the call's start time."""
    await emit_event(
        request.ctx,
        "model.request",
        provider=port.provider,
        model=port.model,
        stage=request.stage,
        messages=len(request.messages),
    )
    return time.perf_counter()


async def call_failed(port: Any, request: ModelRequest, error: BaseException, start: float) -> None:
    """The ``model.error`` event of a failed call by ``port``."""
    await emit_event(
        request.ctx,
        "model.error",
        provider=port.provider,
        model=port.model,
        stage=request.stage,
        error=type(error).__name__,
        seconds=time.perf_counter() - start,
    )


async def call_finished(
    port: Any, request: ModelRequest, reply: Parsed, start: float
) -> ModelResponse:
    """A call's :class:`~agent_adapter.ModelResponse`: priced and recorded in the ledger,
    with its ``model.response`` event."""
    seconds = time.perf_counter() - start
    model = reply.model or port.model
    cost = record_call(
        request.ctx,
        provider=port.provider,
        model=model,
        stage=request.stage,
        usage=reply.usage,
        seconds=seconds,
    )
    response = ModelResponse(
        message=reply.message,
        usage=reply.usage,
        cost_usd=cost,
        model=model,
        provider=port.provider,
        finish_reason=reply.finish_reason,
        raw=reply.raw,
    )
    await emit_event(
        request.ctx,
        "model.response",
        provider=port.provider,
        model=model,
        stage=request.stage,
        usage=reply.usage,
        cost_usd=cost,
        seconds=seconds,
        finish_reason=reply.finish_reason,
    )
    return response


def _checked(request: Any) -> ModelRequest:
    if not isinstance(request, ModelRequest):
        raise ToolUsageError(f"request must be a ModelRequest, got {type(request).__name__}")
    if not request.messages:
        raise ConfigError("ModelRequest.messages is empty: a model call needs a message")
    return request


def _checked_settings(
    name: str,
    model: Any,
    *,
    timeout_s: Any,
    max_retries: Any,
    context_window: Any,
    provider: Any,
    api_key: Any,
    base_url: Any,
) -> str:
    """A provider model's settings checked, in order (``name``: the class's, for the
    errors); the provider's name."""
    if not isinstance(model, str) or not model:
        raise ConfigError(f"{name}: model must be a non-empty str")
    if not _is_number(timeout_s) or timeout_s <= 0:
        raise ConfigError(f"{name}: timeout_s must be a number > 0, got {timeout_s!r}")
    if not _is_int(max_retries) or max_retries < 0:
        raise ConfigError(f"{name}: max_retries must be an int >= 0, got {max_retries!r}")
    if context_window is not None and (not _is_int(context_window) or context_window <= 0):
        raise ConfigError(f"{name}: context_window must be an int > 0, got {context_window!r}")
    if not isinstance(provider, str) or not provider or ":" in provider:
        raise ConfigError(f"{name}: provider must be a non-empty str without ':'")
    for arg, value in (("api_key", api_key), ("base_url", base_url)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{name}: {arg} must be a str, got {type(value).__name__}")
    return provider


def _is_int(value: Any) -> bool:
    """An int, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """An int or a float, not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def checked_options(request: ModelRequest, accepted: Any, api: str) -> dict[str, Any]:
    """``request.options`` when the API call takes each of them (a ``ConfigError`` naming
    the first it does not take, so a typo fails before any request is sent)."""
    options = dict(request.options)
    for key in options:
        if key not in accepted:
            raise ConfigError(
                f"ModelRequest.options[{key!r}]: {api} takes no such field (for a field the "
                "SDK does not know, use options={'extra_body': {...}})"
                if "extra_body" in accepted
                else f"ModelRequest.options[{key!r}]: {api} takes no such field"
            )
    return options


def call_parameters(method: Any) -> frozenset[str]:
    """The keyword parameters an SDK method takes."""
    import inspect

    return frozenset(inspect.signature(method).parameters)


def import_sdk(module: str, package: str, extra: str, purpose: str) -> Any:
    """The SDK ``module``; MissingDependency naming ``package`` and its ``extra`` when absent."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingDependency(package, extra, purpose) from e


def sdk_options(model: ProviderModel, api_key: str | None) -> dict[str, Any]:
    """The client settings the ``openai`` and ``anthropic`` SDKs share (``api_key``,
    ``base_url``, ``timeout``), from ``model``'s, and ``max_retries=0``: ``model`` retries
    itself, within its ``timeout_s`` (see :mod:`agent_adapter.providers._retry`)."""
    return {
        "api_key": api_key,
        "base_url": model.base_url,
        "timeout": model.timeout_s,
        "max_retries": 0,
    }


def stainless_retry(sdk: Any, error: BaseException) -> Retry | None:
    """What an ``openai`` or ``anthropic`` SDK exception (``sdk``: the module) says of another
    attempt: timeouts and connection errors are retried; a status error as
    :func:`~agent_adapter.providers._retry.retryable` says, with the wait its headers ask."""
    if isinstance(error, sdk.APIConnectionError):  # APITimeoutError included
        return Retry(retryable=True)
    if isinstance(error, sdk.APIStatusError):
        headers = error.response.headers
        return Retry(retryable(error.status_code, headers), header_wait(headers))
    return None


def split_system(messages: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    """The system messages and the rest, each in order (for APIs with a system field)."""
    system = [m for m in messages if m.role == "system"]
    rest = [m for m in messages if m.role != "system"]
    return system, rest


def tool_arguments(text: str) -> Any:
    """A tool call's arguments as JSON (``{}`` for empty text)."""
    return json.loads(text) if text else {}
