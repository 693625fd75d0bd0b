"""``cliver_core.mcp``: 0.3.0a5's MCP client, out of this version's scope.

The names import as in 0.3.0a5 (the discovery result types are its dataclasses), but
:class:`MCPClient` and :func:`discover_mcp_servers` raise
:class:`~cliver_core.CapabilityNotSupported` naming "MCP" (and ``AgentCore`` rejects an
``mcp_client``). Bring MCP tools in as ordinary tools: wrap each in a ``CLIverTool`` (or a
function decorated with ``@tool``) that calls your MCP session.
"""

from __future__ import annotations

from cliver_core.mcp.discovery import (
    MCPDiscoveryProblem,
    MCPDiscoveryResult,
    MCPServerProvenance,
    discover_mcp_servers,
    unsupported,
)

__all__ = [
    "MCPClient",
    "MCPDiscoveryProblem",
    "MCPDiscoveryResult",
    "MCPServerProvenance",
    "discover_mcp_servers",
]


class MCPClient:
    """0.3.0a5's MCP client; building one raises :class:`~cliver_core.CapabilityNotSupported`.

    Args:
        server_configs: server name → config, as in 0.3.0a5.
    """

    def __init__(self, server_configs: dict[str, dict[str, object]] | None = None) -> None:
        raise unsupported("MCPClient")

    @classmethod
    def from_discovery(
        cls, *, extra: dict[str, object] | None = None, **kwargs: object
    ) -> MCPClient:
        """Raises :class:`~cliver_core.CapabilityNotSupported`."""
        raise unsupported("MCPClient.from_discovery")
