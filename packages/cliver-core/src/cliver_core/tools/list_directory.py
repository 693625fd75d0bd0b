"""``LS``: the entries of one directory (0.3.0a5's ``list_directory`` tool).

Entries matching the directory's ``.gitignore`` lines or an ``ignore`` glob are skipped;
unlike 0.3.0a5, an ``ignore`` given as one string (its schema says string) is one pattern,
not one per character.
Under an :class:`~cliver_core.policy.ExecutionPolicy` a relative path is joined to the
pinned cwd and the path must lie inside ``read_paths``.
"""

from __future__ import annotations

import logging
import os
from fnmatch import fnmatch

from cliver_core._tools import compat_tool
from cliver_core.policy import scope_violation
from cliver_core.tools._common import pinned, schema, string

logger = logging.getLogger(__name__)


def _load_gitignore(dir_path: str) -> list[str]:
    """The non-blank, non-comment lines of ``dir_path/.gitignore`` (none when unreadable)."""
    path = os.path.join(dir_path, ".gitignore")
    patterns: list[str] = []
    if os.path.isfile(path):
        try:
            with open(path) as handle:
                for line in handle:
                    line = line.strip()
                    if line and not line.startswith("#"):
                        patterns.append(line)
        except Exception:
            pass
    return patterns


def _format_size(size: float) -> str:
    """``512B``, ``1.5KB``, ``2.0MB``... (bytes whole, the larger units to one decimal)."""
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{size:.0f}{unit}" if unit == "B" else f"{size:.1f}{unit}"
        size /= 1024
    return f"{size:.1f}TB"


@compat_tool(
    name="LS",
    safety="safe",
    description=(
        "Lists the names of files and subdirectories directly within a specified directory path. "
        "Can optionally ignore entries matching provided glob patterns. "
        "Skips entries matching a .gitignore in that directory."
    ),
    parameters=schema({"path": string(), "ignore": string()}, []),
)
def list_directory(path: str = ".", ignore: list[str] | None = None) -> list[dict[str, str]]:
    """Lists files and subdirectories within a specified directory.

    Can optionally ignore entries matching provided glob patterns.
    Respects .gitignore patterns by default.

    Args:
        path: Directory path to list. Defaults to current working directory.
            Use relative paths when possible.
        ignore: List of glob patterns to ignore (e.g., ["*.pyc", "__pycache__"]).
    """
    try:
        path = pinned(path)
        violation = scope_violation(path, write=False)
        if violation:
            return [{"error": violation}]
        abs_path = os.path.abspath(path)
        if not os.path.exists(abs_path):
            return [{"error": f"Path not found: {abs_path}"}]
        if not os.path.isdir(abs_path):
            return [{"error": f"Path is not a directory: {abs_path}"}]
        # a str is one pattern (0.3.0a5 took each of its characters for one)
        patterns = [ignore] if isinstance(ignore, str) else list(ignore or [])
        skip = _load_gitignore(abs_path) + patterns
        rows = []
        for entry in sorted(os.listdir(abs_path)):
            if any(fnmatch(entry, pattern) for pattern in skip):
                continue
            full = os.path.join(abs_path, entry)
            if os.path.isdir(full):
                rows.append(f"  {entry}/")
            else:
                rows.append(f"  {entry} ({_format_size(os.path.getsize(full))})")
        if not rows:
            return [{"text": f"Directory is empty: {abs_path}"}]
        return [{"text": f"Directory: {abs_path} ({len(rows)} entries)\n" + "\n".join(rows)}]
    except PermissionError:
        return [{"error": f"Permission denied: {path}"}]
    except Exception as e:
        logger.error("Error listing directory %s: %s", path, e)
        return [{"error": f"Error listing directory: {e}"}]
