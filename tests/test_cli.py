"""The agent-adapter CLI on real traces: compress, inspect, exit codes and errors."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_adapter.cli import main
from agent_adapter.cli._loaders import load_trace
from agent_adapter.cli._options import _pairing_problems
from agent_adapter.context import estimate_tokens
from agent_adapter.context.formats import check, convert

PYTEST_6197 = "mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-6197.traj.json"
REQUESTS_1142 = "mini-swe-agent-gemini3pro/trajs/psf__requests-1142.traj.json"
CLAUDE_SESSION = "claude-code-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
TAU_BENCH = "tau-bench/gpt-4o-airline.json"


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``agent-adapter argv``."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(err: str, *words: str) -> None:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("agent-adapter: error: ")
    for word in words:
        assert word in lines[0]


# --------------------------------------------------------------------------------------------
# compress


def test_compress_mini_swe_agent_writes_valid_openai_list(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "compressed.json"
    code, stdout, _ = run(capsys, "compress", data_dir / PYTEST_6197, "--target", "32k", "-o", out)

    assert code == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert isinstance(written, list) and written
    assert all(
        isinstance(m, dict) and m["role"] in {"system", "user", "assistant", "tool"}
        for m in written
    )
    assert any(m.get("tool_calls") for m in written)
    assert _pairing_problems(written, "openai") == []
    assert estimate_tokens(convert(written, "openai").messages) < 32000
    original = load_trace(data_dir / PYTEST_6197)
    assert len(written) < len(original.messages)
    for text in (
        "pytest-dev__pytest-6197",
        "mini-swe-agent",
        "openai",
        "target 32,000",
        "shrink_tool_results",
        "remove_old_messages",
        "Compressed ",
        "provider      OK",
        f"written to {out}",
    ):
        assert text in stdout


def test_compress_json_report(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = run(capsys, "compress", data_dir / PYTEST_6197, "--target", "32000", "--json")

    assert code == 0
    report = json.loads(stdout)
    assert report["reached_target"] is True
    assert report["target_tokens"] == 32000
    assert report["tokens_after"] <= 32000 < report["tokens_before"]
    assert report["explain"].startswith("Compressed")
    assert report["steps"][0]["step"] == "remove_duplicates"
    assert report["provider_violations"] == []
    assert report["source"] == "mini-swe-agent"


def test_compress_not_reached_exit_code_depends_on_strict(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = data_dir / REQUESTS_1142
    code, stdout, _ = run(capsys, "compress", path, "--target", "32k", "--strict")
    assert code == 1
    assert "NOT reached" in stdout
    assert "protected" in stdout

    code, stdout, _ = run(capsys, "compress", path, "--target", "32k")
    assert code == 0
    assert "NOT reached" in stdout


def test_compress_raise_when_still_too_long_exits_1(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "compress", data_dir / REQUESTS_1142, "--if-still-too-long", "raise")
    assert code == 1
    assert_one_line_error(err, "target not reached")


def test_compress_claude_code_to_anthropic_jsonl(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.jsonl"
    code, stdout, _ = run(capsys, "compress", data_dir / CLAUDE_SESSION, "-o", out)

    assert code == 0
    assert "claude-code" in stdout and "anthropic" in stdout
    lines = out.read_text(encoding="utf-8").splitlines()
    written = [json.loads(line) for line in lines]
    assert all(isinstance(m, dict) and m["role"] in {"user", "assistant"} for m in written)
    assert written[0]["role"] == "user"
    # adjacent turns are user turns only, which the Messages API combines itself
    assert all(
        a["role"] != b["role"] or a["role"] == "user" for a, b in itertools.pairwise(written)
    )
    assert _pairing_problems(written, "anthropic") == []
    assert estimate_tokens(convert(written, "anthropic").messages) <= 32000
    again = load_trace(out)  # a JSONL file of messages reads back as anthropic
    assert (again.format, again.source, len(again.messages)) == ("anthropic", "jsonl", len(lines))


def test_compress_percent_limits_and_steps(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, _ = run(
        capsys,
        "compress",
        data_dir / PYTEST_6197,
        "--threshold",
        "80%",
        "--target",
        "50%",
        "--model-max-tokens",
        "100k",
        "--steps",
        "dedup,remove_old",
        "--json",
    )
    assert code == 0
    report = json.loads(stdout)
    assert (report["threshold_tokens"], report["target_tokens"]) == (80000, 50000)
    assert [s["step"] for s in report["steps"]] == ["remove_duplicates", "remove_old_messages"]
    assert report["reached_target"] is True


def test_compress_under_threshold_changes_nothing(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "same.json"
    code, stdout, _ = run(capsys, "compress", data_dir / TAU_BENCH, "--index", "3", "-o", out)
    assert code == 0
    assert "nothing was changed" in stdout
    assert (
        json.loads(out.read_text(encoding="utf-8"))
        == load_trace(data_dir / TAU_BENCH, index=3).messages
    )


# --------------------------------------------------------------------------------------------
# bad input: exit 2 with one line, never a traceback


def test_percent_without_model_max_tokens(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, err = run(capsys, "compress", data_dir / PYTEST_6197, "--target", "60%")
    assert code == 2
    assert stdout == ""
    assert_one_line_error(err, "--target", "--model-max-tokens")


def test_percent_mixed_with_count(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys,
        "compress",
        data_dir / PYTEST_6197,
        "--threshold",
        "90%",
        "--target",
        "32k",
        "--model-max-tokens",
        "200k",
    )
    assert code == 2
    assert_one_line_error(err, "percent")


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    code, _, err = run(capsys, "compress", missing)
    assert code == 2
    assert_one_line_error(err, str(missing))


def test_json_object_that_is_no_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    code, _, err = run(capsys, "compress", path)
    assert code == 2
    assert_one_line_error(err, str(path), "unknown trace shape")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--target", "lots"], ["--target", "token count"]),
        (["--target", "0"], ["--target"]),
        (["--target", "40k", "--threshold", "30k"], ["target_tokens"]),
        (["--steps", "dedup,magic"], ["magic", "remove_old"]),
        (["--counter", "bogus"], ["--counter"]),
        (["--no-such-option"], ["--no-such-option"]),
    ],
)
def test_bad_options(
    data_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: list[str]
) -> None:
    code, _, err = run(capsys, "compress", data_dir / PYTEST_6197, *argv)
    assert code == 2
    assert_one_line_error(err, *words)


def test_broken_pairing_in_input_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "orphan.json"
    messages = [
        {"role": "user", "content": "hi " * 50},
        {"role": "tool", "tool_call_id": "call_x", "content": "result " * 50},
    ]
    path.write_text(json.dumps(messages), encoding="utf-8")
    code, _, err = run(capsys, "compress", path, "--target", "10")
    assert code == 2
    assert_one_line_error(err, "call_x")


def test_unwritable_output(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "no" / "such" / "dir.json"
    code, _, err = run(capsys, "compress", data_dir / PYTEST_6197, "-o", out)
    assert code == 2
    assert_one_line_error(err, "cannot write", str(out))


# --------------------------------------------------------------------------------------------
# inspect


def test_inspect_claude_code(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = run(capsys, "inspect", data_dir / CLAUDE_SESSION)
    assert code == 0
    for text in (
        "Tokens per role",
        "assistant",
        "tool round",
        "What is protected and why",
        "latest_user",
        "thinking_opener",  # this session's current turn opens on a thinking block
        "newest_turn",
        "protected total:",
        "more units",
    ):
        assert text in stdout
    role_rows = [line for line in stdout.splitlines() if "│ tool " in line or "│ user " in line]
    assert len(role_rows) >= 2


def test_inspect_tau_bench_exact_counter(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, _ = run(
        capsys, "inspect", data_dir / TAU_BENCH, "--index", "3", "--counter", "o200k"
    )
    assert code == 0
    assert "gpt-4o-airline[3]" in stdout
    assert "yes (system)" in stdout
    assert "yes (latest_user)" in stdout  # the newest turn is the latest user message
    for role in ("system", "user", "assistant", "tool", "total"):
        assert f"│ {role}" in stdout


def test_inspect_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "inspect", tmp_path / "missing.jsonl")
    assert code == 2
    assert_one_line_error(err, "no such file")


def test_no_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert code == 2
    assert "compress" in out + err and "inspect" in out + err
    assert "Traceback" not in err


# --------------------------------------------------------------------------------------------
# the provider check line and guards


def test_input_file_is_never_overwritten(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "t.json"
    src.write_text((data_dir / PYTEST_6197).read_text(encoding="utf-8"), encoding="utf-8")
    before = src.read_bytes()
    code, _, err = run(capsys, "compress", src, "-o", src)
    assert code == 2 and "is the input file" in err
    assert src.read_bytes() == before


def test_negative_index_is_bad_input(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "compress", data_dir / "tau-bench/gpt-4o-airline.json", "--index", "-1"
    )
    assert code == 2 and "--index" in err


def test_pairing_problems_use_the_provider_check() -> None:
    ok = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
    ]
    assert _pairing_problems(ok, "openai") == []  # a pending newest turn is fine
    broken = [*ok, {"role": "user", "content": "no answer"}]
    problems = _pairing_problems(broken, "openai")
    assert len(problems) == 1 and problems[0].startswith("messages[1]")


CALL = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}


# --------------------------------------------------------------------------------------------
# the cli extra: the library never imports typer or rich


ROOT = Path(__file__).resolve().parents[1]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_library_does_not_import_typer_or_rich() -> None:
    done = _python(
        "import agent_adapter, agent_adapter.context, agent_adapter.context.formats, sys; "
        "import agent_adapter.cli, agent_adapter.cli._loaders; "
        "assert 'typer' not in sys.modules and 'rich' not in sys.modules, "
        "sorted(m for m in sys.modules if m.startswith(('typer', 'rich')))"
    )
    assert done.returncode == 0, done.stderr


def test_main_without_typer_names_the_cli_extra() -> None:
    done = _python(
        "import sys; sys.modules['typer'] = None; sys.modules['rich'] = None; "
        "from agent_adapter.cli import main; sys.exit(main(['inspect', 'x.json']))"
    )
    assert done.returncode == 2
    assert_one_line_error(done.stderr, "typer", 'pip install "agent-adapter[cli]"')


# --------------------------------------------------------------------------------------------
# regressions: Gemini files, the thinking-opener label, the README


def _gemini_contents() -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "task " * 100}]}]
    for i in range(6):
        contents.append(
            {
                "role": "model",
                "parts": [
                    {"text": f"step {i}"},
                    {"function_call": {"name": "bash", "args": {"command": f"ls {i}"}}},
                ],
            }
        )
        contents.append(
            {
                "role": "user",
                "parts": [
                    {"function_response": {"name": "bash", "response": {"output": "x\n" * 900}}}
                ],
            }
        )
    contents.append({"role": "model", "parts": [{"text": "done"}]})
    contents.append({"role": "user", "parts": [{"text": "thanks, now sum it up"}]})
    return contents


def test_gemini_json_is_auto_detected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "gemini.json"
    path.write_text(json.dumps(_gemini_contents()), encoding="utf-8")
    out = tmp_path / "out.json"
    code, stdout, _ = run(capsys, "compress", path, "--target", "1500", "--json", "-o", out)
    assert code == 0
    report = json.loads(stdout)
    assert report["format"] == "gemini"
    assert report["reached_target"] is True
    assert report["provider_violations"] == []
    written = json.loads(out.read_text(encoding="utf-8"))
    assert check(written, "gemini") == []
    assert all(m["role"] in {"user", "model"} for m in written)

    code, stdout, _ = run(capsys, "inspect", path)
    assert code == 0
    assert "format gemini" in stdout and "tool round" in stdout


def test_inspect_labels_the_thinking_opener(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thinking = {"type": "thinking", "thinking": "plan", "signature": "sig"}
    messages = [
        {"role": "user", "content": "first question " * 20},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "fix the bug"},
        {
            "role": "assistant",
            "content": [
                thinking,
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t2", "name": "bash", "input": {"c": "cat"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "b"}]},
    ]
    path = tmp_path / "thinking.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    code, stdout, _ = run(capsys, "inspect", path)
    assert code == 0
    assert "format anthropic" in stdout
    rows = {line.split("│")[1].strip(): line for line in stdout.splitlines() if "│" in line}
    assert "yes (latest_user)" in rows["2"]
    assert "yes (thinking_opener)" in rows["3"]
    assert "yes (newest_turn)" in rows["4"]
    assert "pinned" not in stdout


def _readme_block(heading: str, language: str) -> str:
    """The first ``language`` code block after ``heading`` in README.md (the top if empty)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    if heading:
        text = text[text.index(f"\n{heading}\n") :]
    start = text.index(f"```{language}\n") + len(language) + 4
    return text[start : text.index("```", start)]


PACKAGES = "-e packages/agent-adapter-cli -e packages/cliver-core"


def test_readme_first_command_installs_the_cli_distribution() -> None:
    """The README's two commands: the first run, and CI's own script as the test command (so
    what a newcomer runs is what CI runs: the same installs, the same parallel pytest)."""
    first, test_command = _readme_block("", "bash").splitlines()[:2]
    assert "pip install -e . -e packages/agent-adapter-cli && agent-adapter compress " in first
    assert test_command == "bash .ci/run"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert f'python -m pip install -q -e ".[dev]" {PACKAGES}' in ci  # all three distributions
    assert any("mkdocs build --strict" in line for line in ci)  # docs: no warning
    assert ci[-1].startswith("pytest -q -n ")  # the tests, last, on parallel workers
