"""RemoveDuplicates(match="similar") on real coding traces: tokens saved, pairing kept.

Every mini-swe-agent run and the five long Claude Code sessions (``../shared/data``) go
through ``RemoveDuplicates`` alone with a target of 0 tokens (every copy it may drop goes),
``match="exact"`` as the reference, then ``match="similar"`` with BM25Scorer and with
EmbeddingScorer(LocalEmbedder()) at ``same_if_score_above=0.9``. Columns: tokens before
(estimate_tokens), % saved, messages dropped, tool rounds dropped, and pairing problems in the
output (the library's one pairing rule; must be 0: every kept result has its call). Times
are of one apply (embeddings from the on-disk cache after the first run; ``--cache-dir``).

    python bench/dedup_similar.py
    python bench/dedup_similar.py --quick     # 4 mini-swe-agent runs and 2 sessions
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _compress_cases import LONG_SESSION_MESSAGES, QUICK_MINI, data_dir
from _embed_cache import DiskCachedEmbedder, default_cache_dir
from agent_adapter import Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    BM25Scorer,
    EmbeddingScorer,
    LocalEmbedder,
    RemoveDuplicates,
    estimate_tokens,
)
from agent_adapter.context._pairing import pair_messages
from agent_adapter.context._steps._base import StepContext
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import Protection, split_units
from agent_adapter.context.formats import convert


def traces(data: Path, quick: bool) -> list[tuple[str, str, list[Message]]]:
    out = []
    mini = sorted((data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"))
    if quick:
        mini = [p for p in mini if p.name.removesuffix(".traj.json") in QUICK_MINI]
    sessions = sorted((data / "claude-code-spotter").glob("*.jsonl"))
    for group, paths in (("mini-swe-agent", mini), ("claude-code", sessions)):
        for path in paths:
            trace = load_trace(path)
            if group == "claude-code" and len(trace.messages) < LONG_SESSION_MESSAGES:
                continue
            msgs = convert(trace.messages, trace.format).messages
            out.append((group, trace.name[:32], msgs))
    if quick:
        out = [t for t in out if t[0] == "mini-swe-agent"] + [
            t for t in out if t[0] == "claude-code"
        ][:2]
    return out


def problems(msgs: Sequence[Message]) -> int:
    return sum(p.rule != "calls_pending_at_end" for p in pair_messages(msgs).problems)


def run(step: RemoveDuplicates, msgs: list[Message]) -> tuple[list[Message], float]:
    context = StepContext(
        target_tokens=0, threshold_tokens=0, protection=Protection(msgs), meter=TokenMeter()
    )
    t0 = time.perf_counter()
    out = asyncio.run(step.apply(list(msgs), context))
    return out, time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--cache-dir", default=str(default_cache_dir()))
    args = parser.parse_args(argv)
    embedder = DiskCachedEmbedder(LocalEmbedder(), Path(args.cache_dir) / "minilm-int8.sqlite")
    steps: dict[str, RemoveDuplicates] = {
        "exact": RemoveDuplicates(),
        "bm25": RemoveDuplicates(
            match="similar", scorer=BM25Scorer(), same_if_score_above=args.threshold
        ),
        "minilm": RemoveDuplicates(
            match="similar",
            scorer=EmbeddingScorer(embedder),  # type: ignore[arg-type]
            same_if_score_above=args.threshold,
        ),
    }
    head = " | ".join(f"{n} % saved | {n} msgs / rounds | {n} s" for n in steps)
    print(f"RemoveDuplicates, target 0, same_if_score_above={args.threshold}\n")
    print(f"| trace | group | tokens | {head} |")
    print("|---|---|---:|" + "---:|---:|---:|" * len(steps))
    totals: dict[str, list[Any]] = {n: [0, 0, 0, 0.0, 0] for n in steps}  # saved, msgs, rounds
    before_all = 0
    for group, name, msgs in traces(data_dir(args.data), args.quick):
        before = estimate_tokens(msgs)
        before_all += before
        cells = []
        rounds_before = sum(u.is_tool_round for u in split_units(msgs))
        for label, step in steps.items():
            out, seconds = run(step, msgs)
            saved = before - estimate_tokens(out)
            rounds = rounds_before - sum(u.is_tool_round for u in split_units(out))
            t = totals[label]
            t[0] += saved
            t[1] += len(msgs) - len(out)
            t[2] += rounds
            t[3] += seconds
            t[4] += problems(out)
            cells.append(
                f"{100 * saved / before:.1f} | {len(msgs) - len(out)} / {rounds} | {seconds:.2f}"
            )
        print(f"| {name} | {group} | {before:,} | " + " | ".join(cells) + " |")
    cells = [
        f"**{100 * t[0] / before_all:.1f}** | {t[1]} / {t[2]} | {t[3]:.1f}" for t in totals.values()
    ]
    print(f"| **all** | | {before_all:,} | " + " | ".join(cells) + " |")
    print(
        "\npairing problems in the outputs: "
        + ", ".join(f"{n} {t[4]}" for n, t in totals.items())
        + f"; texts embedded this run (cache misses): {embedder.embedded:,}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
