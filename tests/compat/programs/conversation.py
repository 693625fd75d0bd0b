"""A conversation= continuation, written against cliver-core 0.3.0a5: the app keeps the
history itself (the user turns and response.message, a stored tool exchange), stores it as
JSON with model_dump() and restores it with model_validate(), and continues it on an OpenAI
endpoint and, streamed and not, on an Anthropic one (builtin_system_prompt + system_prompt
merged into the one system message; the Anthropic default max_tokens).

The endpoints are $CLIVER_COMPAT_OPENAI_URL and $CLIVER_COMPAT_ANTHROPIC_URL; prints one JSON
object.
"""

import asyncio
import json
import os

from cliver_core import AgentCore, CLIverMessage, ModelBinding, ModelBindings, ToolCall


def visible(message: CLIverMessage) -> dict:
    return {
        "role": message.role,
        "content": message.content,
        "text": message.text,
        "tool_calls": [[c.id, c.name, c.args] for c in message.tool_calls or []],
        "has_tool_calls": message.has_tool_calls,
        "native_protocol": message.native_protocol,
        "native": {k: v for k, v in (message.native or {}).items() if v not in (None, [])},
    }


async def main() -> None:
    openai_agent = AgentCore(
        ModelBindings(
            llm=ModelBinding.llm(
                model="deepseek-reasoner",
                api_key="test",
                base_url=os.environ["CLIVER_COMPAT_OPENAI_URL"],
            )
        ),
        builtin_system_prompt="You are the shop assistant.",
    )
    first = await openai_agent.chat("My order is 12345.", system_prompt="Customer tier: gold.")

    history = [
        CLIverMessage(role="user", content="My order is 12345."),
        first.message,
        CLIverMessage(role="user", content="Where is it?"),
        CLIverMessage(
            role="assistant",
            content=None,
            tool_calls=[ToolCall(id="h1", name="track", args={"order_id": "12345"})],
        ),
        CLIverMessage(role="tool", content="in transit", tool_call_id="h1"),
        CLIverMessage(role="assistant", content="It is in transit."),
    ]
    stored = json.dumps([m.model_dump(exclude={"trace"}) for m in history])
    restored = [CLIverMessage.model_validate(d) for d in json.loads(stored)]

    second = await openai_agent.chat(
        "When will it arrive?", system_prompt="Customer tier: gold.", conversation=restored
    )

    anthropic_agent = AgentCore(
        ModelBindings(
            llm=ModelBinding.llm(
                model="claude-sonnet-4-5",
                api_key="test",
                base_url=os.environ["CLIVER_COMPAT_ANTHROPIC_URL"],
                protocol="anthropic",
            )
        ),
        builtin_system_prompt="You are the shop assistant.",
    )
    third = await anthropic_agent.chat("And the tracking number?", conversation=restored)
    streamed = [
        c
        async for c in anthropic_agent.stream(
            "Thanks!",
            conversation=[*restored, CLIverMessage(role="user", content="ok"), third.message],
        )
    ]
    await openai_agent.aclose()
    await anthropic_agent.aclose()

    print(
        json.dumps(
            {
                "first": visible(first.message),
                "first_dump_keys": sorted(first.message.model_dump(exclude={"trace"})),
                "stored_keys": [sorted(d) for d in json.loads(stored)],
                "restored": [visible(m) for m in restored],
                "history_len_after": len(history),
                "second": visible(second.message),
                "third": visible(third.message),
                "third_usage": [third.usage.input_tokens, third.usage.output_tokens],
                "streamed": "".join(c.content or "" for c in streamed),
                "streamed_chunks": len(streamed),
            },
            indent=1,
            default=str,
        )
    )


asyncio.run(main())
