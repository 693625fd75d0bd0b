"""Steady state: what CompressingModel costs an agent that resends its list one round longer.

A real trace (a 300-message Claude Code session and the longest mini-swe-agent run) is
replayed as an agent sends it: call k sends the first k rounds (the list so far, every time
the model is due to answer), through ``CompressingModel(CallableModel(echo), policy)`` whose
threshold sits at the middle call. Each call's overhead is its time minus the same request
sent to the bare ``CallableModel``; calls under the threshold and calls that compress are
shown apart, next to one LangChain ``trim_messages`` call on the whole list and one
``compress_for`` on it, timed in the same run. The replay is repeated with fresh message
objects (cold caches) and the medians kept.

A second table replays ``compress_for`` on native lists (what an agent on a provider SDK or
LangChain sends): the trace's own natives (Anthropic dicts, Chat Completions dicts) and the
same conversation written as each other format (Chat dicts, Responses items, Gemini contents,
LangChain messages), one round more each call, with the steady-state memo
(``context/formats/_memo.py``) and without it (today's full detection and conversion) in the
same run. ``--no-formats`` skips it.

    python bench/steady_state.py              # ~2 min on 2 cores
    python bench/steady_state.py --markdown   # the table in bench/README.md

Needs langchain-core (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
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
from agent_adapter.context.formats import AnthropicConverter, convert
from agent_adapter.context.formats._gemini import GeminiConverter
from agent_adapter.context.formats._langchain import LangChainConverter
from agent_adapter.context.formats._memo import disabled
from agent_adapter.context.formats._openai import ChatConverter, ResponsesConverter

CLAUDE_CODE = "claude-code-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
MINI_SWE = "mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-6197.traj.json"
MAX_MESSAGES = 300
REPLY = Message("assistant", "ok")
FORMATS = ("anthropic", "openai chat", "openai responses", "gemini", "langchain")
FORMAT_NAMES = {
    "anthropic": "anthropic",
    "openai chat": "openai",
    "openai responses": "openai",
    "gemini": "gemini",
    "langchain": "langchain",
}


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


# ----------------------------------------------------------------------------------------------
# compress_for on native lists of each format


def _dumper(fmt: str) -> Callable[[list[Message]], list[Any]]:
    return {
        "anthropic": AnthropicConverter().dump_all,
        "openai chat": ChatConverter().dump_all,
        "openai responses": ResponsesConverter().dump_all,
        "gemini": GeminiConverter(objects=False).dump_all,
        "langchain": LangChainConverter().dump_all,
    }[fmt]


def _native_rounds(trace: Trace, fmt: str, messages: list[Message]) -> list[list[Any]]:
    """The natives an agent sends, one round more each call: the trace's own natives (cut
    before each assistant native that follows another role) for its own format, else the
    conversation written in ``fmt`` round by round (each round's natives made once: the same
    objects in every later call)."""
    own = "anthropic" if trace.format == "anthropic" else "openai chat"
    if fmt == own:
        natives = copy.deepcopy(trace.messages[: _natives_for(trace, len(messages))])
        cuts = [
            j
            for j in range(1, len(natives))
            if natives[j].get("role") == "assistant" and natives[j - 1].get("role") != "assistant"
        ]
        return [natives[:j] for j in [*cuts, len(natives)]]
    dump = _dumper(fmt)
    points = call_points(messages)
    out: list[list[Any]] = []
    natives = []
    start = 0
    for p in points:
        natives.extend(dump(messages[start:p]))
        start = p
        out.append(list(natives))
    return out


def _natives_for(trace: Trace, n_messages: int) -> int:
    """How many of the trace's natives hold its first ``n_messages`` messages."""
    conversion = convert(trace.messages, trace.format)
    return (
        conversion.native_index(n_messages)
        if n_messages < len(conversion.messages)
        else len(trace.messages)
    )


