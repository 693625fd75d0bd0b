"""The builtin tools (0.3.0a5's): Read, Write, LS, Grep, Bash, Exec, TodoRead, TodoWrite,
WebFetch.

Each public module of this package defines its tools as module-level
:class:`~cliver_core.tool.CLIverTool` objects (with 0.3.0a5's names, descriptions,
parameter schemas, safety flags and result texts); :func:`discover_builtin_tools` imports
the modules and collects them. Modules whose name starts with ``_`` are helpers and are
skipped. The file and process tools follow the ambient
:class:`~cliver_core.policy.ExecutionPolicy` as 0.3.0a5's do.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

from cliver_core._tools import CLIverTool

__all__ = ["discover_builtin_tools"]


def _discover(package_name: str, package_path: Iterable[str]) -> list[CLIverTool]:
    """The tools defined in the public modules of a package, sorted by name.

    Args:
        package_name: the package's dotted name.
        package_path: its ``__path__``.

    Raises:
        RuntimeError: two different tools have one name.
    """
    found: dict[str, CLIverTool] = {}
    for info in pkgutil.iter_modules(list(package_path)):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package_name}.{info.name}")
        for value in vars(module).values():
            if not isinstance(value, CLIverTool):
                continue
            seen = found.get(value.name)
            if seen is not None and seen is not value:
                raise RuntimeError(
                    f"duplicate builtin tool name {value.name!r} "
                    f"(second definition in {module.__name__})"
                )
            found[value.name] = value
    return [found[name] for name in sorted(found)]


def discover_builtin_tools() -> list[CLIverTool]:
    """The builtin tools of this package, sorted by name (a fresh list each call)."""
    return _discover(__name__, __path__)
