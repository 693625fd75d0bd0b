"""``Read``: a file's lines, numbered (0.3.0a5's ``read_file`` tool).

Under an :class:`~cliver_core.policy.ExecutionPolicy` a relative path is joined to the
pinned cwd and the path must lie inside ``read_paths``.
"""

from __future__ import annotations

import logging
import os
import re

from cliver_core._tools import compat_tool
from cliver_core.policy import scope_violation
from cliver_core.tools._common import pinned, schema, string

logger = logging.getLogger(__name__)

DEFAULT_MAX_LINES = 2000
MAX_LINE_LENGTH = 2000

_SENSITIVE_PATTERNS = [
    r"\.env$",
    r"\.env\..+$",
    r"credentials\.json$",
    r"credentials\.yaml$",
    r"credentials\.yml$",
    r"\.secret$",
    r"\.secrets$",
    r"secrets\.json$",
    r"secrets\.yaml$",
    r"secrets\.yml$",
    r"\.pem$",
    r"\.key$",
    r"id_rsa$",
    r"id_ed25519$",
    r"id_dsa$",
    r"id_ecdsa$",
    r"\.p12$",
    r"\.pfx$",
    r"\.keystore$",
    r"\.jks$",
    r"htpasswd$",
    r"shadow$",
    r"\.netrc$",
    r"\.pgpass$",
    r"token\.json$",
    r"service[-_]?account.*\.json$",
    r"kubeconfig$",
]
_SENSITIVE_RE = re.compile("|".join(f"(?:{p})" for p in _SENSITIVE_PATTERNS), re.IGNORECASE)


def _is_sensitive_file(file_path: str) -> bool:
    """Whether the file's name looks like a secret (``.env``, keys, credentials...)."""
    return _SENSITIVE_RE.search(os.path.basename(file_path)) is not None


def _numbered(lines: list[str], start: int) -> str:
    out = []
    for number, line in enumerate(lines, start + 1):
        text = line.rstrip("\n\r")
        if len(text) > MAX_LINE_LENGTH:
            text = text[:MAX_LINE_LENGTH] + "... (truncated)"
        out.append(f"{number:>6}\t{text}")
    return "\n".join(out)


@compat_tool(
    name="Read",
    description=(
        "Reads and returns the content of a specified file with line numbers. "
        "Use offset (a 0-indexed line number) and limit (max lines, "
        f"default {DEFAULT_MAX_LINES}) to read a slice of large files. "
        "Sensitive files (e.g. .env, keys, credentials) are refused."
    ),
    safety="safe",
    parameters=schema(
        {"file_path": string(), "offset": {"type": "integer"}, "limit": {"type": "integer"}},
        ["file_path"],
    ),
)
def read_file(
    file_path: str,
    offset: int | None = None,
    limit: int | None = None,
) -> list[dict[str, str]]:
    """Read a file from the filesystem.

    If the file is large, the content will be truncated. The response
    indicates if truncation occurred and provides details on how to
    read more using offset/limit.
    """
    try:
        file_path = pinned(file_path)
        violation = scope_violation(file_path, write=False)
        if violation:
            return [{"error": violation}]
        abs_path = os.path.abspath(file_path)
        if _is_sensitive_file(abs_path):
            name = os.path.basename(abs_path)
            return [{"error": f"Access denied: '{name}' appears to be a sensitive file."}]
        if not os.path.exists(abs_path):
            return [{"error": f"File not found: {abs_path}"}]
        if not os.path.isfile(abs_path):
            return [{"error": f"Path is not a file: {abs_path}"}]
        with open(abs_path, encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()
        total = len(lines)
        start = offset if offset is not None else 0
        end = min(start + (limit if limit is not None else DEFAULT_MAX_LINES), total)
        text = _numbered(lines[start:end], start)
        if end < total:
            text += (
                "\n\n--- File truncated ---\n"
                f"Showing lines {start + 1}-{end} of {total} total lines.\n"
                f"Use offset={end} to read more."
            )
        return [{"text": text}]
    except Exception as e:
        logger.error("Error reading file %s: %s", file_path, e)
        return [{"error": f"Error reading file: {e}"}]
