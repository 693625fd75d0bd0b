"""Steady state: what CompressingModel costs an agent that resends its list one round longer.

A real trace (a 300-message Claude Code session and the longest mini-swe-agent run) is
replayed as an agent sends it: call k sends the first k rounds (the list so far, every time
the model is due to answer), through ``CompressingModel(CallableModel(echo), policy)`` whose
threshold sits at the middle call. Each call's overhead is its time minus the same request
sent to the bare ``CallableModel``; calls under the threshold and calls that compress are
shown apart, next to one LangChain ``trim_messages`` call on the whole list and one
``compress_for`` on it, timed in the same run. The replay is repeated with fresh message
objects (cold caches) and the medians kept.

    python bench/steady_state.py              # ~1 min on 2 cores
    python bench/steady_state.py --markdown   # the table in bench/README.md

Needs langchain-core (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _compress_cases import data_dir, timed
from _compress_langchain import lc_trim, to_langchain
from agent_adapter import CallableModel, Message, ModelRequest, ModelResponse
from agent_adapter.cli._loaders import Trace, load_trace
from agent_adapter.context import (
    CompressingModel,
    CompressionPolicy,
    compress_for,
    estimate_tokens,
)
from agent_adapter.context.formats import convert

CLAUDE_CODE = "claude-code-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
MINI_SWE = "mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-6197.traj.json"
MAX_MESSAGES = 300
REPLY = Message("assistant", "ok")


def call_points(messages: list[Message]) -> list[int]:
    """Prefix lengths at which an agent calls the model: after a user or tool message that
    the next message (an assistant turn) answers, and at the end."""
    n = len(messages)
    return [
        j
        for j in range(1, n + 1)
        if messages[j - 1].role in ("user", "tool") and (j == n or messages[j].role == "assistant")
    ]


async def atimed(fn: Callable[..., Awaitable[Any]], *args: Any) -> float:
    t0 = time.perf_counter()
    await fn(*args)
    return time.perf_counter() - t0


async def replay(trace: Trace, repeat: int) -> dict[str, Any]:
    natives = trace.messages
    first = convert(natives, trace.format).messages[:MAX_MESSAGES]
    points = call_points(first)
    threshold = estimate_tokens(first[: points[len(points) // 2]])
    policy = CompressionPolicy(threshold_tokens=threshold)
    compressed_at: set[int] = set()
    overhead: dict[int, list[float]] = {p: [] for p in points}
    via_compress_for: dict[int, list[float]] = {p: [] for p in points}
    sent: list[ModelRequest] = []

    async def echo(request: ModelRequest) -> ModelResponse:
        return ModelResponse(message=REPLY)

    async def spy(request: ModelRequest) -> ModelResponse:
        sent.append(request)
        return ModelResponse(message=REPLY)

    for _ in range(repeat):
        # fresh message objects each replay: nothing is cached from the previous one
        messages = convert(natives, trace.format).messages[:MAX_MESSAGES]
        bare = CallableModel(echo)
        wrapped = CompressingModel(CallableModel(spy), policy)
        gc.collect()
        gc.disable()
        try:
            for p in points:
                request = ModelRequest(messages=messages[:p])
                t_bare = await atimed(bare.generate, request)
                t_wrapped = await atimed(wrapped.generate, request)
                overhead[p].append(t_wrapped - t_bare)
                if sent[-1].messages is not request.messages:
                    compressed_at.add(p)
        finally:
            gc.enable()
        # the same replay through compress_for (what an agent calls today), fresh objects
        messages = convert(natives, trace.format).messages[:MAX_MESSAGES]
        gc.collect()
        gc.disable()
        try:
            for p in points:
                via_compress_for[p].append(await atimed(compress_for, messages[:p], policy))
        finally:
            gc.enable()

    def median_over(times: dict[int, list[float]], compressing: bool) -> list[float]:
        return [statistics.median(times[p]) for p in points if (p in compressed_at) == compressing]

    lc_messages = to_langchain(trace)
    lc_messages = lc_messages[: len(lc_messages) * len(first) // max(1, len(natives))]
    target = policy.limits().target_tokens
    t_trim, _ = timed(lambda: lc_trim(lc_messages, target), max(20, repeat * 4))
    return {
        "trace": f"{trace.source} {trace.name[:24]}",
        "messages": len(first),
        "under": median_over(overhead, False),
        "over": median_over(overhead, True),
        "cf_under": median_over(via_compress_for, False),
        "cf_over": median_over(via_compress_for, True),
        "trim": t_trim,
    }


def fmt_us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    data = data_dir(args.data)
    rows = []
    for rel in (CLAUDE_CODE, MINI_SWE):
        trace = load_trace(Path(data) / rel)
        rows.append(asyncio.run(replay(trace, args.repeat)))

    header = [
        "trace",
        "msgs",
        "calls under / compressing",
        "under-threshold overhead µs",
        "compressing call µs",
        "trim_messages µs",
        "under / trim",
        "compress_for under µs",
        "compress_for compressing µs",
    ]

    def med(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    lines = []
    for r in rows:
        under = med(r["under"])
        lines.append(
            [
                r["trace"],
                str(r["messages"]),
                f"{len(r['under'])} / {len(r['over'])}",
                fmt_us(under),
                fmt_us(med(r["over"])),
                fmt_us(r["trim"]),
                f"1/{r['trim'] / under:,.0f}" if under > 0 else "-",
                fmt_us(med(r["cf_under"])),
                fmt_us(med(r["cf_over"])),
            ]
        )
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        for line in lines:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))
    print(
        f"\nMedians per call over {args.repeat} replays with fresh messages, then over the "
        "calls of each kind. Overhead: CompressingModel(CallableModel(echo)).generate minus "
        "the bare CallableModel(echo).generate of the same request. compress_for: the same "
        "replay through compress_for(messages[:k], policy) on agent_adapter messages. "
        "trim_messages: one call on the whole list (LangChain messages of the same trace), "
        "max_tokens = the policy's target."
    )


if __name__ == "__main__":
    main()
