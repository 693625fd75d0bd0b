"""``Exec``: run a Python script in a subprocess (0.3.0a5's ``execute_code`` tool).

The code is written to a temporary file and run by this interpreter with stdout and
stderr captured. The environment is inherited with ``PYTHONIOENCODING=utf-8``; under an
:class:`~cliver_core.policy.ExecutionPolicy` it is filtered by ``policy.env`` and the
script runs in the pinned cwd (else the process cwd).
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import tempfile

from cliver_core._tools import compat_tool
from cliver_core.policy import current_policy
from cliver_core.tools._common import safe_int, schema, string

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30
MAX_TIMEOUT_S = 300  # 5 minutes
MAX_OUTPUT_LENGTH = 50000  # characters


def _build_env() -> dict[str, str]:
    """The parent environment with ``PYTHONIOENCODING=utf-8``."""
    env = os.environ.copy()
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def _clip(text: str) -> str:
    if len(text) <= MAX_OUTPUT_LENGTH:
        return text
    return text[:MAX_OUTPUT_LENGTH] + f"\n\n... (truncated, {len(text)} total chars)"


@compat_tool(
    name="Exec",
    description=(
        "Execute a Python script in a separate subprocess and return its output. "
        "Use this for any Python code — including short calculations — as well as "
        "multi-step data processing, file manipulation, or tasks that would otherwise "
        "require many sequential tool calls. "
        "Use Bash instead for shell/terminal commands (git, npm, docker, pip, make, ...). "
        "The script runs in the current working directory with full filesystem access. "
        "Print results to stdout -- that's what you'll see. "
        "The standard library is available (json, csv, os, pathlib, re, math, ...) "
        "plus any third-party packages installed in the environment.\n\n"
        f"timeout is in seconds (default {DEFAULT_TIMEOUT_S}, max {MAX_TIMEOUT_S})."
    ),
    parameters=schema({"code": string(), "timeout": string()}, ["code"]),
)
def execute_code(code: str, timeout: int | None = None) -> list[dict[str, str]]:
    """Execute Python code in a sandboxed subprocess.

    Args:
        code: Python code to execute. Has access to the filesystem (cwd) and standard
            library. Print results to stdout -- the output is returned to you.
        timeout: Timeout in seconds (max 300). Defaults to 30s.
    """
    timeout_s = min(safe_int(timeout, DEFAULT_TIMEOUT_S), MAX_TIMEOUT_S)
    policy = current_policy()
    env = _build_env()
    cwd = os.getcwd()
    if policy is not None:
        env = policy.env.build(env)
        if policy.cwd is not None:
            cwd = str(policy.cwd)
    try:
        with tempfile.NamedTemporaryFile(
            mode="w", suffix=".py", delete=False, encoding="utf-8"
        ) as handle:
            handle.write(code)
            script = handle.name
    except Exception as e:
        return [{"error": f"Error creating script file: {e}"}]
    try:
        done = subprocess.run(
            [sys.executable, script],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=cwd,
            env=env,
        )
        parts = []
        if done.stdout:
            parts.append(_clip(done.stdout))
        if done.stderr:
            parts.append(f"STDERR:\n{_clip(done.stderr)}")
        if done.returncode != 0:
            parts.append(f"\nExit code: {done.returncode}")
        return [{"text": "\n".join(parts) if parts else "(no output)"}]
    except subprocess.TimeoutExpired:
        return [{"error": f"Script timed out after {timeout_s} seconds."}]
    except Exception as e:
        logger.warning("Code execution error: %s", e)
        return [{"error": f"Error executing code: {e}"}]
    finally:
        with contextlib.suppress(OSError):
            os.unlink(script)
