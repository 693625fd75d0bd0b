#!/usr/bin/env python
"""Quality benchmark: what survives compression, ours vs a naive suffix vs LangChain.

For every real trace and every budget T (50%, 25% and 10% of the trace's own
``estimate_tokens`` count, threshold = target), three contenders run on the same input:

* **ours**: ``compress_for_sync(natives, CompressionPolicy(target_tokens=T,
  threshold_tokens=T))`` with the default steps and the default ``estimate_tokens`` counter;
* **naive**: the system prompt and the first user message (the task), then the newest whole
  units (``split_units``: a tool call never without its results) that fit, the oldest units
  between the task and that suffix dropped, written back with ``Conversion.back``;
* **langchain**: ``trim_messages(strategy="last", start_on="human", include_system=True)`` with
  the same chars/4 + 4 per message count, on the conversation converted to LangChain messages
  by ``_compress_langchain.py`` (only ``trim_messages`` is timed).

Each output is measured against its own input, both converted to ``Message`` s (the library's
converters; for LangChain its ``langchain`` format): target reached, task and system prompt
unchanged, the newest three assistant messages and their tool results unchanged, the share of
file paths and of error lines still named, no ``check()`` violation the input did not have,
and the time.

* **headroom** and **litellm** (optional peers, issue 34): ``headroom.compress`` (0.42) and
  ``litellm.compress()`` on the same natives, run in a worker under a Python that has them
  (``_quality_peers.py``, ``_peers_worker.py``); skipped, with a line saying so, when not
  installed, or with ``--no-peers``.

Usage::

    python bench/quality.py [--quick] [--markdown] [--data DIR] [--repeat N] [--no-peers]

The data directory is ``--data``, else ``$AGENT_ADAPTER_DATA``, else ``<repo>/../shared/data``.
See bench/README.md for what every column means.
"""

import argparse
import os
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _compress_cases import TAU_DIALOGS, _swe_config, data_dir, has_real_tool_calls, timed
from _compress_langchain import lc_token_counter, lc_trim, to_langchain
from _quality_facts import PARTS, ErrorLine, error_records, flat, split
from _quality_loop import replay
from _quality_peers import Peers
from _quality_table import render
from agent_adapter import Message
from agent_adapter.cli._loaders import Trace, load_trace
from agent_adapter.context import CompressionPolicy, compress_for_sync, split_units
from agent_adapter.context import estimate_tokens as _estimate_tokens
from agent_adapter.context.formats import check, convert, strip_reserved

BUDGETS = (0.50, 0.25, 0.10)
CONTENDERS = ("ours", "naive", "langchain")
#: The agent-loop table: ours after several compressions in a row, and the naive reference.
LOOP = ("ours (loop)", "naive")
GROUPS = ("mini-swe-agent", "claude-code", "swe-agent-fc", "tau-bench")
#: --quick: how many traces of each group (mini-swe-agent: these runs).
QUICK_MINI = (
    "django__django-11133",
    "psf__requests-1142",
    "pytest-dev__pytest-6197",
    "scikit-learn__scikit-learn-25102",
    "sympy__sympy-19637",
)
QUICK = {"claude-code": 2, "swe-agent-fc": 2, "tau-bench": 5}
LONG_SESSION_MESSAGES = 100  # as compress_bench: a top-level transcript this long is a session

PATH_RE = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.\w+")
LAST_TURNS = 3

# ----------------------------------------------------------------------------------------------
# the traces


@dataclass
class Case:
    group: str
    name: str
    trace: Trace
    part: str = ""


