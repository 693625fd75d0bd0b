"""``cache.py --depth``: how deep to compact, priced call by call with the prompt cache.

Every trace is replayed as an agent sends it (call k: the history up to the k-th assistant
turn) through one :class:`~agent_adapter.context.Compactor` per setting, and priced as
``cache.py`` prices it (the longest prefix equal to the previous request is read from the
cache at 0.1x, the rest written at 1.25x, in units of one fresh input token). Settings:

* ``reference``: ``CompressionPolicy(threshold_tokens=T)``: the documented default target,
  0.75 T: compact once, then append (the issue's compact-once reference);
* ``T/2``, ``T/4``: the same with ``target_tokens`` set by hand;
* ``cost``: ``CompressionPolicy(threshold_tokens=T, depth="cost", model_max_tokens=W)``:
  the depth derived from the prices, the window and the conversation's growth, and the
  compactions that cannot pay for themselves deferred (see ``agent_adapter.context._depth``).

Per trace and setting: the cost against the reference and against sending everything, and
the share of the history's file paths and distinct error lines (``quality.py``'s
``PATH_RE`` and ``error_lines``, its code) still named in each request after the first
compaction, averaged over those requests, against the reference's over the same calls.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _quality_facts import error_lines, flat, split
from agent_adapter import Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import Compactor, CompressionPolicy
from agent_adapter.context.formats import convert, strip_reserved

#: The window the ``cost`` setting is told (a budget threshold far below it, as for the
#: models these traces ran on: Gemini 3 Pro 1M, Claude Sonnet 200k).
WINDOW = 200_000


@dataclass
class Case:
    group: str
    name: str
    natives: list[Any]
    fmt: str
    threshold: int


@dataclass
class Run:
    """One setting's replay of one case: its cost tally and names kept per call."""

    cost: float = 0.0
    paths: list[float | None] = field(default_factory=list)
    errors: list[float | None] = field(default_factory=list)
    compactions: int = 0
    deferred: int = 0
    first: int | None = None  # the first call that compacted


