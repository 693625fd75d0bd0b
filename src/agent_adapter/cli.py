"""The ``agent-adapter`` command line: compress and inspect recorded agent conversations.

Commands:

* ``agent-adapter compress FILE``: compress a conversation with a :class:`CompressionPolicy`,
  print what each step did, check that every tool call still has its result, and write the
  compressed list (``-o``) in the file's own native format.
* ``agent-adapter inspect FILE``: tokens per role, the units a compression works on, and what
  is protected and why.

FILE is anything :func:`agent_adapter.traces.load_trace` reads: mini-swe-agent and SWE-agent
trajectories, tau-bench files (``--index`` picks the dialog), Claude Code transcripts, or a
plain JSON list / JSONL file of OpenAI or Anthropic messages.

Exit codes: 0 success; 1 the target was not reached and ``--strict`` was given (or
``--if-still-too-long raise`` raised); 2 bad usage or bad input (one line on stderr, no
traceback).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.main import get_command

from agent_adapter.context import (
    CompressionPolicy,
    CompressionReport,
    CompressionStep,
    CutLongMessages,
    Protection,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    TokenCounter,
    Unit,
    carries_approval_state,
    compress_for_sync,
    estimate_tokens,
    split_units,
    tiktoken_counter,
)
from agent_adapter.context.formats import check, convert
from agent_adapter.errors import AgentAdapterError, ModelContextOverflow
from agent_adapter.messages import ROLES, Message
from agent_adapter.traces import Trace, load_trace

__all__ = ["app", "main"]

PROG = "agent-adapter"

FormatChoice: TypeAlias = Literal["auto", "openai", "anthropic", "gemini"]
CounterChoice: TypeAlias = Literal["estimate", "o200k", "cl100k"]
StillChoice: TypeAlias = Literal["keep", "cut", "raise"]

#: ``--steps`` names and the steps they build, in the policy's default order.
STEP_NAMES: dict[str, type[CompressionStep]] = {
    "dedup": RemoveDuplicates,
    "shrink_tool_results": ShrinkToolResults,
    "cut_long": CutLongMessages,
    "remove_old": RemoveOldMessages,
}
DEFAULT_TARGET = "32k"
#: Units shown at each end of a long list by ``inspect``.
UNITS_SHOWN = 10

_COUNTER_LABELS: dict[str, str] = {
    "estimate": "estimate (chars/4)",
    "o200k": "tiktoken o200k_base",
    "cl100k": "tiktoken cl100k_base",
}

app = typer.Typer(
    name=PROG,
    help="Compress and inspect recorded LLM agent conversations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class CliError(Exception):
    """Bad input the user can fix; printed as one line, exit code 2."""


# --------------------------------------------------------------------------------------------
# option parsing


@dataclasses.dataclass(frozen=True)
class _Limit:
    """A ``--threshold`` / ``--target`` value: a token count or a percent."""

    tokens: int | None = None
    percent: float | None = None


_SUFFIXES = {"k": 1_000, "m": 1_000_000}


def _parse_count(value: str, option: str) -> int:
    """A token count such as ``32000``, ``32k``, ``1.5m`` or ``32_000`` as a positive int.

    Raises:
        CliError: not a positive count.
    """
    text = value.strip().lower().replace("_", "").replace(",", "")
    scale = 1
    if text and text[-1] in _SUFFIXES:
        scale = _SUFFIXES[text[-1]]
        text = text[:-1]
    try:
        number = float(text) * scale
    except ValueError:
        raise CliError(
            f"{option} {value!r} is not a token count (e.g. 32000 or 32k)"
            + (" or a percent (e.g. 80%)" if option != "--model-max-tokens" else "")
        ) from None
    if not number.is_integer() or number <= 0:
        raise CliError(f"{option} {value!r} must be a whole number of tokens > 0")
    return int(number)


def _parse_limit(value: str, option: str) -> _Limit:
    """``80%`` as a percent, anything else as a token count.

    Raises:
        CliError: not a count nor a percent in (0, 100].
    """
    text = value.strip()
    if text.endswith("%"):
        try:
            percent = float(text[:-1])
        except ValueError:
            raise CliError(f"{option} {value!r} is not a percent (e.g. 80%)") from None
        if not 0 < percent <= 100:
            raise CliError(f"{option} {value!r} must be a percent in (0, 100]")
        return _Limit(percent=percent)
    return _Limit(tokens=_parse_count(text, option))


def _parse_steps(value: str) -> list[CompressionStep]:
    """``dedup,cut_long`` as step objects, in the order given.

    Raises:
        CliError: an unknown or empty step name.
    """
    names = [name.strip() for name in value.split(",")]
    if not any(names):
        raise CliError(f"--steps is empty; choose from {', '.join(STEP_NAMES)}")
    steps: list[CompressionStep] = []
    for name in names:
        factory = STEP_NAMES.get(name)
        if factory is None:
            raise CliError(f"--steps: unknown step {name!r}; choose from {', '.join(STEP_NAMES)}")
        steps.append(factory())
    return steps


def _token_counter(name: str) -> TokenCounter:
    """The counter for ``--counter``: the chars/4 estimate or an exact tiktoken encoding."""
    if name == "o200k":
        return tiktoken_counter("o200k_base")
    if name == "cl100k":
        return tiktoken_counter("cl100k_base")
    return estimate_tokens


def _build_policy(
    threshold: str | None,
    target: str | None,
    model_max_tokens: str | None,
    steps: str | None,
    counter: TokenCounter,
    if_still_too_long: StillChoice,
) -> CompressionPolicy:
    """The policy the compress options describe (default: ``--target 32k``).

    Raises:
        CliError: a bad value, a percent without ``--model-max-tokens``, or a percent mixed
            with a token count.
        ConfigError: a setting the policy rejects (e.g. the target above the threshold).
    """
    if threshold is None and target is None:
        target = DEFAULT_TARGET
    limits = {
        option: _parse_limit(value, option)
        for option, value in (("--threshold", threshold), ("--target", target))
        if value is not None
    }
    window = (
        _parse_count(model_max_tokens, "--model-max-tokens")
        if model_max_tokens is not None
        else None
    )
    percents = [option for option, limit in limits.items() if limit.percent is not None]
    if percents and len(percents) < len(limits):
        raise CliError(
            "--threshold and --target must both be token counts or both percents, not a mix"
        )
    if percents and window is None:
        raise CliError(
            f"{percents[0]} {limits[percents[0]].percent:g}% is a percent of the context window: "
            "give --model-max-tokens N too (or a token count such as 32k)"
        )
    th = limits.get("--threshold", _Limit())
    tg = limits.get("--target", _Limit())
    return CompressionPolicy(
        threshold_tokens=th.tokens,
        target_tokens=tg.tokens,
        threshold_percent=th.percent,
        target_percent=tg.percent,
        model_max_tokens=window,
        steps=_parse_steps(steps) if steps is not None else None,
        token_counter=counter,
        if_still_too_long=if_still_too_long,
    )


def _load(file: Path, fmt: FormatChoice, index: int) -> tuple[Trace, str]:
    """The trace in ``file`` and the format to treat it as (``--format`` wins).

    Raises:
        CliError: the file does not exist or is a directory.
        ValueError: ``load_trace`` could not read it (naming the file and the problem).
    """
    if index < 0:
        raise CliError(f"--index must be >= 0, got {index}")
    if not file.exists():
        raise CliError(f"{file}: no such file")
    if file.is_dir():
        raise CliError(f"{file}: is a directory, not a trace file")
    trace = load_trace(file, index=index)
    return trace, trace.format if fmt == "auto" else fmt


def _write_messages(out: Path, messages: Sequence[Any]) -> None:
    """``messages`` to ``out``: one per line for ``.jsonl``, else a JSON list (UTF-8).

    Raises:
        CliError: ``out`` cannot be written.
    """
    if out.suffix.lower() == ".jsonl":
        text = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)
    else:
        text = json.dumps(list(messages), ensure_ascii=False, indent=2) + "\n"
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}") from exc


# --------------------------------------------------------------------------------------------
# provider acceptance


def _pairing_problems(messages: Sequence[Any], format: str) -> list[str]:
    """Every documented provider rule ``messages`` breaks, one line each (empty: valid).

    The rules are :func:`agent_adapter.context.formats.check`'s (tool-call pairing, reasoning
    items, role order, thinking signatures...); a pending call in the newest turn is allowed.
    """
    return [
        f"messages[{v.index}]: {v.message} ({v.rule})"
        for v in check(messages, format)
        if v.rule not in _PENDING_RULES
    ]


#: Rules about a call still waiting for its result in the newest turn: fine for a history
#: that is about to get the tool's result.
_PENDING_RULES = frozenset({"calls_pending_at_end", "tool_use_pending_at_end"})

# --------------------------------------------------------------------------------------------
# output


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
    """The human-readable compress report."""
    head = _Fields(min_width=12)
    head.add_row("file", str(file))
    head.add_row("trace", f"{trace.name} ({trace.source}, format {fmt})")
    head.add_row("counter", _COUNTER_LABELS[counter])
    head.add_row("limits", _limits_text(report, policy))
    natives_before = len(trace.messages)
    messages = f"{_n(natives_before)} -> {_n(natives_after)}"
    if (report.messages_before, report.messages_after) != (natives_before, natives_after):
        messages += (
            f" native ({_n(report.messages_before)} -> {_n(report.messages_after)} "
            "once split into single messages)"
        )
    messages += (
        f"; {report.messages_removed} removed, {report.messages_changed} changed, "
        f"{report.messages_added} added"
    )
    head.add_row("messages", messages)
    head.add_row(
        "tokens",
        f"{_n(report.tokens_before)} -> {_n(report.tokens_after)} "
        f"(saved {_n(report.tokens_saved)}, {_pct(report.tokens_saved, report.tokens_before)})",
    )
    if not report.skipped:
        head.add_row("protected", f"{_n(report.protected_tokens)} tokens no step may touch")
    head.print(console)

    if report.steps:
        steps = Table()
        for name in ("step", "tokens before", "after", "saved"):
            steps.add_column(name, justify="left" if name == "step" else "right")
        for name in ("removed", "changed", "added", "reverted", "ms"):
            steps.add_column(name, justify="right")
        for s in report.steps:
            steps.add_row(
                s.step,
                _n(s.tokens_before),
                _n(s.tokens_after),
                _n(s.tokens_saved),
                str(s.messages_removed),
                str(s.messages_changed),
                str(s.messages_added),
                str(s.changes_reverted),
                _ms(s.seconds),
            )
        console.print(Text("Steps", style="bold"))
        console.print(steps)
    elif report.skipped:
        console.print(f"No step ran ({report.skipped.replace('_', ' ')}).")

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
    tail.add_row("time", f"{_ms(report.seconds)} ms compressing ({_ms(load_seconds)} ms loading)")
    tail.add_row("result", report.explain())
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
    if out is not None:
        tail.add_row("output", f"{_n(natives_after)} {fmt} messages written to {out}")
    tail.print(console)


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


# --------------------------------------------------------------------------------------------
# commands

FileArg = Annotated[
    Path,
    typer.Argument(
        help="A trace: mini-swe-agent / SWE-agent trajectory, tau-bench file, Claude Code "
        "transcript, or a JSON list / JSONL file of messages.",
        show_default=False,
        metavar="FILE",
    ),
]
FormatOpt = Annotated[
    FormatChoice,
    typer.Option("--format", help="Message format; auto uses the one detected in FILE."),
]
IndexOpt = Annotated[int, typer.Option("--index", help="Dialog to pick from a tau-bench file.")]
CounterOpt = Annotated[
    CounterChoice,
    typer.Option("--counter", help="Token counter: chars/4 estimate or exact tiktoken."),
]


@app.command()
def compress(
    file: FileArg,
    fmt: FormatOpt = "auto",
    index: IndexOpt = 0,
    threshold: Annotated[
        str | None,
        typer.Option(
            "--threshold",
            metavar="TOKENS|PCT",
            help="Compress above this: tokens (32000, 32k) or a percent (80%) of "
            "--model-max-tokens. Default: the target.",
            show_default=False,
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            metavar="TOKENS|PCT",
            help="Compress down to this: tokens or a percent. Default: 32k (3/4 of the "
            "threshold when only --threshold is given).",
            show_default=False,
        ),
    ] = None,
    model_max_tokens: Annotated[
        str | None,
        typer.Option(
            "--model-max-tokens",
            metavar="TOKENS",
            help="The model's context window in tokens (200000 or 200k); needed for percents.",
            show_default=False,
        ),
    ] = None,
    steps: Annotated[
        str | None,
        typer.Option(
            "--steps",
            metavar="LIST",
            help=f"Comma list of steps to run in order, from: {','.join(STEP_NAMES)}. "
            "Default: all four in that order.",
            show_default=False,
        ),
    ] = None,
    counter: CounterOpt = "estimate",
    if_still_too_long: Annotated[
        StillChoice,
        typer.Option(
            "--if-still-too-long",
            help="Over the target after every step: keep it, cut the biggest protected texts, "
            "or raise (exit code 1).",
        ),
    ] = "keep",
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            metavar="OUT",
            help="Write the compressed messages here, in FILE's format: one per line for "
            ".jsonl, else a JSON list.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON instead of tables.")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit with code 1 when the target is not reached.")
    ] = False,
) -> int:
    """Compress a conversation and report what every step did."""
    token_counter = _token_counter(counter)
    policy = _build_policy(
        threshold, target, model_max_tokens, steps, token_counter, if_still_too_long
    )
    if out is not None and out.exists() and out.resolve() == file.resolve():
        raise CliError(f"-o {out} is the input file: write the compressed list elsewhere")
    started = time.perf_counter()
    trace, name = _load(file, fmt, index)
    load_seconds = time.perf_counter() - started
    problems_before = _pairing_problems(trace.messages, name)
    try:
        compressed, report = compress_for_sync(trace.messages, policy, format=name)
    except ModelContextOverflow as exc:
        _error(f"target not reached (--if-still-too-long raise): {exc}")
        return 1
    problems = _pairing_problems(compressed, name)
    if out is not None:
        _write_messages(out, compressed)
    if as_json:
        data = _report_json(
            report,
            file=file,
            trace=trace,
            fmt=name,
            counter=counter,
            natives_after=len(compressed),
            problems=problems,
            out=out,
        )
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_compress_report(
            _console(),
            file=file,
            trace=trace,
            fmt=name,
            counter=counter,
            policy=policy,
            report=report,
            natives_after=len(compressed),
            load_seconds=load_seconds,
            problems_before=problems_before,
            problems_after=problems,
            out=out,
        )
    return 1 if strict and not report.reached_target else 0


def _roles(unit: Unit) -> str:
    """``assistant, tool x3`` for a unit's roles, in order of first appearance."""
    counts: dict[str, int] = {}
    for m in unit.messages:
        counts[m.role] = counts.get(m.role, 0) + 1
    return ", ".join(role if n == 1 else f"{role} x{n}" for role, n in counts.items())


