"""``cliver_core.tool``: 0.3.0a5's tool module (``CLIverTool``, ``@tool``, ``ToolRegistry``,
``discover_builtin_tools``).

The definitions live in :mod:`cliver_core._tools`; this module keeps 0.3.0a5's import path
(and its private helpers ``_python_type_to_json_schema``, ``_is_optional``,
``_coerce_args``, ``_first_line``, which behave as 0.3.0a5's).
"""

from __future__ import annotations

import logging

from cliver_core._tools import CLIverTool, ToolRegistry, tool
from cliver_core._tools import _coerce_args as _coerce_args
from cliver_core._tools import _first_line as _first_line
from cliver_core._tools import _is_optional as _is_optional
from cliver_core._tools import _python_type_to_json_schema as _python_type_to_json_schema
from cliver_core.tools import discover_builtin_tools as discover

__all__ = ["CLIverTool", "ToolRegistry", "discover_builtin_tools", "tool"]

logger = logging.getLogger(__name__)


def discover_builtin_tools() -> list[CLIverTool]:
    """The builtin tools shipped in :mod:`cliver_core.tools`, sorted by name.

    Returns:
        Bash, Exec, Grep, LS, Read, TodoRead, TodoWrite, WebFetch and Write (as 0.3.0a5).
    """
    return discover()