def settings(threshold: int) -> dict[str, CompressionPolicy]:
    """The settings compared, by name (see the module)."""
    return {
        "reference": CompressionPolicy(threshold_tokens=threshold),
        "T/2": CompressionPolicy(threshold_tokens=threshold, target_tokens=threshold // 2),
        "T/4": CompressionPolicy(threshold_tokens=threshold, target_tokens=threshold // 4),
        "cost": CompressionPolicy(
            threshold_tokens=threshold, depth="cost", model_max_tokens=WINDOW
        ),
    }


def _text(messages: Sequence[Message]) -> str:
    parts: list[str] = []
    for m in messages:
        parts.append(m.text)
        parts.extend(c.arguments for c in m.tool_calls)
    return "\n".join(parts)


class _Names:
    """The history's names up to each call (paths, error lines), counted once a native."""

    def __init__(self, case: Case, path_re: Any) -> None:
        self.case = case
        self.path_re = path_re
        messages = convert(case.natives, case.fmt).messages
        self.paths: list[set[str]] = []
        self.errors: list[set[str]] = []
        starts = convert(case.natives, case.fmt)._ranges
        seen_p: set[str] = set()
        seen_e: set[str] = set()
        by_native: list[tuple[set[str], set[str]]] = []
        for lo, hi in starts:
            chunk = messages[lo:hi]
            by_native.append((set(path_re.findall(_text(chunk))), error_lines(chunk)))
        for p, e in by_native:
            seen_p |= p
            seen_e |= e
            self.paths.append(set(seen_p))
            self.errors.append(set(seen_e))

    def shares(self, cut: int, request: Sequence[Any]) -> tuple[float | None, float | None]:
        """Shares of the history's (``natives[:cut]``) paths and error lines named in
        ``request``."""
        text = _text(convert(strip_reserved(list(request)), self.case.fmt).messages)
        named = set(self.path_re.findall(text))
        paths, errors = self.paths[cut - 1], self.errors[cut - 1]
        p = sum(1 for w in paths if w in named or w in text) / len(paths) if paths else None
        flat_text = flat(text)
        e = sum(1 for w in errors if w in flat_text) / len(errors) if errors else None
        return p, e


def replay(case: Case, policy: CompressionPolicy, names: _Names | None, tally: Any) -> Run:
    """``case`` sent call by call through a Compactor with ``policy``; ``tally`` a
    ``cache.Tally`` (prices the calls)."""
    from cache import _calls

    compactor = Compactor(policy, conversation=case.name)
    run = Run()
    for k, cut in enumerate(_calls(case.natives)):
        history = case.natives[:cut]
        sent, report = compactor.compress_sync(history)
        tally.sent(sent, bool(report.steps), None)
        if report.steps and sent is not history:
            run.compactions += 1
            if run.first is None:
                run.first = k
        if report.skipped == "deferred":
            run.deferred += 1
        if names is not None:
            p, e = names.shares(cut, sent)
            run.paths.append(p)
            run.errors.append(e)
    run.cost = tally.units
    return run


def cases(data: Path, quick: bool) -> list[Case]:
    """The traces: mini-swe-agent runs (held-out part at 20k and 10k, tuning part at 20k),
    the long Claude Code sessions at 60k."""
    out: list[Case] = []
    runs = sorted((data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"))
    parts = split("mini-swe-agent", runs, lambda p: p.name.split(".")[0])
    for part, threshold in (("held-out", 20_000), ("held-out", 10_000), ("tuning", 20_000)):
        for path in parts[part][: 3 if quick else None]:
            t = load_trace(path)
            name = path.name.split(".")[0]
            out.append(
                Case(
                    f"mini-swe {part} @{threshold // 1000}k", name, t.messages, t.format, threshold
                )
            )
    cc = sorted((data / "claude-code-spotter").glob("*.jsonl"), key=lambda p: -p.stat().st_size)
    for path in cc[: 1 if quick else 5]:
        t = load_trace(path)
        out.append(Case("claude-code @60k", path.stem[:8], t.messages, t.format, 60_000))
    return out


def _mean(values: list[float | None], start: int | None) -> float | None:
    got = [v for v in values[start or 0 :] if v is not None] if start is not None else []
    return statistics.fmean(got) if got else None


def main(data: Path, quick: bool, tally: Callable[[], Any], path_re: Any, only: str = "") -> int:
    """The tables: per trace and per group (median, max of cost vs the reference); ``only``:
    the groups whose name holds it."""
    rows: list[list[str]] = []
    groups: dict[tuple[str, str], list[tuple[float, float, float | None, float | None]]] = {}
    for case in cases(data, quick):
        if only not in case.group:
            continue
        total = sum(1 for _ in case.natives)
        none = tally()
        from cache import _calls

        for cut in _calls(case.natives):
            none.sent(case.natives[:cut], False, None)
        names = _Names(case, path_re)
        runs = {k: replay(case, p, names, tally()) for k, p in settings(case.threshold).items()}
        ref = runs["reference"]
        if ref.first is None and all(r.first is None for r in runs.values()):
            continue  # never over the threshold: nothing to compare
        start = min(r.first for r in runs.values() if r.first is not None)
        ref_p, ref_e = _mean(ref.paths, start), _mean(ref.errors, start)
        for k, r in runs.items():
            vs_ref = r.cost / ref.cost
            vs_none = r.cost / none.units
            p, e = _mean(r.paths, start), _mean(r.errors, start)
            dp = None if p is None or ref_p is None else p - ref_p
            de = None if e is None or ref_e is None else e - ref_e
            groups.setdefault((case.group, k), []).append((vs_ref, vs_none, dp, de))
            rows.append(
                [
                    case.group,
                    case.name[:28],
                    k,
                    f"{r.compactions} / {r.deferred}",
                    f"{vs_ref:.2f}x",
                    f"{vs_none:.2f}x",
                    "-" if p is None else f"{p:.0%}",
                    "-" if e is None else f"{e:.0%}",
                ]
            )
        del total
    head = [
        "group",
        "trace",
        "setting",
        "compactions / deferred",
        "cost vs reference",
        "vs everything",
        "paths named",
        "errors named",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    head = [
        "group",
        "setting",
        "traces",
        "cost vs reference: median / max",
        "vs everything: max",
        "paths vs reference: median / min (points)",
        "errors vs reference: median / min (points)",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))

    def pts(values: list[float | None]) -> str:
        got = [v for v in values if v is not None]
        if not got:
            return "-"
        return f"{statistics.median(got) * 100:+.1f} / {min(got) * 100:+.1f}"

    for (group, k), vals in groups.items():
        refs = [v[0] for v in vals]
        print(
            f"| {group} | {k} | {len(vals)} | {statistics.median(refs):.2f}x / {max(refs):.2f}x"
            f" | {max(v[1] for v in vals):.2f}x | {pts([v[2] for v in vals])} | "
            f"{pts([v[3] for v in vals])} |"
        )
    return 0
