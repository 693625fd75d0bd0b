"""The store protocol for full tool results that ShrinkToolResults shortened."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["ToolResultStore"]


@runtime_checkable
class ToolResultStore(Protocol):
    """Keeps full texts by (owner scope, id) for a while.

    ``save`` returns the id the note in the shortened message names; ``load`` returns the text,
    or ``None`` when it is unknown, expired or saved under another scope.
    """

    async def save(self, scope: str, text: str, *, ttl_seconds: float | None) -> str:
        """Save ``text`` under ``scope`` for ``ttl_seconds`` (``None``: no expiry); its id."""
        ...

    async def load(self, scope: str, id: str) -> str | None:
        """The text saved under ``scope`` as ``id``, or ``None``."""
        ...
