"""The gateway's Starlette app: read the request, compact its conversation, proxy it.

Transparency, as the design:

* **Headers** go upstream as the client sent them (``Authorization``, ``x-api-key``,
  ``anthropic-version``, ``anthropic-beta``, ``x-goog-api-key``, ...), less the hop-by-hop
  ones (RFC 9110 7.6.1), ``Host`` and ``Content-Length`` (the body may change), and the
  gateway's own :data:`~agent_adapter.gateway._wire.CONVERSATION_HEADER`. No header, body or
  query is ever logged or stored (uvicorn's access log is off: a Gemini ``?key=`` would be in
  it); the log says counts and error class names only.
* **Bodies** the gateway does not change go up as the bytes that came; in a changed one
  everything but the conversation, and every message the compaction kept, is the client's
  own bytes; only what the library wrote is serialized (compact JSON, the same serializer
  every time, so the previous request's bytes are the next one's prefix). See
  :mod:`agent_adapter.gateway._body`.
* **Responses**: the upstream's status, headers (less hop-by-hop) and body, streamed chunk by
  chunk as they arrive (SSE included, the raw bytes, compressed or not), plus the
  ``x-agent-adapter-*`` headers of :func:`~agent_adapter.gateway._compaction.response_headers`.
* **Fail open**: a body that is not a JSON object, or any error inside compression, sends the
  request up as it came, and adds one to ``fail_open``.
* **Overflow retry**: an upstream error status whose body is a context overflow
  (:func:`agent_adapter.providers._overflow.overflow_numbers`, the providers' one reader) gets
  the conversation compressed harder and sent once more, before any byte went to the client;
  an overflow reported inside a stream that already began goes to the client as it came.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import tempfile
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol

from agent_adapter.context import CompactionStates, RedisStore, SQLiteStore
from agent_adapter.gateway._body import BodyReader
from agent_adapter.gateway._compaction import (
    Compaction,
    Prepared,
    conversation_key,
    response_headers,
)
from agent_adapter.gateway._config import GatewayConfig
from agent_adapter.gateway._metrics import Metrics
from agent_adapter.gateway._wire import (
    CONVERSATION_HEADER,
    Wire,
    conversation_hint,
    field_of,
    messages_of,
    model_of,
    route,
    thinking_of,
    upstream_url,
)
from agent_adapter.providers._overflow import overflow_numbers

__all__ = ["NoDelayH11Protocol", "create_app"]

log = logging.getLogger("agent_adapter.gateway")

#: Headers that belong to one connection (RFC 9110 7.6.1), never forwarded.
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_UP = _HOP | {"host", "content-length", CONVERSATION_HEADER}
#: The upstream may take this long to send the next bytes (a long generation, a slow stream).
_TIMEOUT = httpx.Timeout(connect=30.0, read=900.0, write=300.0, pool=60.0)


def _states(config: GatewayConfig) -> tuple[CompactionStates, Any]:
    """The states of ``--state`` and the store to close at exit (``None``: none)."""
    url = config.state
    if url is None:
        return CompactionStates(), None
    if url.startswith("sqlite://"):
        path = url.removeprefix("sqlite://")
        path = path[1:] if path.startswith("//") else path  # sqlite:///abs and sqlite://rel
        path = path or os.path.join(tempfile.gettempdir(), "agent-adapter-gateway.sqlite3")
        store: Any = SQLiteStore(path)
    else:
        store = RedisStore(url)
    return CompactionStates(store=store), store


class Gateway:
    """The app's state: settings, upstream client, compaction and counters."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.states, self.store = _states(config)
        self.compaction = Compaction(config.policy(), self.states, config.model_max_tokens)
        self.metrics = Metrics()
        self.reader = BodyReader()
        self.client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        limits = httpx.Limits(max_connections=512, max_keepalive_connections=64)
        transport = httpx.AsyncHTTPTransport(
            limits=limits, socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        )
        self.client = httpx.AsyncClient(
            timeout=_TIMEOUT, transport=transport, follow_redirects=False
        )

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        closing = getattr(self.store, "aclose", None) or getattr(self.store, "close", None)
        if closing is not None:
            with contextlib.suppress(Exception):
                result = closing()
                if hasattr(result, "__await__"):
                    await result

    # -- one request ---------------------------------------------------------------------

    async def handle(self, request: Request) -> Response:
        path = request.url.path
        if request.method == "GET" and path == "/healthz":
            return JSONResponse({"status": "ok"})
        if request.method == "GET" and path == "/metrics":
            return PlainTextResponse(self.metrics.page())
        headers = {k.lower(): v for k, v in request.headers.items()}
        wire = route(request.method, path, headers)
        raw = await request.body()
        self.metrics.add("requests")
        prepared = None
        if wire.kind is None:
            self.metrics.add("passed_through")
        else:
            self.metrics.add(f"requests_{wire.kind}")
            started, cpu = time.perf_counter(), time.thread_time()
            prepared = await self._prepare(wire, raw, headers)
        body = prepared.encoded() if prepared is not None and prepared.changed else raw
        if prepared is not None:
            prepared.seconds = time.perf_counter() - started
            prepared.cpu_seconds = time.thread_time() - cpu
        raw_path = request.scope.get("raw_path") or path.encode()
        url = upstream_url(
            self.config.upstream(wire.provider), raw_path.decode("latin-1"), request.url.query
        )  # the path as the client encoded it
        up_headers = [
            (k, v) for k, v in request.headers.raw if k.decode("latin-1").lower() not in _NOT_UP
        ]
        try:
            response = await self._send(request.method, url, up_headers, body)
        except httpx.HTTPError as exc:
            return self._unreachable(exc)
        retried = False
        if response.status_code >= 400:
            self.metrics.add("upstream_errors")
            content = await response.aread()
            await response.aclose()
            if prepared is not None and await self._overflowed(prepared, content):
                body = prepared.encoded()
                retried = True
                try:
                    response = await self._send(request.method, url, up_headers, body)
                except httpx.HTTPError as exc:
                    return self._unreachable(exc)
            else:
                out = Response(content, status_code=response.status_code)
                out.raw_headers = _down_headers(response, prepared, retried, decoded=True)
                return out
        if prepared is not None:
            self._count(prepared)
        return _streamed(response, prepared, retried)

    async def _send(
        self, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> httpx.Response:
        assert self.client is not None
        up = httpx.Request(
            method, url, headers=headers, content=body, extensions={"timeout": _TIMEOUT.as_dict()}
        )
        return await self.client.send(up, stream=True)

    async def _prepare(self, wire: Wire, raw: bytes, headers: dict[str, str]) -> Prepared | None:
        """The conversation as it goes up; ``None``: the body goes as it came."""
        assert wire.kind is not None
        try:
            source = self.reader.read(raw, field_of(wire.kind))
        except ValueError:
            self._fail_open("unreadable body")
            return None
        body = source.data
        if not isinstance(body, dict):
            self._fail_open("body is not a JSON object")
            return None
        found = messages_of(wire.kind, body)
        if found is None:
            self.metrics.add("passed_through")
            return None
        field, history = found
        model = model_of(wire, body)
        window = self.compaction.window(wire.provider, model)
        if window is None and self.compaction.policy.uses_percent:
            self.metrics.add("no_window")
            return None
        hint = conversation_hint(wire.kind, body, headers)
        key = conversation_key(wire.kind, model, hint)
        try:
            prepared = await self.compaction.prepare(
                wire.kind, field, body, history, key, window, thinking_of(wire.kind, body)
            )
            problems = self.compaction.violations(prepared)
        except Exception as exc:  # fail open, whatever went wrong
            self._fail_open(type(exc).__name__)
            return None
        if problems:
            self.metrics.add("check_failed")
            log.warning("compressed request broke %s: sent as it came", sorted(set(problems)))
            return None
        prepared.source = source
        return prepared

    async def _overflowed(self, prepared: Prepared, content: bytes) -> bool:
        """Whether ``content`` (an error body) is a context overflow that a harder
        compression answers; then ``prepared`` holds the retry."""
        try:
            error: Any = json.loads(content)
        except ValueError:
            error = None
        inner = error.get("error") if isinstance(error, dict) else None
        inner = inner if isinstance(inner, dict) else error if isinstance(error, dict) else {}
        message = inner.get("message") if isinstance(inner, dict) else None
        numbers = overflow_numbers(
            message if isinstance(message, str) else "", error, inner.get("code")
        )
        if numbers is None:
            return False
        try:
            shrank = await self.compaction.harder(prepared, *numbers)
        except Exception as exc:
            self._fail_open(type(exc).__name__)
            return False
        if shrank:
            self.metrics.add("overflow_retries")
        return shrank

    def _count(self, prepared: Prepared) -> None:
        report = prepared.report
        compacted = not report.skipped and prepared.changed
        if compacted:
            self.metrics.add("compacted")
        elif prepared.changed:
            self.metrics.add("appended")
        key = prepared.key or f"gateway:{prepared.kind}:{prepared.body.get('model', '')}"
        before = prepared.history_tokens
        self.metrics.saw(key, before, report.tokens_after, compacted=compacted)

    def _unreachable(self, exc: httpx.HTTPError) -> Response:
        """502 with the error's class when the upstream could not be reached or answered no
        response (the client's SDK retries it as any 5xx)."""
        n = self.metrics.add("upstream_unreachable")
        log.warning("upstream unreachable (%d so far): %s", n, type(exc).__name__)
        error = {
            "type": "api_error",
            "message": f"agent-adapter gateway: upstream: {type(exc).__name__}",
        }
        return JSONResponse({"type": "error", "error": error}, status_code=502)

    def _fail_open(self, why: str) -> None:
        n = self.metrics.add("fail_open")
        log.warning("fail open (%d so far): %s; the request went up as it came", n, why)


def _down_headers(
    response: httpx.Response, prepared: Prepared | None, retried: bool, *, decoded: bool
) -> list[tuple[bytes, bytes]]:
    """The upstream's headers for the client (less hop-by-hop; less the encoding and length
    of a body read decoded), with the gateway's own."""
    drop = _HOP | ({"content-encoding", "content-length"} if decoded else set())
    out = [(k, v) for k, v in response.headers.raw if k.decode("latin-1").lower() not in drop]
    if decoded:
        out.append((b"content-length", str(len(response.content)).encode()))
    if prepared is not None:
        for k, v in response_headers(prepared, retried=retried).items():
            out.append((k.encode("latin-1"), v.encode("latin-1")))
    return out


def _streamed(response: httpx.Response, prepared: Prepared | None, retried: bool) -> Response:
    """The upstream's response, its body streamed raw as it arrives."""

    async def chunks() -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_raw():
                yield chunk
        finally:
            await response.aclose()

    out = StreamingResponse(chunks(), status_code=response.status_code)
    out.raw_headers = _down_headers(response, prepared, retried, decoded=False)
    return out


class NoDelayH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with Nagle's algorithm off on each connection.

    asyncio turns Nagle off only on sockets made with ``proto=IPPROTO_TCP``; uvicorn's own
    bound sockets (``--workers``) have ``proto=0``, so a response written as headers and then
    body waits for the client's delayed ACK (40 ms on Linux) on a kept-alive connection.
    Measured: that stall was the whole of a 57 ms "added latency" of a 2 kB request."""

    def connection_made(self, transport: Any) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)


def create_app(config: GatewayConfig | None = None) -> Starlette:
    """The gateway as an ASGI app (``None``: the settings of the environment, as
    ``--workers`` processes get them).

    Example::

        import uvicorn
        from agent_adapter.gateway import GatewayConfig, create_app

        uvicorn.run(create_app(GatewayConfig(threshold="100k")), port=8787)
    """
    gateway = Gateway(config if config is not None else GatewayConfig.from_env())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await gateway.start()
        try:
            yield
        finally:
            await gateway.stop()

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    app = Starlette(
        routes=[Route("/{path:path}", gateway.handle, methods=methods)], lifespan=lifespan
    )
    app.state.gateway = gateway
    return app
