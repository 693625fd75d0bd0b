"""A loop that never spins: compactions over an agent's replay where the target is out of reach.

The five long Claude Code sessions of ``../shared/data`` are replayed as an agent sends them
(call k sends the history up to the k-th assistant turn) through one conversation's
:class:`~agent_adapter.context.Compactor`, at a threshold and a target the protected part
(system prompt, latest user message, newest turn) often makes unreachable: 60k -> 20k. For
each session: how many calls compacted, how many of those freed less than the gap
(threshold - target), the median and smallest freed, how many calls were held (over the
threshold, sent as they were because the last compaction could not free the gap), the
largest request sent, and the share of input a prompt cache would read. Peer reference in the
same run: LangChain's ``trim_messages`` has no state and trims every call over the budget
(its column counts the calls it would have trimmed).

    python bench/loop.py                  # 5 sessions at 60k -> 20k
    python bench/loop.py --threshold 40000 --target 30000
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _compress_cases import data_dir
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import CompressionPolicy

try:  # the Compactor (this library from issue 32 on)
    from agent_adapter.context import Compactor
except ImportError:  # an older checkout: compress_for with explicit states, as it was
    Compactor = None


def _tokens(native: Any) -> int:
    return len(json.dumps(native, default=str)) // 4 + 4


def _calls(natives: list[Any]) -> list[int]:
    cuts = [
        i
        for i in range(1, len(natives))
        if isinstance(natives[i], dict) and natives[i].get("role") == "assistant"
    ]
    return [*cuts, len(natives)]


def _compress(policy: CompressionPolicy, name: str) -> Any:
    if Compactor is not None:
        return Compactor(policy, conversation=name).compress_sync
    from agent_adapter.context import CompactionStates, compress_for_sync

    states = CompactionStates()
    return lambda history: compress_for_sync(history, policy, states=states, conversation=name)


def replay(path: Path, threshold: int, target: int) -> list[str]:
    """One session's row."""
    trace = load_trace(path)
    policy = CompressionPolicy(threshold_tokens=threshold, target_tokens=target)
    compress = _compress(policy, path.stem)
    gap = threshold - target
    freed: list[int] = []
    held = over = trimmed = 0
    largest = 0
    prev: list[Any] = []
    total = read = 0
    for cut in _calls(trace.messages):
        history = trace.messages[:cut]
        if sum(map(_tokens, history)) > threshold:
            trimmed += 1
        request, report = compress(history)
        if report.steps and report.tokens_after < report.tokens_before:
            freed.append(report.tokens_before - report.tokens_after)
        if getattr(report, "skipped", "") == "held":
            held += 1
        if report.tokens_after > threshold:
            over += 1
        largest = max(largest, report.tokens_after)
        sizes = [_tokens(n) for n in request]
        shared = 0
        for a, b in zip(prev, request, strict=False):
            if a is not b and a != b:
                break
            shared += 1
        total += sum(sizes)
        read += sum(sizes[:shared])
        prev = list(request)
    small = sum(f < gap for f in freed)
    return [
        path.stem[:8],
        str(len(_calls(trace.messages))),
        str(len(freed)),
        str(small),
        f"{statistics.median(freed):,.0f} / {min(freed):,}" if freed else "-",
        str(held),
        str(over),
        f"{largest:,}",
        f"{read / total:.0%}" if total else "-",
        str(trimmed),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--threshold", type=int, default=60_000)
    parser.add_argument("--target", type=int, default=20_000)
    args = parser.parse_args(argv)
    sessions = sorted(
        (data_dir(args.data) / "claude-code-spotter").glob("*.jsonl"),
        key=lambda p: -p.stat().st_size,
    )[:5]
    head = [
        "session",
        "calls",
        "compactions",
        "freed < gap",
        "freed median / min",
        "held",
        "calls over threshold",
        "largest request",
        "cache reads",
        "trim_messages: calls trimmed",
    ]
    print(f"threshold {args.threshold:,} -> target {args.target:,}")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for path in sessions:
        print("| " + " | ".join(replay(path, args.threshold, args.target)) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
