#!/usr/bin/env python
"""Speed of shortening by shape (issue 34): ``shorten_text`` against the plain ``cut_text``.

Every tool result over 800 characters of the coding-agent traces (30 mini-swe-agent runs, the
Claude Code sessions, the SWE-agent runs) is shortened as ``ShrinkToolResults`` shortens it
(``keep_chars=400``, the names' room of a long cut) and, to see the biggest texts, to half its
length. The memos are cleared before each timed pass (a fresh computation, not the memo's
answer). Printed: how many texts of each shape, the total and the slowest call of each
function, and the longest text's time.

Usage::

    python bench/shapes.py [--data DIR] [--repeat N]
"""

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from _compress_cases import data_dir
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context._digest import names_room
from agent_adapter.context._lru import clear
from agent_adapter.context._shapes import classify, shorten_text
from agent_adapter.context._text import cut_text
from agent_adapter.context.formats import convert


def outputs(data: Path) -> list[str]:
    """Every tool result over 800 characters of the coding-agent traces."""
    paths = [
        *sorted((data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json")),
        *sorted((data / "claude-code-spotter").glob("*.jsonl")),
        *sorted((data / "swe-agent").rglob("*.traj")),
    ]
    out = []
    for path in paths:
        try:
            trace = load_trace(path)
        except Exception:  # subagent transcripts and demos the loader does not read
            continue
        out += [
            m.text
            for m in convert(trace.messages, trace.format).messages
            if m.role == "tool" and len(m.text) > 800
        ]
    return out


def timed(fn: Callable[[str, int], str], texts: Sequence[str], half: bool) -> list[float]:
    clear()
    times = []
    for text in texts:
        keep = len(text) // 2 if half else 400
        t0 = time.perf_counter()
        fn(text, keep)
        times.append(time.perf_counter() - t0)
    return times


def shaped(text: str, keep: int) -> str:
    return shorten_text(text, keep, names_chars=names_room(len(text) - keep))


def plain(text: str, keep: int) -> str:
    return cut_text(text, keep, "both", names_chars=names_room(len(text) - keep))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--data", help="data dir (default $AGENT_ADAPTER_DATA or ../shared/data)")
    p.add_argument("--repeat", type=int, default=3, help="timed passes (the median is shown)")
    args = p.parse_args(argv)
    texts = outputs(data_dir(args.data))
    if not texts:
        sys.exit("no traces found")
    kinds = Counter(classify(t) for t in texts)
    print(f"{len(texts)} tool results, {sum(map(len, texts)):,} characters: {dict(kinds)}")
    longest = max(texts, key=len)
    for half in (False, True):
        label = "to half their length" if half else "to keep_chars=400"
        for name, fn in (("shorten_text", shaped), ("cut_text", plain)):
            runs = [timed(fn, texts, half) for _ in range(args.repeat)]
            totals = [sum(r) for r in runs]
            worst = max(max(r) for r in runs)
            at = texts.index(longest)
            big = statistics.median(r[at] for r in runs)
            print(
                f"{label:24} {name:13} total {1e3 * statistics.median(totals):8.1f} ms, "
                f"slowest call {1e3 * worst:7.2f} ms, longest text ({len(longest):,} chars) "
                f"{1e3 * big:7.2f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
