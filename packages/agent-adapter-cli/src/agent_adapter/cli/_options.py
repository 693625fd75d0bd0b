"""The command line's options, input and output files, and the provider check; no typer here."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal, TypeAlias

from agent_adapter._errors import AgentAdapterError
from agent_adapter.cli._loaders import Trace, load_trace
from agent_adapter.context import (
    CompressionPolicy,
    CompressionStep,
    CutLongMessages,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    TokenCounter,
    estimate_tokens,
    tiktoken_counter,
)
from agent_adapter.context.formats import check, convert

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


class CliError(Exception):
    """Bad input the user can fix; printed as one line, exit code 2."""


def _error(message: str) -> None:
    """``message`` as one line on stderr."""
    line = " ".join(message.split())
    sys.stderr.write(f"{PROG}: error: {line}\n")


# option parsing


@dataclasses.dataclass(frozen=True)
class _Limit:
    """A ``--threshold`` / ``--target`` value: a token count or a percent."""

    tokens: int | None = None
    percent: float | None = None


_SUFFIXES = {"k": 1_000, "m": 1_000_000}
#: The most digits a token count may have, less one (far past any context window).
_MAX_DIGITS = 30


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
    try:  # decimal, not float: 99999999999999999999 stays that number
        number = Decimal(text)
    except (InvalidOperation, ValueError):
        number = Decimal("NaN")
    if not number.is_finite():
        raise CliError(
            f"{option} {value!r} is not a token count (e.g. 32000 or 32k)"
            + (" or a percent (e.g. 80%)" if option != "--model-max-tokens" else "")
        )
    if number and number.adjusted() > _MAX_DIGITS:  # int(1e999999999) would take minutes
        raise CliError(f"{option} {value!r} is too large a token count")
    number *= scale
    if number != number.to_integral_value() or number <= 0:
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


def _load(
    file: Path, fmt: FormatChoice, index: int, *, index_for_any: bool = False
) -> tuple[Trace, str]:
    """The trace in ``file`` and the format to treat it as (``--format`` wins).

    Args:
        file: the trace file.
        fmt: ``--format``; ``"auto"`` takes the one the file holds.
        index: ``--index``: the tau-bench dialog.
        index_for_any: whether an ``index`` other than 0 may meet a file of another kind (a
            directory's files: ``--index`` is for its tau-bench files); else that is an error.

    Raises:
        CliError: the file does not exist or is a directory; ``--index`` given for a file
            that is no tau-bench file; ``--format`` names a format the messages are not in.
        ValueError: ``load_trace`` could not read it (naming the file and the problem).
    """
    if index < 0:
        raise CliError(f"--index must be >= 0, got {index}")
    if not file.exists():
        raise CliError(f"{file}: no such file")
    if file.is_dir():
        raise CliError(f"{file}: is a directory, not a trace file")
    trace = load_trace(file, index=index)
    if index and trace.source != "tau-bench" and not index_for_any:
        raise CliError(
            f"{file}: --index {index} picks a dialog of a tau-bench file; this is a "
            f"{trace.source} file of one conversation (leave --index out)"
        )
    if fmt != "auto" and fmt != trace.format:
        try:
            convert(trace.messages, fmt)
        except (AgentAdapterError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise CliError(
                f"{file}: --format {fmt} does not fit: its messages are {trace.format} "
                f"({trace.source} file; leave --format out or use auto): {exc}"
            ) from exc
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
