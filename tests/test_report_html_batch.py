"""compress / inspect / report over a directory of real traces; the progress bar on a terminal.

The bar is checked on a real pseudo-terminal (``pty``): drawn there, absent when piped.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_adapter.cli._batch import trace_files
from test_report_html import page_data, run

SWE_AGENT = "swe-agent"
CLAUDE_DIR = "claude-code-spotter"


def _json(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, Any]:
    code, stdout, _ = run(capsys, *argv, "--json")
    return code, json.loads(stdout)


def test_compress_folder_equals_each_file(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = data_dir / SWE_AGENT
    out = tmp_path / "out"
    code, rows = _json(capsys, "compress", folder, "--target", "8k", "-o", out)
    files = trace_files(folder)
    assert code == 0 and len(rows) == len(files) > 10
    assert [r["file"] for r in rows] == [str(f) for f in files]
    for row, file in list(zip(rows, files, strict=True))[:4]:
        _, single = _json(capsys, "compress", file, "--target", "8k")
        for key in ("tokens_before", "tokens_after", "messages_removed", "explain"):
            assert row[key] == single[key]
        written = out / file.relative_to(folder)
        assert row["output"] == str(written)
        assert len(json.loads(written.read_text(encoding="utf-8"))) == row["native_messages_after"]
    assert any(r["tokens_after"] < r["tokens_before"] for r in rows)


def test_inspect_folder_and_json(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = data_dir / CLAUDE_DIR
    code, rows = _json(capsys, "inspect", folder)
    assert code == 0 and len(rows) == len(trace_files(folder))
    first = rows[0]
    _, single = _json(capsys, "inspect", Path(first["file"]))
    assert single == first
    assert sum(r["tokens"] for r in single["roles"].values()) == single["tokens"]
    assert single["protected"]["newest_turn"]["units"] == 1
    code, stdout, _ = run(capsys, "inspect", folder)
    assert code == 0 and f"{len(rows)} of {len(rows)} files done" in stdout


def test_report_folder_writes_pages_and_index(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = data_dir / SWE_AGENT
    out = tmp_path / "pages"
    code, rows = _json(capsys, "report", folder, "--target", "8k", "-o", out)
    assert code == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]+)">', index)
    assert sorted(links) == sorted(Path(r["output"]).name for r in rows)
    assert len(set(links)) == len(rows) == len(trace_files(folder))
    for row in rows[:3]:
        data = page_data(Path(row["output"]).read_text(encoding="utf-8"))
        assert data["report"]["tokens_after"] == row["tokens_after"]
        assert row["output"].endswith(".report.html") and ".traj." not in row["output"]


def test_a_bad_file_is_one_error_row(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    good = data_dir / "tau-bench" / "gpt-4o-airline.json"
    shutil.copy(good, folder / "tau.json")
    (folder / "broken.jsonl").write_text("{not json\n{}\n", encoding="utf-8")
    (folder / ".hidden.json").write_text("[]", encoding="utf-8")
    code, rows = _json(capsys, "inspect", folder)
    assert code == 2
    assert [Path(r["file"]).name for r in rows] == ["broken.jsonl", "tau.json"]
    assert "line 1 is not valid JSON" in rows[0]["error"] and "tokens" in rows[1]
    code, _, err = run(capsys, "compress", folder, "-o", folder / "out")
    assert code == 2 and "inside the input directory" in err


def _on_a_terminal(*argv: str) -> str:
    """What ``agent-adapter argv`` draws on a pseudo-terminal (stdout and stderr)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm-256color"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_adapter.cli", *argv],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=300) == 0
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_bar_on_a_terminal_only(data_dir: Path, tmp_path: Path) -> None:
    folder = str(data_dir / SWE_AGENT)
    n = len(trace_files(Path(folder)))
    drawn = _on_a_terminal("inspect", folder)
    assert "inspecting" in drawn and re.search(rf"\b\d+/{n}\b", drawn)  # the bar's first frame
    assert f"{n} of {n} files done" in drawn  # then the table, as when piped
    piped = subprocess.run(
        [sys.executable, "-m", "agent_adapter.cli", "inspect", folder],
        capture_output=True,
        text=True,
        check=True,
    )
    assert piped.stderr == "" and f"/{n}" not in piped.stdout
    # a big single file gets a bar over its phases; --json stays quiet even on a terminal
    big = str(data_dir / CLAUDE_DIR / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    page = str(tmp_path / "big.html")
    assert "loading" in _on_a_terminal("report", big, "--compress", "-o", page)
    quiet = _on_a_terminal("report", big, "--compress", "-o", page, "--json")
    assert "loading" not in quiet and json.loads(quiet)["output"] == page
