"""The typer app of the command line: the ``compress`` and ``inspect`` commands and :func:`run`.

Only :func:`agent_adapter.cli.main` imports this module (typer and rich are the ``cli`` extra).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.main import get_command

from agent_adapter._errors import AgentAdapterError, ModelContextOverflow
from agent_adapter.cli._batch import (
    compress_folder,
    inspect_data,
    inspect_folder,
    report_folder,
    write_json,
)
from agent_adapter.cli._batch import summary as report_summary
from agent_adapter.cli._html import build_report, write_report
from agent_adapter.cli._options import (
    PROG,
    STEP_NAMES,
    CliError,
    CounterChoice,
    FormatChoice,
    StillChoice,
    _build_policy,
    _error,
    _load,
    _pairing_problems,
    _token_counter,
    _write_messages,
)
from agent_adapter.cli._progress import BIG_FILE_BYTES, Tick, progress, ticking
from agent_adapter.cli._report import (
    _console,
    _print_compress_report,
    _print_inspect,
    _report_json,
    message_tokens,
)
from agent_adapter.context import (
    CompressionPolicy,
    Protection,
    TokenCounter,
    compress_for_sync,
    split_units,
)
from agent_adapter.context.formats import convert

app = typer.Typer(
    name=PROG,
    help="Compress and inspect recorded LLM agent conversations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    """``--version``: the command line's distribution and the library's, then exit 0."""
    if value:
        from importlib.metadata import version

        sys.stdout.write(
            f"{PROG} {version('agent-adapter-cli')} (agent-adapter {version('agent-adapter')})\n"
        )
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Compress and inspect recorded LLM agent conversations."""


FileArg = Annotated[
    Path,
    typer.Argument(
        help="A trace: mini-swe-agent / SWE-agent trajectory, tau-bench file, Claude Code "
        "transcript, or a JSON list / JSONL file of OpenAI, Anthropic or Gemini messages; "
        "or a directory of them (one row a file, -o a directory).",
        show_default=False,
        metavar="FILE",
    ),
]
FormatOpt = Annotated[
    FormatChoice,
    typer.Option("--format", help="Message format; auto uses the one detected in FILE."),
]
IndexOpt = Annotated[
    int,
    typer.Option(
        "--index",
        help="Dialog to pick from a tau-bench file (an error for a file of another kind; "
        "with a directory, for its tau-bench files).",
    ),
]
CounterOpt = Annotated[
    CounterChoice,
    typer.Option("--counter", help="Token counter: chars/4 estimate or exact tiktoken."),
]


ThresholdOpt = Annotated[
    str | None,
    typer.Option(
        "--threshold",
        metavar="TOKENS|PCT",
        help="Compress above this: tokens (32000, 32k) or a percent (80%) of "
        "--model-max-tokens. Default: the target.",
        show_default=False,
    ),
]
TargetOpt = Annotated[
    str | None,
    typer.Option(
        "--target",
        metavar="TOKENS|PCT",
        help="Compress down to this: tokens or a percent. Default: 32k (3/4 of the "
        "threshold when only --threshold is given).",
        show_default=False,
    ),
]
ModelMaxTokensOpt = Annotated[
    str | None,
    typer.Option(
        "--model-max-tokens",
        metavar="TOKENS",
        help="The model's context window in tokens (200000 or 200k); needed for percents.",
        show_default=False,
    ),
]
StepsOpt = Annotated[
    str | None,
    typer.Option(
        "--steps",
        metavar="LIST",
        help=f"Comma list of steps to run in order, from: {', '.join(STEP_NAMES)}. "
        "Default: all four in that order.",
        show_default=False,
    ),
]
StillOpt = Annotated[
    StillChoice,
    typer.Option(
        "--if-still-too-long",
        help="Over the target after every step: keep it, cut the biggest protected texts, "
        "or raise (exit code 1).",
    ),
]
CompressOutOpt = Annotated[
    Path | None,
    typer.Option(
        "-o",
        "--out",
        metavar="OUT",
        help="Write the compressed messages here, in FILE's format: one per line for "
        ".jsonl, else a JSON list.",
        show_default=False,
    ),
]
CompressJsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the report as JSON instead of tables.")
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Exit with code 1 when the target is not reached.")
]


@app.command()
def compress(
    file: FileArg,
    fmt: FormatOpt = "auto",
    index: IndexOpt = 0,
    threshold: ThresholdOpt = None,
    target: TargetOpt = None,
    model_max_tokens: ModelMaxTokensOpt = None,
    steps: StepsOpt = None,
    counter: CounterOpt = "estimate",
    if_still_too_long: StillOpt = "keep",
    out: CompressOutOpt = None,
    as_json: CompressJsonOpt = False,
    strict: StrictOpt = False,
) -> int:
    """Compress a conversation and report what every step did."""
    token_counter = _token_counter(counter)
    policy = _build_policy(
        threshold, target, model_max_tokens, steps, token_counter, if_still_too_long
    )
    if file.is_dir():  # one row a file, a progress bar (see _batch)
        return compress_folder(
            file,
            out,
            fmt=fmt,
            index=index,
            counter=counter,
            policy=policy,
            as_json=as_json,
            strict=strict,
        )
    return _compress_file(
        file,
        out,
        fmt=fmt,
        index=index,
        counter=counter,
        policy=policy,
        as_json=as_json,
        strict=strict,
    )


