"""Reasoning sent back, written against cliver-core 0.3.0a5: a reasoning model's tool loop and
its continuations, on the OpenAI protocol with each kind of binding (GLM, DeepSeek, a generic
OpenAI-compatible server, Ollama), chat and stream; the history continued in-process and
restored from model_dump(); an Anthropic tool loop with signed thinking, continued from a
restored history. 0.3.0a5 replays every reply's wire message as it came, so each earlier
turn's ``reasoning_content`` (Anthropic: its signed thinking blocks) is in every later request
(DeepSeek and GLM reject a tool-call turn without it).

Then explicit ``None`` call options (and binding params), which 0.3.0a5 sends as ``null``.

The endpoints are $CLIVER_COMPAT_OPENAI_URL and $CLIVER_COMPAT_ANTHROPIC_URL; prints one JSON
object.
"""

import asyncio
import json
import os

from cliver_core import AgentCore, CLIverMessage, ModelBinding, ModelBindings, tool


@tool(description="Look an order up.", safety="safe")
def lookup_order(order_id: str) -> list[dict]:
    return [{"text": f"order {order_id}: shipped"}]


def openai_binding(**kwargs) -> ModelBinding:
    return ModelBinding.llm(
        api_key="test", base_url=os.environ["CLIVER_COMPAT_OPENAI_URL"], **kwargs
    )


async def loop(agent: AgentCore, streamed: bool, prompt: str, **kwargs) -> CLIverMessage:
    if not streamed:
        return (await agent.chat(prompt, **kwargs)).message
    chunks = [chunk async for chunk in agent.stream(prompt, **kwargs)]
    # a stream gives no message: the app stores the text (the tool-call turn's reasoning
    # went back inside the run)
    return CLIverMessage(role="assistant", content="".join(c.content or "" for c in chunks))


async def main() -> None:
    out: dict = {}
    cases = [
        ("glm", dict(model="glm-4.6", provider_name="glm"), False),
        ("deepseek", dict(model="deepseek-reasoner", provider_name="deepseek"), False),
        ("generic", dict(model="qwq-32b"), False),
        ("ollama", dict(model="qwen3", provider_name="ollama"), False),
        ("glm_stream", dict(model="glm-4.6", provider_name="glm"), True),
        ("generic_stream", dict(model="qwq-32b"), True),
    ]
    for name, binding, streamed in cases:
        agent = AgentCore(ModelBindings(llm=openai_binding(**binding)), [lookup_order])
        first = await loop(agent, streamed, "Where is order 7?")
        history = [CLIverMessage(role="user", content="Where is order 7?"), first]
        # continued in-process, then from a stored copy
        await agent.chat("Thanks. And order 8?", conversation=history)
        restored = [
            CLIverMessage.model_validate(d)
            for d in json.loads(json.dumps([m.model_dump(exclude={"trace"}) for m in history]))
        ]
        await agent.chat("One more: order 9?", conversation=restored)
        await agent.aclose()
        out[name] = {"first": first.content, "native_keys": sorted(first.native or {})}

    anthropic = AgentCore(
        ModelBindings(
            llm=ModelBinding.llm(
                model="claude-sonnet-4-5",
                api_key="test",
                base_url=os.environ["CLIVER_COMPAT_ANTHROPIC_URL"],
                protocol="anthropic",
            )
        ),
        [lookup_order],
    )
    answer = await anthropic.chat("Where is order 7?")
    history = [CLIverMessage(role="user", content="Where is order 7?"), answer.message]
    restored = [
        CLIverMessage.model_validate(d)
        for d in json.loads(json.dumps([m.model_dump(exclude={"trace"}) for m in history]))
    ]
    await anthropic.chat("And order 8?", conversation=restored)
    await anthropic.aclose()
    out["anthropic"] = {"answer": answer.message.content}

    # explicit None options: sent as null, under and over binding params
    agent = AgentCore(
        ModelBindings(llm=openai_binding(model="glm-4.6", provider_name="glm", top_p=None))
    )
    await agent.chat(
        "Hi", options={"temperature": None, "max_tokens": None, "seed": None, "stop": None}
    )
    await agent.chat("Hi again", options={"top_p": 0.5, "user": None, "tool_choice": None})
    await agent.aclose()
    anthropic = AgentCore(
        ModelBindings(
            llm=ModelBinding.llm(
                model="claude-sonnet-4-5",
                api_key="test",
                base_url=os.environ["CLIVER_COMPAT_ANTHROPIC_URL"],
                protocol="anthropic",
            )
        )
    )
    await anthropic.chat("Hi", options={"temperature": None, "top_k": None})
    await anthropic.aclose()
    print(json.dumps(out, indent=1, default=str))


asyncio.run(main())
