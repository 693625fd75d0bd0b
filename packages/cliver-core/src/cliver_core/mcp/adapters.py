"""``cliver_core.mcp.adapters``: one MCP server each, over the official ``mcp`` SDK (2.x), with
0.3.0a5's two transports, ``stdio`` and ``streamable-http``.

Every operation opens an ephemeral session on the SDK's high-level ``mcp.Client`` (``mode``
``"auto"``: the newest protocol, the legacy ``initialize`` handshake as fallback), does its
work and disconnects: nothing stays open between operations, so an adapter holds no
subprocess or socket between calls (a stdio server is started per operation).

Tools are model-facing, named ``mcp__<server>__<tool>`` (a tool whose own name holds ``__``
is skipped); ``readOnlyHint`` makes one ``safe`` (a default category, not a permission
boundary: MCP's annotations are the server's own claims), anything else ``mutating``.
Prompts and resources are listed and read on demand, never advertised as tools. Results are
0.3.0a5's ``list[dict]``: the content blocks as JSON dicts, the structured content as one
text block when there is no other, an ``{"error": ...}`` item on failure (never raised).

Importing this module imports ``mcp``; :class:`cliver_core.mcp.MCPClient` imports it only
when it is given servers.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from importlib import metadata
from typing import Any

from mcp import Client, Implementation, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from cliver_core._tools import CLIverTool

__all__ = [
    "CLIENT_INFO",
    "MCPServerAdapter",
    "StdioAdapter",
    "StreamableHTTPAdapter",
    "create_adapter",
]

logger = logging.getLogger(__name__)

_STARTUP_TIMEOUT_STDIO = 60.0
_STARTUP_TIMEOUT_REMOTE = 30.0
_MAX_LIST_PAGES = 50
_MAX_TOOLS_WARN = 200
_TOOL_PREFIX = "mcp__"
_ERROR_DETAIL_LIMIT = 300
_SCHEMA_PASSTHROUGH = ("$defs", "definitions", "additionalProperties", "title")

try:
    _VERSION = metadata.version("cliver-core")
except metadata.PackageNotFoundError:  # a source tree without an install
    _VERSION = "0.0.0"

#: how the client introduces itself to servers
CLIENT_INFO = Implementation(name="cliver-core", version=_VERSION)


@asynccontextmanager
async def _timeout_after(seconds: float) -> AsyncIterator[None]:
    """Cancel the current task after ``seconds`` (a ``TimeoutError`` then).

    Not ``asyncio.wait_for``: it would run the connection in another task, and the SDK's
    anyio cancel scopes must be exited in the task that entered them.
    """
    task = asyncio.current_task()
    timed_out = False

    def cancel() -> None:
        nonlocal timed_out
        timed_out = True
        if task is not None:
            task.cancel()

    handle = asyncio.get_running_loop().call_later(seconds, cancel)
    try:
        yield
    except asyncio.CancelledError:
        if timed_out and task is not None:
            task.uncancel()
            raise TimeoutError(f"startup timed out after {seconds:g}s") from None
        raise
    finally:
        handle.cancel()


def _as_float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _dump(model: Any) -> dict[str, Any]:
    """An SDK record as a JSON dict (URLs as strings, no ``None`` keys)."""
    dumped: dict[str, Any] = model.model_dump(mode="json", exclude_none=True)
    return dumped


def _error_detail(result: Any) -> str:
    """The first text block of a failed tool result, cut to 300 characters."""
    for block in result.content or ():
        text = getattr(block, "text", None)
        if text:
            return str(text)[:_ERROR_DETAIL_LIMIT]
    return "no error detail"


def _normalize_schema(input_schema: Any) -> dict[str, Any]:
    """A copy of a tool's ``inputSchema`` as a well-formed object schema (the server's dict
    is not changed): ``$defs`` / ``definitions`` / ``additionalProperties`` / ``title``
    kept, a property with neither ``type`` nor ``$ref`` a string."""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    if not isinstance(input_schema, dict):
        return schema
    for key in _SCHEMA_PASSTHROUGH:
        if key in input_schema:
            schema[key] = copy.deepcopy(input_schema[key])
    properties = input_schema.get("properties")
    if isinstance(properties, dict):
        schema["properties"] = copy.deepcopy(properties)
    required = input_schema.get("required")
    if isinstance(required, list):
        schema["required"] = list(required)
    for prop in schema["properties"].values():
        if isinstance(prop, dict) and "type" not in prop and "$ref" not in prop:
            prop["type"] = "string"
    return schema


class MCPServerAdapter(ABC):
    """One MCP server (one transport): its discovered tools and ephemeral sessions.

    Args:
        name: the server's name (the ``<server>`` of its tools' names).
        config: its config (see :mod:`cliver_core.mcp.discovery` for the keys).

    Raises:
        ValueError: a key the transport requires is missing (``command``, ``url``).
    """

    transport: str = ""
    _required: tuple[str, ...] = ()

    def __init__(self, name: str, config: dict[str, Any]) -> None:
        missing = [key for key in self._required if not config.get(key)]
        if missing:
            raise ValueError(
                f"MCP server '{name}': {self.transport} transport requires {', '.join(missing)}"
            )
        self.name = name
        self.config = config
        self._tools: list[CLIverTool] = []

    @abstractmethod
    def _transport(self) -> Any:
        """An async context manager giving what ``mcp.Client(server=...)`` takes."""

    def _startup_timeout(self) -> float | None:
        if "startup_timeout" in self.config:
            return _as_float(self.config["startup_timeout"])
        return _STARTUP_TIMEOUT_STDIO if self.transport == "stdio" else _STARTUP_TIMEOUT_REMOTE

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Client]:
        """One ephemeral, connected ``mcp.Client``."""
        async with self._transport() as server:
            client = Client(
                server,
                mode=self.config.get("mode", "auto"),
                read_timeout_seconds=_as_float(self.config.get("timeout")),
                client_info=CLIENT_INFO,
            )
            async with AsyncExitStack() as stack:
                startup = self._startup_timeout()
                if startup is None:
                    await stack.enter_async_context(client)
                else:
                    async with _timeout_after(startup):
                        await stack.enter_async_context(client)
                yield client

    async def _list_all(self, client: Client, method: str, field: str) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(_MAX_LIST_PAGES):
            result = await getattr(client, method)(cursor=cursor)
            items.extend(getattr(result, field))
            cursor = result.next_cursor
            if not cursor:
                break
        return items

    async def start(self) -> None:
        """Connect once and discover the server's tools (a failure is logged: the server
        then has no tools)."""
        try:
            async with self.session() as client:
                found = await self._list_all(client, "list_tools", "tools")
                self._tools = self._build_tools(found)
                protocol = client.protocol_version
            logger.info(
                "MCP server '%s': %d tools discovered (protocol %s)",
                self.name,
                len(self._tools),
                protocol,
            )
        except Exception as exc:
            logger.warning("MCP server '%s' failed to start: %s", self.name, exc)
            logger.debug("MCP server '%s' start failure detail", self.name, exc_info=True)

    def _build_tools(self, found: list[Any]) -> list[CLIverTool]:
        enabled = self.config.get("enabled_tools")
        disabled = set(self.config.get("disabled_tools") or ())
        tools: list[CLIverTool] = []
        seen: set[str] = set()
        for item in found:
            if "__" in item.name:
                logger.warning(
                    "MCP server '%s': skipping tool '%s' — names may not contain '__' "
                    "(mcp__<server>__<tool> contract)",
                    self.name,
                    item.name,
                )
                continue
            if item.name in seen:
                continue
            seen.add(item.name)
            if (enabled and item.name not in enabled) or item.name in disabled:
                continue
            read_only = getattr(item.annotations, "read_only_hint", None)
            call = functools.partial(self._call_tool, item.name)
            tools.append(
                CLIverTool(
                    name=f"{_TOOL_PREFIX}{self.name}__{item.name}",
                    description=item.description or f"MCP tool: {item.name}",
                    parameters=_normalize_schema(item.input_schema),
                    execute=call,
                    aexecute=call,
                    safety="safe" if read_only else "mutating",
                )
            )
        if len(tools) > _MAX_TOOLS_WARN:
            logger.warning(
                "MCP server '%s' exposes %d tools — consider enabled_tools/disabled_tools",
                self.name,
                len(tools),
            )
        return tools

    async def call_tool(self, tool_name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        """Call ``tool_name`` with ``args`` in an ephemeral session."""
        try:
            async with self.session() as client:
                result = await client.call_tool(tool_name, args)
            if result.is_error:
                return [
                    {
                        "error": f"MCP tool '{tool_name}' failed on server '{self.name}': "
                        f"{_error_detail(result)}"
                    }
                ]
            content = [_dump(block) for block in result.content]
            if not content and result.structured_content is not None:
                text = json.dumps(result.structured_content, ensure_ascii=False, default=str)
                content = [{"text": text}]
            return content
        except Exception as exc:
            return [{"error": f"MCP tool '{tool_name}' on server '{self.name}' failed: {exc}"}]

    def _call_tool(self, tool_name: str, **kwargs: Any) -> Any:
        """The tools' ``execute``: a coroutine calling the tool."""
        return self.call_tool(tool_name, kwargs)

    async def list_prompts(self) -> list[dict[str, Any]]:
        """The server's prompts (names, descriptions, arguments)."""
        try:
            async with self.session() as client:
                prompts = await self._list_all(client, "list_prompts", "prompts")
            return [{"prompts": [_dump(prompt) for prompt in prompts]}]
        except Exception as exc:
            return [{"error": f"MCP server '{self.name}' failed to list prompts: {exc}"}]

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Prompt ``name`` rendered with ``arguments``."""
        try:
            async with self.session() as client:
                result = await client.get_prompt(name, arguments)
            return [_dump(result)]
        except Exception as exc:
            return [{"error": f"MCP prompt '{name}' on server '{self.name}' failed: {exc}"}]

    async def list_resources(self) -> list[dict[str, Any]]:
        """The server's resources (whole records)."""
        try:
            async with self.session() as client:
                resources = await self._list_all(client, "list_resources", "resources")
            return [{"resources": [_dump(resource) for resource in resources]}]
        except Exception as exc:
            return [{"error": f"MCP server '{self.name}' failed to list resources: {exc}"}]

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """Resource ``uri`` (text, or a base64 blob)."""
        try:
            async with self.session() as client:
                result = await client.read_resource(uri)
            return [{"contents": [_dump(contents) for contents in result.contents]}]
        except Exception as exc:
            return [{"error": f"MCP resource '{uri}' on server '{self.name}' failed: {exc}"}]

    @property
    def tools(self) -> list[CLIverTool]:
        """The discovered tools (a copy of the list)."""
        return list(self._tools)

    async def close(self) -> None:
        """Forget the discovered tools (sessions are ephemeral: nothing else is held)."""
        self._tools.clear()