def _compress_file(
    file: Path,
    out: Path | None,
    *,
    fmt: FormatChoice,
    index: int,
    counter: CounterChoice,
    policy: CompressionPolicy,
    as_json: bool,
    strict: bool,
) -> int:
    """``compress`` on one file: compress it, write ``out``, print the report; the exit code."""
    if out is not None and out.exists() and out.resolve() == file.resolve():
        raise CliError(f"-o {out} is the input file: write the compressed list elsewhere")
    started = time.perf_counter()
    with _file_progress(file, len(policy.resolved_steps()) + 2, as_json) as tick:
        trace, name = _load(file, fmt, index)
        load_seconds = time.perf_counter() - started
        tick("compressing")
        problems_before = _pairing_problems(trace.messages, name)
        try:
            compressed, report = compress_for_sync(
                trace.messages, ticking(policy, tick), format=name
            )
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


@app.command()
def inspect(
    file: FileArg,
    fmt: FormatOpt = "auto",
    index: IndexOpt = 0,
    counter: CounterOpt = "estimate",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the tables' figures as JSON instead.")
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            metavar="OUT",
            help="Also write the figures (what --json prints) to this JSON file; with a "
            "directory FILE, a directory: one <name>.inspect.json a file.",
            show_default=False,
        ),
    ] = None,
) -> int:
    """Show tokens per role, the units compression works on, and what is protected and why."""
    if file.is_dir():
        return inspect_folder(file, out, fmt=fmt, index=index, counter=counter, as_json=as_json)
    if out is not None and out.exists() and out.resolve() == file.resolve():
        raise CliError(f"-o {out} is the input file: write the figures elsewhere")
    count = _token_counter(counter)
    trace, name = _load(file, fmt, index)
    if out is not None or as_json:
        data = inspect_data(file, trace, name, counter)
        if out is not None:
            write_json(out, data)
        if as_json:
            sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            return 0
    messages = convert(trace.messages, name).messages
    protection = Protection(messages)
    _print_inspect(
        _console(),
        file=file,
        trace=trace,
        fmt=name,
        counter=counter,
        messages=messages,
        tokens=message_tokens(messages, count),
        protection=protection,
        units=split_units(messages, protection),
    )
    return 0


ReportOutOpt = Annotated[
    Path | None,
    typer.Option(
        "-o",
        "--out",
        metavar="OUT",
        help="The HTML file to write. Default: <name>.report.html here.",
        show_default=False,
    ),
]
CompressTooOpt = Annotated[
    bool,
    typer.Option(
        "--compress",
        help="Show before and after a compression (implied by any option below; "
        "alone: compress's defaults).",
    ),
]
AsForThresholdOpt = Annotated[
    str | None,
    typer.Option("--threshold", metavar="TOKENS|PCT", help="As for compress.", show_default=False),
]
AsForTargetOpt = Annotated[
    str | None,
    typer.Option("--target", metavar="TOKENS|PCT", help="As for compress.", show_default=False),
]
AsForModelMaxTokensOpt = Annotated[
    str | None,
    typer.Option(
        "--model-max-tokens", metavar="TOKENS", help="As for compress.", show_default=False
    ),
]
AsForStepsOpt = Annotated[
    str | None,
    typer.Option("--steps", metavar="LIST", help="As for compress.", show_default=False),
]
AsForStillOpt = Annotated[
    StillChoice | None,
    typer.Option("--if-still-too-long", help="As for compress (default keep).", show_default=False),
]
PreviewLinesOpt = Annotated[
    int,
    typer.Option(
        "--preview-lines",
        min=0,
        help="Lines of each message's text the page shows on hover; 0 puts no "
        "conversation text in the page at all.",
    ),
]
ReportJsonOpt = Annotated[bool, typer.Option("--json", help="Print the page's counts as JSON.")]


