"""What the command line prints: rich tables for people, JSON for programs."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent_adapter._messages import ROLES, Message
from agent_adapter.cli._loaders import Trace
from agent_adapter.cli._passes import pass_labels, step_names
from agent_adapter.context import (
    CompressionPolicy,
    CompressionReport,
    Protection,
    TokenCounter,
    TokenMeter,
    Unit,
)

#: Units shown at each end of a long list by ``inspect``.
UNITS_SHOWN = 10
#: What ``inspect`` names a protected unit by: :meth:`Protection.reason` of its messages, in
#: this order ("unit", protected for being in a unit with one of these, is not shown).
REASONS = (
    "system",
    "pinned",
    "approval",
    "compaction",
    "before_compaction",
    "latest_user",
    "thinking_opener",
    "newest_turn",
)

#: Why no step ran, by :attr:`CompressionReport.skipped`, as the compress report says it.
NO_STEP_RAN: dict[str, str] = {
    "under_threshold": "at or under the threshold",
    "under_target": "already at or under the target",
    "nothing_to_compress": "every message is protected, or nothing that may go made it smaller",
    "sent_again": "the request compressed before for this history was sent again",
    "held": "the last compaction stopped over the target: held until the request grows by the gap",
    "preparing": "the compaction prepared in the background was not ready: sent as it is",
}

COUNTER_LABELS: dict[str, str] = {
    "estimate": "estimate (chars/4)",
    "o200k": "tiktoken o200k_base",
    "cl100k": "tiktoken cl100k_base",
}


def _console() -> Console:
    """stdout as a rich console: wide and without colour when it is not a terminal."""
    if sys.stdout.isatty():
        return Console(file=sys.stdout, highlight=False)
    return Console(file=sys.stdout, width=200, no_color=True, highlight=False, soft_wrap=False)


def _n(value: int) -> str:
    return f"{value:,}"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


class _Fields:
    """``key  value`` lines with aligned values, printed without wrapping or padding."""

    def __init__(self, min_width: int = 0) -> None:
        self.rows: list[tuple[str, str]] = []
        self.min_width = min_width

    def add_row(self, key: str, value: str) -> None:
        self.rows.append((key, value))

    def print(self, console: Console) -> None:
        width = max((len(key) for key, _ in self.rows), default=self.min_width)
        width = max(width, self.min_width)
        for key, value in self.rows:
            line = Text(f"{key:<{width}}", style="bold")
            line.append(f"  {value}")
            console.print(line, soft_wrap=True)


def _limits_text(report: CompressionReport, policy: CompressionPolicy) -> str:
    text = f"threshold {_n(report.threshold_tokens)}, target {_n(report.target_tokens)} tokens"
    if policy.uses_percent and policy.model_max_tokens is not None:
        th = policy.threshold_percent
        tg = policy.target_percent
        shown = ", ".join(
            f"{label} {value:g}%" for label, value in (("threshold", th), ("target", tg)) if value
        )
        text += f" ({shown} of {_n(policy.model_max_tokens)})"
    return text


def _print_compress_report(
    console: Console,
    *,
    file: Path,
    trace: Trace,
    fmt: str,
    counter: str,
    policy: CompressionPolicy,
    report: CompressionReport,
    natives_after: int,
    load_seconds: float,
    problems_before: list[str],
    problems_after: list[str],
    out: Path | None,
) -> None:
    """The human-readable compress report: the head, the steps, the tail."""
    _compress_head(
        file=file,
        trace=trace,
        fmt=fmt,
        counter=counter,
        policy=policy,
        report=report,
        natives_after=natives_after,
    ).print(console)
    _print_steps(console, report, step_names(policy))
    tail = _compress_tail(report)
    tail.add_row("time", f"{_ms(report.seconds)} ms compressing ({_ms(load_seconds)} ms loading)")
    tail.add_row("result", report.explain())
    _add_provider_rows(tail, fmt, problems_before, problems_after)
    if out is not None:
        tail.add_row("output", f"{_n(natives_after)} {fmt} messages written to {out}")
    tail.print(console)


def _compress_head(
    *,
    file: Path,
    trace: Trace,
    fmt: str,
    counter: str,
    policy: CompressionPolicy,
    report: CompressionReport,
    natives_after: int,
) -> _Fields:
    """The compress report's head: the file, the limits, messages and tokens before and after."""
    head = _Fields(min_width=12)
    head.add_row("file", str(file))
    head.add_row("trace", f"{trace.name} ({trace.source}, format {fmt})")
    head.add_row("counter", COUNTER_LABELS[counter])
    head.add_row("limits", _limits_text(report, policy))
    natives_before = len(trace.messages)
    messages = f"{_n(natives_before)} -> {_n(natives_after)}"
    if (report.messages_before, report.messages_after) != (natives_before, natives_after):
        messages += (
            f" native ({_n(report.messages_before)} -> {_n(report.messages_after)} "
            "once split into single messages)"
        )
    messages += (
        f"; {_n(report.messages_removed)} removed, {_n(report.messages_changed)} changed, "
        f"{_n(report.messages_added)} added"
    )
    head.add_row("messages", messages)
    head.add_row(
        "tokens",
        f"{_n(report.tokens_before)} -> {_n(report.tokens_after)} "
        f"(saved {_n(report.tokens_saved)}, {_pct(report.tokens_saved, report.tokens_before)})",
    )
    if not report.skipped:
        head.add_row("protected", f"{_n(report.protected_tokens)} tokens no step may touch")
    return head


