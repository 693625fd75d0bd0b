#!/usr/bin/env python
"""Benchmark: the default compression pipeline vs LangChain ``trim_messages`` on real traces.

For every trace: ``compress_for(natives, CompressionPolicy(target_tokens=T))`` (convert, the
four deterministic default steps, and back to the native format) against
``langchain_core.messages.trim_messages(strategy="last", start_on="human",
include_system=True, allow_partial=False)`` with the same chars/4 + 4 per message token count,
on the same conversation converted to LangChain messages by a private converter below (the
library's own converters are deliberately not used on the LangChain side).

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
from pathlib import Path
from typing import Any

from agent_adapter.cli._loaders import Trace, load_trace
from agent_adapter.context import (
    CompressionPolicy,
    CompressionReport,
    Protection,
    RemoveOldMessages,
    compress,
    compress_for,
    split_units,
)
from agent_adapter.context import estimate_tokens as _estimate_tokens
from agent_adapter.context._pairing import Pairing
from agent_adapter.context.formats import convert

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        trim_messages,
    )
except ImportError:  # pragma: no cover - a clear message instead of a traceback
    sys.exit("langchain-core is needed: pip install -e '.[bench]'")

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
IMAGE_TOKENS = 1600  # as agent_adapter.context._tokens.IMAGE_TOKENS
OVERHEAD = 4  # as agent_adapter.context._tokens.MESSAGE_OVERHEAD_TOKENS


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


def _has_real_tool_calls(path: Path) -> bool:
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

    swe = [p for p in sorted((data / "swe-agent").rglob("*.traj")) if _has_real_tool_calls(p)]
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


# ----------------------------------------------------------------------------------------------
# a private converter to LangChain messages (independent of the library's converters)


def _text_blocks(content: Any) -> Any:
    """OpenAI / Anthropic content as LangChain content: a str or a list of block dicts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return [dict(b) if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]


def _parse_args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except json.JSONDecodeError:
        return {"__raw__": raw}
    return value if isinstance(value, dict) else {"__value__": value}


