"""A 0.3.0a5 :class:`~cliver_core.provider.Provider` as agent_adapter's ports.

0.3.0a5 programs bring providers of their own: a ``Provider`` subclass with ``async
chat(request: CLIverRequest) -> CLIverResponse`` and ``async stream(request)`` yielding
:class:`~cliver_core.CLIverMessageChunk` s. :class:`ProviderPort` makes such an object an
:class:`agent_adapter.LLMPort`, so the agent loop (and failover, compaction, the ledger) runs
on it:

* the :class:`~agent_adapter.ModelRequest` becomes a :class:`~cliver_core.provider.CLIverRequest`
  as 0.3.0a5's loop built it: the messages as ``CLIverMessage`` s (the system message first;
  a message this provider answered earlier is given back as the very object it returned, so
  its ``native`` round-trips), the tools as ``CLIverTool`` s, the request fields back in the
  options (``temperature``, ``top_p``, ``seed``, ``stop``, ``tool_choice``, ``max_tokens``,
  ``response_format`` in OpenAI's shape) over the other options;
* the :class:`~cliver_core.CLIverResponse` becomes a :class:`~agent_adapter.ModelResponse`:
  its message (tool calls without an id get one), its usage, ``raw`` the response itself;
* a stream's ``content`` / reasoning (``vendor_ext`` ``reasoning_content``, ``thinking``,
  ``reasoning``) / ``tool_call_chunks`` become text, thinking and tool-call deltas, and its
  terminal chunk's ``native`` message (read as ``provider.protocol``) the reply; a stream
  without one is assembled from its deltas (0.3.0a5 raised instead). Its other ``vendor_ext``
  keys (``citations``...), which no stream event carries, go to :data:`VENDOR_EXT` when a
  run listens there (``AgentCore.stream`` forwards them unchanged, as 0.3.0a5 does).

Every call writes a ledger entry and ``model.*`` events to ``request.ctx``, as the SDK
providers do. An exception of the provider becomes a :class:`~agent_adapter.ModelError`
raised from it (``TimeoutError``: :class:`~agent_adapter.ModelTimeout`), so failover reads
its HTTP status; a ``CapabilityNotSupported`` or ``ConfigError`` passes unchanged.

:class:`ProviderEmbedder` and :class:`ProviderReranker` do the same for ``Provider.embed`` and
``Provider.rerank`` (an :class:`~agent_adapter.context.EmbeddingPort` and a
:class:`~agent_adapter.context.RerankerPort`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from agent_adapter import (
    ConfigError,
    FinishReason,
    FunctionTool,
    Message,
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
    Usage,
    UsageEvent,
)
from agent_adapter import ToolCall as AAToolCall
from agent_adapter._model import JsonSchema
from agent_adapter._run import record_call
from agent_adapter.context import RerankResult
from agent_adapter.providers._base import Parsed, call_failed, call_finished, call_started
from cliver_core._errors import CapabilityNotSupported
from cliver_core._format import from_message, to_messages
from cliver_core._messages import CLIverMessage, CLIverMessageChunk, CLIverResponse, UsageInfo
from cliver_core._tools import CLIverTool, tool_list
from cliver_core.provider import CLIverRequest, Provider

__all__ = ["ProviderEmbedder", "ProviderPort", "ProviderReranker", "is_legacy_provider"]

_THINKING = ("reasoning_content", "thinking", "reasoning")

#: Where a stream puts its chunks' other ``vendor_ext`` entries (each chunk's as one dict,
#: in order) when the consumer set a list here: ``AgentCore.stream`` yields them as chunks.
VENDOR_EXT: ContextVar[list[dict[str, str]] | None] = ContextVar("VENDOR_EXT", default=None)


def is_legacy_provider(obj: Any) -> bool:
    """True for a 0.3.0a5-style provider: a :class:`~cliver_core.provider.Provider`, or an
    object with ``chat`` and ``stream`` methods that is not an :class:`agent_adapter.LLMPort`."""
    from agent_adapter import LLMPort

    if isinstance(obj, Provider):
        return True
    if isinstance(obj, LLMPort):
        return False
    return callable(getattr(obj, "chat", None)) and callable(getattr(obj, "stream", None))


def provider_label(target: Any) -> str:
    """The provider's name in ledger entries and errors: its ``provider_name()``, else its
    class name (``":"`` replaced)."""
    name_of = getattr(target, "provider_name", None)
    name = name_of() if callable(name_of) else None
    if not isinstance(name, str) or not name:
        name = type(target).__name__
    return name.replace(":", "_")


def _translate(error: BaseException, provider: str, model: str) -> BaseException | None:
    """The error to raise for ``error`` (``None``: re-raise it unchanged)."""
    if isinstance(error, ModelError):
        return error
    if not isinstance(error, Exception) or isinstance(error, ConfigError | CapabilityNotSupported):
        return None
    where = {"provider": provider, "model": model}
    if isinstance(error, TimeoutError | asyncio.TimeoutError):
        return ModelTimeout(f"no reply in time: {error}", **where)
    return ModelError(f"{type(error).__name__}: {error}", **where)


def original_tools(tools: Sequence[FunctionTool]) -> list[CLIverTool]:
    """The ``CLIverTool`` s the loop's tools were made from (the objects 0.3.0a5 handed its
    provider: ``CLIverTool.function_tool()`` keeps its tool in its closure); a tool that
    came from elsewhere is wrapped anew."""
    out: list[CLIverTool] = []
    for ft in tools:
        cells = getattr(getattr(ft, "fn", None), "__closure__", None) or ()
        found = [
            c.cell_contents
            for c in cells
            if isinstance(c.cell_contents, CLIverTool) and c.cell_contents.name == ft.name
        ]
        out.extend(found[:1] or tool_list([ft], "tools"))
    return out


def _usage(info: Any) -> Usage:
    if not isinstance(info, UsageInfo):
        return Usage()
    try:
        return info.to_usage()
    except ConfigError:  # cached counts beyond input: the provider counted them apart
        read = info.cache_read_input_tokens or 0
        write = info.cache_creation_input_tokens or 0
        return Usage(
            input_tokens=info.input_tokens + read + write,
            output_tokens=info.output_tokens,
            cache_read_tokens=read,
            cache_write_tokens=write,
        )


def _with_ids(message: CLIverMessage) -> CLIverMessage:
    calls = message.tool_calls or []
    if all(c.id for c in calls):
        return message
    fixed = [
        c if c.id else c.model_copy(update={"id": f"call_{uuid.uuid4().hex[:24]}"}) for c in calls
    ]
    return message.model_copy(update={"tool_calls": fixed})


class ProviderPort:
    """A 0.3.0a5 provider as an :class:`agent_adapter.LLMPort` for one model (see the module
    docstring).

    Args:
        target: the provider (``chat`` and ``stream`` as 0.3.0a5's ``Provider``).
        model: the model every request names.

    Attributes:
        target: the provider.
        provider: its name (``provider_name()``).
        model: the model.
        protocol: the protocol of its ``native`` messages (``"openai"`` or ``"anthropic"``).
    """

    def __init__(self, target: Any, model: str) -> None:
        if not is_legacy_provider(target):
            raise ConfigError(
                f"ProviderPort: {type(target).__name__} has no chat() and stream() methods"
            )
        self.target = target
        self.model = model
        self.provider = provider_label(target)
        protocol = getattr(target, "protocol", "")
        self.protocol = protocol if protocol in ("openai", "anthropic") else "openai"
        self._natives: dict[int, tuple[weakref.ref[Message], CLIverMessage]] = {}

    def __repr__(self) -> str:
        return f"ProviderPort({type(self.target).__name__}, model={self.model!r})"

    def cache_key_fields(self) -> Mapping[str, Any]:
        """Provider name, model and the provider's class."""
        cls = type(self.target)
        return {
            "provider": self.provider,
            "model": self.model,
            "class": f"{cls.__module__}.{cls.__qualname__}",
        }

    # -- conversions -----------------------------------------------------------------------

    def _remember(self, message: Message, original: CLIverMessage) -> None:
        if original.native is None:
            return
        key, natives = id(message), self._natives

        def forget(_ref: Any) -> None:
            natives.pop(key, None)

        natives[key] = (weakref.ref(message, forget), original)

    def _recall(self, message: Message) -> CLIverMessage:
        entry = self._natives.get(id(message))
        if entry is not None and entry[0]() is message:
            return entry[1]
        return from_message(message)

    def cliver_request(self, request: ModelRequest) -> Any:
        """``request`` as the :class:`~cliver_core.provider.CLIverRequest` 0.3.0a5 sent."""
        options: dict[str, Any] = dict(request.options)
        for name in ("temperature", "top_p", "seed", "tool_choice"):
            value = getattr(request, name)
            if value is not None:
                options[name] = value
        if request.stop:
            options["stop"] = list(request.stop)
        if request.max_output_tokens is not None:
            options["max_tokens"] = request.max_output_tokens
        fmt = request.response_format
        if fmt == "json":
            options["response_format"] = {"type": "json_object"}
        elif isinstance(fmt, JsonSchema):
            schema = {"name": fmt.name, "schema": dict(fmt.schema), "strict": fmt.strict}
            options["response_format"] = {"type": "json_schema", "json_schema": schema}
        tools = original_tools(request.tools)
        return CLIverRequest(
            messages=[self._recall(m) for m in request.messages],
            tools=tools or None,
            model=self.model,
            options=options,
        )

    def _message(self, response: Any) -> tuple[Message, Usage]:
        if not isinstance(response, CLIverResponse):
            raise ModelOutputInvalid(
                f"{self.provider}.chat() returned {type(response).__name__}, not a CLIverResponse",
                provider=self.provider,
                model=self.model,
            )
        return self._converted(response.message), _usage(response.usage)

    def _converted(self, message: Any) -> Message:
        if not isinstance(message, CLIverMessage) or message.role != "assistant":
            raise ModelOutputInvalid(
                f"{self.provider} replied with a {getattr(message, 'role', type(message))} "
                "message, not an assistant CLIverMessage",
                provider=self.provider,
                model=self.model,
            )
        message = _with_ids(message)
        try:
            converted = to_messages([message])[0]
        except ConfigError as e:
            raise ModelOutputInvalid(
                f"unusable reply: {e}", provider=self.provider, model=self.model
            ) from e
        self._remember(converted, message)
        return converted

    def _streamed(
        self, native: dict[str, Any] | None, text: list[str], calls: dict[int, Any]
    ) -> Message:
        if native is not None:
            lookup = getattr(self.target, "_message_for_native", None)
            own = lookup(native) if callable(lookup) else None
            if isinstance(own, Message):  # one of this library's providers: its own message
                return own
            try:
                message = CLIverMessage.from_native(native, self.protocol)
            except (ConfigError, ValueError, TypeError) as e:
                raise ModelOutputInvalid(
                    f"the stream's native message is not {self.protocol}: {e}",
                    provider=self.provider,
                    model=self.model,
                ) from e
            return self._converted(message)
        tool_calls = tuple(
            AAToolCall(c["id"] or f"call_{uuid.uuid4().hex[:24]}", c["name"], c["args"])
            for _, c in sorted(calls.items())
        )
        return Message("assistant", "".join(text), tool_calls=tool_calls)

    # -- LLMPort ---------------------------------------------------------------------------

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """The provider's ``chat`` reply to ``request``.

        Raises:
            ModelError: the provider raised (its exception is the ``__cause__``), or
                ``ModelOutputInvalid`` for a reply that is not an assistant
                ``CLIverResponse``.
        """
        cliver = self.cliver_request(request)
        start = await call_started(self, request)
        try:
            response = await self.target.chat(cliver)
            message, usage = self._message(response)
        except BaseException as e:
            error = _translate(e, self.provider, self.model)
            if error is None:
                raise
            await call_failed(self, request, error, start)
            if error is e:
                raise
            raise error from e
        return await call_finished(self, request, _reply(message, usage, response), start)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The provider's ``stream`` as deltas, then one usage event and the
        :class:`~agent_adapter.StreamEnd`.

        Raises:
            As :meth:`generate`, before or during the stream.
        """
        cliver = self.cliver_request(request)
        start = await call_started(self, request)
        got = _Streamed()
        chunks: Any = None
        try:
            chunks = self.target.stream(cliver)
            if inspect.isawaitable(chunks):
                chunks = await chunks
            async for chunk in chunks:
                for event in self._chunk_events(chunk, got):
                    yield event
            message = self._streamed(got.native, got.text, got.calls)
            usage = _usage(got.info)
        except BaseException as e:
            error = _translate(e, self.provider, self.model)
            if error is None:
                raise
            await call_failed(self, request, error, start)
            if error is e:
                raise
            raise error from e
        finally:
            close = getattr(chunks, "aclose", None)
            if close is not None:
                await close()
        response = await call_finished(self, request, _reply(message, usage, got.native), start)
        yield UsageEvent(usage=response.usage)
        yield StreamEnd(response=response)

    def _chunk_events(self, chunk: Any, got: _Streamed) -> Iterator[StreamEvent]:
        """One stream chunk's deltas, as the consumer takes them; ``got`` gathers the chunk."""
        if not isinstance(chunk, CLIverMessageChunk):
            raise ModelOutputInvalid(
                f"{self.provider}.stream() yielded {type(chunk).__name__}, not a "
                "CLIverMessageChunk",
                provider=self.provider,
                model=self.model,
            )
        if chunk.usage is not None:
            got.info = chunk.usage
        if chunk.native is not None:
            got.native = chunk.native
            return
        if chunk.content:
            got.text.append(chunk.content)
            yield TextDelta(text=chunk.content)
        other = {k: v for k, v in chunk.vendor_ext.items() if k not in _THINKING}
        sink = VENDOR_EXT.get()
        if other and sink is not None:
            sink.append(other)
        for key in _THINKING:
            thought = chunk.vendor_ext.get(key)
            if thought:
                yield ThinkingDelta(text=thought)
        for piece in chunk.tool_call_chunks or ():
            call = got.calls.setdefault(piece.index, {"id": "", "name": "", "args": ""})
            call["id"] = piece.id or call["id"]
            call["name"] = piece.name or call["name"]
            call["args"] += piece.args_delta or ""
            yield ToolCallDelta(
                index=piece.index,
                id=piece.id,
                name=piece.name,
                arguments=piece.args_delta or "",
            )


@dataclasses.dataclass
class _Streamed:
    """What a stream delivered so far: its text, its tool calls by index, the native message
    a provider may send at the end, and the last usage."""

    text: list[str] = dataclasses.field(default_factory=list)
    calls: dict[int, dict[str, str]] = dataclasses.field(default_factory=dict)
    native: dict[str, Any] | None = None
    info: Any = None


class ProviderEmbedder:
    """A 0.3.0a5 provider's ``embed`` as an :class:`~agent_adapter.context.EmbeddingPort`.

    Args:
        target: the provider (``async embed(texts, *, model, **options)`` returning an
            ``EmbeddingsResult``).
        model: the model of every call.
        options: the call options (the binding's defaults: ``dimensions``, ``path``...).
    """

    def __init__(self, target: Any, model: str, options: Mapping[str, Any] | None = None) -> None:
        self.target = target
        self.model = model
        self.provider = provider_label(target)
        self.options = dict(options or {})

    def __repr__(self) -> str:
        return f"ProviderEmbedder({type(self.target).__name__}, model={self.model!r})"

    async def embed(self, texts: Sequence[str], *, ctx: Any = None) -> list[list[float]]:
        """One vector per text, in order (a ledger entry on ``ctx``, stage ``"embed"``).

        Raises:
            ModelError: the provider raised, or returned no vector list of the right length.
        """
        start = time.perf_counter()
        try:
            result = await self.target.embed(list(texts), model=self.model, **self.options)
        except BaseException as e:
            error = _translate(e, self.provider, self.model)
            if error is None or error is e:
                raise
            raise error from e
        vectors = getattr(result, "vectors", None)
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            raise ModelOutputInvalid(
                f"{self.provider}.embed() returned no vector for each of the {len(texts)} texts",
                provider=self.provider,
                model=self.model,
            )
        record_call(
            ctx,
            provider=self.provider,
            model=self.model,
            stage="embed",
            usage=_usage(getattr(result, "usage", None)),
            seconds=time.perf_counter() - start,
        )
        return [[float(x) for x in v] for v in vectors]


class ProviderReranker:
    """A 0.3.0a5 provider's ``rerank`` as a :class:`~agent_adapter.context.RerankerPort`
    (every text scored: a ``top_k`` default is not sent).

    Args:
        target: the provider (``async rerank(query, documents, *, model, top_k, **options)``
            returning ``RerankItem`` s).
        model: the model of every call.
        options: the call options (the binding's defaults).
    """

    def __init__(self, target: Any, model: str, options: Mapping[str, Any] | None = None) -> None:
        self.target = target
        self.model = model
        self.provider = provider_label(target)
        self.options = {k: v for k, v in (options or {}).items() if k != "top_k"}

    def __repr__(self) -> str:
        return f"ProviderReranker({type(self.target).__name__}, model={self.model!r})"

    async def rerank(self, query: str, texts: Sequence[str], *, ctx: Any = None) -> RerankResult:
        """One score per text, in input order (a ledger entry on ``ctx``, stage
        ``"rerank"``).

        Raises:
            ModelError: the provider raised, or left a text without a score.
        """
        documents = list(texts)
        start = time.perf_counter()
        try:
            items = await self.target.rerank(query, documents, model=self.model, **self.options)
        except BaseException as e:
            error = _translate(e, self.provider, self.model)
            if error is None or error is e:
                raise
            raise error from e
        scores: list[float | None] = [None] * len(documents)
        for item in items or ():
            index = getattr(item, "index", None)
            if isinstance(index, int) and 0 <= index < len(scores):
                scores[index] = float(item.relevance_score)
        if any(s is None for s in scores):
            raise ModelOutputInvalid(
                f"{self.provider}.rerank() left texts without a score",
                provider=self.provider,
                model=self.model,
            )
        record_call(
            ctx,
            provider=self.provider,
            model=self.model,
            stage="rerank",
            usage=Usage(),
            seconds=time.perf_counter() - start,
        )
        return RerankResult(scores=[s for s in scores if s is not None])


def _reply(message: Message, usage: Usage, raw: Any) -> Parsed:
    """A user provider's reply as the providers' parsed reply (finish: its calls or stop)."""
    finish: FinishReason = "tool_calls" if message.tool_calls else "stop"
    return Parsed(message=message, usage=usage, finish_reason=finish, raw=raw)
