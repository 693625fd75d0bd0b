"""The commands over a directory of traces: one row a file, a progress bar, ``--json``.

``compress DIR``, ``inspect DIR`` and ``report DIR`` read every ``*.json``, ``*.jsonl`` and
``*.traj`` file under DIR (recursively, hidden files skipped, in path order). A file that
cannot be read is one row with its error and the others go on; the exit code is then 2.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from agent_adapter._errors import AgentAdapterError
from agent_adapter._messages import ROLES, Message
from agent_adapter.cli._files import _stem
from agent_adapter.cli._html import build_report, index_page, write_report
from agent_adapter.cli._loaders import Trace
from agent_adapter.cli._options import (
    CliError,
    FormatChoice,
    _load,
    _pairing_problems,
    _token_counter,
    _write_messages,
)
from agent_adapter.cli._progress import progress
from agent_adapter.cli._report import (
    COUNTER_LABELS,
    _console,
    _protection_reasons,
    _report_json,
    message_tokens,
)
from agent_adapter.context import CompressionPolicy, Protection, compress_for_sync, split_units
from agent_adapter.context.formats import convert

#: What a directory's trace files end with.
SUFFIXES = (".json", ".jsonl", ".traj")
#: Errors a file can give that are reported on its row.
_FILE_ERRORS = (CliError, AgentAdapterError, ValueError, OSError)


def trace_files(folder: Path) -> list[Path]:
    """The trace files under ``folder``, in path order.

    Raises:
        CliError: there are none.
    """
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    if not files:
        raise CliError(f"{folder}: no {', '.join('*' + s for s in SUFFIXES)} files in it")
    return files


def _inside(out: Path, folder: Path) -> bool:
    """True when ``out`` is ``folder`` or inside it."""
    resolved = out.resolve()
    return resolved == folder.resolve() or folder.resolve() in resolved.parents


def _page_names(folder: Path, files: Sequence[Path]) -> dict[Path, str]:
    """Each file's page name in the flat output directory: its folders and stem joined by
    ``__`` (``x/b.json``: ``x__b.report.html``), and where two files would share one
    (``a.json`` and ``a.jsonl``; ``x/b.json`` and ``x__b.json``) each of them with a short
    hash of its path, so no page overwrites another."""
    base = {f: "__".join((*f.relative_to(folder).parent.parts, _stem(f))) for f in files}
    taken = Counter(base.values())
    out = {}
    for f, name in base.items():
        if taken[name] > 1:
            digest = hashlib.sha1(f.relative_to(folder).as_posix().encode()).hexdigest()[:8]
            name = f"{name}-{digest}"
        out[f] = f"{name}.report.html"
    return out


def _out_dir(folder: Path, out: Path | None) -> Path | None:
    """``-o`` for a directory: a directory, never the input one (nor inside it)."""
    if out is None:
        return None
    if out.exists() and not out.is_dir():
        raise CliError(f"-o {out}: with a directory FILE, -o must be a directory")
    if _inside(out, folder):
        raise CliError(f"-o {out} is inside the input directory: write elsewhere")
    out.resolve().mkdir(parents=True, exist_ok=True)
    return out


def _each(
    files: Sequence[Path], label: str, quiet: bool, work: Callable[[Path], dict[str, Any]]
) -> list[dict[str, Any]]:
    """``work(file)`` for each file under a progress bar; a failing file is an error row."""
    rows: list[dict[str, Any]] = []
    with progress(len(files), label, quiet=quiet) as tick:
        for file in files:
            try:
                rows.append(work(file))
            except _FILE_ERRORS as exc:
                rows.append({"file": str(file), "error": " ".join(str(exc).split())})
            tick(file.name)
    return rows


def _table(left: Sequence[str], right: Sequence[str]) -> Table:
    """A table of ``left`` then right-aligned ``right`` columns; the first column (the file)
    folds onto more lines rather than being cut, so every row names its whole file."""
    table = Table()
    for n, column in enumerate(left):
        table.add_column(column, overflow="fold" if n == 0 else "ellipsis", no_wrap=n > 0)
    for column in right:
        table.add_column(column, justify="right", no_wrap=True)
    return table


def _emit(rows: list[dict[str, Any]], as_json: bool, table: Table) -> None:
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    console = _console()
    console.print(table)
    bad = [r for r in rows if "error" in r]
    for r in bad:
        console.print(f"{r['file']}: error: {r['error']}", soft_wrap=True)
    console.print(f"{len(rows) - len(bad)} of {len(rows)} files done", soft_wrap=True)


def compress_folder(
    folder: Path,
    out: Path | None,
    *,
    fmt: FormatChoice,
    index: int,
    counter: str,
    policy: CompressionPolicy,
    as_json: bool,
    strict: bool,
) -> int:
    """``compress DIR [-o OUTDIR]``: each file compressed (and written under OUTDIR)."""
    files = trace_files(folder)
    target = _out_dir(folder, out)

    def work(file: Path) -> dict[str, Any]:
        trace, name = _load(file, fmt, index, index_for_any=True)
        compressed, report = compress_for_sync(trace.messages, policy, format=name)
        written = None
        if target is not None:
            written = target / file.relative_to(folder)
            written.parent.mkdir(parents=True, exist_ok=True)
            _write_messages(written, compressed)
        return _report_json(
            report,
            file=file,
            trace=trace,
            fmt=name,
            counter=counter,
            natives_after=len(compressed),
            problems=_pairing_problems(compressed, name),
            out=written,
        )

    rows = _each(files, "compressing", as_json, work)
    table = _table(("file", "source"), ("messages", "tokens", "saved", "target"))
    for r in rows:
        if "error" in r:
            table.add_row(str(Path(r["file"]).relative_to(folder)), "error", "", "", "", "")
            continue
        before, after = r["tokens_before"], r["tokens_after"]
        table.add_row(
            str(Path(r["file"]).relative_to(folder)),
            r["source"],
            f"{r['native_messages_before']:,} -> {r['native_messages_after']:,}",
            f"{before:,} -> {after:,}",
            f"{100 * (before - after) / before:.1f}%" if before else "-",
            "reached" if r["reached_target"] else "NOT reached",
        )
    _emit(rows, as_json, table)
    if any("error" in r for r in rows):
        return 2
    return 1 if strict and not all(r["reached_target"] for r in rows) else 0


def inspect_data(file: Path, trace: Trace, fmt: str, counter: str) -> dict[str, Any]:
    """What ``inspect`` prints, as JSON-safe values (``inspect --json``)."""
    count = _token_counter(counter)
    messages = convert(trace.messages, fmt).messages
    protection = Protection(messages)
    units = split_units(messages, protection)
    tokens = message_tokens(messages, count)
    reasons = _protection_reasons(units, protection)

    def of(ms: Sequence[Message]) -> int:
        return sum(tokens[id(m)] for m in ms)

    roles = {
        role: {"messages": len(ms), "tokens": of(ms)}
        for role in ROLES
        if (ms := [m for m in messages if m.role == role])
    }
    why: dict[str, dict[str, int]] = {}
    for unit, names in zip(units, reasons, strict=True):
        for reason in names:
            entry = why.setdefault(reason, {"units": 0, "messages": 0, "tokens": 0})
            entry["units"] += 1
            entry["messages"] += len(unit)
            entry["tokens"] += of(unit.messages)
    return {
        "file": str(file),
        "name": trace.name,
        "source": trace.source,
        "format": fmt,
        "counter": counter,
        "counter_label": COUNTER_LABELS[counter],
        "native_messages": len(trace.messages),
        "messages": len(messages),
        "units": len(units),
        "tool_rounds": sum(u.is_tool_round for u in units),
        "tokens": sum(tokens.values()),
        "roles": roles,
        "protected": why,
        "protected_tokens": sum(of(u.messages) for u in units if u.protected),
    }


def write_json(out: Path, data: Any) -> None:
    """``data`` as indented UTF-8 JSON in ``out``.

    Raises:
        CliError: ``out`` cannot be written.
    """
    try:
        out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}") from exc


def inspect_folder(
    folder: Path,
    out: Path | None = None,
    *,
    fmt: FormatChoice,
    index: int,
    counter: str,
    as_json: bool,
) -> int:
    """``inspect DIR [-o OUTDIR]``: one row a file (size, units, protected tokens), and with
    OUTDIR each file's figures in ``OUTDIR/<path in DIR>.inspect.json``."""
    target = _out_dir(folder, out)

    def work(file: Path) -> dict[str, Any]:
        trace, name = _load(file, fmt, index, index_for_any=True)
        data = inspect_data(file, trace, name, counter)
        if target is not None:
            written = target / file.relative_to(folder)
            written = written.with_name(written.name + ".inspect.json")
            written.parent.mkdir(parents=True, exist_ok=True)
            write_json(written, data)
            data["output"] = str(written)
        return data

    rows = _each(trace_files(folder), "inspecting", as_json, work)
    table = _table(
        ("file", "source", "format"),
        ("messages", "units", "tool rounds", "tokens", "protected"),
    )
    for r in rows:
        name = str(Path(r["file"]).relative_to(folder))
        if "error" in r:
            table.add_row(name, "error", "", "", "", "", "", "")
            continue
        table.add_row(
            name,
            r["source"],
            r["format"],
            f"{r['native_messages']:,}",
            f"{r['units']:,}",
            f"{r['tool_rounds']:,}",
            f"{r['tokens']:,}",
            f"{r['protected_tokens']:,}",
        )
    _emit(rows, as_json, table)
    return 2 if any("error" in r for r in rows) else 0


