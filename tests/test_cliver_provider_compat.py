"""0.3.0a5's ``cliver_core.provider``: a ``Provider`` subclass of the user's drives the loop
(through ``ProviderPort``), and this version's protocol providers (``OpenAIProvider``,
``AnthropicProvider``, the brand classes) answer 0.3.0a5's ``chat`` / ``stream`` over real
HTTP on agent_adapter's SDK providers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from _cliver_helpers import binding as server_binding
from agent_adapter import (
    Message,
    ModelError,
    ModelOutputInvalid,
    ModelRequest,
    ModelTimeout,
    RunContext,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    run_tool_loop,
)
from agent_adapter import ToolCall as WireCall
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import (
    AgentCore,
    CapabilityNotSupported,
    CLIverMessage,
    CLIverMessageChunk,
    ModelBinding,
    ModelBindings,
    tool,
)
from cliver_core._messages import ToolCallChunk, UsageInfo
from cliver_core._provider_port import ProviderPort
from cliver_core.provider import CLIverRequest, CLIverResponse, Provider
from cliver_core.provider.providers import create_provider, resolve_provider_class
from cliver_core.provider.providers.anthropic import AnthropicProvider
from cliver_core.provider.providers.deepseek import DeepSeekOpenAIProvider
from cliver_core.provider.providers.ollama import OllamaProvider
from cliver_core.provider.providers.openai import OpenAIProvider


@tool(description="Add two numbers.", safety="safe")
def add(a: int, b: int) -> str:
    """Add two numbers.

    Args:
        a: the first.
        b: the second.
    """
    return str(a + b)


def _call(call_id: str, a: int, b: int) -> dict[str, Any]:
    arguments = json.dumps({"a": a, "b": b})
    return {"id": call_id, "type": "function", "function": {"name": "add", "arguments": arguments}}


class Scripted(Provider):
    """A 0.3.0a5-style provider of the user's: a tool call, then the sum as the answer."""

    protocol = "openai"
    brand = "scripted"

    def __init__(self) -> None:
        super().__init__("key", "http://unused")
        self.requests: list[CLIverRequest] = []

    async def chat(self, request: CLIverRequest) -> CLIverResponse:
        self.requests.append(request)
        last = request.messages[-1]
        if last.role == "tool":
            message = CLIverMessage(role="assistant", content=f"the sum is {last.content}")
            return CLIverResponse(message=message, usage=UsageInfo(input_tokens=9, output_tokens=4))
        native = {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("call_1", 2, 3)],
            "reasoning_content": "I should add",
        }
        return CLIverResponse(
            message=CLIverMessage.from_native(native, "openai"),
            usage=UsageInfo(input_tokens=5, output_tokens=2),
        )

    async def stream(self, request: CLIverRequest) -> AsyncIterator[CLIverMessageChunk]:
        self.requests.append(request)
        last = request.messages[-1]
        if last.role == "tool":
            yield CLIverMessageChunk(vendor_ext={"reasoning_content": "done"})
            yield CLIverMessageChunk(content="the sum ")
            yield CLIverMessageChunk(content=f"is {last.content}")
            native = {"role": "assistant", "content": f"the sum is {last.content}"}
            yield CLIverMessageChunk(
                native=native, usage=UsageInfo(input_tokens=8, output_tokens=3)
            )
            return
        yield CLIverMessageChunk(
            tool_call_chunks=[
                ToolCallChunk(index=0, id="call_7", name="add", args_delta='{"a": 4,')
            ]
        )
        yield CLIverMessageChunk(tool_call_chunks=[ToolCallChunk(index=0, args_delta=' "b": 5}')])
        native = {"role": "assistant", "content": None, "tool_calls": [_call("call_7", 4, 5)]}
        yield CLIverMessageChunk(native=native, usage=UsageInfo(input_tokens=6, output_tokens=2))


