"""Heavy dependencies, imported when first used.

``np = optional_module("numpy", "relevance", "scoring by vectors")`` at the top of a module
costs nothing; the first ``np.<name>`` imports numpy, or raises
:class:`~agent_adapter.MissingDependency` naming the extra that installs it.
``lazy_module("pydantic")`` does the same for a required dependency (its ImportError as is).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

from agent_adapter._errors import MissingDependency

__all__ = ["OptionalModule", "is_loaded_instance", "lazy_module", "optional_module"]


class OptionalModule:
    """A module imported on first attribute access (see the module doc)."""

    def __init__(self, name: str, extra: str, purpose: str, package: str = "") -> None:
        self._name = name
        self._extra = extra
        self._purpose = purpose
        self._package = package or name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self.__dict__.get("_module")  # not self._module: no recursion before __init__
        if module is None:
            try:
                module = importlib.import_module(self._name)
            except ImportError as e:
                if not self._extra:
                    raise
                raise MissingDependency(self._package, self._extra, self._purpose) from e
            self._module = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<optional module {self._name!r}, extra {self._extra!r}>"


def optional_module(name: str, extra: str, purpose: str, package: str = "") -> Any:
    """``name`` imported on first use; ``package`` is its PyPI name when it differs."""
    return OptionalModule(name, extra, purpose, package)


def lazy_module(name: str) -> Any:
    """``name``, a required dependency, imported on first use."""
    return OptionalModule(name, "", "")


def is_loaded_instance(value: object, module: str, name: str) -> bool:
    """``isinstance(value, module.name)``, False without importing ``module`` when it is not
    loaded (nothing can be an instance of a class never imported)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, getattr(loaded, name))