def openai_to_langchain(natives: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for m in natives:
        role, content = m["role"], _text_blocks(m.get("content"))
        if role in ("system", "developer"):
            out.append(SystemMessage(content=content))
        elif role == "user":
            out.append(HumanMessage(content=content))
        elif role == "assistant":
            calls = [
                {
                    "name": c["function"]["name"],
                    "args": _parse_args(c["function"].get("arguments")),
                    "id": c["id"],
                    "type": "tool_call",
                }
                for c in m.get("tool_calls") or []
            ]
            out.append(AIMessage(content=content, tool_calls=calls))
        elif role == "tool":
            extra = {"name": m["name"]} if m.get("name") else {}
            out.append(ToolMessage(content=content, tool_call_id=m["tool_call_id"], **extra))
        else:
            raise ValueError(f"unexpected OpenAI role {role!r}")
    return out


def anthropic_to_langchain(natives: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for m in natives:
        content = m["content"]
        if m["role"] == "assistant":
            if isinstance(content, str):
                out.append(AIMessage(content=content))
                continue
            blocks = [dict(b) for b in content if b.get("type") != "tool_use"]
            calls = [
                {"name": b["name"], "args": b.get("input", {}), "id": b["id"], "type": "tool_call"}
                for b in content
                if b.get("type") == "tool_use"
            ]
            out.append(AIMessage(content=blocks, tool_calls=calls))
            continue
        if isinstance(content, str):
            out.append(HumanMessage(content=content))
            continue
        pending: list[dict[str, Any]] = []
        for b in content:
            if b.get("type") != "tool_result":
                pending.append(dict(b))
                continue
            if pending:
                out.append(HumanMessage(content=pending))
                pending = []
            out.append(
                ToolMessage(
                    content=_text_blocks(b.get("content", "")), tool_call_id=b["tool_use_id"]
                )
            )
        if pending:
            out.append(HumanMessage(content=pending))
    return out


def to_langchain(trace: Trace) -> list[BaseMessage]:
    if trace.format == "openai":
        return openai_to_langchain(trace.messages)
    return anthropic_to_langchain(trace.messages)


# ----------------------------------------------------------------------------------------------
# the same chars/4 + 4 per message estimate, for LangChain messages


def _block_chars(block: Any) -> tuple[int, int]:
    """(characters, media parts) of one content block."""
    if isinstance(block, str):
        return len(block), 0
    kind = block.get("type")
    if kind == "text":
        return len(block.get("text", "")), 0
    if kind == "thinking":
        return len(block.get("thinking", "")), 0
    if kind == "redacted_thinking":
        return len(block.get("data", "")), 0
    if kind in ("image", "image_url", "document", "file"):
        return 0, 1
    return len(json.dumps(block, default=str, ensure_ascii=False)), 0


def lc_message_tokens(message: BaseMessage) -> int:
    content = message.content
    chars, media = 0, 0
    if isinstance(content, str):
        chars = len(content)
    else:
        for block in content:
            c, n = _block_chars(block)
            chars, media = chars + c, media + n
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            chars += len(call["name"]) + len(json.dumps(call["args"]))
    if isinstance(message, ToolMessage):
        chars += len(message.tool_call_id)
    if message.name:
        chars += len(message.name)
    return -(-chars // 4) + OVERHEAD + IMAGE_TOKENS * media


def lc_token_counter(messages: Sequence[BaseMessage]) -> int:
    """chars/4 + 4 per message, as agent_adapter's estimate_tokens (a list counter)."""
    return sum(lc_message_tokens(m) for m in messages)


def lc_trim(messages: list[BaseMessage], target: int) -> list[BaseMessage]:
    return trim_messages(
        messages,
        max_tokens=target,
        token_counter=lc_token_counter,
        strategy="last",
        start_on="human",
        include_system=True,
        allow_partial=False,
    )


# ----------------------------------------------------------------------------------------------
# pairing check


def _events(kind: str, items: Sequence[Any]) -> list[tuple[str, Any]]:
    """Messages as ("calls", ids) / ("result", id) / ("other", None) events, in order."""
    events: list[tuple[str, Any]] = []
    for m in items:
        if kind == "langchain":
            if isinstance(m, ToolMessage):
                events.append(("result", m.tool_call_id))
            elif isinstance(m, AIMessage) and m.tool_calls:
                events.append(("calls", [c["id"] for c in m.tool_calls]))
            else:
                events.append(("other", None))
        elif kind == "openai":
            if m.get("role") == "tool":
                events.append(("result", m.get("tool_call_id")))
            elif m.get("role") == "assistant" and m.get("tool_calls"):
                events.append(("calls", [c["id"] for c in m["tool_calls"]]))
            else:
                events.append(("other", None))
        else:  # anthropic
            content = m.get("content")
            blocks = content if isinstance(content, list) else []
            if m.get("role") == "assistant":
                ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
                events.append(("calls", ids) if ids else ("other", None))
                continue
            other = isinstance(content, str)
            for b in blocks:
                if b.get("type") == "tool_result":
                    if other:  # text before a result: the results are not answered first
                        events.append(("other", None))
                        other = False
                    events.append(("result", b.get("tool_use_id")))
                else:
                    other = True
            if other or not blocks:
                events.append(("other", None))
    return events


def pairing_problem(kind: str, items: Sequence[Any]) -> str:
    """Empty when the events of ``items`` keep the library's one pairing rule
    (``agent_adapter.context._pairing.Pairing``: every result answers an open call of the
    nearest preceding message with calls, every call is answered before the next non-tool
    message); else the first violation. Calls still open at the very end (a pending round) are
    allowed."""
    pairing = Pairing()
    for i, (event, value) in enumerate(_events(kind, items)):
        if event == "result":
            pairing.result(i, value)
        else:
            pairing.turn(i, value if event == "calls" else [])
    pairing.end()
    for problem in pairing.problems:
        if problem.rule != "calls_pending_at_end":
            due = f" (due before event {problem.before})" if problem.before is not None else ""
            return f"event {problem.index}: {problem.rule} {list(problem.call_ids)}{due}"
    return ""


def anthropic_shape_problem(items: Sequence[dict[str, Any]]) -> str:
    """Beyond pairing, the Messages API wants user first and strictly alternating roles."""
    if items and items[0].get("role") != "user":
        return "the first message is not a user message"
    for i in range(1, len(items)):
        if items[i].get("role") == items[i - 1].get("role"):
            return f"messages {i - 1} and {i} are both {items[i].get('role')!r}"
    return ""


async def why_not_reached(case: Case) -> str:
    """Why the default pipeline stopped above the target: what RemoveOldMessages, the last
    step, was not allowed to drop, and whether any unit it could drop is left."""
    messages = convert(case.trace.messages, case.trace.format).messages
    result, report = await compress(messages, CompressionPolicy(target_tokens=case.target))
    step = RemoveOldMessages()
    non_system = [i for i, m in enumerate(result) if m.role != "system"]
    keep = set(non_system[: step.keep_first])
    if step.keep_last:
        keep |= set(non_system[-step.keep_last :])
    protected = kept = 0
    droppable: list[int] = []
    for unit in split_units(result, Protection(messages)):
        tokens = _estimate_tokens(list(unit.messages))
        if unit.protected:
            protected += tokens
        elif keep.intersection(range(unit.start, unit.stop)):
            kept += tokens
        else:
            droppable.append(tokens)
    text = (
        f"ours stops at {report.tokens_after:,} > target {report.target_tokens:,}: "
        f"protected units {protected:,} tokens + units kept by RemoveOldMessages(keep_first="
        f"{step.keep_first}, keep_last={step.keep_last}) {kept:,} tokens"
    )
    if droppable:
        return f"{text}; BUT {len(droppable)} droppable units ({sum(droppable):,} tokens) left"
    return f"{text}; nothing droppable left (by design, if_still_too_long='keep')"


# ----------------------------------------------------------------------------------------------
# survival of the system prompt and the latest user message


def _system_and_user(kind: str, items: Sequence[Any]) -> tuple[Any, Any]:
    """(first system message, latest user message) as comparable keys; None when absent."""
    if kind == "langchain":
        system = next((m for m in items if isinstance(m, SystemMessage)), None)
        user = next((m for m in reversed(items) if isinstance(m, HumanMessage)), None)
        return system, user
    messages = convert(list(items), kind).messages if items else []
    system = next((m for m in messages if m.role == "system"), None)
    user = next((m for m in reversed(messages) if m.role == "user"), None)
    return (
        (system.role, system.content) if system else None,
        (user.role, user.content) if user else None,
    )


def survived(kind: str, before: Sequence[Any], after: Sequence[Any]) -> tuple[str, str]:
    """("y"/"n"/"-", "y"/"n"/"-") for the system prompt and the latest user message."""
    want = _system_and_user(kind, before)
    if kind == "langchain":
        have = {id(m) for m in after}
        got = [w is not None and id(w) in have for w in want]
    else:
        kept = convert(list(after), kind).messages if after else []
        keys = {(m.role, m.content) for m in kept}
        got = [w is not None and w in keys for w in want]
    return tuple("-" if w is None else ("y" if g else "n") for w, g in zip(want, got, strict=True))


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
            t0 = time.perf_counter()
            result = await fn()
            times.append(time.perf_counter() - t0)
    finally:
        gc.enable()
    return statistics.median(times), result


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """As :func:`_timed_async`, for a sync ``fn``."""
    fn()
    gc.collect()
    gc.disable()
    try:
        times, result = [], None
        for _ in range(repeat):
            t0 = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t0)
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
        lambda: compress_for(natives, policy, format=fmt), repeat
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
        lambda: compress_for(natives, idle, format=fmt), max(repeat * 4, 20)
    )
    row.noop_us = seconds * 1e6
    if same is not natives or idle_report.skipped != "under_threshold":
        row.notes.append(f"no-op call did not return the input ({idle_report.skipped!r})")

    if json.dumps(natives, sort_keys=True, default=str) != snapshot:
        row.notes.append("compress_for MUTATED the caller's native messages")

    seconds, trimmed = _timed(lambda: lc_trim(lc_messages, case.target), repeat)
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
    out = await compress_for(natives, policy, format=fmt)
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
    args = p.parse_args(argv)
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
        f"{max(args.repeat * 4, 20)}); Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs; wall time {time.perf_counter() - started:.1f} s"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
