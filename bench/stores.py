"""Tool-result stores: write and recall throughput, and what ShrinkToolResults adds with each.

    python bench/stores.py            # ~1 min on 2 cores; starts redis-server when needed
    python bench/stores.py --quick    # fewer entries and repeats

Throughput: ``--n`` texts of ``--size`` characters, saved one a call (``save_many`` with one
entry: what one shrunk result costs) and read back (``load``), sequential and 100 at a time
(``asyncio.gather``), against a named reference in the same run: the backend used directly
(a dict; sqlite3 ``INSERT``/``SELECT`` on one connection; redis-py asyncio ``SET``/``GET``).
Latency: ``compress_for`` of a real Claude Code session (anthropic format) with
``ShrinkToolResults(save_to=store)``, against the same step with ``save_to=None``; the added
milliseconds are the store's cost (staging, the commit's scan and one transaction).

Redis: ``$AGENT_ADAPTER_REDIS_URL``, else a ``redis-server`` started here on a free port
(stopped at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aredis

from _compress_cases import data_dir
from agent_adapter.cli._loaders import load_claude_code
from agent_adapter.context import CompressionPolicy, ShrinkToolResults, compress_for
from agent_adapter.context._stores import MemoryStore, RedisStore, SQLiteStore, StoreEntry

SESSION = "claude-code-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@contextlib.contextmanager
def redis_url() -> Iterator[str]:
    url = os.environ.get("AGENT_ADAPTER_REDIS_URL")
    if url:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("no redis-server: install it (Debian) or set AGENT_ADAPTER_REDIS_URL")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", folder]
        proc = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            client = redis.Redis.from_url(url)
            for _ in range(200):
                with contextlib.suppress(redis.ConnectionError):
                    client.ping()
                    break
                time.sleep(0.02)
            client.close()
            yield url
        finally:
            proc.kill()
            proc.wait()


async def rate(n: int, fn: Callable[[int], Awaitable[Any]], concurrency: int) -> float:
    """Calls per second of ``fn(i)`` for i < n, ``concurrency`` at a time."""
    t0 = time.perf_counter()
    if concurrency == 1:
        for i in range(n):
            await fn(i)
    else:
        for start in range(0, n, concurrency):
            await asyncio.gather(*(fn(i) for i in range(start, min(n, start + concurrency))))
    return n / (time.perf_counter() - t0)


async def throughput(
    name: str, store: Any, raw: tuple[str, Any, Any], n: int, size: int
) -> list[list[str]]:
    texts = [f"{i:08d} " + "x" * (size - 9) for i in range(n)]
    ids = [f"{i:032x}" for i in range(n)]
    rows = []
    for conc in (1, 100):
        scope = f"bench:{uuid.uuid4().hex}"

        async def write(i: int, scope: str = scope) -> None:
            await store.save_many([StoreEntry(scope, ids[i], texts[i], 3600)])

        async def read(i: int, scope: str = scope) -> None:
            assert await store.load(scope, ids[i]) == texts[i]

        raw_name, raw_write, raw_read = raw

        async def rwrite(i: int, scope: str = scope, fn: Any = raw_write) -> None:
            await fn(f"{scope}:raw:{i}", texts[i])

        async def rread(i: int, scope: str = scope, fn: Any = raw_read) -> None:
            await fn(f"{scope}:raw:{i}")

        w, r = await rate(n, write, conc), await rate(n, read, conc)
        rw, rr = await rate(n, rwrite, conc), await rate(n, rread, conc)
        rows.append(
            [name, str(conc), f"{w:,.0f}", f"{r:,.0f}", raw_name, f"{rw:,.0f}", f"{rr:,.0f}"]
        )
    return rows


def sqlite_raw(path: Path) -> tuple[str, Any, Any]:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v BLOB)")

    async def write(k: str, v: str) -> None:
        conn.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (k, v.encode()))

    async def read(k: str) -> None:
        conn.execute("SELECT v FROM kv WHERE k = ?", (k,)).fetchone()

    return "sqlite3, one connection, in the loop", write, read


def dict_raw() -> tuple[str, Any, Any]:
    data: dict[str, str] = {}

    async def write(k: str, v: str) -> None:
        data[k] = v

    async def read(k: str) -> None:
        data.get(k)

    return "dict", write, read


def redis_raw(client: Any) -> tuple[str, Any, Any]:
    async def write(k: str, v: str) -> None:
        await client.set(k, v.encode(), ex=3600)

    async def read(k: str) -> None:
        await client.get(k)

    return "redis-py asyncio SET/GET", write, read


async def shrink_latency(
    natives: list[Any], stores: dict[str, Any], repeat: int
) -> list[list[str]]:
    async def once(store: Any) -> tuple[float, int]:
        step = ShrinkToolResults(save_to=store, bigger_than_tokens=200, older_than_turns=2)
        t0 = time.perf_counter()
        _, report = await compress_for(
            natives, CompressionPolicy(target_tokens=20_000, steps=[step]), states=False
        )
        return time.perf_counter() - t0, report.messages_changed

    # interleaved (reference, then each store, in turn) so load on the machine hits all alike
    named: dict[str, Any] = {"none (reference)": None, **stores}
    times: dict[str, list[float]] = {name: [] for name in named}
    shrunk: dict[str, int] = {}
    for k in range(repeat + 1):
        for name, store in named.items():
            t, shrunk[name] = await once(store)
            if k:  # the first round warms up
                times[name].append(t)
    base_ms = statistics.median(times["none (reference)"]) * 1000
    rows = []
    for name in named:
        ms = statistics.median(times[name]) * 1000
        added = "" if named[name] is None else f"{ms - base_ms:+.1f}"
        rows.append([name, f"{ms:.1f}", added, str(shrunk[name])])
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    return "\n".join([line, sep, *body])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--n", type=int, default=5000, help="texts per run")
    parser.add_argument("--size", type=int, default=2000, help="characters per text")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.n, args.repeat = 1000, 5
    natives = load_claude_code(str(data_dir(args.data) / SESSION))
    with redis_url() as url, tempfile.TemporaryDirectory() as folder:
        rstore = RedisStore(url, prefix=f"bench:{uuid.uuid4().hex}:")
        rclient = aredis.Redis.from_url(url)
        sstore = SQLiteStore(Path(folder) / "store.sqlite3")
        try:
            rows = []
            rows += await throughput("MemoryStore", MemoryStore(), dict_raw(), args.n, args.size)
            rows += await throughput(
                "SQLiteStore", sstore, sqlite_raw(Path(folder) / "raw.sqlite3"), args.n, args.size
            )
            rows += await throughput("RedisStore", rstore, redis_raw(rclient), args.n, args.size)
            print(f"Store throughput: {args.n} texts of {args.size} chars, one text a call\n")
            header = ["store", "at once", "save/s", "load/s", "reference", "ref set/s", "ref get/s"]
            print(table(header, rows))
            stores = {
                "MemoryStore": MemoryStore(),
                "SQLiteStore": SQLiteStore(Path(folder) / "shrink.sqlite3"),
                "RedisStore": rstore,
            }
            lat = await shrink_latency(natives, stores, args.repeat)
            print(f"\nShrinkToolResults on {SESSION} (compress_for, anthropic, median of ")
            print(f"{args.repeat} after a warm-up)\n")
            print(table(["save_to", "ms", "added ms", "results shrunk"], lat))
            stores["SQLiteStore"].close()
        finally:
            await rstore.aclose()
            await rclient.aclose()
            sstore.close()


if __name__ == "__main__":
    asyncio.run(main())
