"""The command line's edges, each once a bug: inspect -o, --index and --format on the wrong
file, exact token counts, the --steps help, whole file names in directory tables, the task
kept though not protected, and a token counter given a string."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_adapter import Message
from agent_adapter.cli import Trace, load_trace, main
from agent_adapter.cli._options import CliError, _parse_count
from agent_adapter.context import CompressionPolicy, compress_for_sync, estimate_tokens
from agent_adapter.context import tiktoken_counter as make_counter
from agent_adapter.context.formats import convert

PYTEST_6197 = "mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-6197.traj.json"
TAU_BENCH = "tau-bench/gpt-4o-airline.json"
CLAUDE_SESSION = "claude-code-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
SWE_AGENT = "swe-agent"


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith("agent-adapter: error: ")
    return lines[0]


# --------------------------------------------------------------------------------------------
# inspect -o


def test_inspect_o_writes_the_figures_json_prints(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = data_dir / PYTEST_6197
    code, printed, _ = run(capsys, "inspect", file, "--json")
    assert code == 0
    out = tmp_path / "figures.json"
    code, tables, _ = run(capsys, "inspect", file, "-o", out)
    assert code == 0
    assert "Tokens per role" in tables  # the tables still print
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(printed)
    assert json.loads(printed)["native_messages"] == 186


def test_inspect_o_refuses_to_overwrite_the_input(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "trace.json"
    shutil.copy(data_dir / PYTEST_6197, copy)
    before = copy.read_bytes()
    code, _, err = run(capsys, "inspect", copy, "-o", copy)
    assert code == 2 and "is the input file" in one_line_error(err)
    assert copy.read_bytes() == before


def test_inspect_directory_o_writes_one_json_a_file(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = data_dir / SWE_AGENT
    out = tmp_path / "figures"
    code, printed, _ = run(capsys, "inspect", folder, "-o", out, "--json")
    assert code == 0
    rows = {row["file"]: row for row in json.loads(printed)}
    traces = sorted(p for p in folder.rglob("*.traj"))
    assert len(sorted(out.rglob("*.inspect.json"))) == len(traces) == len(rows) > 1
    for trace in traces:
        page = out / trace.relative_to(folder)
        page = page.with_name(page.name + ".inspect.json")
        data = json.loads(page.read_text("utf-8"))
        assert data["file"] == str(trace) and data["source"] == "swe-agent"
        assert rows[str(trace)]["output"] == str(page)


# --------------------------------------------------------------------------------------------
# --index and --format on a file they do not fit


def test_index_on_a_file_that_is_not_tau_bench_is_an_error(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = data_dir / PYTEST_6197
    for command in ("inspect", "compress", "report"):
        code, out, err = run(capsys, command, file, "--index", "3", "-o", "/nonexistent/x")
        line = one_line_error(err)
        assert code == 2 and out == ""
        assert str(file) in line and "--index 3" in line and "mini-swe-agent" in line


def test_index_still_picks_a_tau_bench_dialog(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "inspect", data_dir / TAU_BENCH, "--index", "3", "--json")
    assert code == 0
    assert json.loads(out)["name"] == "gpt-4o-airline[3]"


def test_a_format_that_does_not_fit_names_the_file(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = data_dir / PYTEST_6197
    for fmt in ("anthropic", "gemini"):
        code, out, err = run(capsys, "compress", file, "--format", fmt)
        line = one_line_error(err)
        assert code == 2 and out == ""
        assert str(file) in line and f"--format {fmt}" in line and "are openai" in line
        # and the provider's rule it breaks, at the first message that breaks it (Anthropic
        # takes a system message in the list: the first tool message is messages[3])
        assert ("messages[3]" if fmt == "anthropic" else "messages[0]") in line


def test_a_format_that_fits_is_taken(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "inspect", data_dir / CLAUDE_SESSION, "--format", "anthropic")
    assert code == 0 and "format anthropic" in out


# --------------------------------------------------------------------------------------------
# token counts are parsed exactly


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("99999999999999999999", 99_999_999_999_999_999_999),
        ("32k", 32_000),
        ("1.5m", 1_500_000),
        ("32_000", 32_000),
        ("1e3", 1_000),
        ("123456789012345678901234567", 123_456_789_012_345_678_901_234_567),
    ],
)
def test_a_token_count_is_exact(text: str, tokens: int) -> None:
    assert _parse_count(text, "--target") == tokens


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("nan", "not a token count"),
        ("inf", "not a token count"),
        ("0.5", "whole number"),
        ("0", "whole number"),
        ("1.0000000000000000001k", "whole number"),
        ("1e999999999", "too large"),
    ],
)
def test_a_bad_token_count_is_a_cli_error(text: str, says: str) -> None:
    with pytest.raises(CliError, match=says):
        _parse_count(text, "--target")


def test_a_huge_target_is_shown_exactly(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compress", data_dir / PYTEST_6197, "--target", "9" * 20)
    assert code == 0
    assert "target 99,999,999,999,999,999,999 tokens" in out


# --------------------------------------------------------------------------------------------
# help and tables


def test_the_steps_help_names_every_step_on_a_narrow_terminal() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agent_adapter.cli", "compress", "--help"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "80", "TERM": "dumb", "PATH": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    flat = " ".join(part.strip(" │") for part in done.stdout.splitlines())
    for name in ("dedup", "shrink_tool_results", "cut_long", "remove_old"):
        assert name in flat


def test_a_directory_table_names_every_file_whole(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = data_dir / SWE_AGENT
    code, out, _ = run(capsys, "inspect", folder)
    assert code == 0
    first_cells = "".join(
        line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")
    )
    names = [str(p.relative_to(folder)) for p in folder.rglob("*.traj")]
    assert max(map(len, names)) > 120  # longer than the column gets at width 200
    for name in names:
        assert name in first_cells


# --------------------------------------------------------------------------------------------
# the task: not protected, kept


def test_the_task_is_not_protected_but_the_default_steps_keep_it(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the docs say and inspect shows: the first user message is no protected unit,
    and the default pipeline, even at a target far below the trace, returns it as it was."""
    file = data_dir / PYTEST_6197
    trace = load_trace(file)
    code, out, _ = run(capsys, "inspect", file)
    assert code == 0
    rows = {line.split("│")[2].strip(): line for line in out.splitlines() if "│" in line}
    assert trace.messages[1]["role"] == "user"
    assert rows["1"].rstrip(" │").endswith("no")  # the task's unit: messages 1
    compressed, report = compress_for_sync(trace.messages, CompressionPolicy(target_tokens=2_000))
    assert report.tokens_after < report.tokens_before // 4
    assert compressed[1] is trace.messages[1]
    page = Path(__file__).resolve().parents[1] / "docs" / "concepts" / "units-and-protection.md"
    assert "The task (the first user message) is not protected" in page.read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------
