"""What each provider puts on the wire (read off the server's record), the overflow bodies of
OpenAI-compatible servers, and the settings each API refuses."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from _provider_cases import CALL, WEATHER, Make, build, make, request, server, srv
from agent_adapter import (
    ConfigError,
    JsonSchema,
    Message,
    MissingDependency,
    ModelContextOverflow,
    ModelRequest,
    ToolCall,
    model_profile,
)
from agent_adapter.providers import DeepSeekModel, OpenAIChatModel
from agent_adapter.testing import ProviderServer, Reply

__all__ = ["make", "server", "srv"]

SCHEMA = JsonSchema(name="weather", schema={"type": "object", "properties": {}})


async def _sent(make: Make, srv: ProviderServer, kind: str, **fields: Any) -> dict[str, Any]:
    srv.add(Reply(text="ok"))
    await make(kind).generate(request(**fields))
    body: dict[str, Any] = srv.requests[-1].body
    return body


async def test_chat_sends_openai_fields(make: Make, srv: ProviderServer) -> None:
    body = await _sent(
        make,
        srv,
        "chat",
        tools=[WEATHER],
        tool_choice="get_weather",
        response_format=SCHEMA,
        max_output_tokens=256,
        temperature=0.2,
        top_p=0.9,
        stop=["END"],
        seed=7,
        options={"user": "u-1"},
    )
    assert body["messages"][0] == {"role": "system", "content": "You are terse."}
    assert body["tools"] == [WEATHER.openai_schema()]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert body["response_format"]["json_schema"]["name"] == "weather"
    assert body["max_completion_tokens"] == 256 and "max_tokens" not in body
    assert (body["temperature"], body["top_p"], body["stop"], body["seed"]) == (
        0.2,
        0.9,
        ["END"],
        7,
    )
    assert body["user"] == "u-1"


async def test_compatible_servers_get_max_tokens(make: Make, srv: ProviderServer) -> None:
    body = await _sent(make, srv, "deepseek", max_output_tokens=100)
    assert body["max_tokens"] == 100 and "max_completion_tokens" not in body
    assert body["model"] == "deepseek-chat"


async def test_streaming_chat_asks_for_usage(make: Make, srv: ProviderServer) -> None:
    srv.add(Reply(text="ok"))
    _ = [e async for e in make("chat").stream(request())]
    assert srv.requests[0].body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize(
    ("style", "tokens", "limit"),
    [
        ("openai", 130_000, 128_000),
        ("deepseek", 66_343, 65_536),
        ("vllm", 41_648, 32_768),
        ("llamacpp", 14_429, 8_192),
    ],
)
async def test_overflow_bodies_of_compatible_servers(
    make: Make, srv: ProviderServer, style: Any, tokens: int, limit: int
) -> None:
    srv.add(Reply.overflow(tokens=tokens, limit=limit, style=style))
    with pytest.raises(ModelContextOverflow) as caught:
        await make("chat", provider="local").generate(request())
    assert (caught.value.tokens, caught.value.limit) == (tokens, limit)
    assert caught.value.provider == "local"


async def test_responses_sends_items_and_refuses_stop(make: Make, srv: ProviderServer) -> None:
    body = await _sent(
        make, srv, "responses", tools=[WEATHER], tool_choice="required", response_format="json"
    )
    assert body["input"][0] == {"role": "system", "content": "You are terse."}
    assert body["tools"][0]["name"] == "get_weather" and body["tools"][0]["type"] == "function"
    assert body["tool_choice"] == "required"
    assert body["text"] == {"format": {"type": "json_object"}}
    srv.clear()
    with pytest.raises(ConfigError, match="stop"):
        await make("responses").generate(request(stop=["END"]))
    with pytest.raises(ConfigError, match="seed"):
        await make("responses").generate(request(seed=1))
    assert srv.requests == []


async def test_anthropic_moves_system_out_and_defaults_max_tokens(
    make: Make, srv: ProviderServer
) -> None:
    body = await _sent(make, srv, "anthropic", tools=[WEATHER], tool_choice="required")
    assert body["system"] == [{"type": "text", "text": "You are terse."}]
    assert [m["role"] for m in body["messages"]] == ["user"]
    profile = model_profile("anthropic", "claude-sonnet-4-5")
    assert profile is not None and body["max_tokens"] == profile.max_output_tokens
    assert body["tools"] == [WEATHER.anthropic_schema()]
    assert body["tool_choice"] == {"type": "any"}
    body = await _sent(make, srv, "anthropic", max_output_tokens=50, response_format=SCHEMA)
    assert body["max_tokens"] == 50
    assert body["output_config"]["format"]["type"] == "json_schema"


async def test_anthropic_sends_one_turns_tool_results_in_one_user_message(
    make: Make, srv: ProviderServer
) -> None:
    calls = (ToolCall("t1", "get_weather", '{"city": "a"}'), ToolCall("t2", "get_weather", "{}"))
    history = [
        Message("user", "weather?"),
        Message("assistant", "", tool_calls=calls),
        Message("tool", "sunny", tool_call_id="t1"),
        Message("tool", "rain", tool_call_id="t2"),
        Message("user", "thanks"),
    ]
    srv.add(Reply(text="ok"))
    await make("anthropic").generate(ModelRequest(messages=history))
    sent = srv.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "user"]
    assert [b["tool_use_id"] for b in sent[2]["content"]] == ["t1", "t2"]


async def test_anthropic_sends_sampling_fields_its_sdk_no_longer_names(
    make: Make, srv: ProviderServer
) -> None:
    # anthropic 2.x's messages.create() has no temperature / top_p keyword: passed as one,
    # the SDK raised TypeError before any request; they go in the body as the API names them
    body = await _sent(make, srv, "anthropic", temperature=0.2, top_p=0.9)
    assert (body["temperature"], body["top_p"]) == (0.2, 0.9)


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"temperature": 1.5}, "temperature"),
        ({"seed": 3}, "seed"),
        ({"response_format": "json"}, "schema"),
    ],
)
async def test_anthropic_refuses_what_the_api_cannot_take(
    make: Make, srv: ProviderServer, fields: dict[str, Any], words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        await make("anthropic").generate(request(**fields))
    assert srv.requests == []


async def test_anthropic_counts_cached_input_as_input(make: Make, srv: ProviderServer) -> None:
    srv.add(Reply(text="ok", input_tokens=1000, cache_read_tokens=600, cache_write_tokens=300))
    response = await make("anthropic").generate(request())
    assert response.usage.input_tokens == 1000
    assert (response.usage.cache_read_tokens, response.usage.cache_write_tokens) == (600, 300)
    assert response.raw.usage.input_tokens == 100  # the uncached rest, as Anthropic reports it


async def test_gemini_sends_system_instruction_and_config(make: Make, srv: ProviderServer) -> None:
    body = await _sent(
        make,
        srv,
        "gemini",
        tools=[WEATHER],
        tool_choice="get_weather",
        response_format=SCHEMA,
        max_output_tokens=64,
        stop=["END"],
    )
    assert body["systemInstruction"]["parts"] == [{"text": "You are terse."}]
    assert [c["role"] for c in body["contents"]] == ["user"]
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "get_weather"
    calling = body["toolConfig"]["functionCallingConfig"]
    assert calling == {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}
    config = body["generationConfig"]
    assert config["maxOutputTokens"] == 64 and config["stopSequences"] == ["END"]
    assert config["responseMimeType"] == "application/json"


async def test_gemini_call_ids_are_unique_across_replies(make: Make, srv: ProviderServer) -> None:
    srv.add(Reply(tool_calls=[CALL]), Reply(tool_calls=[CALL]))
    model = make("gemini")
    first = await model.generate(request(tools=[WEATHER]))
    second = await model.generate(request(tools=[WEATHER]))
    assert first.message.tool_calls[0].id != second.message.tool_calls[0].id


def test_deepseek_needs_its_key(monkeypatch: pytest.MonkeyPatch, srv: ProviderServer) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY"):
        DeepSeekModel("deepseek-chat")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "from-env")
    model = DeepSeekModel("deepseek-chat")
    assert model.base_url == "https://api.deepseek.com" and model.provider == "deepseek"


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"timeout_s": 0}, "timeout_s"),
        ({"max_retries": -1}, "max_retries"),
        ({"context_window": 0}, "context_window"),
        ({"provider": "a:b"}, "provider"),
        ({"max_tokens_field": "tokens"}, "max_tokens_field"),
    ],
)
def test_bad_settings_name_the_setting(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        OpenAIChatModel("gpt-4o", api_key="k", **kwargs)


async def test_a_message_list_is_not_mutated(make: Make, srv: ProviderServer) -> None:
    messages = [Message("user", "hi")]
    req = request(*messages)
    srv.add(Reply(text="ok"))
    await make("anthropic").generate(req)
    assert messages == [Message("user", "hi")] and len(req.messages) == 2


def test_context_window_is_exposed(srv: ProviderServer) -> None:
    model = build("chat", srv, provider="vllm", context_window=32_768)
    assert model.context_window == 32_768
    assert model.cache_key_fields() == {
        "provider": "vllm",
        "model": "gpt-4o",
        "base_url": srv.openai_url,
    }


@pytest.mark.parametrize(
    ("module", "cls", "extra"),
    [
        ("openai", "OpenAIChatModel", "openai"),
        ("openai", "OpenAIResponsesModel", "openai"),
        ("anthropic", "AnthropicModel", "anthropic"),
        ("google.genai", "GeminiModel", "gemini"),
    ],
)
def test_a_missing_sdk_names_its_extra(module: str, cls: str, extra: str) -> None:
    code = (
        "import sys\n"
        f"sys.modules[{module!r}] = None\n"
        "from agent_adapter import providers, MissingDependency\n"
        "try:\n"
        f"    getattr(providers, {cls!r})('m', api_key='k')\n"
        "except MissingDependency as e:\n"
        "    print(e.extra)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == extra
    assert issubclass(MissingDependency, ImportError)


def test_importing_the_providers_imports_no_sdk() -> None:
    code = (
        "import sys, agent_adapter.providers, agent_adapter.testing\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'google.genai', 'uvicorn') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_responses_sends_the_reply_items_back_as_they_came(
    make: Make, srv: ProviderServer
) -> None:
    srv.add(
        Reply(thinking="plan", signature="RU5D", text="Checking.", tool_calls=[CALL]),
        Reply(text="ok"),
    )
    model = make("responses")
    question = Message("user", "Weather?")
    first = await model.generate(request(question, tools=[WEATHER]))
    output = [item.model_dump(mode="json", exclude_none=True) for item in first.raw.output]
    result = Message("tool", "sunny", tool_call_id="call_1")
    await model.generate(request(question, first.message, result, tools=[WEATHER]))
    sent = srv.requests[1].body["input"]
    assert [i.get("type") for i in sent[2:5]] == ["reasoning", "message", "function_call"]
    assert [i["id"] for i in sent[2:5]] == [i["id"] for i in output]
    assert sent[2]["encrypted_content"] == "RU5D"
    assert sent[5] == {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