def last_resort_cut(report: CompressionReport) -> tuple[int, int] | None:
    """``(tokens before, tokens after)`` of the last-resort cut (``if_still_too_long="cut"``,
    or ``"keep"`` over the model's window, both reported as ``"cut"``): from what the last step
    left to the final list; ``None`` when no cut ran or it took nothing."""
    if report.if_still_too_long != "cut":
        return None
    before = report.steps[-1].tokens_after if report.steps else report.tokens_before
    return (before, report.tokens_after) if before > report.tokens_after else None


def _print_steps(console: Console, report: CompressionReport, order: Sequence[str]) -> None:
    """One row a step that ran, labelled with its pass once the steps ran again with the newest
    turns no longer held (``dedup (pass 2)``), and a row for the last-resort cut; or why no
    step ran."""
    cut = last_resort_cut(report)
    if report.steps or cut is not None:
        steps = Table()
        for name in ("step", "tokens before", "after", "saved"):
            steps.add_column(name, justify="left" if name == "step" else "right")
        for name in ("removed", "changed", "added", "reverted", "ms"):
            steps.add_column(name, justify="right")
        labels = pass_labels([s.step for s in report.steps], order)
        for s, label in zip(report.steps, labels, strict=True):
            steps.add_row(
                label,
                _n(s.tokens_before),
                _n(s.tokens_after),
                _n(s.tokens_saved),
                _n(s.messages_removed),
                _n(s.messages_changed),
                _n(s.messages_added),
                _n(s.changes_reverted),
                _ms(s.seconds),
            )
        if cut is not None:  # no StepReport of its own: from the last step's list to the final
            before, after = cut
            steps.add_row(
                "last-resort cut (if_still_too_long)",
                _n(before),
                _n(after),
                _n(before - after),
                "",
                "",
                "",
                "",
                "",
            )
        console.print(Text("Steps", style="bold"))
        console.print(steps)
    elif report.skipped:
        console.print(f"No step ran ({NO_STEP_RAN.get(report.skipped, report.skipped)}).")


def _compress_tail(report: CompressionReport) -> _Fields:
    """The compress report's tail up to the timings: the steps that failed, if too long."""
    tail = _Fields(min_width=12)
    if report.failures:
        failed = ", ".join(f"{f.step} ({f.error_type})" for f in report.failures)
        tail.add_row(
            "failures", f"{len(report.failures)} step(s) raised and were skipped: {failed}"
        )
    else:
        tail.add_row("failures", "none")
    if report.if_still_too_long:
        tail.add_row("if too long", report.if_still_too_long)
    return tail


def _add_provider_rows(
    tail: _Fields, fmt: str, problems_before: list[str], problems_after: list[str]
) -> None:
    """Whether the provider would take the compressed request (and broke rules before)."""
    if problems_after:
        shown = "; ".join(problems_after[:5])
        more = f" (and {len(problems_after) - 5} more)" if len(problems_after) > 5 else ""
        tail.add_row("provider", f"REJECTED: {len(problems_after)} problem(s): {shown}{more}")
    else:
        tail.add_row(
            "provider", f"OK: the {fmt} request passes formats.check (every tool call paired)"
        )
    if problems_before:
        tail.add_row("", f"(the input already broke {len(problems_before)} provider rule(s))")


def _report_json(
    report: CompressionReport,
    *,
    file: Path,
    trace: Trace,
    fmt: str,
    counter: str,
    natives_after: int,
    problems: list[str],
    out: Path | None,
) -> dict[str, Any]:
    """The report as JSON-safe values: its fields plus reached_target, explain and context."""
    data: dict[str, Any] = dataclasses.asdict(report)
    data["tokens_saved"] = report.tokens_saved
    data["reached_target"] = report.reached_target
    data["explain"] = report.explain()
    data["file"] = str(file)
    data["format"] = fmt
    data["source"] = trace.source
    data["name"] = trace.name
    data["counter"] = counter
    data["native_messages_before"] = len(trace.messages)
    data["native_messages_after"] = natives_after
    data["provider_violations"] = problems
    data["output"] = str(out) if out is not None else None
    return data


def message_tokens(messages: Sequence[Message], count: TokenCounter) -> dict[int, int]:
    """Each message's tokens by ``id(m)``, as the compression counts them: a
    :class:`~agent_adapter.context.TokenMeter` bound to ``messages``, so what the provider
    drops (the messages before an Anthropic ``compaction`` block) counts 0."""
    meter = TokenMeter(count)
    meter.bind(messages)
    return {id(m): meter.of(m) for m in messages}


