"""The traces of ``compress_bench.py``: which real conversations, under which budget."""

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_adapter.cli._loaders import Trace, load_trace

REPO = Path(__file__).resolve().parents[1]
QUICK_MINI = (
    "pytest-dev__pytest-6197",
    "scikit-learn__scikit-learn-25102",
    "psf__requests-1142",
    "django__django-11133",
)
#: A top-level Claude Code transcript counts as a long session from this many messages on.
LONG_SESSION_MESSAGES = 100
TAU_DIALOGS = 20


# ----------------------------------------------------------------------------------------------
# the cases


@dataclass
class Case:
    group: str
    name: str
    trace: Trace
    target: int


def data_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("AGENT_ADAPTER_DATA")
    if env:
        return Path(env)
    return REPO.parent / "shared" / "data"


#: The clock the timings read: wall time, or with ``--clock cpu`` this process's CPU time
#: (steadier on a machine other work shares; both sides of a comparison use the same one).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
clock: list[Callable[[], float]] = [time.perf_counter]


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median seconds of ``fn()`` over ``repeat`` runs after one untimed warm-up run (gc off
    while timing), and the last result."""
    fn()
    gc.collect()
    gc.disable()
    try:
        times, result = [], None
        for _ in range(repeat):
            t0 = clock[0]()
            result = fn()
            times.append(clock[0]() - t0)
    finally:
        gc.enable()
    return statistics.median(times), result


def has_real_tool_calls(path: Path) -> bool:
    """True for a SWE-agent run in function-calling mode (``tool_calls`` in its history)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return any(m.get("tool_calls") for m in data.get("history", []) if isinstance(m, dict))


def _swe_config(path: Path) -> str:
    """A short run-config label from a SWE-agent trajectory's folder name."""
    parts = path.parent.name.split("__")
    return parts[3] if len(parts) > 3 else path.parent.name


def load_cases(data: Path, args: argparse.Namespace) -> list[Case]:
    cases: list[Case] = []
    mini = sorted((data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"))
    if args.quick:
        mini = [p for p in mini if p.name.removesuffix(".traj.json") in QUICK_MINI]
    cases += [Case("mini-swe-agent", t.name, t, args.target) for t in map(load_trace, mini)]

    for path in sorted((data / "claude-code-spotter").glob("*.jsonl")):
        trace = load_trace(path)
        if len(trace.messages) >= LONG_SESSION_MESSAGES:
            cases.append(Case("claude-code", trace.name[:13], trace, args.target))

    tau = data / "tau-bench" / "gpt-4o-airline.json"
    for i in range(TAU_DIALOGS):
        trace = load_trace(tau, index=i)
        cases.append(Case("tau-bench", trace.name, trace, args.tau_target))

    swe = [p for p in sorted((data / "swe-agent").rglob("*.traj")) if has_real_tool_calls(p)]
    swe_traces = [(p, load_trace(p)) for p in swe]
    names = [t.name for _, t in swe_traces]
    for path, trace in swe_traces:
        name = trace.name
        if names.count(name) > 1:
            name = f"{name.split('__')[-1]} ({_swe_config(path)})"
        cases.append(Case("swe-agent-fc", name, trace, args.swe_target))
    if not cases:
        sys.exit(f"no traces found under {data}")
    return cases
