"""``cache.py --depth``: how deep to compact, priced call by call with the prompt cache.

Every trace is replayed as an agent sends it (call k: the history up to the k-th assistant
turn) through one :class:`~agent_adapter.context.Compactor` per setting, and priced as
``cache.py`` prices it (the longest prefix equal to the previous request is read from the
cache at 0.1x, the rest written at 1.25x, in units of one fresh input token). Settings:

* ``reference``: ``CompressionPolicy(threshold_tokens=T, depth="fixed")``: the target 0.75 T,
  compact once, then append (the issue's compact-once reference; the default until 0.4);
* ``threshold only``: ``CompressionPolicy(threshold_tokens=T)``, the user's one knob: in a
  conversation its depth is derived (``depth="auto"``), nothing is deferred (no window);
* ``T/2``, ``T/4``: the same with ``target_tokens`` set by hand;
* ``cost``: ``CompressionPolicy(threshold_tokens=T, depth="cost", model_max_tokens=W)``:
  the depth derived from the prices, the window and the conversation's growth, and the
  compactions that cannot pay for themselves deferred (see ``agent_adapter.context._depth``).

Per trace and setting: the cost against the reference and against sending everything, and
the share of the history's file paths and distinct error lines (``quality.py``'s
``PATH_RE`` and ``error_lines``, its code) still named in each request after the first
compaction, averaged over those requests, against the reference's over the same calls.
Four measures of names: ``paths named`` and ``error lines named`` (the strings as found: a
path as ``PATH_RE`` matched it, an error line's first 60 characters), ``files named`` (a path
or a name of the same file relative to a working directory, see :func:`_tails`: the library's
notes and an agent's own commands name ``/testbed/django/db/models/base.py`` as
``django/db/models/base.py``, which ``paths named`` counts as lost) and ``error names named``
(the failed test, exception class or error code of each error line: the issue's "distinct
error names"). The strict measures are kept so that figures stay comparable.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _quality_facts import error_lines, error_records, flat, split
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
    files: list[float | None] = field(default_factory=list)
    kinds: list[float | None] = field(default_factory=list)
    compactions: int = 0
    deferred: int = 0
    first: int | None = None  # the first call that compacted


def settings(threshold: int) -> dict[str, CompressionPolicy]:
    """The settings compared, by name (see the module)."""
    return {
        "reference": CompressionPolicy(threshold_tokens=threshold, depth="fixed"),
        "threshold only": CompressionPolicy(threshold_tokens=threshold),
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
        self.kinds: list[set[str]] = []
        seen_p: set[str] = set()
        seen_e: set[str] = set()
        seen_k: set[str] = set()
        for lo, hi in starts:
            chunk = messages[lo:hi]
            seen_p |= set(path_re.findall(_text(chunk)))
            seen_e |= error_lines(chunk)
            seen_k |= {flat(r.name) for r in error_records(chunk)}
            self.paths.append(set(seen_p))
            self.errors.append(set(seen_e))
            self.kinds.append(set(seen_k))

    def shares(self, cut: int, request: Sequence[Any]) -> tuple[Share, Share, Share, Share]:
        """Shares of the history's (``natives[:cut]``) names in ``request``: paths (the
        string as found), error lines (their first 60 characters), files (a path or one of
        its relative names, see :func:`_tails`) and error names (the failed test, exception
        class or error code of each error line: the issue's "distinct error names")."""
        text = _text(convert(strip_reserved(list(request)), self.case.fmt).messages)
        named = set(self.path_re.findall(text))
        paths, errors = self.paths[cut - 1], self.errors[cut - 1]
        kinds = self.kinds[cut - 1]
        flat_text = flat(text)

        def share(names: set[str], found: Callable[[str], bool]) -> Share:
            return sum(1 for w in names if found(w)) / len(names) if names else None

        return (
            share(paths, lambda w: w in named or w in text),
            share(errors, lambda w: w in flat_text),
            share(paths, lambda w: any(t in text for t in _tails(w))),
            share(kinds, lambda w: w in flat_text),
        )


Share = float | None


def _tails(path: str) -> list[str]:
    """``path`` and the names that name the same file relative to a working directory: the
    path less its first part (``testbed/django/db/models.py`` is ``django/db/models.py`` run
    in ``/testbed``, as mini-swe-agent runs) when two parts or more stay, and every tail of
    three parts or more. A two-part tail of a deeper path (``migrations/__init__.py``) is
    not counted: too many files share it."""
    parts = path.split("/")
    out = [path]
    if len(parts) >= 3:
        out.append("/".join(parts[1:]))
    out.extend("/".join(parts[i:]) for i in range(2, len(parts) - 2))
    return out


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
            p, e, f, n = names.shares(cut, sent)
            run.paths.append(p)
            run.errors.append(e)
            run.files.append(f)
            run.kinds.append(n)
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


#: The names measures, in the order of :meth:`_Names.shares`.
_MEASURES = ("paths named", "error lines named", "files named", "error names named")


def _measures(run: Run) -> list[list[float | None]]:
    """A run's names measures per call, in the order of ``_MEASURES``."""
    return [run.paths, run.errors, run.files, run.kinds]


def _mean(values: list[float | None], start: int | None) -> float | None:
    got = [v for v in values[start or 0 :] if v is not None] if start is not None else []
    return statistics.fmean(got) if got else None


def main(data: Path, quick: bool, tally: Callable[[], Any], path_re: Any, only: str = "") -> int:
    """The tables: per trace and per group (median, max of cost vs the reference); ``only``:
    the groups whose name holds it."""
    rows: list[list[str]] = []
    groups: dict[tuple[str, str], list[tuple[float, float, list[float | None]]]] = {}
    for case in cases(data, quick):
        if only not in case.group:
            continue
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
        refs = [_mean(v, start) for v in _measures(ref)]
        for k, r in runs.items():
            vs_ref = r.cost / ref.cost
            vs_none = r.cost / none.units
            got = [_mean(v, start) for v in _measures(r)]
            deltas = [
                None if g is None or b is None else g - b for g, b in zip(got, refs, strict=True)
            ]
            groups.setdefault((case.group, k), []).append((vs_ref, vs_none, deltas))
            rows.append(
                [
                    case.group,
                    case.name[:28],
                    k,
                    f"{r.compactions} / {r.deferred}",
                    f"{vs_ref:.2f}x",
                    f"{vs_none:.2f}x",
                    *("-" if g is None else f"{g:.0%}" for g in got),
                ]
            )
    head = [
        "group",
        "trace",
        "setting",
        "compactions / deferred",
        "cost vs reference",
        "vs everything",
        *_MEASURES,
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
        *(f"{m} vs reference: median / min (points)" for m in _MEASURES),
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
            f" | {max(v[1] for v in vals):.2f}x | "
            + " | ".join(pts([v[2][i] for v in vals]) for i in range(len(_MEASURES)))
            + " |"
        )
    return 0
