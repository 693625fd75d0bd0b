#!/usr/bin/env python
"""Names that survive a loop: what an agent loop's requests still name, against one compression.

Issue 34 item 4 / issue 35 item 1. A real trace is replayed as an agent sends it (call k sends
the history up to the k-th assistant turn) through one conversation's
:class:`~agent_adapter.context.Compactor` (compact once, then append; the default steps,
``CompressionPolicy(threshold_tokens=T)``, target 0.75 T) and, for the same calls,
through one compression alone (``compress_for_sync(history, policy, states=False)``: the whole
history compressed at once). For every request from the first compaction on, two shares of
the *history sent so far*:

* **paths**: its file paths (``quality.py``'s ``PATH_RE`` over every text and tool call's
  arguments) still named anywhere in the request (the text of every message and call);
* **errors**: its distinct error names, read from the error lines of its tool results
  (``_quality_facts.error_lines``: what the run printed as an error, never source code): the
  exception classes (``AttributeError``, ``astroid.exceptions.InferenceError``) and failed
  tests (``tests/x.py::test_y``, ``test_y (mod.Class)``), each still named anywhere in the
  request.

Each share is averaged over the requests; the table shows both contenders and the loop's
share as a percent of one compression's (the issue's target: >= 90%).

    python bench/loop_names.py                        # the 30 mini-swe-agent runs at 20k,
                                                      # the 5 Claude Code sessions at 60k
    python bench/loop_names.py --quick                # the pylint run and one session
    python bench/loop_names.py --run pylint-dev__pylint-7080 --threshold 20000
    python bench/loop_names.py --save-to none         # the Compactor without its store
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _compress_cases import data_dir
from _quality_facts import error_lines
from agent_adapter import Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import Compactor, CompressionPolicy, compress_for_sync
from agent_adapter.context.formats import convert, strip_reserved

PATH_RE = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.\w+")
#: An exception class in an error line (dotted module path allowed).
_EXC = re.compile(r"\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b")
#: A failed test in an error line: a pytest node id, or unittest's ``test_x (mod.Class)``.
_TEST = re.compile(r"[^\s:]+\.py::[^\s\]]+(?:\[[^\]\s]*\])?|\btest\w* \([\w.]+\)")
QUICK = ("pylint-dev__pylint-7080",)


def all_text(messages: Sequence[Message]) -> str:
    """Every text and every tool call's name and arguments, one string."""
    pieces: list[str] = []
    for m in messages:
        pieces.append(m.text)
        pieces.extend(f"{c.name} {c.arguments}" for c in m.tool_calls)
    return "\n".join(pieces)


def error_names(messages: Sequence[Message]) -> set[str]:
    """The distinct exception classes and failed tests named by the error lines of
    ``messages``' tool results."""
    out: set[str] = set()
    for line in error_lines(messages):
        out.update(_TEST.findall(line))
        out.update(_EXC.findall(line))
    return out


@dataclass
class Names:
    """The names of one history: its paths and its error names."""

    paths: set[str]
    errors: set[str]


def names_of(messages: Sequence[Message]) -> Names:
    return Names(set(PATH_RE.findall(all_text(messages))), error_names(messages))


def share(wanted: set[str], text: str) -> float | None:
    """The share of ``wanted`` that ``text`` names (``None``: nothing wanted)."""
    if not wanted:
        return None
    return sum(1 for w in wanted if w in text) / len(wanted)


@dataclass
class Row:
    name: str
    threshold: int
    calls: int
    compactions: int
    loop_paths: list[float]
    loop_errors: list[float]
    once_paths: list[float]
    once_errors: list[float]
    seconds: float


def _cuts(natives: list[Any]) -> list[int]:
    """Where each call's history ends: before every assistant native, and the whole trace."""
    roles = [n.get("role") if isinstance(n, dict) else getattr(n, "role", None) for n in natives]
    first_user = next((i for i, r in enumerate(roles) if r == "user"), 0)
    return [i for i, r in enumerate(roles) if i > first_user and r == "assistant"] + [len(natives)]


