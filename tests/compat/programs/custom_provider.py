"""A user Provider, written against cliver-core 0.3.0a5: a cliver_core.provider.Provider
subclass (protocol-locked, brand named) answering from a script, passed to
ModelBinding.llm(provider=...), driven by chat() and stream() through a tool call; the agent
must not close a provider it was given.

Talks to no server; prints one JSON object.
"""

import asyncio
import json

from cliver_core import AgentCore, ModelBinding, ModelBindings, tool
from cliver_core.messages import CLIverMessage, CLIverMessageChunk, ToolCall, UsageInfo
from cliver_core.provider import CLIverRequest, CLIverResponse, Provider


@tool(description="Search the docs.", safety="safe")
def search(query: str, limit: int = 3) -> list[dict]:
    return [{"text": f"{limit} hits for {query}"}]


def summarize(request: CLIverRequest) -> dict:
    return {
        "type": type(request).__name__,
        "model": request.model,
        "options": request.options,
        "tools": [[t.name, t.description, t.parameters] for t in request.tools or []],
        "messages": [
            {
                "type": type(m).__name__,
                "role": m.role,
                "content": m.content,
                "tool_calls": [[c.id, c.name, c.args] for c in m.tool_calls or []],
                "tool_call_id": m.tool_call_id,
            }
            for m in request.messages
        ],
    }


def answered(request: CLIverRequest) -> bool:
    return any(m.role == "tool" for m in request.messages)


class ScriptedProvider(Provider):
    protocol = "openai"
    brand = "scripted"

    def __init__(self) -> None:
        super().__init__(api_key="", base_url="")
        self.seen: list[dict] = []
        self.closed = False

    async def chat(self, request: CLIverRequest) -> CLIverResponse:
        self.seen.append(summarize(request))
        if answered(request):
            message = CLIverMessage(role="assistant", content="The docs have 2 hits.")
            return CLIverResponse(
                message=message, usage=UsageInfo(input_tokens=30, output_tokens=6)
            )
        call = ToolCall(id="call_s", name="search", args={"query": "bindings", "limit": "2"})
        message = CLIverMessage(role="assistant", content=None, tool_calls=[call])
        return CLIverResponse(message=message, usage=UsageInfo(input_tokens=20, output_tokens=4))

    async def stream(self, request: CLIverRequest):
        self.seen.append(summarize(request))
        if answered(request):
            for piece in ("The docs ", "have ", "2 hits."):
                yield CLIverMessageChunk(content=piece)
            native = {"role": "assistant", "content": "The docs have 2 hits."}
            usage = UsageInfo(input_tokens=31, output_tokens=7)
            yield CLIverMessageChunk(native=native, usage=usage)
            return
        yield CLIverMessageChunk(vendor_ext={"reasoning_content": "search first"})
        native = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_t",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"query": "streams"}'},
                }
            ],
        }
        yield CLIverMessageChunk(native=native, usage=UsageInfo(input_tokens=21, output_tokens=5))

    async def close(self) -> None:
        self.closed = True


async def main() -> None:
    events: list[list] = []

    async def watch(event) -> None:
        events.append([type(event).__name__, event.event.value, getattr(event, "tool_name", None)])

    provider = ScriptedProvider()
    binding = ModelBinding.llm(model="scripted-1", provider=provider, temperature=0)
    agent = AgentCore(ModelBindings(llm=binding), [search], on_event=watch)

    response = await agent.chat("Find the bindings docs.", options={"max_tokens": 100})
    chunks = [c async for c in agent.stream("Find the streaming docs.")]
    await agent.aclose()
    trace = response.message.trace or []
    stream_trace = json.loads(chunks[-1].vendor_ext["__llm_trace__"])

    print(
        json.dumps(
            {
                "provider_name": provider.provider_name(),
                "get_provider_is_the_given_one": binding.get_provider() is provider,
                "content": response.message.content,
                "usage": [response.usage.input_tokens, response.usage.output_tokens],
                "stream_text": "".join(c.content or "" for c in chunks),
                "stream_vendor_ext": [
                    {k: v for k, v in c.vendor_ext.items() if k != "__llm_trace__"} for c in chunks
                ],
                "requests": provider.seen,
                "events": events,
                "trace_keys": [{k: type(v).__name__ for k, v in e.items()} for e in trace],
                "trace_providers": [e["provider"] for e in trace],
                "stream_trace_keys": [
                    {k: type(v).__name__ for k, v in e.items()} for e in stream_trace
                ],
                "stream_trace_providers": [e["provider"] for e in stream_trace],
                "provider_closed_by_agent": provider.closed,
            },
            indent=1,
            default=str,
        )
    )


asyncio.run(main())