def test_the_binding_keeps_the_users_provider() -> None:
    mine = Scripted()
    binding = ModelBinding.llm(model="m", provider=mine)
    assert binding.get_provider() is mine  # as 0.3.0a5
    port = binding._port()
    assert isinstance(port, ProviderPort) and port.target is mine
    assert binding._port() is port  # adapted once
    assert (port.provider, port.model, port.protocol) == ("scripted", "m", "openai")
    assert binding.name == "scripted:m"


async def test_a_users_provider_drives_agent_chat() -> None:
    mine = Scripted()
    agent = AgentCore(
        ModelBindings(llm=ModelBinding.llm(model="m1", provider=mine, temperature=0.2)),
        [add],
        builtin_system_prompt="You add.",
    )
    response = await agent.chat("what is 2 + 3?", options={"max_tokens": 64})
    # the tool's str result is JSON-quoted, as 0.3.0a5 sends it
    assert response.message.content == 'the sum is "5"'
    assert response.usage_total.input_tokens == 14 and response.usage_total.output_tokens == 6
    first, second = mine.requests
    assert first.model == "m1" and [t.name for t in first.tools or []] == ["add"]
    assert first.tools is not None and first.tools[0].parameters["required"] == ["a", "b"]
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.messages[0].content == "You add."
    assert first.options == {"temperature": 0.2, "max_tokens": 64}
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "tool"]
    echoed = second.messages[2]
    assert echoed.native is not None and echoed.native["reasoning_content"] == "I should add"
    assert second.messages[3].tool_call_id == "call_1" and second.messages[3].content == '"5"'


async def test_a_users_provider_drives_agent_stream() -> None:
    mine = Scripted()
    agent = AgentCore(ModelBindings(llm=ModelBinding.llm(model="m1", provider=mine)), [add])
    chunks = [c async for c in agent.stream("what is 4 + 5?")]
    text = "".join(c.content or "" for c in chunks)
    assert text == 'the sum is "9"'
    assert any(c.vendor_ext.get("reasoning_content") == "done" for c in chunks)
    assert chunks[-1].usage is not None and chunks[-1].usage.input_tokens == 14
    assert mine.requests[1].messages[-1].content == '"9"'


async def test_the_port_runs_agent_adapters_own_loop() -> None:
    port = ProviderPort(Scripted(), "m1")
    ctx = RunContext()
    result = await run_tool_loop(port, [add.function_tool()], "2 + 3?", ctx=ctx)
    assert result.response.text == 'the sum is "5"' and result.iterations == 2
    assert [e.provider for e in ctx.ledger.entries] == ["scripted", "scripted"]
    assert result.usage.input_tokens == 14


async def test_the_port_maps_request_fields_and_streams() -> None:
    mine = Scripted()
    port = ProviderPort(mine, "m1")
    request = ModelRequest(
        messages=[Message("system", "s"), Message("user", "hi")],
        temperature=0.5,
        stop=["END"],
        max_output_tokens=10,
        response_format="json",
        options={"thinking": {"type": "enabled"}},
    )
    events = [e async for e in port.stream(request)]
    sent = mine.requests[0]
    assert sent.options == {
        "thinking": {"type": "enabled"},
        "temperature": 0.5,
        "stop": ["END"],
        "max_tokens": 10,
        "response_format": {"type": "json_object"},
    }
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [d.arguments for d in deltas] == ['{"a": 4,', ' "b": 5}']
    end = events[-1]
    assert isinstance(end, StreamEnd)
    assert end.response.message.tool_calls[0].id == "call_7"
    assert end.response.finish_reason == "tool_calls"


