"""ProviderServer as users meet it: the official SDKs (sync and async) and plain HTTP against it,
the exact error bodies it sends, the record of what it received, its script and lifecycle."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from agent_adapter import ConfigError, ToolCall
from agent_adapter.testing import ProviderServer, Reply

CALL = ToolCall(id="call_9", name="lookup", arguments='{"q": "x"}')


@pytest.fixture(scope="module")
def server() -> Any:
    with ProviderServer() as running:
        yield running


@pytest.fixture
def srv(server: ProviderServer) -> ProviderServer:
    server.clear()
    return server


def _post(url: str, body: Any) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, dict(e.headers), e.read()


def _sse(raw: bytes) -> list[tuple[str | None, str]]:
    """(event, data) of each frame."""
    frames = []
    for block in raw.decode().replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event = None
        data = []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        frames.append((event, "\n".join(data)))
    return frames


def test_the_sync_openai_sdk_sees_chat_completions(srv: ProviderServer) -> None:
    srv.add(Reply(text="hello", tool_calls=[CALL], input_tokens=11, output_tokens=4))
    with openai.OpenAI(base_url=srv.openai_url, api_key="k", max_retries=0) as client:
        completion = client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
    message = completion.choices[0].message
    assert message.content == "hello"
    assert message.tool_calls is not None
    assert message.tool_calls[0].function.arguments == CALL.arguments
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.usage is not None and completion.usage.prompt_tokens == 11
    [sent] = srv.requests
    assert (sent.protocol, sent.path, sent.model, sent.stream) == (
        "chat",
        "/v1/chat/completions",
        "gpt-4o",
        False,
    )
    assert sent.body["messages"] == [{"role": "user", "content": "hi"}]
    assert sent.headers["authorization"] == "Bearer k" and sent.size > 0


def test_chat_streams_end_with_done_and_usage_only_when_asked(srv: ProviderServer) -> None:
    url = f"{srv.openai_url}/chat/completions"
    srv.add(Reply(text="abcdefghij", chunk_size=4), Reply(text="abc"))
    _, headers, raw = _post(url, {"model": "m", "messages": [], "stream": True})
    frames = _sse(raw)
    assert headers["content-type"].startswith("text/event-stream")
    assert frames[-1] == (None, "[DONE]")
    chunks = [json.loads(data) for _, data in frames[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "abcdefghij"
    assert all("usage" not in c for c in chunks)
    body = {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}}
    chunks = [json.loads(data) for _, data in _sse(_post(url, body)[2])[:-1]]
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 5


def test_responses_events_as_the_sdk_parses_them(srv: ProviderServer) -> None:
    srv.add(Reply(text="hi there", tool_calls=[CALL]))
    client = openai.OpenAI(base_url=srv.openai_url, api_key="k", max_retries=0)
    with client, client.responses.stream(model="gpt-5", input="hi") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
    assert "response.function_call_arguments.delta" in kinds
    assert final.output_text == "hi there"
    assert [item.type for item in final.output] == ["message", "function_call"]


async def test_the_async_anthropic_sdk_sees_messages(srv: ProviderServer) -> None:
    srv.add(Reply(text="hey", tool_calls=[CALL], input_tokens=50, cache_read_tokens=20))
    client = anthropic.AsyncAnthropic(base_url=srv.url, api_key="k", max_retries=0)
    messages: Any = [{"role": "user", "content": "x"}]
    async with (
        client,
        client.messages.stream(
            model="claude-haiku-4-5", max_tokens=64, messages=messages
        ) as stream,
    ):
        kinds = [event.type async for event in stream]
        message = await stream.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens) == (30, 20)
    assert "anthropic-version" in srv.requests[0].headers


def test_gemini_generate_and_stream(srv: ProviderServer) -> None:
    srv.add(Reply(text="one", input_tokens=7), Reply(text="two parts", chunk_size=3))
    # closed by its context manager: a client left to the collector leaves its kept-alive
    # socket open until the collector runs, inside whichever test runs then (a ResourceWarning
    # that the warnings-as-errors setting turned into another test's failure)
    with genai.Client(
        api_key="k", http_options=genai_types.HttpOptions(base_url=srv.url)
    ) as client:
        response = client.models.generate_content(model="gemini-2.5-pro", contents="x")
        pieces = [c.text for c in client.models.generate_content_stream(model="m", contents="x")]
    assert response.text == "one"
    assert response.usage_metadata is not None
    assert response.usage_metadata.prompt_token_count == 7
    assert "".join(p or "" for p in pieces) == "two parts" and len(pieces) == 3
    first, second = srv.requests
    assert first.path.endswith("/models/gemini-2.5-pro:generateContent")
    assert second.stream and second.query == {"alt": "sse"}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            "/v1/chat/completions",
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens. However, "
                    "your messages resulted in 130000 tokens. Please reduce the length of the "
                    "messages.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
        ),
        (
            "/v1/responses",
            {
                "error": {
                    "message": "Your input exceeds the context window of this model. Please "
                    "adjust your input and try again.",
                    "type": "invalid_request_error",
                    "param": "input",
                    "code": "context_length_exceeded",
                }
            },
        ),
        (
            "/v1/messages",
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 130000 tokens > 128000 maximum",
                },
            },
        ),
        (
            "/v1beta/models/gemini-2.5-flash:generateContent",
            {
                "error": {
                    "code": 400,
                    "message": "The input token count (130000) exceeds the maximum number of "
                    "tokens allowed (128000).",
                    "status": "INVALID_ARGUMENT",
                }
            },
        ),
    ],
)
def test_overflow_bodies_are_the_providers(
    srv: ProviderServer, path: str, expected: dict[str, Any]
) -> None:
    srv.add(Reply.overflow())
    status, _, raw = _post(srv.url + path, {"model": "m"})
    body = json.loads(raw)
    body.pop("request_id", None)
    assert (status, body) == (400, expected)


def test_rate_limits_and_server_errors_in_each_protocol(srv: ProviderServer) -> None:
    srv.add(Reply.rate_limited(retry_after_s=0.25), Reply.server_error(529))
    status, headers, raw = _post(f"{srv.url}/v1/chat/completions", {})
    assert status == 429 and headers["retry-after-ms"] == "250"
    assert json.loads(raw)["error"]["code"] == "rate_limit_exceeded"
    status, _, raw = _post(f"{srv.url}/v1/messages", {})
    assert status == 529 and json.loads(raw)["error"]["type"] == "overloaded_error"


def test_sdk_errors_are_the_sdks_own(srv: ProviderServer) -> None:
    srv.add(Reply.overflow(), Reply.rate_limited(), Reply.server_error(503))
    with openai.OpenAI(base_url=srv.openai_url, api_key="k", max_retries=0) as client:
        with pytest.raises(openai.BadRequestError) as bad:
            client.chat.completions.create(model="m", messages=[])
        assert bad.value.code == "context_length_exceeded"
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="m", messages=[])
    with (
        genai.Client(api_key="k", http_options=genai_types.HttpOptions(base_url=srv.url)) as g,
        pytest.raises(genai_errors.ServerError) as server_error,
    ):
        g.models.generate_content(model="m", contents="x")
    assert server_error.value.status == "UNAVAILABLE"


def test_an_empty_queue_answers_500_that_sdks_do_not_retry(srv: ProviderServer) -> None:
    client = openai.OpenAI(base_url=srv.openai_url, api_key="k", max_retries=2)
    with client, pytest.raises(openai.InternalServerError, match="no scripted reply left"):
        client.chat.completions.create(model="m", messages=[])
    assert len(srv.requests) == 1  # x-should-retry: false


def test_default_reply_and_pending(srv: ProviderServer) -> None:
    with ProviderServer([Reply(text="first")], default=Reply(text="again")) as own:
        assert own.pending == 1
        texts = [
            json.loads(_post(f"{own.openai_url}/chat/completions", {})[2])["choices"][0]["message"][
                "content"
            ]
            for _ in range(3)
        ]
        assert texts == ["first", "again", "again"] and own.pending == 0
    with pytest.raises(ConfigError, match="not running"):
        _ = own.url


def test_unknown_paths_are_404(srv: ProviderServer) -> None:
    status, _, _ = _post(f"{srv.url}/v1/embeddings", {})
    assert status == 404 and srv.requests == []


async def test_async_context_manager() -> None:
    async with (
        ProviderServer([Reply(text="async")]) as own,
        openai.AsyncOpenAI(base_url=own.openai_url, api_key="k") as client,
    ):
        completion = await client.chat.completions.create(model="m", messages=[])
    assert completion.choices[0].message.content == "async"


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: Reply(tool_calls=[{"name": "x"}]), r"tool_calls\[0\]"),
        (lambda: Reply(tool_calls=[ToolCall("i", "n", "{bad")]), "not JSON"),
        (lambda: Reply(input_tokens=-1), "input_tokens"),
        (lambda: Reply(input_tokens=5, cache_read_tokens=6), "exceed input_tokens"),
        (lambda: Reply(delay_s=-1), "delay_s"),
        (lambda: Reply.server_error(404), "5xx"),
        (lambda: Reply(kind="nonsense"), "kind"),  # type: ignore[arg-type]
        (lambda: ProviderServer().add("text"), r"replies\[0\]"),  # type: ignore[arg-type]
    ],
)
def test_bad_scripts_name_the_field(build: Any, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        build()
