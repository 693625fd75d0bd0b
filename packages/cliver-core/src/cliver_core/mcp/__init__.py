"""``cliver_core.mcp``: 0.3.0a5's MCP client, on the official ``mcp`` SDK.

:class:`MCPClient` holds the configured servers (``stdio`` and ``streamable-http``, see
:mod:`cliver_core.mcp.discovery` for the config keys); ``AgentCore(mcp_client=...)`` starts
it before each run, offers its tools (``mcp__<server>__<tool>``; a call's ``mcp_servers=``
names the servers to offer) and sends the model's calls of them to it. Servers come from the
caller, or from cliver's own places (:func:`discover_mcp_servers`,
:meth:`MCPClient.from_discovery`). Prompts and resources are listed and read on demand.

Example::

    from cliver_core.mcp import MCPClient

    client = MCPClient({"notes": {"transport": "stdio", "command": "python",
                                  "args": ["notes_server.py"]}})
    agent = AgentCore(bindings, mcp_client=client)

The SDK (``mcp`` 2.x) is imported only when a client is given servers, so
``import cliver_core`` does not load it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from cliver_core.mcp.discovery import (
    MCPDiscoveryProblem,
    MCPDiscoveryResult,
    MCPServerProvenance,
    discover_mcp_servers,
)

if TYPE_CHECKING:
    from cliver_core._tools import CLIverTool
    from cliver_core.mcp.adapters import MCPServerAdapter

__all__ = [
    "MCPClient",
    "MCPDiscoveryProblem",
    "MCPDiscoveryResult",
    "MCPServerProvenance",
    "discover_mcp_servers",
]

logger = logging.getLogger(__name__)

_TOOL_PREFIX = "mcp__"
#: the distributions of the SDK and its own dependencies: one missing means no MCP
_SDK = frozenset(
    {
        "mcp",
        "mcp_types",
        "httpx2",
        "httpcore2",
        "starlette",
        "sse_starlette",
        "uvicorn",
        "jsonschema",
        "pyjwt",
        "cryptography",
    }
)


def _create_adapter(name: str, config: dict[str, Any]) -> MCPServerAdapter:
    """The adapter of one server, importing the SDK (a clear error when it is missing)."""
    try:
        from cliver_core.mcp.adapters import create_adapter
    except ModuleNotFoundError as exc:
        if exc.name in _SDK or (exc.name or "").startswith("mcp."):
            raise ImportError(
                "MCP needs the 'mcp' package (the official MCP SDK, 2.x): pip install 'mcp>=2.3,<3'"
            ) from exc
        raise
    return create_adapter(name, config)


def _not_found(server: str, known: Any) -> list[dict[str, Any]]:
    return [{"error": f"MCP server '{server}' not found. Available servers: {list(known)}"}]


class MCPClient:
    """The connections to the configured MCP servers (added and removed at run time too).

    Tools are discovered by :meth:`start` (and when a server is added); tool results come
    back as ``list[dict]``, an ``{"error": ...}`` item on failure (a failing server is
    logged, never raised).

    Args:
        server_configs: server name → config (``{"transport": "stdio", "command": ...}``
            or ``{"transport": "streamable-http", "url": ...}``).

    Raises:
        ValueError: a config with an unknown transport or without its required key.
        ImportError: servers were given and the ``mcp`` SDK is not installed.
    """

    def __init__(self, server_configs: dict[str, dict[str, Any]] | None = None) -> None:
        self._adapters: dict[str, MCPServerAdapter] = {}
        self._started = False
        for name, config in (server_configs or {}).items():
            self._adapters[name] = _create_adapter(name, config)

    @classmethod
    def from_discovery(cls, *, extra: dict[str, Any] | None = None, **kwargs: Any) -> MCPClient:
        """A client for the servers :func:`discover_mcp_servers` finds (``kwargs`` go to
        it: ``extra_paths``, ``cwd``, ``home``, ``env``)."""
        return cls(discover_mcp_servers(extra=extra, **kwargs).servers)

    async def start(self) -> None:
        """Connect to every server and discover its tools, concurrently; once (later calls
        do nothing)."""
        if self._started:
            return
        results = await asyncio.gather(
            *(adapter.start() for adapter in self._adapters.values()), return_exceptions=True
        )
        self._started = True
        for name, result in zip(self._adapters, results, strict=False):
            if isinstance(result, Exception):
                logger.warning("MCP server '%s' failed to start: %s", name, result)

    async def add_server(self, name: str, config: dict[str, Any]) -> None:
        """Add (or replace) server ``name`` and discover its tools."""
        if name in self._adapters:
            await self.remove_server(name)
        adapter = _create_adapter(name, config)
        await adapter.start()
        self._adapters[name] = adapter

    async def remove_server(self, name: str) -> None:
        """Remove server ``name`` (nothing when there is none)."""
        adapter = self._adapters.pop(name, None)
        if adapter is not None:
            await adapter.close()

    async def close(self) -> None:
        """Remove every server."""
        self._started = False
        await asyncio.gather(
            *(adapter.close() for adapter in self._adapters.values()), return_exceptions=True
        )
        self._adapters.clear()

    async def get_tools(self, servers: list[str] | None = None) -> list[CLIverTool]:
        """The discovered tools of every server, or of ``servers`` (unknown names are
        skipped)."""
        if servers:
            targets = [self._adapters[s] for s in servers if s in self._adapters]
        else:
            targets = list(self._adapters.values())
        return [tool for adapter in targets for tool in adapter.tools]

    async def call_tool(self, full_name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        """Call the tool ``mcp__<server>__<tool>`` with ``args``.

        Returns:
            The result blocks, or one ``{"error": ...}`` (a name without the prefix or
            the separator, an unknown server, a failed call).
        """
        if not full_name.startswith(_TOOL_PREFIX):
            return [
                {
                    "error": f"'{full_name}' is not an MCP tool (missing 'mcp__' prefix). "
                    "Expected format: 'mcp__<server>__<tool>'"
                }
            ]
        server, separator, tool = full_name[len(_TOOL_PREFIX) :].partition("__")
        if not separator or not server or not tool:
            return [
                {
                    "error": f"'{full_name}' is not a valid MCP tool name. "
                    "Expected format: 'mcp__<server>__<tool>'"
                }
            ]
        adapter = self._adapters.get(server)
        if adapter is None:
            return _not_found(server, self._adapters)
        return await adapter.call_tool(tool, args)

    def _resolve(self, servers: list[str] | None) -> list[tuple[str, MCPServerAdapter]]:
        if servers is None:
            return list(self._adapters.items())
        return [(name, self._adapters[name]) for name in servers if name in self._adapters]

    async def list_prompts(self, servers: list[str] | None = None) -> list[dict[str, Any]]:
        """The prompts of every server (or of ``servers``), each list tagged ``server``."""
        out: list[dict[str, Any]] = []
        for name, adapter in self._resolve(servers):
            out += [{"server": name, **item} for item in await adapter.list_prompts()]
        return out

    async def get_prompt(
        self, server: str, name: str, arguments: dict[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Prompt ``name`` of ``server`` rendered with ``arguments``."""
        adapter = self._adapters.get(server)
        if adapter is None:
            return _not_found(server, self._adapters)
        return await adapter.get_prompt(name, arguments)

    async def list_resources(self, servers: list[str] | None = None) -> list[dict[str, Any]]:
        """The resources of every server (or of ``servers``), each list tagged ``server``."""
        out: list[dict[str, Any]] = []
        for name, adapter in self._resolve(servers):
            out += [{"server": name, **item} for item in await adapter.list_resources()]
        return out

    async def read_resource(self, server: str, uri: str) -> list[dict[str, Any]]:
        """Resource ``uri`` of ``server``."""
        adapter = self._adapters.get(server)
        if adapter is None:
            return _not_found(server, self._adapters)
        return await adapter.read_resource(uri)
