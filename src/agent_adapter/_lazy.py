"""Package ``__init__``s that re-export their modules' names, each module loaded on first use.

A package lists ``name -> module`` and gets the two hooks of PEP 562::

    __getattr__, __dir__ = lazy_exports(__name__, {"MemoryStore": "....memory", ...})

``from package import Name`` and ``package.Name`` work as with an eager import; importing the
package itself loads none of the modules (its ``if TYPE_CHECKING:`` imports tell type checkers
and the reference docs what each name is).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps each public name to
    the module (absolute) it comes from; the first lookup imports it and keeps the value."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
