"""The context gateway (``agent-adapter gateway``) next to the upstream called directly and
LiteLLM's proxy: added latency, throughput and memory, on a replayed real session.

Everything runs on this machine, each server a process of its own: the upstream is
``agent_adapter.testing.ProviderServer`` (answers at once, no prompt cache), the client an
``httpx`` client sending prebuilt bodies (the SDKs' own cost is the same on every path).

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

Added latency: the path's median (p99) less the direct median (p99), each over the same
calls (percentiles of separate runs, not of per-call differences). Throughput: requests a
second with 16 concurrent clients for ``--seconds``, on the append path of the shorter
mini-swe-agent run (``pytest-6197``, 40k-80k tokens), gateway with 1 and 4 workers. Memory:
the gateway's resident set size after 1,000 conversations of the mini-swe-agent run (its first
60 messages, ~20k tokens, each compacted once at a 10k threshold), less before.

    python bench/gateway.py                  # ~4 min on 2 cores (LiteLLM's start is ~1 min)
    python bench/gateway.py --no-litellm     # the gateway and the direct calls only

Needs the agent-adapter-gateway distribution (``pip install -e packages/agent-adapter-gateway``)
and, for LiteLLM, ``python -m venv /work/venvs/litellm && /work/venvs/litellm/bin/pip install
'litellm[proxy]'`` (it starts offline with ``LITELLM_LOCAL_MODEL_COST_MAP=True``).
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
    import sys, time
    from agent_adapter.testing import ProviderServer, Reply
    server = ProviderServer(default=Reply(text="ok", input_tokens=10, output_tokens=2),
                            prompt_cache=False).start()
    print(server.url, flush=True)
    while True:
        time.sleep(3600)
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


#: how many timed calls of each run the gateway compacted for (no x-agent-adapter-skipped)
COMPACTED: list[int] = []


def _timed(
    url: str, path: str, bodies: Sequence[bytes], headers: list[dict[str, str]] | None = None
) -> list[float]:
    """Milliseconds of each call (a warm-up call first, not counted)."""
    out = []
    COMPACTED.append(0)
    with httpx.Client(timeout=300) as client:
        base = {
            "content-type": "application/json",
            "x-api-key": "test",
            "anthropic-version": "2023-06-01",
            "authorization": "Bearer test",
        }
        client.post(url + path, content=bodies[0], headers=base).raise_for_status()
        for i, body in enumerate(bodies):
            extra = headers[i] if headers else {}
            start = time.perf_counter()
            reply = client.post(url + path, content=body, headers={**base, **extra})
            out.append((time.perf_counter() - start) * 1000)
            if reply.status_code != 200:
                raise RuntimeError(f"{url}{path}: {reply.status_code} {reply.text[:300]}")
            if "x-agent-adapter-tokens-after" in reply.headers:
                COMPACTED[-1] += "x-agent-adapter-skipped" not in reply.headers
    return out


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
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    bodies = _anthropic_bodies(data, args.calls)
    fresh = [{"x-agent-adapter-conversation": str(uuid.uuid4())} for _ in bodies]
    rows: list[tuple[str, str, list[float]]] = []  # COMPACTED[i] goes with rows[i]
    folder = Path(tempfile.mkdtemp(prefix="bench-gateway-"))
    with _upstream() as upstream:
        rows.append(("append path", "direct", _timed(upstream, "/v1/messages", bodies)))
        command, url = _gateway(upstream, "--threshold", "190k")
        with _process(command, url):
            rows.append(("append path", "gateway", _timed(url, "/v1/messages", bodies)))
        command, url = _gateway(upstream, "--threshold", "100k", "--target", "60k")
        with _process(command, url):
            rows.append(("after a compaction", "gateway", _timed(url, "/v1/messages", bodies)))
            few = bodies[-args.compressing_calls :]
            rows.append(
                (
                    "compressing calls",
                    "gateway",
                    _timed(url, "/v1/messages", few, fresh[-len(few) :]),
                )
            )
        if not args.no_litellm and (args.litellm_venv / "bin" / "litellm").exists():
            for compress in (False, True):
                name = f"litellm, compression {'on' if compress else 'off'}"
                command, url, env = _litellm(args.litellm_venv, upstream, compress, folder)
                try:
                    with _process(command, url, env=env, health="/health/liveliness"):
                        rows.append(("append path", name, _timed(url, "/v1/messages", bodies)))
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
            _timed(url, "/v1/chat/completions", [base])
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
    direct = {path: vs for path, target, vs in rows if target == "direct"}
    base_ms = direct["append path"]
    print("| path | through | calls | compacted | p50 ms | p99 ms | added p50 ms | added p99 ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (path, target, values), compacted_calls in zip(rows, COMPACTED, strict=False):
        ref = base_ms[-len(values) :]
        add50 = _p(values, 0.5) - _p(ref, 0.5)
        add99 = _p(values, 0.99) - _p(ref, 0.99)
        added = ("", "") if target == "direct" else (f"{add50:+.1f}", f"{add99:+.1f}")
        shown = compacted_calls if target == "gateway" else ""
        print(
            f"| {path} | {target} | {len(values)} | {shown} | {_p(values, 0.5):.1f} | "
            f"{_p(values, 0.99):.1f} | {added[0]} | {added[1]} |"
        )
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


if __name__ == "__main__":
    sys.exit(main())