def _roles(unit: Unit) -> str:
    """``assistant, tool x3`` for a unit's roles, in order of first appearance."""
    counts: dict[str, int] = {}
    for m in unit.messages:
        counts[m.role] = counts.get(m.role, 0) + 1
    return ", ".join(role if n == 1 else f"{role} x{n}" for role, n in counts.items())


def _protection_reasons(units: Sequence[Unit], protection: Protection) -> list[list[str]]:
    """For each unit, why it is protected (:data:`REASONS`; empty when it is not)."""
    reasons: list[list[str]] = []
    for unit in units:
        found: set[str] = {protection.reason(m) for m in unit.messages}
        why = [r for r in REASONS if r in found] or ["unit"]
        reasons.append(why if unit.protected else [])
    return reasons


def _print_inspect(
    console: Console,
    *,
    file: Path,
    trace: Trace,
    fmt: str,
    counter: str,
    messages: Sequence[Message],
    tokens: dict[int, int],
    protection: Protection,
    units: Sequence[Unit],
) -> None:
    """The human-readable inspect report; ``tokens`` maps ``id(message)`` to its count."""
    total = sum(tokens.values())
    reasons = _protection_reasons(units, protection)
    unit_tokens = [sum(tokens[id(m)] for m in unit.messages) for unit in units]

    head = _Fields()
    head.add_row("file", str(file))
    head.add_row("trace", f"{trace.name} ({trace.source}, format {fmt})")
    head.add_row("counter", COUNTER_LABELS[counter])
    rounds = sum(u.is_tool_round for u in units)
    head.add_row(
        "size",
        f"{_n(total)} tokens; {_n(len(trace.messages))} native messages, "
        f"{_n(len(messages))} messages, {_n(len(units))} units ({_n(rounds)} tool rounds)",
    )
    head.print(console)
    console.print(Text("Tokens per role", style="bold"))
    console.print(_roles_table(messages, tokens, total))
    console.print(Text("Units (kept, changed or removed together)", style="bold"))
    console.print(_units_table(units, unit_tokens, reasons))
    console.print(Text("What is protected and why", style="bold"))
    console.print(_reasons_table(units, unit_tokens, reasons))
    protected_tokens = sum(t for unit, t in zip(units, unit_tokens, strict=True) if unit.protected)
    console.print(
        f"protected total: {_n(protected_tokens)} tokens in "
        f"{sum(u.protected for u in units)} units "
        f"({_pct(protected_tokens, total)} of {_n(total)}); no step changes or removes them, "
        "so a target below this cannot be reached."
    )


def _roles_table(messages: Sequence[Message], tokens: dict[int, int], total: int) -> Table:
    """Messages and tokens per role, and their total."""
    roles = Table()
    roles.add_column("role")
    for column in ("messages", "tokens", "%"):
        roles.add_column(column, justify="right")
    for role in ROLES:
        of_role = [m for m in messages if m.role == role]
        if of_role:
            role_tokens = sum(tokens[id(m)] for m in of_role)
            roles.add_row(role, _n(len(of_role)), _n(role_tokens), _pct(role_tokens, total))
    roles.add_row("total", _n(len(messages)), _n(total), _pct(total, total), style="bold")
    return roles


def _units_table(
    units: Sequence[Unit], unit_tokens: Sequence[int], reasons: list[list[str]]
) -> Table:
    """One row a unit, the middle ones elided past ``2 * UNITS_SHOWN``."""
    table = Table()
    table.add_column("unit", justify="right")
    table.add_column("messages")
    table.add_column("kind")
    table.add_column("roles")
    table.add_column("tokens", justify="right")
    table.add_column("protected")
    shown = list(range(len(units)))
    if len(units) > 2 * UNITS_SHOWN:
        shown = [*range(UNITS_SHOWN), -1, *range(len(units) - UNITS_SHOWN, len(units))]
    for n in shown:
        if n < 0:
            hidden = len(units) - 2 * UNITS_SHOWN
            table.add_row("", f"... {hidden} more units", "", "", "", "", style="italic")
            continue
        unit = units[n]
        span = str(unit.start) if len(unit) == 1 else f"{unit.start}-{unit.stop - 1}"
        table.add_row(
            str(n),
            span,
            "tool round" if unit.is_tool_round else "message",
            _roles(unit),
            _n(unit_tokens[n]),
            f"yes ({', '.join(reasons[n])})" if unit.protected else "no",
        )
    return table


def _reasons_table(
    units: Sequence[Unit], unit_tokens: Sequence[int], reasons: list[list[str]]
) -> Table:
    """The units, messages and tokens protected for each reason."""
    why = Table()
    why.add_column("reason")
    why.add_column("units")
    why.add_column("messages", justify="right")
    why.add_column("tokens", justify="right")
    for reason in (*REASONS, "unit"):
        hit = [n for n, r in enumerate(reasons) if reason in r]
        if hit:
            why.add_row(
                reason,
                ", ".join(str(n) for n in hit[:12]) + (" ..." if len(hit) > 12 else ""),
                _n(sum(len(units[n]) for n in hit)),
                _n(sum(unit_tokens[n] for n in hit)),
            )
    return why
