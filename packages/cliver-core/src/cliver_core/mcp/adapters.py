"""``cliver_core.mcp.adapters``: 0.3.0a5's MCP transport adapters (MCP is out of this
version's scope: :func:`create_adapter` and the adapters raise
:class:`~cliver_core.CapabilityNotSupported`)."""

from __future__ import annotations

from typing import Any

from cliver_core.mcp.discovery import unsupported

__all__ = ["MCPServerAdapter", "StdioAdapter", "StreamableHTTPAdapter", "create_adapter"]


class MCPServerAdapter:
    """0.3.0a5's adapter base; building one raises ``CapabilityNotSupported``.

    Args:
        name: the server name.
        config: its config.
    """

    def __init__(self, name: str, config: dict[str, Any]) -> None:
        raise unsupported(f"{type(self).__name__}({name!r})")


class StdioAdapter(MCPServerAdapter):
    """0.3.0a5's stdio adapter (raises ``CapabilityNotSupported``)."""


class StreamableHTTPAdapter(MCPServerAdapter):
    """0.3.0a5's streamable-HTTP adapter (raises ``CapabilityNotSupported``)."""


def create_adapter(name: str, config: dict[str, Any]) -> MCPServerAdapter:
    """Raises :class:`~cliver_core.CapabilityNotSupported` (MCP is out of scope)."""
    raise unsupported(f"create_adapter({name!r})")