async def test_a_stream_without_native_is_assembled() -> None:
    class NoNative(Scripted):
        async def stream(self, request: CLIverRequest) -> AsyncIterator[CLIverMessageChunk]:
            yield CLIverMessageChunk(content="par")
            yield CLIverMessageChunk(content="tial")
            yield CLIverMessageChunk(tool_call_chunks=[ToolCallChunk(index=0, name="add")])
            yield CLIverMessageChunk(tool_call_chunks=[ToolCallChunk(index=0, args_delta="{}")])

    port = ProviderPort(NoNative(), "m")
    events = [e async for e in port.stream(ModelRequest(messages=[Message("user", "x")]))]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["par", "tial"]
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.response.text == "partial"
    call = end.response.message.tool_calls[0]
    assert call.name == "add" and call.id.startswith("call_")


async def test_provider_failures_are_model_errors() -> None:
    class Flaky(Scripted):
        def __init__(self, error: Exception) -> None:
            super().__init__()
            self.error = error

        async def chat(self, request: CLIverRequest) -> CLIverResponse:
            raise self.error

    class Status(Exception):
        status_code = 503

    request = ModelRequest(messages=[Message("user", "x")])
    with pytest.raises(ModelError) as caught:
        await ProviderPort(Flaky(Status("down")), "m").generate(request)
    assert isinstance(caught.value.__cause__, Status)
    with pytest.raises(ModelTimeout):
        await ProviderPort(Flaky(TimeoutError()), "m").generate(request)
    with pytest.raises(CapabilityNotSupported):
        await ProviderPort(Flaky(CapabilityNotSupported("no")), "m").generate(request)

    class Wrong(Scripted):
        async def chat(self, request: CLIverRequest) -> Any:
            return {"content": "a dict"}

    with pytest.raises(ModelOutputInvalid, match="not a CLIverResponse"):
        await ProviderPort(Wrong(), "m").generate(request)


async def test_a_failing_users_provider_fails_over() -> None:
    class Down(Scripted):
        async def chat(self, request: CLIverRequest) -> CLIverResponse:
            error = RuntimeError("overloaded")
            error.status_code = 529  # type: ignore[attr-defined]
            raise error

    with ProviderServer([Reply(text="backup answer")]) as server:
        bindings = ModelBindings(
            llm=[ModelBinding.llm(model="m", provider=Down()), server_binding(server)]
        )
        response = await AgentCore(bindings).chat("hi")
        assert response.message.content == "backup answer"
        await bindings.aclose()


# -- this version's protocol providers ----------------------------------------------------


async def test_openai_provider_chat_and_stream_over_http() -> None:
    replies = [
        Reply(text="hello there", thinking="hmm", input_tokens=11, output_tokens=3),
        Reply(text="streamed", thinking="mm"),
        Reply(tool_calls=[WireCall("t1", "add", '{"a": 1, "b": 1}')]),
    ]
    with ProviderServer(replies) as server:
        provider = OpenAIProvider(api_key="test", base_url=server.openai_url)
        request = CLIverRequest(
            messages=[
                CLIverMessage(role="system", content="be brief"),
                CLIverMessage(role="user", content="hi"),
            ],
            tools=[add],
            model="gpt-x",
            options={"temperature": 0.1, "max_tokens": 20, "vendor_knob": 1},
        )
        response = await provider.chat(request)
        assert response.message.content == "hello there"
        assert response.message.native == {
            "role": "assistant",
            "content": "hello there",
            "reasoning_content": "hmm",
        }
        assert response.usage == UsageInfo(input_tokens=11, output_tokens=3)
        assert response.request_info is not None
        assert response.request_info["system_prompt"] == "be brief"
        body = server.requests[0].body
        assert body["model"] == "gpt-x" and body["temperature"] == 0.1
        assert body["max_tokens"] == 20 and body["vendor_knob"] == 1  # extra_body
        assert body["messages"][0] == {"role": "system", "content": "be brief"}
        assert body["tools"][0]["function"]["name"] == "add"

        chunks = [c async for c in provider.stream(request)]
        assert "".join(c.content or "" for c in chunks) == "streamed"
        assert chunks[-1].native == {
            "role": "assistant",
            "content": "streamed",
            "reasoning_content": "mm",
        }
        assert any(c.vendor_ext.get("reasoning_content") for c in chunks)

        chunks = [c async for c in provider.stream(request)]
        pieces = [p for c in chunks for p in c.tool_call_chunks or []]
        assert pieces[0].id == "t1" and pieces[0].name == "add"
        native = chunks[-1].native
        assert native is not None and native["tool_calls"][0]["function"]["name"] == "add"
        await provider.close()