async def replay_formats(trace: Trace, repeat: int) -> list[dict[str, Any]]:
    """compress_for(natives[:k], policy) replayed as an agent sends them, in each format,
    with the memo and without it (today's full conversion) in the same run, and one
    ``trim_messages`` call on the whole list timed between the calls (every 8th), so the
    ratio compares figures taken under the same machine load."""
    messages = convert(trace.messages, trace.format).messages[:MAX_MESSAGES]
    lc_messages = to_langchain(trace)
    lc_messages = lc_messages[: len(lc_messages) * len(messages) // max(1, len(trace.messages))]
    rows = []
    for fmt in FORMATS:
        lists = _native_rounds(trace, fmt, messages)
        with disabled():
            sizes = [estimate_tokens(convert(lst, FORMAT_NAMES[fmt]).messages) for lst in lists]
        threshold = sorted(sizes)[len(sizes) // 2]
        policy = CompressionPolicy(threshold_tokens=threshold)
        memo: dict[int, list[float]] = {k: [] for k in range(len(lists))}
        today: dict[int, list[float]] = {k: [] for k in range(len(lists))}
        target = policy.limits().target_tokens
        trims: list[float] = []
        for r in range(repeat):
            lists = _native_rounds(trace, fmt, messages)  # fresh objects: a cold memo
            gc.collect()
            gc.disable()
            try:
                for k, natives in enumerate(lists):
                    memo[k].append(await atimed(compress_for, natives, policy))
                    if k % 3 == r % 3:  # today's path on every third call (it is slow)
                        with disabled():
                            today[k].append(await atimed(compress_for, natives, policy))
                    if k % 8 == 0:
                        t0 = time.perf_counter()
                        lc_trim(lc_messages, target)
                        trims.append(time.perf_counter() - t0)
            finally:
                gc.enable()
        under = [k for k in range(len(lists)) if sizes[k] <= threshold]
        over = [k for k in range(len(lists)) if sizes[k] > threshold]

        def med(times: dict[int, list[float]], ks: list[int]) -> float:
            values = [statistics.median(times[k]) for k in ks if times[k]]
            return statistics.median(values) if values else float("nan")

        rows.append(
            {
                "trace": f"{trace.source} {trace.name[:12]}",
                "format": fmt + (" (real)" if fmt == _own(trace) else ""),
                "natives": len(lists[-1]),
                "calls": f"{len(under)} / {len(over)}",
                "under": med(memo, under[1:]),  # the first call loads everything
                "today_under": med(today, under),
                "over": med(memo, over),
                "today_over": med(today, over),
                "trim": statistics.median(trims),
            }
        )
    return rows


def _own(trace: Trace) -> str:
    return "anthropic" if trace.format == "anthropic" else "openai chat"


def fmt_us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--no-formats", action="store_true", help="skip compress_for on native formats"
    )
    args = parser.parse_args()
    data = data_dir(args.data)
    rows = []
    native_rows: list[dict[str, Any]] = []
    for rel in (CLAUDE_CODE, MINI_SWE):
        trace = load_trace(Path(data) / rel)
        rows.append(asyncio.run(replay(trace, args.repeat)))
        if not args.no_formats:
            native_rows.extend(asyncio.run(replay_formats(trace, max(2, args.repeat // 2))))

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
    show(header, lines, args.markdown)
    print(
        f"\nMedians per call over {args.repeat} replays with fresh messages, then over the "
        "calls of each kind. Overhead: CompressingModel(CallableModel(echo)).generate minus "
        "the bare CallableModel(echo).generate of the same request. compress_for: the same "
        "replay through compress_for(messages[:k], policy) on agent_adapter messages. "
        "trim_messages: one call on the whole list (LangChain messages of the same trace), "
        "max_tokens = the policy's target."
    )
    if not native_rows:
        return
    header = [
        "trace",
        "format",
        "natives",
        "calls under / compressing",
        "compress_for under µs",
        "under / trim",
        "today under µs",
        "compress_for compressing µs",
        "today compressing µs",
        "trim_messages µs",
    ]
    lines = [
        [
            r["trace"],
            r["format"],
            str(r["natives"]),
            r["calls"],
            fmt_us(r["under"]),
            f"1/{r['trim'] / r['under']:,.0f}" if r["under"] > 0 else "-",
            fmt_us(r["today_under"]),
            fmt_us(r["over"]),
            fmt_us(r["today_over"]),
            fmt_us(r["trim"]),
        ]
        for r in native_rows
    ]
    print()
    show(header, lines, args.markdown)
    print(
        "\ncompress_for(natives[:k], policy) on native lists replayed as an agent sends them "
        "(the same natives plus one round each call; format detected), threshold at the "
        "middle call; medians per call over the replays (fresh objects each), then over the "
        "calls of each kind (under: all but the first call). today: the same call with the "
        "memo off (detection and conversion of the whole list), timed on every third call. "
        "(real): the trace's own natives; other formats are the same conversation written "
        "by the library's converters. trim_messages: one call on the whole list as above, "
        "timed between the compress_for calls of each row (every 8th call)."
    )


def show(header: list[str], lines: list[list[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for line in lines:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for line in lines:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))


if __name__ == "__main__":
    main()
