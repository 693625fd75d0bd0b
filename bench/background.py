"""Compaction prepared in the background: the crossing call's latency with a slow summarizer.

Replays the largest held-out mini-swe-agent runs call by call through ``CompressingModel``
(threshold 20k, target 15k, a 128k window, ``Summarize(model=...)``), the conversation's
model answering in
``--call-s`` seconds and the summarizer in ``--summary-s`` (2 s), once with the compaction
prepared in the background (``CompactionStates(prepare_at=0.8)``, the default) and once
without (``prepare_at=None``: the summary is written when the request crosses the
threshold). Prints per run the median latency of the calls that compact nothing, the calls
that cross the threshold, split by whether they sent a compaction prepared in the background
or wrote one then (a history that jumps past the threshold from under ``prepare_at`` in one
call, or a request held after a compaction that stopped over the target, has nothing
prepared), the prepared compactions discarded, and the summarizer's calls.

    python bench/background.py                  # 2 runs, ~1 min
    python bench/background.py --runs 4 --summary-s 2 --call-s 0.3

Target (issue 35): with a 2 s summarizer the crossing call takes no longer than a call that
does not (within noise), and nothing is summarized twice.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _compress_cases import data_dir
from _wire_replay import calls, runs
from agent_adapter import CallableModel, ModelRequest, RunContext
from agent_adapter.context import (
    CompactionStates,
    CompressingModel,
    CompressionPolicy,
    Summarize,
)

SUMMARY = json.dumps({"task": "Fix the reported bug", "open_tasks": ["run the tests again"]})


async def replay(
    path: Path, *, background: bool, call_s: float, summary_s: float
) -> dict[str, float]:
    """One run through CompressingModel: latencies of plain and crossing calls, counts."""
    summarizer_calls = 0

    async def conversation(request: ModelRequest) -> str:
        await asyncio.sleep(call_s)
        return "ok"

    async def summarizer(request: ModelRequest) -> str:
        nonlocal summarizer_calls
        summarizer_calls += 1
        await asyncio.sleep(summary_s)
        return SUMMARY

    step = Summarize(model=CallableModel(summarizer), keep_recent_messages=6)
    policy = CompressionPolicy(
        threshold_tokens=20_000, target_tokens=15_000, model_max_tokens=128_000, steps=[step]
    )
    states = CompactionStates(prepare_at=0.8 if background else None)
    model = CompressingModel(CallableModel(conversation), policy, states=states)
    ctx = RunContext(thread_id=path.name)
    compacted: list[bool] = []
    swaps: list[str] = []

    def seen(event: Any) -> None:
        if event.name == "compression":
            compacted.append(True)
        elif event.name in ("compaction.swap", "compaction.discard"):
            swaps.append(event.name)

    ctx.subscribe(seen)
    plain: list[float] = []
    swapped: list[float] = []  # crossing calls that sent a compaction prepared earlier
    written: list[float] = []  # crossing calls that wrote their compaction then
    for history in calls(path):
        before, swaps_before = len(compacted), swaps.count("compaction.swap")
        t0 = time.perf_counter()
        await model.generate(ModelRequest(messages=history, ctx=ctx))
        seconds = time.perf_counter() - t0
        if len(compacted) == before:
            plain.append(seconds)
        elif swaps.count("compaction.swap") > swaps_before:
            swapped.append(seconds)
        else:
            written.append(seconds)
    return {
        "calls": len(plain) + len(swapped) + len(written),
        "plain": statistics.median(plain) if plain else float("nan"),
        "swapped": len(swapped),
        "swapped_max": max(swapped) if swapped else float("nan"),
        "written": len(written),
        "written_max": max(written) if written else float("nan"),
        "summaries": summarizer_calls,
        "discarded": swaps.count("compaction.discard"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="the shared data folder")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--call-s", type=float, default=0.3, help="the model's latency")
    parser.add_argument("--summary-s", type=float, default=2.0, help="the summarizer's")
    args = parser.parse_args()
    head = ["run", "mode", "calls", "median call that compacts nothing",
            "crossing calls sending a prepared compaction: n, slowest",
            "crossing calls writing it then: n, slowest", "discarded",
            "summarizer calls"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for path in runs(data_dir(args.data), args.runs):
        for background in (True, False):
            got = asyncio.run(
                replay(path, background=background, call_s=args.call_s, summary_s=args.summary_s)
            )
            mode = "prepared in the background" if background else "at the threshold"
            print(f"| {path.name.split('.')[0]} | {mode} | {got['calls']} | "
                  f"{got['plain']:.2f} s | {got['swapped']:g}, {got['swapped_max']:.2f} s | "
                  f"{got['written']:g}, {got['written_max']:.2f} s | {got['discarded']:g} | "
                  f"{got['summaries']:g} |")  # fmt: skip
    print(f"\nthe conversation's model answers in {args.call_s:g} s, the summarizer in "
          f"{args.summary_s:g} s; a crossing call is one that sent a compaction")  # fmt: skip


if __name__ == "__main__":
    main()
