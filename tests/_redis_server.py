"""A real redis-server for the store tests: the one ``.ci/run`` started, or one started here.

``.ci/run`` starts the Debian ``redis-server`` and exports ``AGENT_ADAPTER_REDIS_URL``. Without
it, :func:`redis_url` starts a private server when the binary is installed, else skips the
test (under ``CI=true`` it fails instead). :func:`private_server` starts a server of the
test's own, for tests that kill it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the Redis tests must run; see .ci/run)")
    pytest.skip(f"{reason}: install redis-server (Debian) or set AGENT_ADAPTER_REDIS_URL")


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    command: list[str]

    def kill(self) -> None:
        """Stop the server at once (SIGKILL to its pid) and wait until it is gone."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def restart(self) -> None:
        """Kill the server and start it again on its port: it starts empty (no persistence)."""
        self.kill()
        self.process = _start(self.command)
        _wait_ready(self.url)


def _start(command: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # not daemonized: the pid is the child's
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(url: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        for _ in range(200):
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.02)
        raise RuntimeError(f"redis-server at {url} did not start")
    finally:
        client.close()


@contextmanager
def private_server() -> Iterator[Server]:
    """A redis-server of this test's own on a free port, stopped by its pid at the end."""
    binary = shutil.which("redis-server")
    if binary is None:
        _missing("redis-server is not installed")
        raise AssertionError("unreachable")
    with tempfile.TemporaryDirectory() as folder:
        port = _free_port()
        command = [
            binary,
            *("--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
            *("--dir", folder, "--logfile", str(Path(folder) / "redis.log")),
        ]
        server = Server(f"redis://127.0.0.1:{port}/0", _start(command), command)
        try:
            _wait_ready(server.url)
            yield server
        finally:
            if server.process.poll() is None:
                server.process.kill()
            server.process.wait()


@contextmanager
def shared_server() -> Iterator[str]:
    """The URL of ``AGENT_ADAPTER_REDIS_URL``'s server, else of a private one."""
    url = os.environ.get("AGENT_ADAPTER_REDIS_URL")
    if url:
        _wait_ready(url)
        yield url
        return
    with private_server() as server:
        yield server.url