class StdioAdapter(MCPServerAdapter):
    """MCP over stdio: the server is a subprocess (``command``, ``args``, ``env``,
    ``cwd``)."""

    transport = "stdio"
    _required = ("command",)

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[StdioServerParameters]:
        config = self.config
        env = {str(k): str(v) for k, v in (config.get("env") or {}).items()}
        yield StdioServerParameters(
            command=str(config["command"]),
            args=[str(arg) for arg in config.get("args") or ()],
            env=env or None,
            cwd=config.get("cwd"),
        )


class StreamableHTTPAdapter(MCPServerAdapter):
    """MCP over Streamable HTTP (``url``; ``headers`` go on an HTTP client of the
    adapter's own, which the SDK's transport has no parameter for)."""

    transport = "streamable-http"
    _required = ("url",)

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        url = str(self.config["url"])
        headers = self.config.get("headers") or None
        if not headers:
            yield streamable_http_client(url, terminate_on_close=True)
            return
        import httpx2  # the mcp SDK's HTTP client (a dependency of mcp 2.x)

        timeout = httpx2.Timeout(30.0, read=300.0)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
            yield streamable_http_client(url, http_client=http, terminate_on_close=True)


_TRANSPORTS: dict[str, type[MCPServerAdapter]] = {
    "stdio": StdioAdapter,
    "streamable-http": StreamableHTTPAdapter,
}


def create_adapter(name: str, config: dict[str, Any]) -> MCPServerAdapter:
    """The adapter for ``config["transport"]`` (default ``"stdio"``).

    Raises:
        ValueError: an unknown transport, or a required key missing.
    """
    transport = config.get("transport", "stdio")
    cls = _TRANSPORTS.get(transport)
    if cls is None:
        raise ValueError(
            f"Unknown MCP transport '{transport}' for server '{name}'. "
            f"Supported: {sorted(_TRANSPORTS)}"
        )
    return cls(name=name, config=config)
