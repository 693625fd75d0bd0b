#!/usr/bin/env python
"""Benchmark: the default compression pipeline vs LangChain ``trim_messages`` on real traces.

For every trace: ``compress_for(natives, CompressionPolicy(target_tokens=T))`` (convert, the
four deterministic default steps, and back to the native format) against
``langchain_core.messages.trim_messages(strategy="last", start_on="human",
include_system=True, allow_partial=False)`` with the same chars/4 + 4 per message token count,
on the same conversation converted to LangChain messages by a private converter
(``_compress_langchain.py``; the library's own converters are deliberately not used on the
LangChain side).

Usage::

    python bench/compress_bench.py [--data DIR] [--target 32000] [--repeat N] [--quick]
                                   [--markdown]

The data directory is ``--data``, else ``$AGENT_ADAPTER_DATA``, else ``<repo>/../shared/data``.
See bench/README.md for what every column means.
"""

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from _compress_cases import CLOCKS, Case, clock, data_dir, load_cases, timed
from _compress_checks import anthropic_shape_problem, pairing_problem, survived, why_not_reached
from _compress_langchain import lc_token_counter, lc_trim, to_langchain
from agent_adapter.context import CompressionPolicy, CompressionReport, compress_for
from agent_adapter.context import estimate_tokens as _estimate_tokens
from agent_adapter.context.formats import convert

# ----------------------------------------------------------------------------------------------
# measuring


@dataclass
class Row:
    case: Case
    messages: int
    tokens_before: int
    lc_tokens_before: int
    ours_ms: float = 0.0
    noop_us: float = 0.0
    report: CompressionReport | None = None
    ours_valid: str = ""
    ours_kept: tuple[str, str] = ("-", "-")
    lc_ms: float = 0.0
    lc_tokens_after: int = 0
    lc_messages_after: int = 0
    lc_valid: str = ""
    lc_kept: tuple[str, str] = ("-", "-")
    input_valid: str = ""
    shape: str = ""
    notes: list[str] = field(default_factory=list)