# the loaders are public


def test_the_loaders_are_the_clis_own(data_dir: Path) -> None:
    trace = load_trace(data_dir / PYTEST_6197)
    assert isinstance(trace, Trace)
    assert (trace.format, trace.source, len(trace.messages)) == ("openai", "mini-swe-agent", 186)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from agent_adapter.cli import load_trace; "
            "print(sorted(m for m in ('typer', 'rich', 'click') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"  # loading traces needs no cli extra


# --------------------------------------------------------------------------------------------
# a token counter given what it does not count


@pytest.mark.parametrize("counter", [make_counter("o200k_base"), estimate_tokens])
@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("text", "not a str"),
        (Message("user", "text"), "not a single Message"),
        ([{"role": "user", "content": "text"}], "holding a dict"),
    ],
)
def test_a_counter_given_no_message_list_says_what_to_pass(
    counter: object, given: object, named: str
) -> None:
    assert callable(counter)
    with pytest.raises(TypeError, match=named) as caught:
        counter(given)
    message = str(caught.value)
    assert "[Message('user', text)]" in message and "convert(natives).messages" in message


def test_a_counter_still_counts_messages(data_dir: Path) -> None:
    messages = convert(load_trace(data_dir / PYTEST_6197).messages).messages
    count = make_counter("o200k_base")
    assert count(messages) > 0 and count([Message("user", "hello")]) == 1 + 4
    assert estimate_tokens(tuple(messages)) == estimate_tokens(messages)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# found by trying the CLI as a new user


