"""Streaming written against cliver-core 0.3.0a5: agent.stream() through a tool call, text
and reasoning deltas as they come, and the final trace sentinel chunk
(``vendor_ext["__llm_trace__"]``); binding default options under call-site ones; a call-site
on_event handler that records every event it is given.

The model endpoint is $CLIVER_COMPAT_OPENAI_URL; prints one JSON object.
"""

import asyncio
import json
import os

from cliver_core import AgentCore, ModelBinding, ModelBindings, tool


@tool(description="Look a term up in the glossary.", safety="safe")
def lookup(term: str) -> list[dict]:
    return [{"text": f"{term}: reasoning and acting, interleaved"}]


async def main() -> None:
    seen: list[list] = []

    async def on_event(event) -> None:
        seen.append([type(event).__name__, event.event.value, getattr(event, "tool_name", None)])

    binding = ModelBinding.llm(
        model="deepseek-chat",
        api_key="test",
        base_url=os.environ["CLIVER_COMPAT_OPENAI_URL"],
        temperature=0.3,
        max_tokens=128,
    )
    agent = AgentCore(ModelBindings(llm=binding), [lookup])

    chunks = []
    async for chunk in agent.stream(
        "Explain ReAct in one sentence.",
        system_prompt="Be brief.",
        options={"max_tokens": 64},
        on_event=on_event,
    ):
        chunks.append(chunk)
    await agent.aclose()

    last = chunks[-1]
    trace = json.loads(last.vendor_ext["__llm_trace__"])
    print(
        json.dumps(
            {
                "chunks": [
                    {
                        "content": c.content,
                        "vendor_ext": {
                            k: v for k, v in c.vendor_ext.items() if k != "__llm_trace__"
                        },
                        "sentinel": "__llm_trace__" in c.vendor_ext,
                        "native": c.native,
                        "usage": c.usage is not None,
                        "tool_call_chunks": c.tool_call_chunks,
                    }
                    for c in chunks
                ],
                "text": "".join(c.content or "" for c in chunks),
                "reasoning": "".join(c.vendor_ext.get("reasoning_content", "") for c in chunks),
                "sentinel_is_last": "__llm_trace__" in last.vendor_ext
                and all("__llm_trace__" not in c.vendor_ext for c in chunks[:-1]),
                "sentinel_content": last.content,
                "events": seen,
                "trace_keys": [{k: type(v).__name__ for k, v in e.items()} for e in trace],
                "trace_iterations": [e["iteration"] for e in trace],
                "trace_providers": [e["provider"] for e in trace],
                "trace_usage": [
                    [e["usage"]["input_tokens"], e["usage"]["output_tokens"]] for e in trace
                ],
                "trace_request_options": [e["request"]["options"] for e in trace],
                "trace_request_system": [e["request"]["system_prompt"] for e in trace],
                "trace_request_roles": [
                    [m["role"] for m in e["request"]["messages"]] for e in trace
                ],
                "trace_request_tools": [[t["name"] for t in e["request"]["tools"]] for e in trace],
                "trace_message": [
                    [
                        e["message"].get("content"),
                        [c["name"] for c in e["message"].get("tool_calls") or []],
                    ]
                    for e in trace
                ],
            },
            indent=1,
            default=str,
        )
    )


asyncio.run(main())