@app.command()
def report(
    file: FileArg,
    out: ReportOutOpt = None,
    fmt: FormatOpt = "auto",
    index: IndexOpt = 0,
    counter: CounterOpt = "estimate",
    compress_too: CompressTooOpt = False,
    threshold: AsForThresholdOpt = None,
    target: AsForTargetOpt = None,
    model_max_tokens: AsForModelMaxTokensOpt = None,
    steps: AsForStepsOpt = None,
    if_still_too_long: AsForStillOpt = None,
    preview_lines: PreviewLinesOpt = 3,
    as_json: ReportJsonOpt = False,
) -> int:
    """Write one self-contained HTML page showing where the tokens go (and what compression did)."""
    token_counter = _token_counter(counter)
    given = (threshold, target, model_max_tokens, steps, if_still_too_long)
    policy = None
    if compress_too or any(v is not None for v in given):
        policy = _build_policy(
            threshold, target, model_max_tokens, steps, token_counter, if_still_too_long or "keep"
        )
    if file.is_dir():  # one page a file and an index.html (see _batch)
        return report_folder(
            file,
            out,
            fmt=fmt,
            index=index,
            counter=counter,
            policy=policy,
            preview_lines=preview_lines,
            as_json=as_json,
        )
    return _report_file(
        file,
        out,
        fmt=fmt,
        index=index,
        counter=counter,
        count=token_counter,
        policy=policy,
        preview_lines=preview_lines,
        as_json=as_json,
    )


def _report_file(
    file: Path,
    out: Path | None,
    *,
    fmt: FormatChoice,
    index: int,
    counter: CounterChoice,
    count: TokenCounter,
    policy: CompressionPolicy | None,
    preview_lines: int,
    as_json: bool,
) -> int:
    """``report`` on one file: write its page, print what it holds; the exit code."""
    phases = 3 + (len(policy.resolved_steps()) if policy is not None else 0)
    with _file_progress(file, phases, as_json) as tick:
        trace, name = _load(file, fmt, index)
        tick("reporting")
        if out is None:
            out = Path(f"{trace.name}.report.html")
        if out.exists() and out.resolve() == file.resolve():
            raise CliError(f"-o {out} is the input file: write the report elsewhere")
        data = build_report(
            file=file,
            trace=trace,
            fmt=name,
            counter=counter,
            count=count,
            policy=policy,
            preview_lines=preview_lines,
            tick=tick,
        )
        tick("writing")
        size = write_report(out, data)
    summary = report_summary(out, size, data)
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    else:
        tokens = f"{summary['tokens_before']:,} tokens in {summary['units_before']:,} units"
        if data["report"] is not None:
            tokens += f"; {data['report']['explain']}"
        _console().print(f"wrote {out} ({size:,} bytes): {tokens}", soft_wrap=True)
    return 0


def _file_progress(file: Path, phases: int, quiet: bool) -> AbstractContextManager[Tick]:
    """A bar over ``phases`` for a file of :data:`BIG_FILE_BYTES` or more (else none)."""
    big = file.is_file() and file.stat().st_size >= BIG_FILE_BYTES
    return progress(phases if big else 0, "loading", quiet=quiet)


#: What ``agent-adapter gateway`` imports beyond this distribution (agent-adapter-gateway's).
_GATEWAY_MODULES = ("agent_adapter.gateway", "starlette", "uvicorn", "httpx")


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)
def gateway(ctx: typer.Context) -> int:
    """Serve the context gateway: point any agent's base URL at it (see 'gateway --help')."""
    try:
        from agent_adapter.gateway import main as gateway_main
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith(_GATEWAY_MODULES):
            raise
        raise CliError(
            f"the gateway needs the agent-adapter-gateway distribution ({exc.name} is "
            "missing): pip install agent-adapter-gateway"
        ) from None
    return gateway_main(list(ctx.args))


# --------------------------------------------------------------------------------------------
# entry point


def _is_click_error(exc: BaseException, name: str) -> bool:
    """True when ``exc`` is the (typer-vendored or standalone) click exception ``name``."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def _without_flag_metavars(command: Any) -> Any:
    """``command`` and its subcommands with no metavar on their flags (``--json``,
    ``--strict``, ``--version``, ``--help``): typer's help shows a ``<bool>`` after each flag,
    as if it took a value; a flag takes none. Returns ``command``."""

    def help_option(ctx: Any, original: Any = command.get_help_option) -> Any:
        option = original(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = help_option
    for param in command.params:
        if getattr(param, "is_flag", False):
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        _without_flag_metavars(sub)
    return command


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    Args:
        argv: the arguments after the program name.

    Returns:
        0 on success; 1 when the target was not reached with ``--strict`` (or
        ``--if-still-too-long raise`` raised); 2 for bad usage or bad input.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    command = _without_flag_metavars(get_command(app))
    try:
        result = command.main(args=args, prog_name=PROG, standalone_mode=False)
    except CliError as exc:
        _error(str(exc))
        return 2
    except (AgentAdapterError, ValueError, OSError, ImportError) as exc:
        # ConfigError, MissingDependency, load_trace's ValueError (bad file), JSON errors
        # (nested too deep to read included), unreadable or unwritable files.
        _error(str(exc) or type(exc).__name__)
        return 2
    except RecursionError:
        # input the loaders read but nested too deep for a later step to walk: bad input too
        _error(
            f"the input is nested too deep to process (past Python's recursion limit, "
            f"{sys.getrecursionlimit():,}); flatten it"
        )
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