def replay(
    name: str,
    natives: list[Any],
    fmt: str,
    threshold: int,
    save_to: str = "default",
    target: float | None = None,
) -> Row:
    """One trace's row (see the module); ``target``: the target as a share of the
    threshold (``None``: the policy's default, 0.75)."""
    policy = CompressionPolicy(
        threshold_tokens=threshold,
        target_tokens=None if target is None else max(1, int(threshold * target)),
    )
    kwargs: dict[str, Any] = {}
    if save_to == "none":
        kwargs["save_to"] = None
    try:
        compactor = Compactor(policy, conversation=name, **kwargs)
    except TypeError:  # a checkout whose Compactor has no save_to
        compactor = Compactor(policy, conversation=name)
    conversion = convert(natives, fmt)
    starts = conversion._ranges
    messages = conversion.messages
    row = Row(name, threshold, 0, 0, [], [], [], [], 0.0)
    t0 = time.perf_counter()
    compacted = False
    for cut in _cuts(natives):
        history = natives[:cut]
        request, report = compactor.compress_sync(history)
        row.calls += 1
        if report.steps and report.tokens_after < report.tokens_before:
            row.compactions += 1
            compacted = True
        if not compacted:
            continue
        k = starts[cut - 1][1] if cut - 1 < len(starts) else len(messages)
        wanted = names_of(messages[:k])
        sent = all_text(convert(strip_reserved(request), fmt).messages)
        once, _ = compress_for_sync(history, policy, format=fmt, states=False)
        alone = all_text(convert(strip_reserved(once), fmt).messages)
        for got, text in ((row.loop_paths, sent), (row.once_paths, alone)):
            value = share(wanted.paths, text)
            if value is not None:
                got.append(value)
        for got, text in ((row.loop_errors, sent), (row.once_errors, alone)):
            value = share(wanted.errors, text)
            if value is not None:
                got.append(value)
    row.seconds = time.perf_counter() - t0
    return row


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{100 * a / b:.0f}%"


def ratios(row: Row) -> tuple[float | None, float | None]:
    """The loop's mean share of paths and of error names as a fraction of one compression's
    (``None``: no request named any)."""
    out: list[float | None] = []
    for loop, once in ((row.loop_paths, row.once_paths), (row.loop_errors, row.once_errors)):
        a, b = _mean(loop), _mean(once)
        out.append(None if a is None or b is None or b == 0 else a / b)
    return out[0], out[1]


def _traces(data: Path, args: argparse.Namespace) -> list[tuple[str, Path, int]]:
    runs = sorted((data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"))
    wanted = args.run or (QUICK if args.quick else None)
    if wanted:
        runs = [p for p in runs if p.name.removesuffix(".traj.json") in wanted]
    out = [(p.name.removesuffix(".traj.json"), p, args.threshold or 20_000) for p in runs]
    if not args.run:
        sessions = sorted((data / "claude-code-spotter").glob("*.jsonl"))
        sessions = [p for p in sessions if p.stat().st_size > 1_000_000]
        out += [
            (p.stem[:8], p, args.threshold or 60_000) for p in sessions[: 1 if args.quick else 5]
        ]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--run", action="append", help="a mini-swe-agent run's name (repeatable)")
    p.add_argument("--threshold", type=int, default=None)
    p.add_argument("--save-to", choices=("default", "none"), default="default")
    p.add_argument(
        "--target",
        type=float,
        default=None,
        help="the target as a share of the threshold (default 0.75; 1: compact on every call "
        "over it, as quality.py's loop)",
    )
    args = p.parse_args(argv)
    data = data_dir(args.data)
    if not data.is_dir():
        sys.exit(f"data directory not found: {data}")
    rows: list[Row] = []
    head = (
        "| trace | T | calls / compactions | paths: loop / once / loop of once "
        "| errors: loop / once / loop of once | s |"
    )
    print(head)
    print("|---|---|---|---|---|---|")
    for name, path, threshold in _traces(data, args):
        trace = load_trace(path)
        row = replay(name, trace.messages, trace.format, threshold, args.save_to, args.target)
        rows.append(row)
        rp, re_ = ratios(row)
        print(
            f"| {name} | {threshold // 1000}k | {row.calls} / {row.compactions} "
            f"| {_pct(_mean(row.loop_paths))} / {_pct(_mean(row.once_paths))} / "
            f"{_pct(rp)} | {_pct(_mean(row.loop_errors))} / {_pct(_mean(row.once_errors))} / "
            f"{_pct(re_)} | {row.seconds:.0f} |",
            flush=True,
        )
    paths = [r for r in (ratios(row)[0] for row in rows) if r is not None]
    errors = [r for r in (ratios(row)[1] for row in rows) if r is not None]
    print()
    median_p = statistics.median(paths) if paths else None
    median_e = statistics.median(errors) if errors else None
    print(
        f"loop of once, median over traces: paths {_pct(median_p)} "
        f"(min {_pct(min(paths) if paths else None)}), error names {_pct(median_e)} "
        f"(min {_pct(min(errors) if errors else None)}); target >= 90%"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
