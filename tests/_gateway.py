"""Helpers of the gateway tests: start ``agent-adapter gateway`` as a process, replay sessions."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
#: the source folders of the four distributions, for a gateway started from a checkout
SOURCES = [
    ROOT / "src",
    ROOT / "packages" / "agent-adapter-cli" / "src",
    ROOT / "packages" / "agent-adapter-gateway" / "src",
    ROOT / "packages" / "cliver-core" / "src",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Gateway:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    def metrics(self) -> dict[str, int]:
        """The ``agent_adapter_gateway_total`` counters of ``/metrics``."""
        out = {}
        for line in httpx.get(f"{self.url}/metrics").text.splitlines():
            if line.startswith('agent_adapter_gateway_total{name="'):
                name = line.split('"')[1]
                out[name] = int(line.rsplit(" ", 1)[1])
        return out


def environment() -> dict[str, str]:
    """The environment of a gateway process: this checkout's sources first on the path."""
    env = dict(os.environ)
    path = [str(p) for p in SOURCES]
    if env.get("PYTHONPATH"):
        path.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(path)
    return env


@contextmanager
def gateways(argses: Sequence[Sequence[str]], tmp: Path) -> Iterator[list[Gateway]]:
    """``agent-adapter gateway --port P *args`` for each ``args`` of ``argses``, started at
    once as processes (through the CLI's ``gateway`` subcommand), ready when ``/healthz``
    answers; stopped (SIGTERM, then SIGKILL) after."""
    started: list[Gateway] = []
    try:
        for args in argses:
            port = free_port()
            log = tmp / f"gateway-{port}.log"
            command = [
                sys.executable, "-m", "agent_adapter.cli", "gateway", "--port", str(port), *args,
            ]  # fmt: skip
            with log.open("wb") as out:
                process = subprocess.Popen(
                    command, stdout=out, stderr=subprocess.STDOUT, env=environment()
                )
            started.append(Gateway(f"http://127.0.0.1:{port}", process, log))
        deadline = time.monotonic() + 60
        for g in started:
            while True:
                try:
                    if httpx.get(f"{g.url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if g.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the gateway did not start: {g.log.read_text()[-2000:]}")
                time.sleep(0.05)
        yield started
    finally:
        for g in started:
            g.process.terminate()
        for g in started:
            try:
                g.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                g.process.kill()
                g.process.wait()


@contextmanager
def gateway(args: Sequence[str], tmp: Path) -> Iterator[Gateway]:
    """One gateway process (see :func:`gateways`)."""
    with gateways([args], tmp) as (one,):
        yield one


def replay_points(messages: Sequence[Any], calls: int, *, user_roles: tuple[str, ...]) -> list[int]:
    """``calls`` prefix lengths spread over the session, each ending on a message of
    ``user_roles`` (what an agent sends: the history up to its newest input)."""
    ends = [
        i + 1
        for i, m in enumerate(messages)
        if i > 0
        and m.get("role") in user_roles
        and (i + 1 == len(messages) or messages[i + 1].get("role") == "assistant")
    ]
    if len(ends) <= calls:
        return ends
    step = len(ends) / calls
    return sorted({ends[min(len(ends) - 1, round((k + 1) * step) - 1)] for k in range(calls)})


class FixedServer:
    """An upstream that answers every request with the same bytes and headers (a JSON body,
    or an SSE stream sent in separate chunks), recording the raw requests: for checking that
    what the gateway sends back is byte for byte what the upstream sent."""

    def __init__(self, body: bytes, headers: list[tuple[str, str]], chunks: list[bytes]) -> None:
        self.body, self.headers, self.chunks = body, headers, chunks
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self._server: Any = None
        self._thread: Any = None
        self.url = ""

    async def _app(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.requests.append((scope["path"], headers, raw))
        stream = b'"stream":true' in raw.replace(b" ", b"")
        out = [(k.encode(), v.encode()) for k, v in self.headers]
        if stream:
            out.append((b"content-type", b"text/event-stream"))
            await send({"type": "http.response.start", "status": 200, "headers": out})
            for chunk in self.chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        else:
            out.append((b"content-type", b"application/json"))
            out.append((b"content-length", str(len(self.body)).encode()))
            await send({"type": "http.response.start", "status": 200, "headers": out})
            await send({"type": "http.response.body", "body": self.body})

    def __enter__(self) -> FixedServer:
        import asyncio
        import threading

        import uvicorn

        port = free_port()
        config = uvicorn.Config(
            self._app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="off",
            interface="asgi3",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=lambda: asyncio.run(self._server.serve()))
        self._thread.start()
        while not self._server.started:
            time.sleep(0.01)
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
