"""The context gateway (``agent-adapter gateway``) next to the upstream called directly and
LiteLLM's proxy: added latency, throughput and memory, on a replayed real session.

Everything runs on this machine, each server a process of its own: the upstream is a minimal
ASGI app on uvicorn that reads the body and answers a fixed Anthropic message or Chat
completion at once (a recording, parsing server such as ``ProviderServer`` takes ~60 ms on a
700 kB body and adds its own noise), the client an ``httpx`` client sending prebuilt bodies
(the SDKs' own cost is the same on every path).

* **append path**: the last ``--calls`` requests of the longest Claude Code session
  (``4d5611e5``, 139k-148k tokens by ``estimate_tokens``, ~700 kB each) sent to
  ``POST /v1/messages`` one round longer each call, as Claude Code sends them, one
  conversation (``metadata.user_id``); the gateway's threshold (190k) is above them, so each
  goes up as the gateway's state says (the steady state of an agent loop).
* **after a compaction**: the same calls with ``--threshold 100k --target 60k``: the first
  compacts, the next go up as that request plus the new messages (a compaction again when
  that is over 100k).
* **compressing calls**: each request a conversation of its own (the
  ``x-agent-adapter-conversation`` header), so every call compacts ~145k tokens to 60k.
* **LiteLLM** (``litellm[proxy]`` in ``/work/venvs/litellm``, ``--litellm-venv``): its proxy with
  the session's model routed to the upstream, compression off, and on
  (``compression_interception``, trigger 100k, target 60k, its default scorer).

Added latency: each call is sent straight to the upstream and then through the path, one after
the other (both see the same load); the table gives the p50 and p99 of the per-call
differences, and the gateway's own time (the ``x-agent-adapter-ms`` header: reading the
body, the compaction, the check, writing the body that goes up; what is left of "added" is
the second HTTP hop of a 700 kB body through uvicorn and httpx). Throughput: requests a
second with 16 concurrent clients for ``--seconds``, on the append path of the shorter
mini-swe-agent run (``pytest-6197``, 40k-80k tokens), gateway with 1 and 4 workers. Memory:
the gateway's resident set size after 1,000 conversations of the mini-swe-agent run (its first
60 messages, ~20k tokens, each compacted once at a 10k threshold), less before.

    python bench/gateway.py                  # ~6 min on 2 cores (LiteLLM's start is ~1 min)
    python bench/gateway.py --latency-only   # the gateway's latency rows only, ~20 s
    python bench/gateway.py --no-litellm     # the gateway and the direct calls only

Needs the agent-adapter-gateway distribution (``pip install -e packages/agent-adapter-gateway``)
and, for LiteLLM, ``python -m venv
/work/venvs/litellm && /work/venvs/litellm/bin/pip install 'litellm[proxy]'`` (1.108.7 was
measured; it starts offline with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` and
``LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY=true``, which this script sets).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from _compress_cases import data_dir
from agent_adapter.cli._loaders import load_trace

ROOT = Path(__file__).resolve().parents[1]
CLAUDE_CODE = "claude-code-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
MINI_SWE = "mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-6197.traj.json"
MODEL = "claude-sonnet-4-5"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    sources = [ROOT / "src", *sorted((ROOT / "packages").glob("*/src"))]
    env["PYTHONPATH"] = os.pathsep.join([*map(str, sources), env.get("PYTHONPATH", "")])
    return env


@contextmanager
def _process(
    command: Sequence[str],
    url: str,
    *,
    env: dict[str, str] | None = None,
    health: str = "/healthz",
    timeout: float = 240,
) -> Iterator[subprocess.Popen[bytes]]:
    log = Path(tempfile.mkdtemp(prefix="bench-gateway-")) / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env or _env())
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(url + health, timeout=2).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command[:3]} did not start; see {log}")
            time.sleep(0.2)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


UPSTREAM = textwrap.dedent(
    """
    import json, socket, sys, uvicorn
    MESSAGE = json.dumps({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 2},
    }).encode()
    CHAT = json.dumps({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }).encode()

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        more = True
        while more:
            message = await receive()
            more = message.get("more_body", False)
        body = MESSAGE if scope["path"].endswith("/messages") else CHAT
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    # proto=IPPROTO_TCP: asyncio turns Nagle off only then (a response written as headers,
    # then body, would otherwise wait 40 ms for the client's delayed ACK)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            http="h11", loop="asyncio")
    uvicorn.Server(config).run(sockets=[sock])
    """
)


@contextmanager
def _upstream() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", UPSTREAM], stdout=subprocess.PIPE, env=_env(), text=True
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait()


def _gateway(upstream: str, *args: str) -> tuple[list[str], str]:
    port = _port()
    command = [
        sys.executable,
        "-m",
        "agent_adapter.gateway",
        "--port",
        str(port),
        "--anthropic-upstream",
        upstream,
        "--openai-upstream",
        f"{upstream}/v1",
        "--log-level",
        "warning",
        *args,
    ]
    return command, f"http://127.0.0.1:{port}"


def _litellm(
    venv: Path, upstream: str, compress: bool, folder: Path
) -> tuple[list[str], str, dict[str, str]]:
    port = _port()
    config = {
        "model_list": [
            {
                "model_name": MODEL,
                "litellm_params": {
                    "model": f"anthropic/{MODEL}",
                    "api_base": upstream,
                    "api_key": "test",
                },
            },
            {
                "model_name": "gpt-4o",
                "litellm_params": {
                    "model": "openai/gpt-4o",
                    "api_base": f"{upstream}/v1",
                    "api_key": "test",
                },
            },
        ],
        "litellm_settings": {"drop_params": False, "telemetry": False},
    }
    if compress:
        config["litellm_settings"].update(  # type: ignore[attr-defined]
            callbacks=["compression_interception"],
            compression_interception_params={
                "enabled": True,
                "compression_trigger": 100_000,
                "compression_target": 60_000,
            },
        )
    path = folder / f"litellm-{'on' if compress else 'off'}.json"
    path.write_text(json.dumps(config))
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",
        "LITELLM_LOG": "ERROR",
    }
    command = [
        str(venv / "bin" / "litellm"),
        "--config",
        str(path),
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
        "--num_workers",
        "1",
    ]
    return command, f"http://127.0.0.1:{port}", env


# -- the replayed requests ---------------------------------------------------------------


def _anthropic_bodies(data: Path, calls: int) -> list[bytes]:
    messages = list(load_trace(data / CLAUDE_CODE).messages)
    ends = [
        i + 1
        for i, m in enumerate(messages)
        if m["role"] == "user"
        and (i + 1 == len(messages) or messages[i + 1]["role"] == "assistant")
    ][-calls:]
    user = {"user_id": f"user_bench_session_{uuid.uuid4()}"}
    return [
        json.dumps(
            {"model": MODEL, "max_tokens": 64, "metadata": user, "messages": messages[:e]}
        ).encode()
        for e in ends
    ]


def _chat_bodies(
    data: Path, calls: int, *, key: str, first: int = 0, last: int | None = None
) -> list[bytes]:
    messages = list(load_trace(data / MINI_SWE).messages)[:last]
    ends = [
        i + 1
        for i, m in enumerate(messages)
        if i >= first
        and m["role"] in ("user", "tool")
        and (i + 1 == len(messages) or messages[i + 1]["role"] == "assistant")
    ][-calls:]
    return [
        json.dumps({"model": "gpt-4o", "messages": messages[:e], "prompt_cache_key": key}).encode()
        for e in ends
    ]


#: one latency run: path, through what, its calls' milliseconds, the direct calls' ones
Row = tuple[str, str, list[float], list[float]]
#: how many timed calls of each run the gateway compacted for (no x-agent-adapter-skipped)
COMPACTED: list[int] = []
#: the gateway's own milliseconds of each timed call of each run (x-agent-adapter-ms), and
#: its CPU milliseconds (x-agent-adapter-cpu-ms)
OWN: list[list[float]] = []
CPU: list[list[float]] = []


def _timed(
    url: str,
    path: str,
    bodies: Sequence[bytes],
    headers: list[dict[str, str]] | None = None,
    *,
    direct: str,
) -> tuple[list[float], list[float]]:
    """Milliseconds of each call through ``url`` and of the same call straight to ``direct``
    just before it (so both see the same load); a warm-up call first, not counted."""
    out: list[float] = []
    ref: list[float] = []
    COMPACTED.append(0)
    OWN.append([])
    CPU.append([])
    base = {
        "content-type": "application/json",
        "x-api-key": "test",
        "anthropic-version": "2023-06-01",
        "authorization": "Bearer test",
    }
    with httpx.Client(timeout=300) as client:
        client.post(url + path, content=bodies[0], headers=base).raise_for_status()
        for i, body in enumerate(bodies):
            extra = headers[i] if headers else {}
            for target, times in ((direct, ref), (url, out)):
                start = time.perf_counter()
                reply = client.post(target + path, content=body, headers={**base, **extra})
                times.append((time.perf_counter() - start) * 1000)
                if reply.status_code != 200:
                    raise RuntimeError(f"{target}{path}: {reply.status_code} {reply.text[:300]}")
            if "x-agent-adapter-tokens-after" in reply.headers:
                COMPACTED[-1] += "x-agent-adapter-skipped" not in reply.headers
                OWN[-1].append(float(reply.headers["x-agent-adapter-ms"]))
                CPU[-1].append(float(reply.headers["x-agent-adapter-cpu-ms"]))
    return out, ref


def _p(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _throughput(url: str, conversations: Sequence[Sequence[bytes]], seconds: float) -> float:
    """Requests a second of one client a conversation, each sending its conversation's
    requests in order (round and round) until ``seconds`` are over."""
    done = 0
    clients = len(conversations)
    stop = time.monotonic() + seconds
    headers = {"content-type": "application/json", "authorization": "Bearer test"}

    async def one(k: int, client: httpx.AsyncClient) -> None:
        nonlocal done
        bodies, i = conversations[k], 0
        while time.monotonic() < stop:
            reply = await client.post(
                url + "/v1/chat/completions", content=bodies[i % len(bodies)], headers=headers
            )
            reply.raise_for_status()
            done += 1
            i += 1

    start = time.monotonic()
    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        await asyncio.gather(*(one(k, client) for k in range(clients)))
    return done / (time.monotonic() - start)


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--compressing-calls", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--litellm-venv", type=Path, default=Path("/work/venvs/litellm"))
    parser.add_argument("--no-litellm", action="store_true")
    parser.add_argument(
        "--latency-only", action="store_true", help="the latency table only (no LiteLLM)"
    )
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    bodies = _anthropic_bodies(data, args.calls)
    fresh = [{"x-agent-adapter-conversation": str(uuid.uuid4())} for _ in bodies]
    rows: list[Row] = []  # COMPACTED[i] goes with rows[i]
    folder = Path(tempfile.mkdtemp(prefix="bench-gateway-"))
    with _upstream() as upstream:
        command, url = _gateway(upstream, "--threshold", "190k")
        with _process(command, url):
            rows.append(
                ("append path", "gateway", *_timed(url, "/v1/messages", bodies, direct=upstream))
            )
        command, url = _gateway(upstream, "--threshold", "100k", "--target", "60k")
        with _process(command, url):
            timed = _timed(url, "/v1/messages", bodies, direct=upstream)
            rows.append(("after a compaction", "gateway", *timed))
            few = bodies[-args.compressing_calls :]
            timed = _timed(url, "/v1/messages", few, fresh[-len(few) :], direct=upstream)
            rows.append(("compressing calls", "gateway", *timed))
        if args.latency_only:
            _table(rows)
            return 0
        if not args.no_litellm and (args.litellm_venv / "bin" / "litellm").exists():
            for compress in (False, True):
                name = f"litellm, compression {'on' if compress else 'off'}"
                command, url, env = _litellm(args.litellm_venv, upstream, compress, folder)
                try:
                    with _process(command, url, env=env, health="/health/liveliness"):
                        timed = _timed(url, "/v1/messages", bodies, direct=upstream)
                        rows.append(("append path", name, *timed))
                except RuntimeError as exc:
                    print(f"{name}: {exc}", file=sys.stderr)
        # throughput, on the mini-swe-agent run (one conversation a client)
        chat = [_chat_bodies(data, 60, key=f"bench-{k}-{uuid.uuid4()}") for k in range(16)]
        through: list[tuple[str, float]] = []
        through.append(("direct", asyncio.run(_throughput(upstream, chat, args.seconds))))
        for workers in (1, 4):
            chat = [_chat_bodies(data, 60, key=f"bench-{k}-{uuid.uuid4()}") for k in range(16)]
            command, url = _gateway(upstream, "--threshold", "60k", "--workers", str(workers))
            with _process(command, url):
                through.append(
                    (
                        f"gateway, {workers} worker(s)",
                        asyncio.run(_throughput(url, chat, args.seconds)),
                    )
                )
        # memory per 1,000 live conversations
        command, url = _gateway(upstream, "--threshold", "10k")
        with _process(command, url) as process:
            base = _chat_bodies(data, 1, key="warm", last=60)[0]
            template = json.loads(base)
            _timed(url, "/v1/chat/completions", [base], direct=upstream)
            before = _rss_kb(process.pid)
            with httpx.Client(timeout=60) as client:
                for k in range(args.conversations):
                    body = dict(template)
                    body["messages"] = [dict(template["messages"][0]), *template["messages"][1:]]
                    body["messages"][0]["content"] = f"conversation {k}: " + str(
                        body["messages"][0]["content"]
                    )
                    body["prompt_cache_key"] = f"c{k}"
                    client.post(
                        url + "/v1/chat/completions",
                        json=body,
                        headers={"authorization": "Bearer test"},
                    ).raise_for_status()
            after = _rss_kb(process.pid)
            metrics = httpx.get(url + "/metrics").text
    _table(rows)
    print()
    print("| throughput (16 clients, mini-swe-agent append path) | requests/s |")
    print("|---|---:|")
    for name, rate in through:
        print(f"| {name} | {rate:.1f} |")
    print()
    compacted = next((ln for ln in metrics.splitlines() if 'name="compacted"' in ln), "")
    each = (after - before) / args.conversations
    print(
        f"memory: {args.conversations:,} live conversations: RSS {before / 1024:.0f} MB -> "
        f"{after / 1024:.0f} MB: {each * 1000 / 1024:.0f} MB per 1,000 conversations "
        f"({each:.0f} kB each; {compacted.split()[-1] if compacted else '?'} compactions)"
    )
    return 0


def _table(rows: list[Row]) -> None:
    """The latency table: each run's p50 / p99, the direct calls' p50 / p99 in the same run,
    and the p50 / p99 of the per-call differences (the latency the path adds)."""
    print(
        "| path | through | calls | compacted | p50 ms | p99 ms | direct p50 ms | direct p99 ms "
        "| added p50 ms | added p99 ms | gateway's own p50 ms | own p99 ms | own CPU p50 ms "
        "| own CPU p99 ms |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (path, target, values, ref), compacted_calls, own, cpu in zip(
        rows, COMPACTED, OWN, CPU, strict=False
    ):
        added = [a - b for a, b in zip(values, ref, strict=True)]
        shown = compacted_calls if target == "gateway" else ""
        quantiles = [_p(own, 0.5), _p(own, 0.99), _p(cpu, 0.5), _p(cpu, 0.99)] if own else []
        mine = [f"{q:.2f}" for q in quantiles] or ["", "", "", ""]
        print(
            f"| {path} | {target} | {len(values)} | {shown} | {_p(values, 0.5):.1f} | "
            f"{_p(values, 0.99):.1f} | {_p(ref, 0.5):.1f} | {_p(ref, 0.99):.1f} | "
            f"{_p(added, 0.5):+.1f} | {_p(added, 0.99):+.1f} | {' | '.join(mine)} |"
        )


if __name__ == "__main__":
    sys.exit(main())
