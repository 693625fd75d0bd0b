"""A small MCP server over stdio (the official ``mcp`` SDK 2.x, ``MCPServer``): a notes store
with a mutating tool, a read-only one, a tool that fails, a tool whose name holds ``__`` (a
client skips it), a prompt and two resources. Run: ``python notes.py``."""

import json

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")
NOTES: list[str] = ["buy milk"]


@server.tool(description="Add a note.")
def add_note(text: str, tags: list[str] | None = None) -> str:
    NOTES.append(text)
    return f"added note {len(NOTES)}: {text}" + (f" {tags}" if tags else "")


@server.tool(description="List the notes.", annotations=ToolAnnotations(readOnlyHint=True))
def list_notes() -> list[str]:
    return list(NOTES)


@server.tool(description="Always fails.")
def explode(reason: str) -> str:
    raise RuntimeError(f"exploded: {reason}")


@server.tool(name="bad__name", description="Skipped by clients (the name holds '__').")
def bad_name() -> str:
    return "never"


@server.prompt(description="Summarize the notes in a style.")
def summarize(style: str) -> str:
    return f"Summarize these notes in a {style} style: {NOTES}"


@server.resource("notes://all", description="Every note, one a line.")
def all_notes() -> str:
    return "\n".join(NOTES)


@server.resource("notes://count", mime_type="application/json")
def count() -> str:
    return json.dumps({"count": len(NOTES)})


if __name__ == "__main__":
    server.run("stdio")