def test_a_jsonl_file_of_one_message_is_a_list_of_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: one line parsed as one JSON document, a dict, "unknown trace shape"."""
    one = tmp_path / "one.jsonl"
    one.write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    trace = load_trace(one)
    assert (trace.format, trace.messages) == ("openai", [{"role": "user", "content": "hi"}])
    code, _, err = run(capsys, "compress", one, "--json")
    assert code == 0, err


def test_report_dir_gives_every_file_its_own_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: a.json and a.jsonl (and x/b.json and x__b.json) wrote one page each pair,
    the second over the first, with exit code 0."""
    folder = tmp_path / "in"
    (folder / "x").mkdir(parents=True)
    texts = {"a.json": "FROM_PLAIN_A", "x/b.json": "FROM_X_B", "x__b.json": "FROM_X__B"}
    for name, text in texts.items():
        (folder / name).write_text(json.dumps([{"role": "user", "content": text}]), "utf-8")
    (folder / "a.jsonl").write_text('{"role": "user", "content": "FROM_A_JSONL"}\n', "utf-8")
    (folder / "solo.json").write_text('[{"role": "user", "content": "SOLO"}]', "utf-8")
    code, out, err = run(capsys, "report", folder, "-o", tmp_path / "out", "--json")
    assert code == 0, err
    pages = {Path(r["file"]).relative_to(folder).as_posix(): r["output"] for r in json.loads(out)}
    assert len(set(pages.values())) == 5
    assert Path(pages["solo.json"]).name == "solo.report.html"  # a unique name stays plain
    for name, text in {**texts, "a.jsonl": "FROM_A_JSONL"}.items():
        assert text in Path(pages[name]).read_text("utf-8")
    index = (tmp_path / "out" / "index.html").read_text("utf-8")
    assert all(f'href="{Path(p).name}"' in index for p in pages.values())
    monkeypatch.chdir(folder)
    code, _, err = run(capsys, "report", ".")
    assert code == 2
    assert "default output directory reports/ is inside the input directory" in one_line_error(err)


# --------------------------------------------------------------------------------------------
# issue 37: --version, flags without a metavar, the passes and the last-resort cut labelled


def test_version_names_both_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    code, out, err = run(capsys, "--version")
    assert (code, err) == (0, "")
    cli, library = version("agent-adapter-cli"), version("agent-adapter")
    assert out == f"agent-adapter {cli} (agent-adapter {library})\n"


@pytest.mark.parametrize("argv", [[], ["compress"], ["inspect"], ["report"]])
def test_no_flag_shows_a_metavar(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A flag takes no value: typer's ``<bool>`` after ``--json`` / ``--help`` read as one."""
    code, out, _ = run(capsys, *argv, "--help")
    assert code == 0
    assert "--help" in out and "<bool>" not in out
    if argv:
        assert "--json" in out


def _tool_rounds(n: int, size: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Read every file."},
    ]
    for i in range(n):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"x{i} " * size})
    return messages


def test_the_second_pass_and_the_last_resort_cut_are_labelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pass 2's rows say so (the step names repeat otherwise) and the cut that
    ``--if-still-too-long cut`` made has a row of its own, with the tokens it took."""
    file = tmp_path / "rounds.json"
    file.write_text(json.dumps(_tool_rounds(6, 4_000)), encoding="utf-8")
    args = ("compress", file, "--target", "2k", "--if-still-too-long", "cut")
    code, out, _ = run(capsys, *args)
    assert code == 0
    rows = [line.split("│")[1].strip() for line in out.splitlines() if line.count("│") > 5]
    assert "dedup" in " ".join(rows) or "remove_duplicates" in rows
    assert any(r.endswith("(pass 2)") for r in rows), rows
    (cut_row,) = [line for line in out.splitlines() if "last-resort cut (if_still" in line]
    code, out, _ = run(capsys, *args, "--json")
    data = json.loads(out)
    last, final = data["steps"][-1]["tokens_after"], data["tokens_after"]
    assert data["if_still_too_long"] == "cut" and last > final
    cells = [c.strip() for c in cut_row.split("│")[2:5]]
    assert cells == [f"{last:,}", f"{final:,}", f"{last - final:,}"]  # before, after, saved