def _protection_reasons(units: Sequence[Unit], messages: Sequence[Message]) -> list[list[str]]:
    """For each unit, why it is protected (empty when it is not)."""
    latest_user = next((m for m in reversed(messages) if m.role == "user"), None)
    reasons: list[list[str]] = []
    for n, unit in enumerate(units):
        why: list[str] = []
        if not unit.protected:
            reasons.append(why)
            continue
        if any(m.role == "system" for m in unit.messages):
            why.append("system")
        if latest_user is not None and any(m is latest_user for m in unit.messages):
            why.append("latest user message")
        if n == len(units) - 1:
            why.append("last unit")
        if any(carries_approval_state(m) for m in unit.messages):
            why.append("approval")
        reasons.append(why or ["pinned"])
    return reasons


@app.command()
def inspect(
    file: FileArg,
    fmt: FormatOpt = "auto",
    index: IndexOpt = 0,
    counter: CounterOpt = "estimate",
) -> int:
    """Show tokens per role, the units compression works on, and what is protected and why."""
    count = _token_counter(counter)
    trace, name = _load(file, fmt, index)
    messages = convert(trace.messages, name).messages
    tokens = {id(m): count([m]) for m in messages}
    total = sum(tokens.values())
    units = split_units(messages, Protection(messages))
    reasons = _protection_reasons(units, messages)
    console = _console()

    def unit_tokens(unit: Unit) -> int:
        return sum(tokens[id(m)] for m in unit.messages)

    head = _Fields()
    head.add_row("file", str(file))
    head.add_row("trace", f"{trace.name} ({trace.source}, format {name})")
    head.add_row("counter", _COUNTER_LABELS[counter])
    rounds = sum(u.is_tool_round for u in units)
    head.add_row(
        "size",
        f"{_n(total)} tokens; {_n(len(trace.messages))} native messages, "
        f"{_n(len(messages))} messages, {_n(len(units))} units ({_n(rounds)} tool rounds)",
    )
    head.print(console)

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
    console.print(Text("Tokens per role", style="bold"))
    console.print(roles)

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
            _n(unit_tokens(unit)),
            f"yes ({', '.join(reasons[n])})" if unit.protected else "no",
        )
    console.print(Text("Units (kept, changed or removed together)", style="bold"))
    console.print(table)

    why = Table()
    why.add_column("reason")
    why.add_column("units")
    why.add_column("messages", justify="right")
    why.add_column("tokens", justify="right")
    for reason in ("system", "latest user message", "last unit", "approval", "pinned"):
        hit = [n for n, r in enumerate(reasons) if reason in r]
        if hit:
            why.add_row(
                reason,
                ", ".join(str(n) for n in hit[:12]) + (" ..." if len(hit) > 12 else ""),
                _n(sum(len(units[n]) for n in hit)),
                _n(sum(unit_tokens(units[n]) for n in hit)),
            )
    console.print(Text("What is protected and why", style="bold"))
    console.print(why)
    protected = [u for u in units if u.protected]
    protected_tokens = sum(unit_tokens(u) for u in protected)
    console.print(
        f"protected total: {_n(protected_tokens)} tokens in {len(protected)} units "
        f"({_pct(protected_tokens, total)} of {_n(total)}); no step changes or removes them, "
        "so a target below this cannot be reached."
    )
    return 0


