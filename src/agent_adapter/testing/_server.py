"""ProviderServer: a local HTTP server speaking the OpenAI, Anthropic and Gemini wire protocols.

A Starlette app served by uvicorn on ``127.0.0.1`` and a free port, in a thread of its own, so
the official SDKs talk to it over real HTTP from sync and async code alike.
"""

from __future__ import annotations

import asyncio
import collections
import json
import math
import re
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from agent_adapter._errors import ConfigError, MissingDependency
from agent_adapter.testing._cache import (
    MAX_BREAKPOINTS,
    PromptCache,
    anthropic_breakpoints,
    prompt_tokens,
)
from agent_adapter.testing._replies import Protocol, Reply, WireUsage, error_body, stream_error
from agent_adapter.testing._wire_anthropic import anthropic_body, anthropic_stream
from agent_adapter.testing._wire_gemini import gemini_body, gemini_stream
from agent_adapter.testing._wire_openai import (
    chat_body,
    chat_stream,
    responses_body,
    responses_stream,
    sse,
)

__all__ = ["ProviderServer", "RecordedRequest"]

_GEMINI = re.compile(r"^/(?:v1beta|v1|v1alpha)/models/(?P<model>[^:/]+):(?P<method>\w+)$")
_ROUTES: dict[str, Protocol] = {
    "/v1/chat/completions": "chat",
    "/chat/completions": "chat",
    "/v1/responses": "responses",
    "/responses": "responses",
    "/v1/messages": "anthropic",
}
#: How many frames of a normal stream go out before an in-stream error: the opening events
#: that carry no content (Chat's role chunk, Responses' created / in_progress, Anthropic's
#: message_start); Gemini's first frame already has content, so its error comes first.
_OPENING: dict[Protocol, int] = {"chat": 1, "responses": 2, "anthropic": 1, "gemini": 0}
_FIRST_EVENT: dict[Protocol, str | None] = {
    "chat": None,
    "responses": "response.created",
    "anthropic": "message_start",
    "gemini": None,
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    Attributes:
        protocol: ``"chat"``, ``"responses"``, ``"anthropic"`` or ``"gemini"``.
        path: the URL path (``/v1/chat/completions``, ``/v1beta/models/m:generateContent``).
        query: the query parameters.
        headers: the request headers, lower-case names.
        body: the JSON body (``None`` when it was not JSON).
        stream: whether the client asked for a stream.
        model: the model named in the body (or the Gemini URL).
    """

    protocol: Protocol
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    stream: bool
    model: str
    raw: bytes = field(default=b"", repr=False)

    @property
    def size(self) -> int:
        """Bytes of the request body (to compare two requests' sizes)."""
        return len(self.raw)


async def _serve(server: Any, sock: socket.socket) -> None:
    """``server.serve`` on ``sock``, then close the connections it left open: a client that
    went away during a slow reply leaves its accepted socket to the garbage collector (an
    unclosed-socket warning in whatever test runs next) once the loop is gone."""
    try:
        await server.serve(sockets=[sock])
    finally:
        for connection in list(server.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.abort()
        await asyncio.sleep(0)  # the aborts close their sockets on the next loop turn


class ProviderServer:
    """A scripted model server for tests: start it, queue replies, point an SDK at it.

    It speaks OpenAI Chat Completions (``POST /v1/chat/completions``), OpenAI Responses
    (``POST /v1/responses``), Anthropic Messages (``POST /v1/messages``) and the Gemini API
    (``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent?alt=sse``),
    streaming when the request asks for it. Each request takes the next queued :class:`Reply`
    (or ``default`` when the queue is empty) and is recorded in :attr:`requests`.

    Example::

        with ProviderServer() as server:
            server.add(Reply(text="hello", input_tokens=12, output_tokens=3))
            client = openai.OpenAI(base_url=server.openai_url, api_key="test")
            client.chat.completions.create(model="gpt-4o", messages=[...])
            assert server.requests[0].body["model"] == "gpt-4o"

    Works as ``async with`` too. With no reply left and no ``default`` the server answers
    500 with ``x-should-retry: false`` and a message saying so.

    The server keeps a prompt cache (:class:`PromptCache`), as the providers do. A reply
    with ``input_tokens=None`` reports the request's prompt as the server counts it and the
    part of it that an earlier request of the same model and API key already sent, at the
    provider's granularity (OpenAI from 1,024 tokens in steps of 128; Anthropic up to the
    last ``cache_control`` breakpoint, with reads and writes; Gemini's implicit cache;
    DeepSeek's whole earlier prompts), unless it scripts ``cache_read_tokens`` or
    ``cache_write_tokens``. A reply that scripts ``input_tokens`` (the default, 10) reports
    its script. An Anthropic request with more than four ``cache_control`` breakpoints gets
    the API's 400 (taking no reply from the queue).

    Args:
        replies: replies to queue at once.
        default: the reply for requests past the queue (``None``: the 500 above).
        prompt_cache: ``True`` (a :class:`PromptCache` with its defaults), a
            :class:`PromptCache` of your own, or ``False`` (no cache: a reply reports no
            cached tokens but those it scripts).

    Raises:
        ConfigError: ``default`` is not a Reply, or ``prompt_cache`` is none of the above.
        MissingDependency: starlette or uvicorn is not installed (extra ``testing``).
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        prompt_cache: bool | PromptCache = True,
    ) -> None:
        try:
            import starlette  # noqa: F401
            import uvicorn  # noqa: F401
        except ImportError as e:
            raise MissingDependency("starlette and uvicorn", "testing", "ProviderServer") from e
        if default is not None and not isinstance(default, Reply):
            raise ConfigError(f"default must be a Reply, got {type(default).__name__}")
        if isinstance(prompt_cache, PromptCache):
            self._cache: PromptCache | None = prompt_cache
        elif prompt_cache is True or prompt_cache is False:
            self._cache = PromptCache() if prompt_cache else None
        else:
            raise ConfigError(
                "prompt_cache must be True, False or a PromptCache, got "
                f"{type(prompt_cache).__name__}"
            )
        self._lock = threading.Lock()
        self._queue: collections.deque[Reply] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._default = default
        self._count = 0
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._port = 0
        self._stopping = False
        self.add(*replies)

    # -- script and record -------------------------------------------------------------

    def add(self, *replies: Reply) -> ProviderServer:
        """Queue replies, in order; returns the server (to chain)."""
        for i, reply in enumerate(replies):
            if not isinstance(reply, Reply):
                raise ConfigError(f"replies[{i}] must be a Reply, got {type(reply).__name__}")
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """How many queued replies no request has taken yet."""
        with self._lock:
            return len(self._queue)

    def clear(self) -> None:
        """Drop the queued replies, the recorded requests and what the prompt cache holds."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
        if self._cache is not None:
            self._cache.clear()

    @property
    def prompt_cache(self) -> PromptCache | None:
        """The server's prompt cache (``None`` when it was built with ``prompt_cache=False``)."""
        return self._cache

    # -- addresses ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the base URL for the Anthropic and Gemini SDKs."""
        if not self._port:
            raise ConfigError("ProviderServer is not running: use it as a context manager")
        return f"http://127.0.0.1:{self._port}"

    @property
    def openai_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: the base URL for the OpenAI SDK."""
        return f"{self.url}/v1"

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> ProviderServer:
        """Start serving on 127.0.0.1 and a free port (returns once it accepts requests)."""
        if self._thread is not None:
            return self
        import uvicorn
        from starlette.applications import Starlette
        from starlette.routing import Route

        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["POST", "GET"])])
        config = uvicorn.Config(
            app,
            log_level="warning",
            lifespan="off",
            access_log=False,
            ws="none",
            http="h11",
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        # proto=IPPROTO_TCP: asyncio turns Nagle off only on such sockets; with proto 0 a reply
        # written as headers, then body, waits 40 ms for a kept-alive client's delayed ACK
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        self._sock = sock  # closed by stop(): uvicorn leaves a socket it was given open
        self._stopping = False
        self._server = server
        self._thread = threading.Thread(
            target=lambda: asyncio.run(_serve(server, sock)),
            name=f"ProviderServer:{self._port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("ProviderServer did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread to end (slow replies are cut short)."""
        if self._thread is None:
            return
        self._stopping = True
        self._server.should_exit = True
        self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()
        self._sock = None
        self._thread = None
        self._server = None
        self._port = 0

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> ProviderServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    # -- serving -----------------------------------------------------------------------

    def _take(self, recorded: RecordedRequest, *, reply: bool = True) -> tuple[Reply | None, int]:
        with self._lock:
            self._requests.append(recorded)
            self._count += 1
            if not reply:
                return None, self._count
            taken = self._queue.popleft() if self._queue else self._default
            return taken, self._count

    def _usage(self, reply: Reply, recorded: RecordedRequest) -> WireUsage:
        """The usage ``reply`` reports for ``recorded``.

        Every answered request enters the prompt cache. A reply that scripts
        ``input_tokens`` reports its script as it is (a scripted size stands for a prompt
        that was not sent, so the bytes sent cannot be cached against it); one with
        ``input_tokens=None`` reports the counted prompt and, unless it scripts cache
        counts, the cache's reads and writes."""
        data = recorded.body if isinstance(recorded.body, dict) else {}
        hit = None
        if self._cache is not None:
            hit = self._cache.lookup(
                recorded.protocol, recorded.model, data, recorded.headers, recorded.query
            )
        read, write, write_1h = reply.cache_read_tokens, reply.cache_write_tokens, 0
        if reply.input_tokens is not None:
            input_tokens = reply.input_tokens
        else:
            input_tokens = hit.prompt_tokens if hit else prompt_tokens(recorded.protocol, data)
            if hit is not None and not (read or write):
                read, write, write_1h = hit.read, hit.write, hit.write_1h
            input_tokens = max(input_tokens, read + write)
        return WireUsage(
            input_tokens=input_tokens,
            output_tokens=reply.output_tokens,
            cache_read_tokens=read,
            cache_write_tokens=write,
            cache_write_1h_tokens=write_1h,
        )

    async def _wait(self, request: Any, seconds: float) -> bool:
        """Sleep ``seconds``; False when the client left or the server stops first."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self._stopping or await request.is_disconnected():
                return False
            await asyncio.sleep(min(0.02, max(0.0, deadline - time.monotonic())))
        return True

    async def _handle(self, request: Any) -> Any:
        from starlette.responses import JSONResponse, Response

        path = request.url.path
        gemini = _GEMINI.match(path)
        protocol: Protocol | None = "gemini" if gemini else _ROUTES.get(path)
        if protocol is None or request.method != "POST":
            return JSONResponse({"error": {"message": f"no route {path}"}}, status_code=404)
        recorded, data = await _recorded(request, protocol, gemini)
        marks = anthropic_breakpoints(recorded.body) if protocol == "anthropic" else 0
        if marks > MAX_BREAKPOINTS:
            self._take(recorded, reply=False)
            message = (
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {marks}."
            )
            error = {"type": "invalid_request_error", "message": message}
            return JSONResponse({"type": "error", "error": error}, status_code=400)
        reply, n = self._take(recorded)
        if reply is None:
            message = f"agent_adapter.testing: no scripted reply left for POST {path}"
            gone = Reply.server_error(500)
            content = error_body(gone, protocol)
            _set_message(content, message)
            return JSONResponse(content, status_code=500, headers={"x-should-retry": "false"})
        if reply.delay_s and not await self._wait(request, reply.delay_s):
            return Response(status_code=499)
        return self._answer(reply, recorded, protocol, data, n)

    def _answer(
        self,
        reply: Reply,
        recorded: RecordedRequest,
        protocol: Protocol,
        data: dict[str, Any],
        n: int,
    ) -> Any:
        """The response a scripted reply makes to ``recorded`` (the ``n``-th reply): an
        error (before the stream, or inside it after its opening events), a malformed
        body, a stream or a JSON body."""
        from starlette.responses import JSONResponse, Response, StreamingResponse

        model, stream = recorded.model, recorded.stream
        failing = reply.kind in ("overflow", "rate_limit", "server_error")
        if failing and reply.in_stream and stream:
            opening = _stream(Reply(), protocol, data, model, n, WireUsage())
            frames = opening[: _OPENING[protocol]]
            event, payload = stream_error(reply, protocol)
            frames.append(sse(payload, event=event))
        elif failing:
            return JSONResponse(
                error_body(reply, protocol), status_code=reply.status, headers=_retry_after(reply)
            )
        elif reply.kind == "malformed":
            if not stream:
                return Response(reply.body, media_type="application/json")
            frames = [sse(reply.body, event=_FIRST_EVENT[protocol])]
        elif stream:
            frames = _stream(reply, protocol, data, model, n, self._usage(reply, recorded))
        else:
            usage = self._usage(reply, recorded)
            return JSONResponse(_body(reply, protocol, data, model, n, usage))

        async def send() -> Any:
            for frame in frames:
                yield frame.encode()

        return StreamingResponse(send(), media_type="text/event-stream")


async def _recorded(
    request: Any, protocol: Protocol, gemini: re.Match[str] | None
) -> tuple[RecordedRequest, dict[str, Any]]:
    """The request as recorded, and its JSON body when that is an object (else ``{}``)."""
    raw = await request.body()
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    data = body if isinstance(body, dict) else {}
    if gemini:
        model = gemini["model"]
        stream = gemini["method"] == "streamGenerateContent"
    else:
        model = str(data.get("model", ""))
        stream = bool(data.get("stream"))
    recorded = RecordedRequest(
        protocol=protocol,
        path=request.url.path,
        query=dict(request.query_params),
        headers={k.lower(): v for k, v in request.headers.items()},
        body=body,
        stream=stream,
        model=model,
        raw=raw,
    )
    return recorded, data


def _retry_after(reply: Reply) -> dict[str, str]:
    """The retry-after header of an error reply that sets one (never an overflow's)."""
    if reply.retry_after_s is None or reply.kind == "overflow":
        return {}
    seconds = reply.retry_after_s
    value = (
        str(int(seconds * 1000))
        if reply.retry_after_header == "retry-after-ms"
        else str(math.ceil(seconds))
    )
    return {reply.retry_after_header: value}


def _set_message(content: Any, message: str) -> None:
    error = content.get("error") if isinstance(content, dict) else None
    if isinstance(error, dict):
        error["message"] = message


def _body(
    reply: Reply, protocol: Protocol, data: dict[str, Any], model: str, n: int, usage: WireUsage
) -> Any:
    if protocol == "chat":
        return chat_body(reply, data, n, usage)
    if protocol == "responses":
        return responses_body(reply, data, n, usage)
    if protocol == "anthropic":
        return anthropic_body(reply, data, n, usage)
    return gemini_body(reply, model, n, usage)


def _stream(
    reply: Reply, protocol: Protocol, data: dict[str, Any], model: str, n: int, usage: WireUsage
) -> list[str]:
    if protocol == "chat":
        return chat_stream(reply, data, n, usage)
    if protocol == "responses":
        return responses_stream(reply, data, n, usage)
    if protocol == "anthropic":
        return anthropic_stream(reply, data, n, usage)
    return gemini_stream(reply, model, n, usage)
