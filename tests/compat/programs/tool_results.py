"""Tools returning each type of value, written against cliver-core 0.3.0a5: a plain str (JSON-
quoted by 0.3.0a5: the model reads ``"\\"text\\""``), an empty str, dicts of one and of two
keys, lists, None, zero and other numbers, a bool, bytes, a tuple and a pydantic model; the
same batch of calls on an OpenAI and on an Anthropic binding, watched through on_event.

The model endpoints are $CLIVER_COMPAT_OPENAI_URL and $CLIVER_COMPAT_ANTHROPIC_URL; prints one
JSON object.
"""

import asyncio
import json
import os

from pydantic import BaseModel

from cliver_core import AgentCore, ModelBinding, ModelBindings, tool
from cliver_core.events import ToolEvent


class Point(BaseModel):
    x: int
    y: int


@tool(description="A sentence.", safety="safe")
def sentence() -> str:
    return 'Paris is "the" capital,\nnaïve café.'


@tool(description="An async sentence.", safety="safe")
async def async_sentence() -> str:
    await asyncio.sleep(0)
    return "async text"


@tool(description="Nothing said.", safety="safe")
def empty_text() -> str:
    return ""


@tool(description="One key.", safety="safe")
def one_key() -> dict:
    return {"city": "Paris"}


@tool(description="Two keys.", safety="safe")
def two_keys() -> dict:
    return {"city": "Paris", "population": 2102650, "river": None}


@tool(description="A list of scalars.", safety="safe")
def scalars() -> list:
    return ["a", 1, 2.5, None, True]


@tool(description="A list of dicts, one with an error.", safety="safe")
def dicts_with_error() -> list:
    return [{"text": "partial"}, {"error": "second source down"}]


@tool(description="Nothing.", safety="safe")
def nothing() -> None:
    return None


@tool(description="An integer.", safety="safe")
def forty_two() -> int:
    return 42


@tool(description="Zero.", safety="safe")
def zero() -> int:
    return 0


@tool(description="A float.", safety="safe")
def ratio() -> float:
    return 0.25


@tool(description="A flag.", safety="safe")
def flag() -> bool:
    return True


@tool(description="Some bytes.", safety="safe")
def raw() -> bytes:
    return b"\x00ab"


@tool(description="A tuple.", safety="safe")
def pair() -> tuple:
    return ("x", {"k": 1})


@tool(description="A model.", safety="safe")
def point() -> Point:
    return Point(x=1, y=2)


TOOLS = [
    sentence, one_key, async_sentence, forty_two, empty_text, ratio, two_keys, flag, scalars,
    point, nothing, zero, dicts_with_error, raw, pair,
]  # fmt: skip


async def main() -> None:
    events: list[list] = []

    async def watch(event) -> None:
        if isinstance(event, ToolEvent):
            entry = [event.event.value, event.tool_name, event.tool_call_id]
            for value in (event.result, event.error):
                if value is not None:
                    entry.append(value)
            events.append(entry)

    answers = []
    for protocol, url in (
        ("openai", os.environ["CLIVER_COMPAT_OPENAI_URL"]),
        ("anthropic", os.environ["CLIVER_COMPAT_ANTHROPIC_URL"]),
    ):
        extra = {"protocol": "anthropic"} if protocol == "anthropic" else {}
        model = "claude-sonnet-4-5" if protocol == "anthropic" else "gpt-4o-mini"
        bindings = ModelBindings(
            llm=ModelBinding.llm(model=model, api_key="test", base_url=url, **extra)
        )
        agent = AgentCore(bindings, builtin_tools=TOOLS, on_event=watch)
        response = await agent.chat("Call every tool once.", options={"max_tokens": 128})
        await agent.aclose()
        answers.append(response.message.content)

    print(json.dumps({"answers": answers, "events": events}, indent=1, default=str))


asyncio.run(main())
