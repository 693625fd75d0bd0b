"""One import name, two distributions: ``cliver_core`` is installed by ``agent-adapter``
(this package) and by the published ``cliver-core`` 0.3.0a5.

pip does not notice that two distributions write the same files: installing both leaves
whichever was installed last over the other's files (a mix of the two when their file lists
differ), and uninstalling either removes files the other needs. So on import, when a
``cliver-core`` distribution is installed beside this one, a :class:`RuntimeWarning` says how
to get a clean install. ``importlib.metadata.version("cliver-core")`` raises
``PackageNotFoundError`` when only ``agent-adapter`` is installed: see the README ("Coming from
cliver-core 0.3.0a5") for the lookups that work.
"""

from __future__ import annotations

import importlib.metadata
import warnings

__all__ = ["warn_if_both_installed"]

_FIX = (
    "pip uninstall -y cliver-core agent-adapter && pip install agent-adapter "
    "(agent-adapter's cliver_core is the successor of cliver-core 0.3.0a5)"
)


def warn_if_both_installed() -> str | None:
    """Warn (and return the message) when the ``cliver-core`` distribution is installed too.

    A distribution whose metadata names agent-adapter as its provider (a metadata-only
    ``cliver-core`` that depends on ``agent-adapter``) is ours, not a second copy.
    """
    try:
        other = importlib.metadata.distribution("cliver-core")
    except importlib.metadata.PackageNotFoundError:
        return None
    requires = other.requires or []
    if any(r.replace("_", "-").lower().startswith("agent-adapter") for r in requires):
        return None
    message = (
        f"cliver-core {other.version} is installed beside agent-adapter: both install the "
        "import package cliver_core, so their files overwrite each other. For a clean "
        f"install: {_FIX}"
    )
    warnings.warn(message, RuntimeWarning, stacklevel=3)
    return message
