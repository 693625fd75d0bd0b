"""MCP written against cliver-core 0.3.0a5: a local stdio server (``mcp_servers/notes.py``, on
the official ``mcp`` SDK) given to an MCPClient with a second server that cannot start; its
tools (names, schemas, safety; a ``__`` name skipped); an agent run in which the model calls
two of them (one read-only, one mutating, allowed by the permission callback), then a run
offering another server's tools only; a failing tool, bad names and an unknown server called
directly; a prompt and a resource. Then server discovery from files, the environment and
explicit configs (precedence, variables, problems, the redacted view).

The model endpoint is $CLIVER_COMPAT_OPENAI_URL; works in $CLIVER_COMPAT_WORKDIR; prints one
JSON object.
"""

import asyncio
import json
import os
import sys
from pathlib import Path

from cliver_core import AgentCore, Decision, ModelBinding, ModelBindings
from cliver_core.mcp import MCPClient, discover_mcp_servers

SERVER = str(Path(__file__).with_name("mcp_servers") / "notes.py")
work = Path(os.environ["CLIVER_COMPAT_WORKDIR"]).resolve()


async def main() -> None:
    out: dict = {}
    client = MCPClient(
        {
            "notes": {"transport": "stdio", "command": sys.executable, "args": [SERVER]},
            "gone": {"transport": "stdio", "command": str(work / "no-such-server")},
        }
    )
    await client.start()
    await client.start()  # once only
    tools = await client.get_tools()
    out["tools"] = [[t.name, t.description, t.parameters, t.safety] for t in tools]
    out["gone_tools"] = [t.name for t in await client.get_tools(servers=["gone", "nope"])]

    asked: list = []

    async def permission(context) -> Decision:
        asked.append([context.tool_name, context.server, context.category.value])
        return Decision.allow()

    agent = AgentCore(
        ModelBindings(
            llm=ModelBinding.llm(
                model="gpt-4o", api_key="test", base_url=os.environ["CLIVER_COMPAT_OPENAI_URL"]
            )
        ),
        mcp_client=client,
        permission_callback=permission,
    )
    events: list = []

    async def on_event(event) -> None:
        if event.event.value.startswith("tool."):
            events.append([event.event.value, event.tool_name, getattr(event, "result", None)])

    answer = await agent.chat("Add a note and list them.", on_event=on_event)
    out["answer"] = answer.message.content
    out["asked"] = asked
    out["events"] = events
    other = await agent.chat("Anything?", mcp_servers=["gone"])
    out["other"] = other.message.content

    out["direct"] = [
        await client.call_tool("mcp__notes__explode", {"reason": "test"}),
        await client.call_tool("notes__list_notes", {}),
        await client.call_tool("mcp__notes", {}),
        await client.call_tool("mcp__nope__x", {}),
    ]
    out["prompt"] = await client.get_prompt("notes", "summarize", {"style": "terse"})
    out["prompt_missing"] = await client.get_prompt("nope", "summarize")
    out["resource"] = await client.read_resource("notes", "notes://count")
    await client.remove_server("notes")
    out["after_remove"] = [t.name for t in await client.get_tools()]
    await client.close()
    await agent.aclose()

    # discovery
    home = work / "home"
    (home / ".cliver" / "mcps").mkdir(parents=True)
    (work / ".cliver").mkdir()
    (work / ".cliver" / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "notes": {
                        "transport": "stdio",
                        "command": "python",
                        "args": ["${NOTES_DIR:-/srv}/notes.py", 3],
                        "env": {"TOKEN": "${NOTES_TOKEN}"},
                        "timeout": 5,
                        "startup_timeout": None,
                        "mode": "legacy",
                    },
                    "bad name": {"transport": "stdio", "command": "x"},
                    "a__b": {"transport": "stdio", "command": "x"},
                    "off": {"transport": "stdio", "command": "x", "enabled": False},
                    "web": {"transport": "sse", "url": "http://x"},
                }
            }
        )
    )
    (home / ".cliver" / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "notes": {"transport": "stdio", "command": "shadowed"},
                    "docs": {
                        "transport": "streamable-http",
                        "url": "https://docs.example/mcp",
                        "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
                        "enabled_tools": ["search"],
                        "timeout": -1,
                    },
                }
            }
        )
    )
    (home / ".cliver" / "mcps" / "solo.json").write_text(
        json.dumps({"transport": "stdio", "command": "solo", "mode": "fast"})
    )
    (home / ".cliver" / "mcps" / "broken.json").write_text("{not json")
    (home / ".cliver" / "mcps" / ".hidden.json").write_text("{}")
    result = discover_mcp_servers(
        extra={"mine": {"transport": "stdio", "command": "mine", "disabled_tools": "x"}},
        extra_paths=[str(work / "missing.json")],
        cwd=work,
        home=home,
        env={"DOCS_TOKEN": "s3cret", "NOTES_DIR": "/opt/notes"},
    )
    out["servers"] = result.servers
    out["provenance"] = {
        k: [v.name, v.source, str(v.path).replace(str(work), "<W>")]
        for k, v in result.provenance.items()
    }
    out["problems"] = [
        [p.code, p.message.replace(str(work), "<W>"), p.severity, p.source, p.server]
        for p in result.problems
    ]
    out["sources_read"] = [[s, str(p).replace(str(work), "<W>")] for s, p in result.sources_read]
    out["summary"] = result.summary()
    out["redacted"] = result.redacted()
    print(json.dumps(out, indent=1, default=str))


asyncio.run(main())
