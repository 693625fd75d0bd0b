"""``cliver_core.mcp.discovery``: 0.3.0a5's MCP server discovery names (MCP is out of this
version's scope: :func:`discover_mcp_servers` raises
:class:`~cliver_core.CapabilityNotSupported`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cliver_core._errors import CapabilityNotSupported

__all__ = [
    "TRANSPORTS",
    "MCPDiscoveryProblem",
    "MCPDiscoveryResult",
    "MCPServerProvenance",
    "discover_mcp_servers",
]

#: 0.3.0a5's two MCP transports.
TRANSPORTS = ("stdio", "streamable-http")


def unsupported(what: str) -> CapabilityNotSupported:
    """The error for an MCP feature (naming ``what`` and "MCP")."""
    return CapabilityNotSupported(
        f"{what}: MCP is not supported by this version of cliver_core; wrap the MCP "
        "server's tools as CLIverTool (or @tool functions) calling your own MCP session"
    )


@dataclass(frozen=True)
class MCPDiscoveryProblem:
    """One thing discovery reported about a config entry (0.3.0a5's fields)."""

    code: str
    message: str
    severity: str = "warning"
    source: str = ""
    path: Path | None = None
    server: str | None = None


@dataclass(frozen=True)
class MCPServerProvenance:
    """Where a discovered server was defined (0.3.0a5's fields)."""

    name: str
    source: str
    path: Path | None


@dataclass(frozen=True)
class MCPDiscoveryResult:
    """A discovery result (0.3.0a5's fields)."""

    servers: dict[str, dict[str, Any]]
    provenance: dict[str, MCPServerProvenance]
    problems: tuple[MCPDiscoveryProblem, ...]
    sources_read: tuple[tuple[str, Path], ...]


def discover_mcp_servers(
    *,
    extra: Mapping[str, Any] | None = None,
    extra_paths: Iterable[str | os.PathLike[str]] = (),
    cwd: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> MCPDiscoveryResult:
    """0.3.0a5's discovery of MCP server configs; raises
    :class:`~cliver_core.CapabilityNotSupported` (MCP is out of scope)."""
    raise unsupported("discover_mcp_servers")
