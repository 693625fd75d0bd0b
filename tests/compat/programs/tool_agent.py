"""A tool agent written against cliver-core 0.3.0a5: @tool functions (sync, async, with a
coerced integer and a default), two tool calls in one reply, a call to a tool that does not
exist and a tool that raises, watched through an async on_event handler.

The model endpoint is $CLIVER_COMPAT_OPENAI_URL; prints one JSON object.
"""

import asyncio
import json
import os

from cliver_core import AgentCore, ModelBinding, ModelBindings, tool
from cliver_core.events import ToolEvent


@tool(description="Current weather for a city.", safety="safe")
def get_weather(city: str, unit: str = "celsius") -> list[dict]:
    """Look up the weather.

    Args:
        city: the city's name.
        unit: celsius or fahrenheit.
    """
    return [{"text": f"{city}: 21 degrees {unit}, clear"}]


@tool()
async def add(a: int, b: int) -> list[dict]:
    """Add two integers."""
    await asyncio.sleep(0)
    return [{"text": str(a + b)}]


@tool(name="divide", description="Divide a by b.")
def divide_numbers(a: float, b: float) -> list[dict]:
    return [{"text": str(a / b)}]


@tool(description="Several facts about a city.")
def city_facts(city: str, fields: list[str] | None = None) -> list[dict]:
    return [{"country": "France", "city": city}, {"population": 2102650, "fields": fields}]


async def main() -> None:
    events: list[list] = []

    async def watch(event) -> None:
        if isinstance(event, ToolEvent):
            entry = [event.event.value, event.tool_name, event.tool_call_id]
            if event.args is not None:
                entry.append(event.args)
            if event.result is not None:
                entry.append(event.result)
            if event.error is not None:
                entry.append(event.error)
            events.append(entry)

    bindings = ModelBindings(
        llm=ModelBinding.llm(
            model="gpt-4o-mini",
            api_key="test",
            base_url=os.environ["CLIVER_COMPAT_OPENAI_URL"],
            temperature=0.1,
        )
    )
    tools = [get_weather, add, divide_numbers, city_facts]
    agent = AgentCore(bindings, builtin_tools=tools, on_event=watch)
    response = await agent.chat(
        "What's the weather in Paris, what is 2 + 3, and divide 1 by 0?",
        system_prompt="You are a helpful assistant.",
        options={"max_tokens": 256},
    )
    # the decorated tool's execute is sync (an async tool runs its own loop): call it off-loop
    direct = await asyncio.to_thread(add.execute, a="4", b=5)
    await agent.aclose()

    trace = response.message.trace or []
    print(
        json.dumps(
            {
                "tools": [
                    {
                        "name": t.name,
                        "description": t.description,
                        "long_description": t.long_description,
                        "parameters": t.parameters,
                        "safety": t.safety,
                        "openai_schema_is_the_tool": t.to_openai_schema()
                        == {
                            "type": "function",
                            "function": {
                                "name": t.name,
                                "description": t.description,
                                "parameters": t.parameters,
                            },
                        },
                        "anthropic_schema_is_the_tool": t.to_anthropic_schema()
                        == {
                            "name": t.name,
                            "description": t.description,
                            "input_schema": t.parameters,
                        },
                    }
                    for t in tools
                ],
                "registry": agent.tool_registry.tool_names,
                "direct_call": direct,
                "content": response.message.content,
                "role": response.message.role,
                "tool_calls": response.message.tool_calls,
                "usage": [
                    response.usage.input_tokens,
                    response.usage.output_tokens,
                    response.usage.cache_read_input_tokens,
                ],
                "media": response.media,
                "events": events,
                "trace_len": len(trace),
                "trace_keys": [{k: type(v).__name__ for k, v in e.items()} for e in trace],
                "trace_iterations": [entry.get("iteration") for entry in trace],
                "trace_models": [entry.get("model") for entry in trace],
                "trace_providers": [entry.get("provider") for entry in trace],
                "trace_tool_calls": [
                    [c["name"] for c in entry["message"].get("tool_calls") or []] for entry in trace
                ],
                "trace_request_options": [
                    (entry.get("request") or {}).get("options") for entry in trace
                ],
            },
            indent=1,
            default=str,
        )
    )


asyncio.run(main())
