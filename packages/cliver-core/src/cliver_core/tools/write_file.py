"""``Write``: write a whole file, creating parent directories (0.3.0a5's ``write_file``).

Under an :class:`~cliver_core.policy.ExecutionPolicy` a relative path is joined to the
pinned cwd and the path must lie inside ``write_paths``.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from cliver_core._tools import compat_tool
from cliver_core.policy import scope_violation
from cliver_core.tools._common import pinned, schema, string

logger = logging.getLogger(__name__)


@compat_tool(
    name="Write",
    description=(
        "Writes content to a specified file in the local filesystem. "
        "Creates the file and any parent directories if they don't exist. "
        "If the file already exists, it will be overwritten. "
        "There is no length limit on the content. For very large files, "
        "write the complete content in a single call — do not truncate."
    ),
    parameters=schema({"file_path": string(), "content": string()}, ["file_path", "content"]),
)
def write_file(file_path: str, content: Any) -> list[dict[str, str]]:
    """Writes content to a specified file in the local filesystem.

    Creates the file and any parent directories if they don't exist.
    If the file already exists, it will be overwritten.
    There is no length limit on the content.

    Args:
        file_path: Path to the file to write to (e.g., '/home/user/project/file.txt').
            Relative paths are resolved against the working directory.
        content: The content to write to the file.
    """
    try:
        file_path = pinned(file_path)
        violation = scope_violation(file_path, write=True)
        if violation:
            return [{"error": violation}]
        if not isinstance(content, str):  # a model sent JSON where text was asked for
            content = json.dumps(content, ensure_ascii=False, indent=2)
        abs_path = os.path.abspath(file_path)
        parent = os.path.dirname(abs_path)
        if parent and not os.path.exists(parent):
            os.makedirs(parent, exist_ok=True)
        existed = os.path.exists(abs_path)
        with open(abs_path, "w", encoding="utf-8") as handle:
            handle.write(content)
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        action = "Updated" if existed else "Created"
        return [{"text": f"{action} file: {abs_path} ({lines} lines written)"}]
    except Exception as e:
        logger.error("Error writing file %s: %s", file_path, e)
        return [{"error": f"Error writing file: {e}"}]
