"""The base of this version's protocol providers: 0.3.0a5's ``chat`` / ``stream`` surface over
one of agent_adapter's SDK providers (an :class:`agent_adapter.LLMPort`) per model.

A :class:`PortProvider` turns a :class:`~cliver_core.provider.CLIverRequest` into a
:class:`~agent_adapter.ModelRequest` (the messages through the ``cliver`` format, the tools
as :class:`~agent_adapter.FunctionTool` s, the options split as 0.3.0a5 sends them), calls the
port and turns its reply back: a :class:`~cliver_core.CLIverResponse` whose message carries
its wire dict as ``native``, or chunks ending with the ``native`` terminal chunk. The hooks
(``filter_options``, ``on_response``, ``on_chunk``) and the ``on_event`` handler's
``inference.*`` events are 0.3.0a5's. Not supported: a custom ``transport=`` (the official
SDKs do the I/O; raises :class:`~cliver_core.CapabilityNotSupported`) and ``user_agent``
(accepted, unused).
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import AsyncIterator
from typing import Any, ClassVar
from uuid import uuid4

from agent_adapter import (
    LLMPort,
    Message,
    ModelRequest,
    StreamEnd,
    TextDelta,
    ThinkingDelta,
    ThinkingPart,
    ToolCallDelta,
)
from agent_adapter.context.formats import strip_reserved
from cliver_core._errors import CapabilityNotSupported
from cliver_core._events import EventHandler, InferenceEvent, InferenceEventType
from cliver_core._format import from_message, native_converter, to_messages
from cliver_core._messages import CLIverMessageChunk, CLIverResponse, ToolCallChunk, UsageInfo
from cliver_core._request import request_fields
from cliver_core.provider import CLIverRequest, Provider

__all__ = ["PortProvider"]


def wire_message(message: Message, protocol: str) -> dict[str, Any]:
    """``message`` as the wire dict 0.3.0a5's providers put on ``native``: a Chat
    Completions message (text as a str, reasoning as ``reasoning_content``) or an Anthropic
    Messages one (content blocks, thinking included)."""
    native: dict[str, Any] = strip_reserved([native_converter(protocol).dump(message)])[0]
    if protocol != "openai":
        return native
    content = native.get("content")
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" for b in content
    ):
        text = "".join(b.get("text") or "" for b in content)
        native["content"] = text if text or not message.tool_calls else None
    thinking = "".join(p.text for p in message.parts if isinstance(p, ThinkingPart))
    if thinking:
        native["reasoning_content"] = thinking
    return native


class PortProvider(Provider):
    """A 0.3.0a5 protocol provider whose calls run on agent_adapter's SDK providers.

    Args:
        api_key: the key (``""``: the SDK's environment variable).
        base_url: the server.
        user_agent: accepted for 0.3.0a5 code; unused.
        logger: the logger.
        on_event: receives 0.3.0a5's ``inference.*`` events (sync or async).
        transport: not supported (must be ``None``).

    Raises:
        CapabilityNotSupported: a ``transport`` was given.
    """

    protocol = ""
    #: the brand's endpoint when ``create_provider`` gets no ``base_url``
    default_base_url: ClassVar[str] = ""

    def __init__(
        self,
        api_key: str,
        base_url: str,
        user_agent: str | None = None,
        *,
        logger: logging.Logger | None = None,
        on_event: EventHandler | None = None,
        transport: Any = None,
    ) -> None:
        if transport is not None:
            raise CapabilityNotSupported(
                f"{type(self).__name__}(transport=...): custom BrandSDK transports are not "
                "supported by this version of cliver_core (the official SDKs of "
                "agent_adapter.providers do the I/O); subclass Provider for your own wire"
            )
        super().__init__(api_key, base_url, logger=logger)
        self.user_agent = user_agent
        self.on_event = on_event
        self._ports: dict[str, LLMPort] = {}
        self._finals: dict[int, tuple[dict[str, Any], Message]] = {}

    def _message_for_native(self, native: Any) -> Message | None:
        """The port's own message behind a terminal chunk's ``native`` this provider
        yielded (so an adapter reading the stream back loses nothing), else ``None``."""
        entry = self._finals.get(id(native))
        return entry[1] if entry is not None and entry[0] is native else None

    def _make_port(self, model: str, **kwargs: Any) -> LLMPort:
        """The agent_adapter provider for ``model`` (defined by each protocol class)."""
        raise NotImplementedError

    def llm_port(self, model: str) -> LLMPort:
        """The agent_adapter port this provider sends ``model``'s calls to (built once)."""
        port = self._ports.get(model)
        if port is None:
            port = self._make_port(
                model,
                api_key=self.api_key or None,
                base_url=self.base_url or None,
                provider=self.provider_name() or self.protocol,
            )
            self._ports[model] = port
        return port

    def model_request(self, request: CLIverRequest) -> ModelRequest:
        """``request`` as the port's :class:`~agent_adapter.ModelRequest`."""
        fields, rest = request_fields(self.filter_options(dict(request.options)), self.protocol)
        return ModelRequest(
            messages=to_messages(request.messages),
            tools=[t.function_tool() for t in request.tools or ()],
            options=rest,
            **fields,
        )

    def _request_info(self, request: CLIverRequest, options: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": request.model,
            "provider": self.provider_name(),
            "options": options,
            "system_prompt": next(
                (m.content for m in request.messages if m.role == "system"), None
            ),
            "messages": [
                m.model_dump(exclude={"native", "native_protocol", "trace"}, exclude_none=True)
                for m in request.messages
            ],
            "tools": [t.model_dump(exclude={"execute", "aexecute"}) for t in request.tools or ()],
        }

    async def _emit(self, kind: InferenceEventType, model: str, rid: str, **data: Any) -> None:
        if self.on_event is None:
            return
        event = InferenceEvent(
            event=kind, model=model, provider=self.protocol, request_id=rid, data=data
        )
        result = self.on_event(event)
        if inspect.isawaitable(result):
            await result

    async def chat(self, request: CLIverRequest) -> CLIverResponse:
        """One reply, through the port of ``request.model``.

        Raises:
            ModelError: the call failed (agent_adapter's errors, not 0.3.0a5's SDK ones).
        """
        port = self.llm_port(request.model)
        model_request = self.model_request(request)
        rid, start = str(uuid4()), time.monotonic()
        tools = len(request.tools or ())
        await self._emit(
            InferenceEventType.STARTED,
            request.model,
            rid,
            message_count=len(request.messages),
            tool_count=tools,
        )
        try:
            reply = await port.generate(model_request)
        except Exception as e:
            await self._emit(InferenceEventType.ERROR, request.model, rid, error=str(e))
            raise
        await self._emit(
            InferenceEventType.COMPLETED,
            request.model,
            rid,
            total_latency_ms=(time.monotonic() - start) * 1000,
        )
        message = from_message(reply.message)
        message.native = wire_message(reply.message, self.protocol)
        message.native_protocol = self.protocol
        response = CLIverResponse(
            message=message,
            usage=UsageInfo.of(reply.usage),
            request_info=self._request_info(request, self.filter_options(dict(request.options))),
        )
        return self.on_response(response)

    async def stream(  # type: ignore[override,misc]
        self, request: CLIverRequest
    ) -> AsyncIterator[CLIverMessageChunk]:
        """The reply as chunks: text (``content``), reasoning
        (``vendor_ext["reasoning_content"]``), tool-call pieces, then the terminal chunk with
        the whole message as ``native`` and the ``usage``."""
        port = self.llm_port(request.model)
        model_request = self.model_request(request)
        rid, start, first = str(uuid4()), time.monotonic(), True
        await self._emit(
            InferenceEventType.STARTED,
            request.model,
            rid,
            message_count=len(request.messages),
            tool_count=len(request.tools or ()),
        )
        try:
            async for event in port.stream(model_request):
                chunk: CLIverMessageChunk | None = None
                if isinstance(event, TextDelta):
                    chunk = CLIverMessageChunk(content=event.text)
                elif isinstance(event, ThinkingDelta) and event.text:
                    chunk = CLIverMessageChunk(vendor_ext={"reasoning_content": event.text})
                elif isinstance(event, ToolCallDelta):
                    piece = ToolCallChunk(
                        index=event.index,
                        id=event.id,
                        name=event.name,
                        args_delta=event.arguments or None,
                    )
                    chunk = CLIverMessageChunk(tool_call_chunks=[piece])
                    if event.id:
                        await self._emit(
                            InferenceEventType.TOOL_CALL,
                            request.model,
                            rid,
                            tool_name=event.name or "?",
                            tool_call_id=event.id,
                        )
                elif isinstance(event, StreamEnd):
                    final = event.response.message
                    chunk = CLIverMessageChunk(
                        native=wire_message(final, self.protocol),
                        usage=UsageInfo.of(event.response.usage),
                    )
                    if chunk.native is not None:
                        if len(self._finals) >= 64:
                            self._finals.pop(next(iter(self._finals)))
                        self._finals[id(chunk.native)] = (chunk.native, final)
                if chunk is None:
                    continue
                if first and chunk.native is None:
                    first = False
                    await self._emit(
                        InferenceEventType.FIRST_TOKEN,
                        request.model,
                        rid,
                        latency_ms=(time.monotonic() - start) * 1000,
                    )
                yield self.on_chunk(chunk)
        except Exception as e:
            await self._emit(InferenceEventType.ERROR, request.model, rid, error=str(e))
            raise
        await self._emit(
            InferenceEventType.COMPLETED,
            request.model,
            rid,
            total_latency_ms=(time.monotonic() - start) * 1000,
        )

    async def close(self) -> None:
        """Close the ports' SDK clients (this loop's) and the embed / rerank client."""
        ports, self._ports = list(self._ports.values()), {}
        for port in ports:
            close = getattr(port, "aclose", None)
            if close is not None:
                await close()
        await super().close()