def load_cases(data: Path, quick: bool) -> list[Case]:
    """The four groups, in order: 30 (5) mini-swe-agent runs, the 5 (2) long Claude Code
    sessions, the 5 (2) SWE-agent function-calling runs, tau-bench dialogs 0..19 (0..4)."""
    cases: list[Case] = []
    mini = sorted((data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"))
    if quick:
        mini = [p for p in mini if p.name.removesuffix(".traj.json") in QUICK_MINI]
    cases += [Case("mini-swe-agent", t.name, t) for t in map(load_trace, mini)]

    claude = []
    for path in sorted((data / "claude-code-spotter").glob("*.jsonl")):
        trace = load_trace(path)
        if len(trace.messages) >= LONG_SESSION_MESSAGES:
            claude.append(Case("claude-code", trace.name[:13], trace))
    cases += claude[: QUICK["claude-code"]] if quick else claude

    swe = [p for p in sorted((data / "swe-agent").rglob("*.traj")) if has_real_tool_calls(p)]
    traces = [(p, load_trace(p)) for p in swe]
    names = [t.name for _, t in traces]
    swe_cases = []
    for path, trace in traces:
        name = trace.name
        if names.count(name) > 1:
            name = f"{name.split('__')[-1]} ({_swe_config(path)})"
        swe_cases.append(Case("swe-agent-fc", name, trace))
    cases += swe_cases[: QUICK["swe-agent-fc"]] if quick else swe_cases

    tau = data / "tau-bench" / "gpt-4o-airline.json"
    for i in range(QUICK["tau-bench"] if quick else TAU_DIALOGS):
        trace = load_trace(tau, index=i)
        cases.append(Case("tau-bench", trace.name, trace))
    if not cases:
        sys.exit(f"no traces found under {data}")
    for group in GROUPS:
        parts = split(group, [c for c in cases if c.group == group], lambda c: c.name)
        for part, members in parts.items():
            for c in members:
                c.part = part
    return cases


# ----------------------------------------------------------------------------------------------
# what an input holds, and how much of it an output kept

Key = tuple[Any, ...]


def key(m: Message) -> Key:
    """What "unchanged" compares: role, text, tool calls (id, name, arguments), the call a
    result answers."""
    calls = tuple((c.id, c.name, c.arguments) for c in m.tool_calls)
    return (m.role, m.text, calls, m.tool_call_id)


def all_text(messages: Sequence[Message]) -> str:
    """Every text and every tool call's arguments, one string."""
    pieces: list[str] = []
    for m in messages:
        pieces.append(m.text)
        pieces.extend(c.arguments for c in m.tool_calls)
    return "\n".join(pieces)


def _first(messages: Sequence[Message], role: str) -> Message | None:
    return next((m for m in messages if m.role == role), None)


@dataclass
class Facts:
    """What one input holds that an output is checked for."""

    tokens: int
    keys: list[Key]
    system: Key | None
    task: Key | None
    last_turns: Counter[Key]
    paths: set[str]
    error_lines: set[str]
    errors: list[ErrorLine]  # distinct, in order of first appearance
    last_error: ErrorLine | None  # the last error line the run printed
    violations: Counter[str]
    window_tokens: int  # system prompt, task and the newest three turns on: what must fit


def last_turns(messages: Sequence[Message]) -> Counter[Key]:
    """The newest three assistant messages and the tool messages answering their calls (after
    the first of them: a trace may reuse a call id of an older round)."""
    at = [i for i, m in enumerate(messages) if m.role == "assistant"][-LAST_TURNS:]
    if not at:
        return Counter()
    turns = [messages[i] for i in at]
    ids = {c.id for m in turns for c in m.tool_calls}
    chosen = set(map(id, turns))
    picked = [
        m
        for m in messages[at[0] :]
        if id(m) in chosen or (m.role == "tool" and m.tool_call_id in ids)
    ]
    return Counter(map(key, picked))


def violations(items: Sequence[Any], fmt: str) -> Counter[str]:
    return Counter(v.rule for v in check(strip_reserved(items), fmt))


def window_tokens(messages: Sequence[Message]) -> int:
    """Tokens of the system prompt, the task and everything from the third-newest assistant
    message on (the recency window): a budget under this cannot keep them all."""
    system, task = _first(messages, "system"), _first(messages, "user")
    turns = [i for i, m in enumerate(messages) if m.role == "assistant"]
    start = turns[-LAST_TURNS] if len(turns) >= LAST_TURNS else 0
    head = [
        m for m in (system, task) if m is not None and not any(m is x for x in messages[start:])
    ]
    return _estimate_tokens([*head, *messages[start:]])


def facts(messages: Sequence[Message], items: Sequence[Any], fmt: str, tokens: int) -> Facts:
    system, task = _first(messages, "system"), _first(messages, "user")
    text = all_text(messages)
    records = error_records(messages)
    return Facts(
        tokens=tokens,
        keys=[key(m) for m in messages],
        system=key(system) if system else None,
        task=key(task) if task else None,
        last_turns=last_turns(messages),
        paths=set(PATH_RE.findall(text)),
        error_lines={e.head for e in records},
        errors=list(dict.fromkeys(records)),
        last_error=records[-1] if records else None,
        violations=violations(items, fmt),
        window_tokens=window_tokens(messages),
    )


@dataclass
class Score:
    reached: bool
    fits: bool  # the input's window fits the budget (see window_tokens)
    unchanged: bool
    task_system: bool
    last_turns: bool
    paths: float | None  # None: the input names none
    errors: float | None
    #: the input's distinct error lines, and how many the output names / holds verbatim
    error_count: int
    errors_by_name: int
    errors_verbatim: int
    last_error_verbatim: bool | None  # None: the input prints no error line
    valid: bool
    new_violations: list[str]
    lost: list[str]  # how the task / system prompt differ, for the notes
    ms: float
    tokens_after: int


def _how(role: str, before: Key | None, after: Message | None) -> str:
    """How the first ``role`` message of an output differs from the input's ("" if not)."""
    if before is None or (after is not None and key(after) == before):
        return ""
    name = "task" if role == "user" else "system prompt"
    old = before[1]
    if after is None:
        return f"{name} gone"
    new = after.text
    if key(after)[2:] != before[2:] or after.role != before[0]:
        return f"{name} changed"
    if new.startswith(old):
        return f"{name} merged with the next message ({len(old):,} -> {len(new):,} chars)"
    if len(new) < len(old) and new[:200] == old[:200]:
        return f"{name} cut ({len(old):,} -> {len(new):,} chars)"
    if old not in new:
        return f"{name} gone (another {role} message comes first)"
    return f"{name} changed"


def _share(wanted: set[str], text: str) -> float | None:
    if not wanted:
        return None
    named = set(PATH_RE.findall(text))
    return sum(1 for w in wanted if w in named or w in text) / len(wanted)


def _errors_named(wanted: set[str], text: str) -> float | None:
    """Share of the error lines (see ``_quality_facts``) whose head ``text`` still holds."""
    if not wanted:
        return None
    text = flat(text)
    return sum(1 for w in wanted if w in text) / len(wanted)


def score(
    before: Facts,
    out_messages: Sequence[Message],
    out_items: Sequence[Any],
    fmt: str,
    tokens_after: int,
    target: int,
    ms: float,
) -> Score:
    lost = [
        how
        for role, was in (("system", before.system), ("user", before.task))
        if (how := _how(role, was, _first(out_messages, role)))
    ]
    kept = Counter(map(key, out_messages))
    text = all_text(out_messages)
    new = violations(out_items, fmt) - before.violations
    flat_text = flat(text) if before.errors else ""
    return Score(
        reached=tokens_after <= target,
        fits=before.window_tokens <= target,
        unchanged=[key(m) for m in out_messages] == before.keys,
        task_system=not lost,
        last_turns=not (before.last_turns - kept),
        paths=_share(before.paths, text),
        errors=_errors_named(before.error_lines, text),
        error_count=len(before.errors),
        errors_by_name=sum(1 for e in before.errors if e.name in flat_text),
        errors_verbatim=sum(1 for e in before.errors if e.line in flat_text),
        last_error_verbatim=(
            None if before.last_error is None else before.last_error.line in flat_text
        ),
        valid=not new,
        new_violations=sorted(new),
        lost=lost,
        ms=ms,
        tokens_after=tokens_after,
    )


# ----------------------------------------------------------------------------------------------
# the contenders


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median milliseconds of ``fn()`` (see :func:`_compress_cases.timed`), and the last
    result."""
    seconds, result = timed(fn, repeat)
    return seconds * 1e3, result


def naive(natives: list[Any], fmt: str, target: int) -> list[Any]:
    """System prompt and task, then the newest whole units that fit ``target``."""
    conversion = convert(natives, fmt)
    messages = conversion.messages
    units = split_units(messages)
    task = next((i for i, m in enumerate(messages) if m.role == "user"), -1)
    head_units = [u for u in units if u.start <= task] if task >= 0 else units[:1]
    head = [m for u in head_units for m in u.messages]
    room = target - _estimate_tokens(head)
    suffix: list[Message] = []
    for unit in reversed(units[len(head_units) :]):
        cost = _estimate_tokens(list(unit.messages))
        if cost > room:
            break
        room -= cost
        suffix[:0] = unit.messages
    return conversion.back(head + suffix)


@dataclass
class Result:
    case: Case
    tokens: int
    target: dict[float, int] = field(default_factory=dict)
    scores: dict[tuple[float, str], Score] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    compressions: dict[float, int] = field(default_factory=dict)  # the loop's, by budget


def measure(case: Case, repeat: int, loop: bool, peers: Peers | None = None) -> Result:
    natives, fmt = case.trace.messages, case.trace.format
    messages = convert(natives, fmt).messages
    tokens = _estimate_tokens(messages)
    ours_facts = facts(messages, natives, fmt, tokens)
    lc_in = to_langchain(case.trace)
    lc_facts = facts(convert(lc_in, "langchain").messages, lc_in, "langchain", tokens)
    result = Result(case, tokens)
    for share in BUDGETS:
        target = max(1, round(tokens * share))
        result.target[share] = target
        policy = CompressionPolicy(target_tokens=target, threshold_tokens=target)

        ms, (out, report) = _timed(
            lambda policy=policy: compress_for_sync(natives, policy, format=fmt, states=False),
            repeat,
        )
        out_messages = convert(strip_reserved(out), fmt).messages
        after = _estimate_tokens(out_messages)
        if after != report.tokens_after or report.reached_target != (after <= target):
            result.notes.append(
                f"ours at {share:.0%}: the report says {report.tokens_after:,} tokens "
                f"(reached: {report.reached_target}), a recount of the native output {after:,}"
            )
        result.scores[share, "ours"] = score(ours_facts, out_messages, out, fmt, after, target, ms)

        ms, out = _timed(lambda target=target: naive(natives, fmt, target), repeat)
        out_messages = convert(strip_reserved(out), fmt).messages
        after = _estimate_tokens(out_messages)
        result.scores[share, "naive"] = score(ours_facts, out_messages, out, fmt, after, target, ms)

        ms, out = _timed(lambda target=target: lc_trim(lc_in, target), repeat)
        out_messages = convert(out, "langchain").messages if out else []
        result.scores[share, "langchain"] = score(
            lc_facts, out_messages, out, "langchain", lc_token_counter(out), target, ms
        )
        for peer in peers.available if peers is not None else ():
            assert peers is not None
            peer_out, ms, error = peers.compress(peer, natives, fmt, target, share, repeat)
            if peer_out is None:
                result.notes.append(f"{peer} at {share:.0%}: failed: {error}")
                continue
            try:
                out_messages = convert(strip_reserved(peer_out), fmt).messages
            except Exception as e:  # an output our converter cannot read is not valid
                result.notes.append(f"{peer} at {share:.0%}: output not readable: {e}")
                continue
            after = _estimate_tokens(out_messages)
            result.scores[share, peer] = score(
                ours_facts, out_messages, peer_out, fmt, after, target, ms
            )
        if loop:
            run = replay(natives, fmt, target, f"{case.group}/{case.name}")
            out_messages = convert(strip_reserved(run.out), fmt).messages
            after = _estimate_tokens(out_messages)
            ms = statistics.median(run.ms) if run.ms else 0.0
            result.scores[share, LOOP[0]] = score(
                ours_facts, out_messages, run.out, fmt, after, target, ms
            )
            result.compressions[share] = run.compressions
    return result


# ----------------------------------------------------------------------------------------------
# the table


def _median_share(values: list[float | None]) -> str:
    known = [v for v in values if v is not None]
    return f"{100 * statistics.median(known):.0f}%" if known else "-"


def _pooled(scores: list[Score], kept: Callable[[Score], int]) -> str:
    """Of all the error lines of all the runs, the share ``kept`` counts."""
    total = sum(s.error_count for s in scores)
    return f"{100 * sum(map(kept, scores)) / total:.0f}%" if total else "-"


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def cells(group: str, budget: str, contender: str, scores: list[Score]) -> list[str]:
    n = len(scores)

    def count(flag: Callable[[Score], bool], among: list[Score] = scores) -> str:
        return f"{sum(map(flag, among))}/{len(among)}"

    fitting = [s for s in scores if s.fits]
    return [
        group,
        budget,
        contender,
        str(n),
        count(lambda s: s.fits),
        count(lambda s: s.reached),
        count(lambda s: s.unchanged),
        count(lambda s: s.task_system),
        count(lambda s: s.last_turns),
        count(lambda s: s.last_turns, fitting),
        _median_share([s.paths for s in scores]),
        _median_share([s.errors for s in scores]),
        _pooled(scores, lambda s: s.errors_by_name),
        _pooled(scores, lambda s: s.errors_verbatim),
        count(
            lambda s: bool(s.last_error_verbatim),
            [s for s in scores if s.last_error_verbatim is not None],
        ),
        count(lambda s: s.valid),
        _ms(statistics.median(s.ms for s in scores)),
    ]


def table(results: list[Result], contenders: Sequence[str] = CONTENDERS) -> list[list[str]]:
    rows = []
    for group in GROUPS:
        mine = [r for r in results if r.case.group == group]
        if not mine:
            continue
        for share in BUDGETS:
            for contender in contenders:
                scores = [
                    r.scores[share, contender] for r in mine if (share, contender) in r.scores
                ]
                if not scores:
                    continue
                rows.append(cells(group, f"{share:.0%}", contender, scores))
    return rows


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def below_naive(results: list[Result], contender: str) -> list[str]:
    """Where ``contender`` keeps less than naive (data set and budget): the task identical
    less often, or a lower median share of paths or error lines."""
    out = []
    for group in GROUPS:
        mine = [r for r in results if r.case.group == group]
        for share in BUDGETS if mine else ():
            ours = [r.scores[share, contender] for r in mine]
            ref = [r.scores[share, "naive"] for r in mine]
            for what, get in (("paths", lambda s: s.paths), ("error lines", lambda s: s.errors)):
                a, b = _median([get(s) for s in ours]), _median([get(s) for s in ref])
                if a is not None and b is not None and round(100 * a) < round(100 * b):
                    out.append(f"{group} {share:.0%} {what}: {a:.0%} < naive {b:.0%}")
            if sum(s.task_system for s in ours) < sum(s.task_system for s in ref):
                out.append(f"{group} {share:.0%}: task+system identical less often than naive")
    return out


def loop_line(results: list[Result]) -> str:
    counts = [r.compressions[s] for r in results for s in BUDGETS if s in r.compressions]
    if not counts:
        return ""
    return (
        f"agent loop: {sum(counts):,} compressions over {len(counts)} replays "
        f"(median {statistics.median(counts):.0f}, max {max(counts)} a replay)"
    )


def summary(results: list[Result], contender: str, shares: Sequence[float] = BUDGETS) -> str:
    scores = [r.scores[s, contender] for r in results for s in shares if (s, contender) in r.scores]
    if not scores:
        return f"{contender}: not run"
    c = cells("", "", contender, scores)
    label = contender if shares == BUDGETS else f"{contender} at {_budgets(list(shares))}"
    return (
        f"{label}: window fits {c[4]}, target reached {c[5]}, unchanged {c[6]}, "
        f"task+system identical {c[7]}, last 3 turns verbatim {c[8]} ({c[9]} where the "
        f"window fits), paths named {c[10]}, error lines named {c[11]} (medians), "
        f"error lines by name {c[12]} / verbatim {c[13]} (pooled), last error line "
        f"verbatim {c[14]}, valid {c[15]}, median {c[16]} ms"
    )


def _budgets(shares: list[float]) -> str:
    return "/".join(f"{share:.0%}" for share in shares)


def notes(results: list[Result]) -> list[str]:
    """What the table cannot say: which outputs lost or changed the task or system prompt
    (ours and naive; LangChain's "last" strategy drops the task whenever anything is cut),
    new check() violations, and report counts that differ from a recount."""
    out: list[str] = []
    for r in results:
        tag = f"{r.case.group}/{r.case.name}"
        grouped: dict[tuple[str, str], list[float]] = {}
        for (share, contender), s in r.scores.items():
            for how in s.lost if contender != "langchain" else ():
                grouped.setdefault((contender, how), []).append(share)
            for rule in s.new_violations:
                grouped.setdefault((contender, f"output breaks {rule}"), []).append(share)
        for (contender, how), shares in grouped.items():
            out.append(f"{tag} ({r.tokens:,} tokens) at {_budgets(shares)}: {contender}: {how}")
        out += [f"{tag}: {n}" for n in r.notes]
    return out


# ----------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--data", help="data dir (default $AGENT_ADAPTER_DATA or ../shared/data)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="5 mini-swe-agent runs, 2 Claude Code sessions, 2 SWE-agent runs, 5 tau-bench dialogs",
    )
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per call (median)")
    p.add_argument(
        "--part",
        choices=("both", *PARTS),
        default="both",
        help="which part of the split to run (see _quality_facts.py; default both)",
    )
    p.add_argument("--no-loop", action="store_true", help="skip the agent-loop replays")
    p.add_argument(
        "--no-peers",
        action="store_true",
        help="skip headroom-ai and litellm.compress() (see _quality_peers.py)",
    )
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    data = data_dir(args.data)
    if not data.is_dir():
        sys.exit(f"data directory not found: {data} (use --data or AGENT_ADAPTER_DATA)")
    cases = [c for c in load_cases(data, args.quick) if args.part in ("both", c.part)]
    peers = None if args.no_peers else Peers()
    contenders = CONTENDERS + tuple(peers.available if peers is not None else ())
    results = [measure(case, args.repeat, not args.no_loop, peers) for case in cases]
    if peers is not None:
        peers.close()
    bullet = "- " if args.markdown else ""
    for part in PARTS[::-1]:
        mine = [r for r in results if r.case.part == part]
        if not mine:
            continue
        sections = [("one compression", contenders)]
        if not args.no_loop:
            sections.append(("agent loop: several compressions in a row", LOOP))
        for title, contenders in sections:
            print(f"{'## ' if args.markdown else ''}{part} part, {title} ({len(mine)} traces)")
            print()
            print(render(table(mine, contenders), args.markdown))
            print()
            for contender in contenders:
                print(bullet + summary(mine, contender))
            for share in BUDGETS:
                for contender in contenders:
                    print(bullet + summary(mine, contender, (share,)))
            if contenders is LOOP:
                print(bullet + loop_line(mine))
            for contender in contenders[:1]:
                gaps = below_naive(mine, contender)
                print(f"{bullet}{contender} below naive: {'; '.join(gaps) if gaps else 'nowhere'}")
            print()
    if peers is not None and peers.missing_line():
        print(bullet + peers.missing_line())
    elif peers is None:
        print(f"{bullet}peers skipped (--no-peers)")
    found = notes(results)
    if found:
        print()
        print("Notes:")
        for n in found:
            print(f"- {n}")
    print()
    print(
        f"{len(results)} traces x {len(BUDGETS)} budgets x {len(contenders)} contenders "
        f"(and the agent-loop replay unless --no-loop), "
        f"median of {args.repeat} runs per call; Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs; wall time {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
