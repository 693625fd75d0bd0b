"""ModelBindings failover against real HTTP: a server answering 503 (or 429, or too slowly)
hands the call to the next binding mid-run, with the compactor called once for that
iteration; authentication and bad-request errors are not retried; every attempt and failover
is an event."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from _cliver_helpers import binding, calls, read_file, wire_messages
from agent_adapter import ModelContextOverflow, ModelError
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import AgentCore, CompactionContext, InferenceEvent, ModelBindings, UsageInfo
from cliver_core._failover import is_retryable


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    """Answers every POST with OpenAI's 401 body (invalid_api_key)."""

    hits = 0

    def do_POST(self) -> None:
        type(self).hits += 1
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps(
            {
                "error": {
                    "message": "Incorrect API key provided: sk-bad.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def unauthorized() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_503_mid_run_fails_over_and_the_compactor_runs_once_per_iteration() -> None:
    seen: list[int] = []

    def compactor(context: CompactionContext) -> None:
        seen.append(context.iteration)

    async with ProviderServer() as first, ProviderServer() as second:
        first.add(
            calls(("c1", "read_file", {"path": "a"}), input_tokens=100, output_tokens=10),
            Reply.server_error(503),
        )
        second.add(Reply(text="from the backup", input_tokens=200, output_tokens=20))
        events: list[Any] = []
        async with AgentCore(
            ModelBindings(llm=[binding(first, model="main"), binding(second, model="backup")]),
            [read_file],
            context_compactor=compactor,
            on_event=events.append,
            inference_events=True,
        ) as agent:
            response = await agent.chat("go")
        assert len(first.requests) == 2 and len(second.requests) == 1
        assert wire_messages(second, 0) == wire_messages(first, 1)  # the same history
    assert seen == [0, 1]  # not re-run for the failover attempt
    assert response.message.content == "from the backup"
    assert response.usage_total == UsageInfo(input_tokens=300, output_tokens=30)
    inference = [e for e in events if isinstance(e, InferenceEvent)]
    assert [(e.event.value, e.model) for e in inference] == [
        ("inference.started", "main"),
        ("inference.completed", "main"),
        ("inference.started", "main"),
        ("inference.error", "main"),
        ("inference.failover", "main"),
        ("inference.started", "backup"),
        ("inference.completed", "backup"),
    ]
    error = inference[3]
    assert error.data is not None and error.data["retryable"] is True
    assert inference[5].data is not None and inference[5].data["attempt"] == 1


@pytest.mark.parametrize("protocol", ["openai", "anthropic", "gemini"])
async def test_429_and_timeouts_fail_over_in_every_protocol(protocol: str) -> None:
    async with ProviderServer() as a, ProviderServer() as b, ProviderServer() as c:
        a.add(Reply.rate_limited())
        b.add(Reply(text="too late", delay_s=5))
        c.add(Reply(text="third time"))
        chain = [
            binding(a, protocol),
            binding(b, protocol, timeout_s=0.5),
            binding(c, protocol),
        ]
        async with AgentCore(ModelBindings(llm=chain)) as agent:
            response = await agent.chat("hi")
    assert response.message.content == "third time"


async def test_stream_fails_over_before_its_first_event() -> None:
    async with ProviderServer([Reply.server_error(500)]) as a, ProviderServer() as b:
        b.add(Reply(text="streamed by b"))
        async with AgentCore(ModelBindings(llm=[binding(a), binding(b)])) as agent:
            text = "".join([c.content or "" async for c in agent.stream("hi")])
    assert text == "streamed by b"


async def test_authentication_errors_are_not_retried(unauthorized: str) -> None:
    from cliver_core import ModelBinding

    async with ProviderServer([Reply(text="never")]) as backup:
        bad = ModelBinding.llm(model="m", api_key="sk-bad", base_url=unauthorized, max_retries=0)
        async with AgentCore(ModelBindings(llm=[bad, binding(backup)])) as agent:
            with pytest.raises(ModelError, match="401") as info:
                await agent.chat("hi")
        assert backup.requests == []
    assert not is_retryable(info.value)


async def test_bad_requests_are_not_retried() -> None:
    async with ProviderServer([Reply.overflow()]) as a, ProviderServer() as b:
        b.add(Reply(text="never"))
        async with AgentCore(ModelBindings(llm=[binding(a), binding(b)])) as agent:
            with pytest.raises(ModelContextOverflow):
                await agent.chat("hi")
        assert b.requests == []


async def test_the_last_binding_failing_raises_its_error() -> None:
    async with ProviderServer([Reply.server_error(502)]) as a, ProviderServer() as b:
        b.add(Reply.server_error(503))
        async with AgentCore(ModelBindings(llm=[binding(a), binding(b)])) as agent:
            with pytest.raises(ModelError, match="503"):
                await agent.chat("hi")