async def test_anthropic_provider_over_http() -> None:
    with ProviderServer([Reply(text="bonjour", thinking="t", signature="sig")]) as server:
        provider = AnthropicProvider(api_key="test", base_url=server.url)
        request = CLIverRequest(
            messages=[
                CLIverMessage(role="system", content="sys"),
                CLIverMessage(role="user", content="hi"),
            ],
            model="claude-x",
            options={"max_tokens": 50},
        )
        response = await provider.chat(request)
        assert response.message.content == "bonjour"
        native = response.message.native
        assert native is not None and native["role"] == "assistant"
        assert [b["type"] for b in native["content"]] == ["thinking", "text"]
        body = server.requests[0].body
        assert body["max_tokens"] == 50 and body["model"] == "claude-x"
        assert body["system"][0]["text"] == "sys"
        await provider.close()


async def test_this_versions_provider_as_a_binding_drives_the_loop() -> None:
    replies = [Reply(tool_calls=[WireCall("t1", "add", '{"a": 2, "b": 2}')]), Reply(text="four")]
    with ProviderServer(replies) as server:
        provider = OpenAIProvider(api_key="test", base_url=server.openai_url)
        binding = ModelBinding.llm(model="gpt-x", provider=provider)
        port = binding._port()
        result = await run_tool_loop(port, [add.function_tool()], "2 + 2?")
        assert result.response.text == "four"
        tool_message = server.requests[1].body["messages"][-1]
        assert (tool_message["role"], tool_message["tool_call_id"]) == ("tool", "t1")
        assert tool_message["content"] == '"4"'  # a str result JSON-quoted, as 0.3.0a5
        await provider.close()


def test_create_provider_selects_brands_as_0_3_0a5() -> None:
    deepseek = create_provider(api_key="k", provider_name="DeepSeek")
    assert isinstance(deepseek, DeepSeekOpenAIProvider)
    assert deepseek.base_url == "https://api.deepseek.com/v1"
    assert resolve_provider_class("ollama") is OllamaProvider
    assert resolve_provider_class("ollama", protocol="anthropic") is AnthropicProvider
    generic = create_provider(api_key="k", base_url="http://host/v1", provider_name="vllm")
    assert type(generic) is OpenAIProvider
    with pytest.raises(ValueError, match="No base_url for protocol 'openai'"):
        create_provider(api_key="k", provider_name="vllm")
    with pytest.raises(ValueError, match="Unknown protocol 'gemini'"):
        create_provider(api_key="k", base_url="http://h", protocol="gemini")
    assert OllamaProvider("k", "http://h").filter_options({"seed": 1, "logit_bias": {}}) == {
        "seed": 1
    }


async def test_provider_contract_and_out_of_scope_pieces() -> None:
    with pytest.raises(TypeError, match="must define protocol"):

        class NoProtocol(Provider):
            async def chat(self, request: Any) -> Any: ...

            async def stream(self, request: Any) -> Any: ...

    with pytest.raises(CapabilityNotSupported, match="transports"):
        OpenAIProvider(api_key="k", base_url="http://h", transport=object())
    provider = AnthropicProvider(api_key="k", base_url="http://h")
    with pytest.raises(CapabilityNotSupported, match="does not support embeddings"):
        await provider.embed(["x"], model="m")
    with pytest.raises(CapabilityNotSupported, match="text-to-speech"):
        await provider.tts("hi", "m")
    with pytest.raises(CapabilityNotSupported, match="video generation"):
        await provider.generate_media("p", model="m", purpose="video")
    assert OpenAIProvider("k", "http://h").media_path("rerank") == "/rerank"
    assert DeepSeekOpenAIProvider("k", "http://h").media_path("image") is None


