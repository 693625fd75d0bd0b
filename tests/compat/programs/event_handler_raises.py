"""An on_event handler that raises, written against cliver-core 0.3.0a5: the instance handler
and a call-site handler side by side (their order), a handler failing on tool.end (the tool
already ran: what the model is told) and one failing on tool.start (what chat() does).

The model endpoint is $CLIVER_COMPAT_OPENAI_URL; prints one JSON object.
"""

import asyncio
import json
import os

from cliver_core import AgentCore, ModelBinding, ModelBindings, tool
from cliver_core.events import ToolEvent

RUNS: list[str] = []


@tool(description="Ping the service.", safety="safe")
def ping() -> list[dict]:
    RUNS.append("ping")
    return [{"text": "pong"}]


def bindings() -> ModelBindings:
    return ModelBindings(
        llm=ModelBinding.llm(
            model="gpt-4o", api_key="test", base_url=os.environ["CLIVER_COMPAT_OPENAI_URL"]
        )
    )


async def main() -> None:
    log: list[list] = []

    def handler(label: str, fail_on: str | None):
        failed = []

        async def on_event(event) -> None:
            if not isinstance(event, ToolEvent):
                return
            log.append([label, event.event.value, event.tool_name, event.error])
            if event.event.value == fail_on and not failed:
                failed.append(True)
                raise RuntimeError(f"monitor down on {fail_on}")

        return on_event

    on_end = AgentCore(bindings(), [ping], on_event=handler("instance", "tool.end"))
    try:
        first = await on_end.chat("Ping it.", on_event=handler("call-site", None))
        after_end = {"raised": None, "content": first.message.content}
    except Exception as e:
        after_end = {"raised": type(e).__name__, "message": str(e)}
    after_end["runs"] = len(RUNS)

    on_start = AgentCore(bindings(), [ping], on_event=handler("instance", "tool.start"))
    try:
        second = await on_start.chat("Ping it again.", on_event=handler("call-site", None))
        after_start = {"raised": None, "content": second.message.content}
    except Exception as e:
        after_start = {"raised": type(e).__name__, "message": str(e)}
    after_start["runs"] = len(RUNS)
    await on_end.aclose()
    await on_start.aclose()

    print(
        json.dumps(
            {"failing_on_end": after_end, "failing_on_start": after_start, "log": log},
            indent=1,
            default=str,
        )
    )


asyncio.run(main())
