"""Helpers of the builtin tools (skipped by discovery)."""

from __future__ import annotations

import os
from typing import Any

from cliver_core.policy import pinned_cwd


def safe_int(value: Any, default: int) -> int:
    """``int(value)``, or ``default`` when ``value`` is falsy or does not convert (0.3.0a5's
    ``util._safe_int``)."""
    if not value:
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def pinned(path: str) -> str:
    """``path`` joined to the ambient policy's pinned cwd when it is relative."""
    pin = pinned_cwd()
    if pin is not None and not os.path.isabs(path):
        return str(pin / path)
    return path


def string(**extra: Any) -> dict[str, Any]:
    """A string property of a 0.3.0a5 schema."""
    return {"type": "string", **extra}


def schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A 0.3.0a5 arguments schema (``required`` left out when empty)."""
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out
