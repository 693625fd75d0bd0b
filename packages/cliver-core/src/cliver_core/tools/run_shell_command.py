"""``Bash``: run a shell command and return its output (0.3.0a5's ``run_shell_command``).

Under an :class:`~cliver_core.policy.ExecutionPolicy` the command's environment is
``policy.env.build(os.environ)`` and a pinned cwd replaces ``directory`` (logged when they
differ); without one the environment is inherited and ``directory`` is the cwd.
"""

from __future__ import annotations

import logging
import os
import platform
import subprocess
from pathlib import Path

from cliver_core._tools import compat_tool
from cliver_core.policy import current_policy
from cliver_core.tools._common import safe_int, schema, string

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_MS = 120000  # 2 minutes
MAX_TIMEOUT_MS = 600000  # 10 minutes
MAX_OUTPUT_LENGTH = 50000  # characters


def _output(stdout: str, stderr: str) -> str:
    parts = []
    if stdout:
        if len(stdout) > MAX_OUTPUT_LENGTH:
            stdout = stdout[:MAX_OUTPUT_LENGTH] + "\n... (output truncated)"
        parts.append(stdout)
    if stderr:
        if len(stderr) > MAX_OUTPUT_LENGTH:
            stderr = stderr[:MAX_OUTPUT_LENGTH] + "\n... (stderr truncated)"
        parts.append(f"STDERR:\n{stderr}")
    return "\n".join(parts) if parts else "(no output)"


@compat_tool(
    name="Bash",
    description=(
        "Executes a given shell command and returns its output. "
        "Use this for terminal operations like git, npm, docker, pip, make, etc. "
        "Do NOT use this for file operations (reading, writing, searching) - "
        "use the specialized tools (Read, Write, Grep, LS) instead. "
        "Do NOT use this to run Python code - use Exec instead.\n\n"
        "Usage notes:\n"
        f"- timeout is in milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}).\n"
        "- directory sets the working directory (defaults to the current directory).\n"
        "- Avoid using this tool with find, grep, cat, head, tail, sed, awk - "
        "use the dedicated builtin tools instead."
    ),
    parameters=schema(
        {"command": string(), "description": string(), "timeout": string(), "directory": string()},
        ["command"],
    ),
)
def run_shell_command(
    command: str,
    description: str | None = None,
    timeout: int | None = None,
    directory: str | None = None,
) -> list[dict[str, str]]:
    """Execute a shell command with timeout and output capture.

    Args:
        command: The shell command to execute.
        description: Brief description of what this command does (5-10 words).
        timeout: Optional timeout in milliseconds (max 600000ms / 10 minutes).
            Defaults to 120000ms (2 minutes).
        directory: Optional absolute path to run the command in.
            If not provided, the current working directory is used.
    """
    timeout_s = min(safe_int(timeout, DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS) / 1000.0
    policy = current_policy()
    env: dict[str, str] | None = None
    cwd = directory
    if policy is not None:
        env = policy.env.build(os.environ)
        if policy.cwd is not None:
            if directory and Path(directory).resolve() != Path(policy.cwd).resolve():
                logger.info(
                    "Bash: execution policy pins cwd to %s, ignoring directory=%s",
                    policy.cwd,
                    directory,
                )
            cwd = str(policy.cwd)
    shell = ["cmd.exe", "/c"] if platform.system() == "Windows" else ["bash", "-c"]
    try:
        done = subprocess.run(
            [*shell, command], capture_output=True, text=True, timeout=timeout_s, cwd=cwd, env=env
        )
        output = _output(done.stdout, done.stderr)
        if done.returncode != 0:
            return [{"text": f"Command exited with code {done.returncode}\n{output}"}]
        return [{"text": output}]
    except subprocess.TimeoutExpired:
        return [{"error": f"Command timed out after {timeout_s:.0f} seconds."}]
    except FileNotFoundError:
        return [{"error": "Command not found or shell not available."}]
    except Exception as e:
        logger.error("Error executing command: %s", e)
        return [{"error": f"Error executing command: {e}"}]