# --------------------------------------------------------------------------------------------
# entry point


def _error(message: str) -> None:
    """One line on stderr."""
    line = " ".join(message.split())
    sys.stderr.write(f"{PROG}: error: {line}\n")


def _is_click_error(exc: BaseException, name: str) -> bool:
    """True when ``exc`` is the (typer-vendored or standalone) click exception ``name``."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    Args:
        argv: the arguments after the program name.

    Returns:
        0 on success; 1 when the target was not reached with ``--strict`` (or
        ``--if-still-too-long raise`` raised); 2 for bad usage or bad input.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    command = get_command(app)
    try:
        result = command.main(args=args, prog_name=PROG, standalone_mode=False)
    except CliError as exc:
        _error(str(exc))
        return 2
    except (AgentAdapterError, ValueError, OSError, ImportError) as exc:
        # ConfigError, MissingDependency, load_trace's ValueError (bad file), JSON errors,
        # unreadable or unwritable files.
        _error(str(exc) or type(exc).__name__)
        return 2
    except Exception as exc:
        format_message = getattr(exc, "format_message", None)
        message = str(format_message()) if callable(format_message) else str(exc)
        if _is_click_error(exc, "NoArgsIsHelpError"):  # no command: the help, once
            if message.strip():  # typer's rich help printed itself and left this empty
                sys.stderr.write(message.rstrip() + "\n")
            return 2
        if _is_click_error(exc, "ClickException"):
            ctx = getattr(exc, "ctx", None)
            path = getattr(ctx, "command_path", None)
            hint = f" (see '{path} --help')" if path else ""
            _error(message + hint)
            code = getattr(exc, "exit_code", 2)
            return code if isinstance(code, int) else 2
        if _is_click_error(exc, "Abort"):
            _error("aborted")
            return 1
        raise
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