async def _timed_async(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median seconds of ``await fn()`` over ``repeat`` runs after one untimed warm-up run
    (gc off while timing), and the last result."""
    await fn()
    gc.collect()
    gc.disable()
    try:
        times, result = [], None
        for _ in range(repeat):
            t0 = clock[0]()
            result = await fn()
            times.append(clock[0]() - t0)
    finally:
        gc.enable()
    return statistics.median(times), result


async def measure(case: Case, repeat: int) -> Row:
    trace, fmt = case.trace, case.trace.format
    natives = trace.messages
    tokens_before = _estimate_tokens(convert(natives, fmt).messages)
    lc_messages = to_langchain(trace)
    row = Row(case, len(natives), tokens_before, lc_token_counter(lc_messages))
    row.input_valid = pairing_problem(fmt, natives)
    snapshot = json.dumps(natives, sort_keys=True, default=str)

    policy = CompressionPolicy(target_tokens=case.target)
    seconds, (out, report) = await _timed_async(
        lambda: compress_for(natives, policy, format=fmt, states=False), repeat
    )
    row.ours_ms, row.report = seconds * 1e3, report
    row.ours_valid = pairing_problem(fmt, out)
    row.ours_kept = survived(fmt, natives, out)
    if fmt == "anthropic" and not anthropic_shape_problem(natives):
        row.shape = anthropic_shape_problem(out)
    if not report.reached_target:
        row.notes.append(await why_not_reached(case))
    if report.tokens_after != _estimate_tokens(convert(out, fmt).messages):
        row.notes.append("report.tokens_after differs from a recount of the native output")

    idle = CompressionPolicy(threshold_tokens=tokens_before + 1)
    seconds, (same, idle_report) = await _timed_async(
        lambda: compress_for(natives, idle, format=fmt, states=False), max(repeat * 4, 20)
    )
    row.noop_us = seconds * 1e6
    if same is not natives or idle_report.skipped != "under_threshold":
        row.notes.append(f"no-op call did not return the input ({idle_report.skipped!r})")

    if json.dumps(natives, sort_keys=True, default=str) != snapshot:
        row.notes.append("compress_for MUTATED the caller's native messages")

    seconds, trimmed = timed(lambda: lc_trim(lc_messages, case.target), repeat)
    row.lc_ms = seconds * 1e3
    row.lc_tokens_after = lc_token_counter(trimmed)
    row.lc_messages_after = len(trimmed)
    row.lc_valid = pairing_problem("langchain", trimmed)
    row.lc_kept = survived("langchain", lc_messages, trimmed)
    return row


async def peak_memory(case: Case) -> tuple[int, int]:
    """Peak traced bytes of one compress_for vs one trim_messages of ``case``."""
    natives, fmt = case.trace.messages, case.trace.format
    policy = CompressionPolicy(target_tokens=case.target)
    lc_messages = to_langchain(case.trace)
    gc.collect()
    tracemalloc.start()
    out = await compress_for(natives, policy, format=fmt, states=False)
    ours = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del out
    gc.collect()
    tracemalloc.start()
    trimmed = lc_trim(lc_messages, case.target)
    lc = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del trimmed
    return ours, lc


# ----------------------------------------------------------------------------------------------
# the table

HEADERS = (
    "trace",
    "fmt",
    "msgs",
    "tok before",
    "target",
    "ours ms",
    "no-op µs",
    "tok after",
    "saved %",
    "reached",
    "valid",
    "sys/user",
    "LC ms",
    "LC tok after",
    "LC msgs",
    "LC valid",
    "LC sys/user",
    "ours/LC",
)
NUMERIC = {2, 3, 4, 5, 6, 7, 8, 12, 13, 14, 17}


def _yn(flag: bool) -> str:
    return "yes" if flag else "NO"


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def row_cells(row: Row) -> list[str]:
    report = row.report
    assert report is not None
    saved = 100 * (1 - report.tokens_after / row.tokens_before) if row.tokens_before else 0.0
    return [
        row.case.name,
        row.case.trace.format,
        str(row.messages),
        f"{row.tokens_before:,}",
        f"{row.case.target:,}",
        _ms(row.ours_ms),
        f"{row.noop_us:.0f}",
        f"{report.tokens_after:,}",
        f"{saved:.1f}",
        _yn(report.reached_target),
        _yn(not row.ours_valid),
        "/".join(row.ours_kept),
        _ms(row.lc_ms),
        f"{row.lc_tokens_after:,}",
        str(row.lc_messages_after),
        _yn(not row.lc_valid),
        "/".join(row.lc_kept),
        f"{row.ours_ms / row.lc_ms:.1f}x" if row.lc_ms else "-",
    ]


def summary_cells(label: str, rows: list[Row]) -> list[str]:
    ours = [r.ours_ms for r in rows]
    lc = [r.lc_ms for r in rows]
    before = sum(r.tokens_before for r in rows)
    after = sum(r.report.tokens_after for r in rows if r.report)
    reached = sum(bool(r.report and r.report.reached_target) for r in rows)
    lost = sum("n" in r.ours_kept for r in rows)
    lc_lost = sum("n" in r.lc_kept for r in rows)
    return [
        label,
        "",
        str(sum(r.messages for r in rows)),
        f"{before:,}",
        "",
        f"Σ {_ms(sum(ours))} / med {_ms(statistics.median(ours))}",
        f"med {statistics.median(r.noop_us for r in rows):.0f}",
        f"{after:,}",
        f"{100 * (1 - after / before):.1f}" if before else "",
        f"{reached}/{len(rows)}",
        f"{sum(bool(r.ours_valid) for r in rows)} invalid",
        f"{lost} lost",
        f"Σ {_ms(sum(lc))} / med {_ms(statistics.median(lc))}",
        f"{sum(r.lc_tokens_after for r in rows):,}",
        str(sum(r.lc_messages_after for r in rows)),
        f"{sum(bool(r.lc_valid) for r in rows)} invalid",
        f"{lc_lost} lost",
        f"{sum(ours) / sum(lc):.1f}x" if sum(lc) else "-",
    ]


def render(body: list[list[str]], summary: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(HEADERS) + " |"]
        lines.append(
            "|" + "|".join("---:" if i in NUMERIC else "---" for i in range(len(HEADERS))) + "|"
        )
        for cells in body:
            lines.append("| " + " | ".join(cells) + " |")
        for cells in summary:
            lines.append("| " + " | ".join(f"**{c}**" if c else "" for c in cells) + " |")
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [list(HEADERS), *body, *summary]) for i in range(len(HEADERS))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in NUMERIC else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(HEADERS), rule, *map(line, body), rule, *map(line, summary)])


def notes(rows: list[Row]) -> list[str]:
    out: list[str] = []
    for r in rows:
        report = r.report
        assert report is not None
        tag = f"{r.case.group}/{r.case.name}"
        if r.input_valid:
            out.append(f"{tag}: the input itself breaks pairing: {r.input_valid}")
        if r.ours_valid:
            out.append(f"{tag}: OUR OUTPUT BREAKS PAIRING: {r.ours_valid}")
        if "n" in r.ours_kept:
            out.append(f"{tag}: ours lost the system prompt / latest user message {r.ours_kept}")
        if r.shape:
            out.append(f"{tag}: our Anthropic output breaks role alternation: {r.shape}")
        if report.failures:
            out.append(f"{tag}: failed steps {[f.step for f in report.failures]}")
        if r.lc_valid:
            out.append(f"{tag}: LangChain output breaks pairing: {r.lc_valid}")
        out += [f"{tag}: {n}" for n in r.notes]
    off = [r for r in rows if r.lc_tokens_before != r.tokens_before]
    if off:
        worst = max(off, key=lambda r: abs(r.lc_tokens_before / r.tokens_before - 1))
        out.append(
            f"the LangChain-side counter differs from estimate_tokens on {len(off)} inputs, at "
            f"most {100 * (worst.lc_tokens_before / worst.tokens_before - 1):+.2f}% "
            f"({worst.case.name}: {worst.lc_tokens_before:,} vs {worst.tokens_before:,}); "
            "tool-call arguments are counted as json.dumps(args), not the original JSON text"
        )
    return out


# ----------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--data", help="data dir (default $AGENT_ADAPTER_DATA or ../shared/data)")
    p.add_argument("--target", type=int, default=32000, help="token budget for long traces")
    p.add_argument("--tau-target", type=int, default=2000, help="token budget for tau-bench")
    p.add_argument("--swe-target", type=int, default=1800, help="token budget for SWE-agent")
    p.add_argument("--repeat", type=int, default=20, help="timed runs per trace (median)")
    p.add_argument("--quick", action="store_true", help="4 mini-swe-agent runs instead of 30")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="what the timings read: wall time, or this process's CPU time (steadier when "
        "other work shares the machine)",
    )
    args = p.parse_args(argv)
    clock[0] = CLOCKS[args.clock]
    if args.repeat < 1:
        p.error("--repeat must be >= 1")
    return args


async def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    data = data_dir(args.data)
    if not data.is_dir():
        sys.exit(f"data directory not found: {data} (use --data or AGENT_ADAPTER_DATA)")
    cases = load_cases(data, args)
    rows = [await measure(case, args.repeat) for case in cases]

    body = [row_cells(r) for r in rows]
    summary = []
    groups = list(dict.fromkeys(r.case.group for r in rows))
    for group in groups:
        summary.append(summary_cells(group, [r for r in rows if r.case.group == group]))
    summary.append(summary_cells("ALL", rows))
    print(render(body, summary, args.markdown))

    largest = max(rows, key=lambda r: r.tokens_before)
    reached = [r for r in rows if r.report and r.report.reached_target and r.report.steps]
    picks = [("the largest trace", largest)]
    if reached and (big := max(reached, key=lambda r: r.tokens_before)) is not largest:
        picks.append(("the largest trace compressed down to its target", big))
    print()
    print("Peak traced memory (tracemalloc) of one call; ours = convert + compress + back,")
    print("LangChain = trim_messages on messages already converted:")
    for label, pick in picks:
        ours_peak, lc_peak = await peak_memory(pick.case)
        print(
            f"- {label}, {pick.case.name} ({pick.tokens_before:,} tokens, {pick.messages} "
            f"messages, target {pick.case.target:,}): ours {ours_peak / 1024:,.0f} KiB, "
            f"LangChain {lc_peak / 1024:,.0f} KiB"
        )
    found = notes(rows)
    print()
    print("Notes:" if found else "Notes: none (every output valid, every target reached).")
    for n in found:
        print(f"- {n}")
    print()
    print(
        f"{len(rows)} traces, median of {args.repeat} runs each (no-op: of "
        f"{max(args.repeat * 4, 20)}, {args.clock} clock); Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs; wall time {time.perf_counter() - started:.1f} s"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
