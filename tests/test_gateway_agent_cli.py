"""A real agent CLI through ``agent-adapter gateway``: Claude Code (``claude -p``) from npm, run
offline against the local wire-protocol server with ``ANTHROPIC_BASE_URL`` at the gateway,
resuming a long real Claude Code session so that its request is compacted.

``.ci/install-agent-clis.sh`` installs the pinned Claude Code into ``~/.cache`` (its folder of
binaries is ``$AGENT_ADAPTER_AGENT_CLI_BIN``, else the script's default); without node or the
CLI the tests skip, and under ``CI=true`` they fail.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from _gateway import Gateway, gateway
from agent_adapter.context.formats import check
from agent_adapter.testing import ProviderServer, Reply

CLAUDE_CODE_VERSION = "2.1.332"  # as .ci/install-agent-clis.sh
SESSION = "258c7280-ae70-4798-800f-63464d01a85d"  # claude-code-spotter: ~125k tokens
ANSWER = "PONG from the recording server"


def _claude() -> str:
    """The ``claude`` binary: ``$AGENT_ADAPTER_AGENT_CLI_BIN/claude``, the install script's
    cache folder, or ``claude`` on the PATH."""
    default = (
        Path.home()
        / ".cache/agent-adapter-ci/agent-clis"
        / f"claude-code-{CLAUDE_CODE_VERSION}/node_modules/.bin"
    )
    for folder in (os.environ.get("AGENT_ADAPTER_AGENT_CLI_BIN"), str(default)):
        if folder and (Path(folder) / "claude").exists():
            return str(Path(folder) / "claude")
    found = shutil.which("claude")
    if found and shutil.which("node"):
        return found
    message = "Claude Code is not installed: run .ci/install-agent-clis.sh (needs node and npm)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def upstream() -> Iterator[ProviderServer]:
    with ProviderServer(default=Reply(text=ANSWER, input_tokens=10, output_tokens=3)) as server:
        yield server


@pytest.fixture(scope="module")
def gw(upstream: ProviderServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    args = ["--anthropic-upstream", upstream.url, "--threshold", "20k", "--log-level", "warning"]
    with gateway(args, tmp_path_factory.mktemp("gw")) as g:
        yield g


def _run(claude: str, gw: Gateway, home: Path, data_dir: Path, *args: str) -> str:
    """``claude -p --resume SESSION *args "Say PONG"`` in a fresh HOME holding the real
    session; its stdout."""
    work = home / "work"
    work.mkdir(parents=True)
    project = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(work))
    project.mkdir(parents=True)
    shutil.copy(data_dir / "claude-code-spotter" / f"{SESSION}.jsonl", project)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": gw.url,
        "ANTHROPIC_API_KEY": "test",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    command = [claude, "-p", "--resume", SESSION, *args, "Say PONG"]
    done = subprocess.run(command, env=env, cwd=work, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_claude_code_resumes_a_long_session_through_the_gateway(
    gw: Gateway, upstream: ProviderServer, data_dir: Path, tmp_path: Path
) -> None:
    claude = _claude()
    upstream.clear()
    before = gw.metrics()
    out = _run(claude, gw, tmp_path, data_dir, "--model", "claude-sonnet-4-5")
    assert out.strip() == ANSWER  # the reply came back as the upstream sent it
    (recorded,) = [r for r in upstream.requests if r.path == "/v1/messages"]
    assert recorded.headers["x-api-key"] == "test"  # Claude Code's own headers, unchanged
    assert "claude-code-20250219" in recorded.headers["anthropic-beta"]
    assert recorded.headers["anthropic-version"] == "2023-06-01"
    assert '"session_id":"' + SESSION in recorded.body["metadata"]["user_id"].replace(" ", "")
    sent = recorded.body["messages"]
    assert check(sent, "anthropic", thinking=True) == []
    last = sent[-1]["content"]
    text = last if isinstance(last, str) else " ".join(b.get("text", "") for b in last)
    assert "Say PONG" in text  # the latest user message kept
    after = gw.metrics()
    assert after.get("compacted", 0) == before.get("compacted", 0) + 1
    assert after["tokens_after"] - before.get("tokens_after", 0) <= 20_000


def test_claude_code_default_model_with_mid_conversation_system_messages(
    gw: Gateway, upstream: ProviderServer, data_dir: Path, tmp_path: Path
) -> None:
    """Claude Code's default model (claude-opus-5-5) gets mid-conversation ``role: "system"``
    messages (https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-
    messages; one with ``content: []`` carrying ``output_config``): they go up unchanged,
    right after their user turn, and the request is compacted."""
    claude = _claude()
    upstream.clear()
    before = gw.metrics()
    # resumed, Claude Code keeps the session's model: name the one that gets them
    assert _run(claude, gw, tmp_path, data_dir, "--model", "claude-opus-5-5").strip() == ANSWER
    (recorded,) = [r for r in upstream.requests if r.path == "/v1/messages"]
    sent = recorded.body["messages"]
    assert any(m["role"] == "system" for m in sent)
    assert check(sent, "anthropic", thinking=True) == []
    after = gw.metrics()
    assert after["compacted"] == before.get("compacted", 0) + 1
    assert after.get("fail_open", 0) == before.get("fail_open", 0)