async def test_an_image_in_the_user_message_reaches_the_wire() -> None:
    from cliver_core.media import MediaContent, MediaType, add_media_content_to_message_parts

    image = MediaContent(type=MediaType.IMAGE, data="iVBORw0KGgo=", mime_type="image/png")
    parts: list[dict[str, Any]] = [{"type": "text", "text": "what is this?"}]
    add_media_content_to_message_parts(parts, [image])
    with ProviderServer([Reply(text="a pixel")]) as server:
        provider = OpenAIProvider(api_key="test", base_url=server.openai_url)
        request = CLIverRequest(
            messages=[CLIverMessage(role="user", content=parts)], model="gpt-vision"
        )
        assert (await provider.chat(request)).message.content == "a pixel"
        sent = server.requests[0].body["messages"][0]["content"]
        assert sent[0] == {"type": "text", "text": "what is this?"}
        assert sent[1]["type"] == "image_url"
        assert sent[1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="
        await provider.close()


class QuotaExceeded(Exception):
    """A user provider's own exception."""


class _Raising(Provider):
    protocol = "openai"
    brand = "raising"

    def __init__(self) -> None:
        super().__init__("key", "http://unused")

    async def chat(self, request: CLIverRequest) -> CLIverResponse:
        raise QuotaExceeded("monthly quota used up")

    async def stream(self, request: CLIverRequest) -> AsyncIterator[CLIverMessageChunk]:
        raise QuotaExceeded("monthly quota used up")
        yield CLIverMessageChunk()  # pragma: no cover - an async generator


async def test_a_user_providers_own_exception_is_caught_as_its_type() -> None:
    """Regression: 0.3.0a5 lets it out unchanged; it came out as a ModelError only, so
    ``except QuotaExceeded`` of a 0.3.0a5 program missed it."""
    agent = AgentCore(ModelBindings(llm=ModelBinding.llm(model="m", provider=_Raising())))
    with pytest.raises(QuotaExceeded) as chat_error:
        await agent.chat("hi")
    with pytest.raises(QuotaExceeded) as stream_error:
        async for _ in agent.stream("hi"):
            pass
    for info in (chat_error, stream_error):
        assert isinstance(info.value, ModelError)
        assert isinstance(info.value.__cause__, QuotaExceeded)


class _Thinking(Provider):
    protocol = "anthropic"
    brand = "thinking"

    def __init__(self) -> None:
        super().__init__("key", "http://unused")

    async def chat(self, request: CLIverRequest) -> CLIverResponse:
        raise NotImplementedError

    async def stream(self, request: CLIverRequest) -> AsyncIterator[CLIverMessageChunk]:
        yield CLIverMessageChunk(vendor_ext={"thinking": "let me think"})
        yield CLIverMessageChunk(vendor_ext={"citations": "[1] example.com"})
        yield CLIverMessageChunk(content="Hello")
        native = {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]}
        yield CLIverMessageChunk(native=native, usage=UsageInfo(input_tokens=3, output_tokens=1))


async def test_a_user_providers_vendor_ext_reaches_the_stream_as_0_3_0a5_sends_it() -> None:
    """Regression: the thinking key came from the binding's default protocol ("openai":
    ``reasoning_content``; 0.3.0a5 uses the provider's own for a ``provider=`` binding), and
    other keys (``citations``) were dropped."""
    agent = AgentCore(ModelBindings(llm=ModelBinding.llm(model="m", provider=_Thinking())))
    chunks = [c async for c in agent.stream("hi")][:-1]  # the last one carries the trace
    assert [(c.content, c.vendor_ext) for c in chunks] == [
        (None, {"thinking": "let me think"}),
        (None, {"citations": "[1] example.com"}),
        ("Hello", {}),
    ]
