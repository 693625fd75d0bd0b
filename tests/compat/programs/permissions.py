"""A permission callback written against cliver-core 0.3.0a5: an async callback receiving a
ToolCallContext and returning a Decision, allowing one ASK tool and denying another, a
safety="safe" tool that skips it; then a second agent whose safety_overrides reclassify tools
and whose callback raises (failing closed).

The model endpoint is $CLIVER_COMPAT_OPENAI_URL; prints one JSON object.
"""

import asyncio
import json
import os

from cliver_core import (
    AgentCore,
    Decision,
    DecisionAction,
    ModelBinding,
    ModelBindings,
    ToolCallContext,
    ToolCategory,
    tool,
)
from cliver_core.events import ToolEvent, ToolEventType

NOTES: list[str] = []


@tool(description="Write a note.")
def write_note(text: str) -> list[dict]:
    NOTES.append(text)
    return [{"text": f"saved note {len(NOTES)}"}]


@tool(description="Delete a file.")
def delete_file(path: str) -> list[dict]:
    return [{"text": f"deleted {path}"}]


@tool(description="List the notes.", safety="safe")
def list_notes() -> list[dict]:
    return [{"text": "; ".join(NOTES) or "(none)"}]


def binding() -> ModelBindings:
    return ModelBindings(
        llm=ModelBinding.llm(
            model="gpt-4o", api_key="test", base_url=os.environ["CLIVER_COMPAT_OPENAI_URL"]
        )
    )


async def main() -> None:
    asked: list[dict] = []
    events: list[list] = []

    async def ask(ctx: ToolCallContext) -> Decision:
        asked.append(
            {
                "type": type(ctx).__name__,
                "tool_name": ctx.tool_name,
                "args": ctx.args,
                "server": ctx.server,
                "category": ctx.category.value,
                "category_is_ask": ctx.category is ToolCategory.ASK,
            }
        )
        if ctx.tool_name == "delete_file":
            return Decision.deny("deleting files needs a human")
        return Decision.allow()

    async def watch(event) -> None:
        if isinstance(event, ToolEvent):
            entry = [event.event.value, event.tool_name]
            if event.event is ToolEventType.PERMISSION_DENIED:
                entry.append(event.error)
            if event.event is ToolEventType.END:
                entry.append(event.result)
            events.append(entry)

    tools = [write_note, delete_file, list_notes]
    agent = AgentCore(binding(), builtin_tools=tools, permission_callback=ask, on_event=watch)
    first = await agent.chat("Save a note 'buy milk', delete /etc/hosts, then list the notes.")

    async def broken(ctx: ToolCallContext) -> Decision:
        raise RuntimeError("prompt crashed")

    strict = AgentCore(
        binding(),
        builtin_tools=tools,
        permission_callback=broken,
        safety_overrides={"write_note": ToolCategory.SAFE, "list_notes": ToolCategory.ASK},
        on_event=watch,
    )
    second = await strict.chat("Save 'call mom' and list the notes.")
    await agent.aclose()
    await strict.aclose()

    decisions = [Decision.allow(), Decision.deny("no")]
    print(
        json.dumps(
            {
                "first": first.message.content,
                "second": second.message.content,
                "asked": asked,
                "events": events,
                "notes": NOTES,
                "decisions": [[d.action.value, d.reason] for d in decisions],
                "actions": [a.value for a in DecisionAction],
                "categories": [c.value for c in ToolCategory],
                "safety": {t.name: t.safety for t in tools},
            },
            indent=1,
            default=str,
        )
    )


asyncio.run(main())