def report_folder(
    folder: Path,
    out: Path | None,
    *,
    fmt: FormatChoice,
    index: int,
    counter: str,
    policy: CompressionPolicy | None,
    preview_lines: int,
    as_json: bool,
) -> int:
    """``report DIR [-o OUTDIR]``: one page a file and an ``index.html`` linking them."""
    files = trace_files(folder)
    if out is None and _inside(Path("reports"), folder):
        raise CliError(
            "the default output directory reports/ is inside the input directory: "
            "pass -o DIR outside it"
        )
    target = _out_dir(folder, out or Path("reports"))
    assert target is not None
    pages = _page_names(folder, files)

    def work(file: Path) -> dict[str, Any]:
        trace, name = _load(file, fmt, index, index_for_any=True)
        data = build_report(
            file=file,
            trace=trace,
            fmt=name,
            counter=counter,
            count=_token_counter(counter),
            policy=policy,
            preview_lines=preview_lines,
        )
        page = target / pages[file]
        size = write_report(page, data)
        return summary(page, size, data)

    rows = _each(files, "reporting", as_json, work)
    (target / "index.html").write_text(index_page(folder, rows), encoding="utf-8")
    table = _table(("page",), ("units", "tokens", "after"))
    for r in rows:
        if "error" in r:
            table.add_row(r["file"], "error", "", "")
            continue
        after = r["tokens_after"]
        table.add_row(
            r["output"],
            f"{r['units_before']:,}",
            f"{r['tokens_before']:,}",
            f"{after:,}" if after is not None else "",
        )
    _emit(rows, as_json, table)
    return 2 if any("error" in r for r in rows) else 0


def summary(page: Path, size: int, data: dict[str, Any]) -> dict[str, Any]:
    """What ``report --json`` prints for one page."""
    after = data["after"]
    return {
        "file": data["file"],
        "output": str(page),
        "bytes": size,
        "units_before": len(data["before"]["units"]),
        "tokens_before": data["before"]["tokens"],
        "units_after": len(after["units"]) if after else None,
        "tokens_after": after["tokens"] if after else None,
        "report": data["report"],
    }
