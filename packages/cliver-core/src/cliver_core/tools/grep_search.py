"""``Grep``: regex search in file contents (0.3.0a5's ``grep_search`` tool).

Ripgrep (``rg``) when it is on ``PATH``, else a Python search with the same output
(``path:line:text``). ``limit`` may be a numeric string (the schema says string; 0.3.0a5
failed on one). Under an :class:`~cliver_core.policy.ExecutionPolicy` a relative path
is joined to the pinned cwd and the path must lie inside ``read_paths``.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import subprocess
from typing import Any

from cliver_core._tools import compat_tool
from cliver_core.policy import scope_violation
from cliver_core.tools._common import pinned, schema, string

logger = logging.getLogger(__name__)

DEFAULT_MATCH_LIMIT = 100


def _limited(text: str, limit: int) -> str:
    return f"{text}\n\n--- Results limited to {limit} matches ---"


def _rg_search(pattern: str, path: str, glob: str | None, limit: int) -> str:
    """Search with ripgrep (case-insensitive, at most ``limit`` lines a file and in all).

    Raises:
        FileNotFoundError: ``rg`` is missing or failed (the caller falls back).
    """
    cmd = ["rg", "--no-heading", "--line-number", "--ignore-case", "--max-count", str(limit)]
    if glob:
        cmd += ["--glob", glob]
    cmd += ["--", pattern, path]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if done.returncode == 1:
        return "No matches found."
    if done.returncode != 0:
        raise FileNotFoundError("rg failed")
    lines = done.stdout.strip().split("\n")
    if len(lines) >= limit:
        return _limited("\n".join(lines[:limit]), limit)
    return "\n".join(lines) if lines[0] else "No matches found."


def _files(path: str, glob_pattern: str | None) -> list[str]:
    if os.path.isfile(path):
        return [path]
    found = []
    for root, _, names in os.walk(path):
        if any(part.startswith(".") for part in root.split(os.sep)):
            continue  # hidden directories (and everything under them)
        for name in names:
            if glob_pattern and not fnmatch.fnmatch(name, glob_pattern):
                continue
            found.append(os.path.join(root, name))
    return found


def _python_search(pattern: str, path: str, glob_pattern: str | None, limit: int) -> str:
    """Search with Python's ``re`` (case-insensitive; hidden directories skipped)."""
    try:
        regex = re.compile(pattern, re.IGNORECASE)
    except re.error as e:
        return f"Error: Invalid regex pattern: {e}"
    matches: list[str] = []
    for file_path in _files(path, glob_pattern):
        if len(matches) >= limit:
            break
        try:
            with open(file_path, encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, 1):
                    if regex.search(line):
                        matches.append(f"{file_path}:{number}:{line.rstrip()}")
                        if len(matches) >= limit:
                            break
        except (OSError, UnicodeDecodeError):
            continue
    if not matches:
        return "No matches found."
    text = "\n".join(matches)
    return _limited(text, limit) if len(matches) >= limit else text


def _limit(limit: Any) -> int:
    """``limit`` as an int: its schema says string, so ``"5"`` is 5 (0.3.0a5 failed on it);
    None or a value that is no number is the default."""
    if limit is None:
        return DEFAULT_MATCH_LIMIT
    try:
        return int(limit)
    except (TypeError, ValueError):
        return DEFAULT_MATCH_LIMIT


@compat_tool(
    name="Grep",
    safety="safe",
    description=(
        "A powerful search tool for finding patterns in file contents. "
        "Supports full regex syntax (e.g., 'log.*Error', 'function\\\\s+\\\\w+'). "
        "Filter files with glob parameter (e.g., '*.py', '**/*.tsx'). "
        "Searches are case-insensitive. "
        "Returns matching lines with file paths and line numbers."
    ),
    parameters=schema(
        {"pattern": string(), "path": string(), "glob": string(), "limit": string()},
        ["pattern"],
    ),
)
def grep_search(
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    limit: int | None = None,
) -> list[dict[str, str]]:
    """Searches file contents using regex patterns.

    Supports full regex syntax. Filter files with glob parameter.
    Case-insensitive by default. Returns matching lines with file paths and line numbers.

    Args:
        pattern: The regular expression pattern to search for in file contents.
        path: File or directory to search in. Defaults to current working directory.
        glob: Glob pattern to filter files (e.g. "*.py", "*.{ts,tsx}").
        limit: Limit output to first N matching lines. Defaults to 100.
    """
    path = pinned(path)
    violation = scope_violation(path, write=False)
    if violation:
        return [{"error": violation}]
    max_results = _limit(limit)
    search_path = os.path.abspath(path)
    if not os.path.exists(search_path):
        return [{"error": f"Path not found: {search_path}"}]
    try:
        result = _rg_search(pattern, search_path, glob, max_results)
    except FileNotFoundError:
        logger.debug("ripgrep (rg) not found, using Python fallback")
        result = _python_search(pattern, search_path, glob, max_results)
    if result.startswith("Error:"):
        return [{"error": result}]
    return [{"text": result}]
