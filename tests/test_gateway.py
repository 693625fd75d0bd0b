"""``agent-adapter gateway`` as a process in front of the local wire-protocol server, driven by
the official SDKs replaying real sessions (issue 36): what reached the upstream (the provider's
rules, compressed when over the threshold, append-only between compactions, headers unchanged,
the latest user message kept) and what came back (unchanged)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from _gateway import FixedServer, Gateway, gateway, gateways, replay_points
from _replay import natives
from agent_adapter.cli import load_trace
from agent_adapter.context import estimate_tokens
from agent_adapter.context.formats import check, convert
from agent_adapter.gateway._body import BodyReader
from agent_adapter.testing import ProviderServer, RecordedRequest, Reply

THRESHOLD = 30_000
CLAUDE_SESSION = "claude-code-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
SWE_SESSION = "mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-6197.traj.json"


@pytest.fixture(scope="module")
def upstream() -> Iterator[ProviderServer]:
    with ProviderServer(default=Reply(text="done", input_tokens=10, output_tokens=3)) as server:
        yield server


@pytest.fixture(scope="module")
def gw(upstream: ProviderServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    args = [
        "--openai-upstream", upstream.openai_url,
        "--anthropic-upstream", upstream.url,
        "--gemini-upstream", upstream.url,
        "--threshold", str(THRESHOLD),
    ]  # fmt: skip
    with gateway(args, tmp_path_factory.mktemp("gw")) as g:
        yield g


def _tokens(messages: list[Any], fmt: str) -> int:
    return estimate_tokens(convert(messages, fmt).messages)


def _size(messages: list[Any]) -> int:
    return len(json.dumps(messages))


class Replay:
    """What one replayed conversation sent up and got back, call by call."""

    def __init__(self, fmt: str, field: str) -> None:
        self.fmt, self.field = fmt, field
        self.sent: list[list[Any]] = []
        self.raw: list[str] = []  # each request's conversation array, as sent
        self.compactions = 0
        self.appends = 0

    def saw(
        self,
        history: list[Any],
        recorded: RecordedRequest,
        headers: httpx.Headers,
        *,
        thinking: bool | None = None,
    ) -> None:
        sent = recorded.body[self.field]
        assert check(sent, self.fmt, thinking=thinking) == []
        parsed = BodyReader().read(recorded.raw, self.field)
        assert parsed.text is not None and parsed.span is not None
        array = parsed.text[parsed.span[0] : parsed.span[1]]
        assert sent[-1] == history[-1]  # the latest user message (or tool results) kept
        before = _tokens(history, self.fmt)
        if before > THRESHOLD:
            assert _size(sent) < _size(history)
            assert int(headers["x-agent-adapter-tokens-after"]) < before
        if int(headers["x-agent-adapter-tokens-after"]) > THRESHOLD:  # why, in the report's words
            assert headers["x-agent-adapter-reason"]
        skipped = headers.get("x-agent-adapter-skipped")
        if skipped is None:
            self.compactions += 1
        elif self.sent:  # no step ran: the previous request plus the new messages
            previous = self.sent[-1]
            assert sent[: len(previous)] == previous
            # byte for byte: the previous request's array is the start of this one's
            assert array.startswith(self.raw[-1][:-1])
            self.appends += sent != history
        self.sent.append(sent)
        self.raw.append(array)


#: what a proxy does not forward as it came: the connection's own, and the body's length
_NOT_FORWARDED = {"host", "content-length", "connection", "keep-alive", "transfer-encoding"}


def _same_headers(sent: httpx.Headers, recorded: RecordedRequest) -> None:
    """Every header the SDK sent reached the upstream unchanged (auth included)."""
    for name, value in sent.items():
        if name.lower() not in _NOT_FORWARDED:
            assert recorded.headers[name.lower()] == value, name


def _session(data_dir: Path, name: str) -> list[Any]:
    return list(load_trace(data_dir / name).messages)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_anthropic_sdk_replays_a_claude_code_session(
    gw: Gateway, upstream: ProviderServer, data_dir: Path, stream: bool
) -> None:
    session = _session(data_dir, CLAUDE_SESSION)
    client = anthropic.Anthropic(base_url=gw.url, api_key="sk-ant-test", max_retries=0)
    replay = Replay("anthropic", "messages")
    user_id = f"user_test_session_{uuid.uuid4()}"
    for end in replay_points(session, 10, user_roles=("user",)):
        history = session[:end]
        upstream.clear()
        raw = client.messages.with_raw_response.create(
            model="claude-sonnet-4-5",
            max_tokens=64,
            system="You are a coding agent.",
            messages=history,
            metadata={"user_id": user_id},
            stream=stream,
            extra_headers={"anthropic-beta": "context-1m-2025-08-07", "x-trace": "t-1"},
        )
        if stream:
            events = list(raw.parse())
            text = "".join(
                e.delta.text
                for e in events
                if e.type == "content_block_delta" and e.delta.type == "text_delta"
            )
            assert events[0].type == "message_start"
            assert events[-1].type == "message_stop"
        else:
            message = raw.parse()
            text = message.content[0].text
            assert message.usage.output_tokens == 3
        assert text == "done"
        (recorded,) = upstream.requests
        _same_headers(raw.http_request.headers, recorded)
        assert recorded.headers["anthropic-beta"] == "context-1m-2025-08-07"
        assert recorded.headers["x-trace"] == "t-1"
        assert recorded.body["system"] == "You are a coding agent."
        assert recorded.body["metadata"] == {"user_id": user_id}
        replay.saw(history, recorded, raw.headers)
    assert replay.compactions >= 1 and replay.appends >= 1
    counts = gw.metrics()
    assert counts["compacted"] >= 1 and counts["tokens_before"] > counts["tokens_after"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_openai_sdk_replays_a_coding_agent_run(
    gw: Gateway, upstream: ProviderServer, data_dir: Path, stream: bool
) -> None:
    session = _session(data_dir, SWE_SESSION)
    client = openai.OpenAI(base_url=gw.openai_url, api_key="sk-test", max_retries=0)
    replay = Replay("openai", "messages")
    key = f"run-{uuid.uuid4()}"
    for end in replay_points(session, 10, user_roles=("user", "tool")):
        history = session[:end]
        upstream.clear()
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o", messages=history, prompt_cache_key=key, stream=stream
        )
        if stream:
            chunks = list(raw.parse())
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            completion = raw.parse()
            text = completion.choices[0].message.content or ""
            assert completion.id.startswith("chatcmpl-")
            assert completion.usage is not None and completion.usage.completion_tokens == 3
        assert text == "done"
        (recorded,) = upstream.requests
        _same_headers(raw.http_request.headers, recorded)
        assert recorded.headers["authorization"] == "Bearer sk-test"
        assert recorded.body["prompt_cache_key"] == key
        replay.saw(history, recorded, raw.headers)
    assert replay.compactions >= 1 and replay.appends >= 1


def test_responses_and_gemini_routes_compress(
    gw: Gateway, upstream: ProviderServer, data_dir: Path
) -> None:
    messages = convert(_session(data_dir, SWE_SESSION)[:120], "openai").messages
    items = natives("responses", messages)
    client = openai.OpenAI(base_url=gw.openai_url, api_key="sk-test", max_retries=0)
    upstream.clear()
    raw = client.responses.with_raw_response.create(model="gpt-4o", input=items)
    assert raw.parse().output_text == "done"
    sent = upstream.requests[0].body["input"]
    assert _size(sent) < _size(items) and check(sent, "openai") == []
    assert sent[-1] == items[-1]

    contents = natives("gemini", messages)
    upstream.clear()
    reply = httpx.post(
        f"{gw.url}/v1beta/models/gemini-2.5-pro:generateContent",
        json={"contents": contents},
        headers={"x-goog-api-key": "g-test"},
        timeout=60,
    )
    assert reply.status_code == 200
    (recorded,) = upstream.requests
    assert recorded.headers["x-goog-api-key"] == "g-test"
    sent = recorded.body["contents"]
    assert _size(sent) < _size(contents) and check(sent, "gemini") == []
    assert sent[-1] == contents[-1]
    assert int(reply.headers["x-agent-adapter-tokens-after"]) <= THRESHOLD
    upstream.clear()
    with httpx.stream(
        "POST",
        f"{gw.url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
        json={"contents": contents},
        headers={"x-goog-api-key": "g-test"},
        timeout=60,
    ) as streamed:
        frames = b"".join(streamed.iter_raw())
    assert streamed.status_code == 200 and frames.startswith(b"data: ")
    (recorded,) = upstream.requests
    assert recorded.stream and recorded.query == {"alt": "sse"}
    assert recorded.body["contents"] == sent  # the same conversation: the same request


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_an_upstream_overflow_is_retried_once_compressed_harder(
    gw: Gateway, upstream: ProviderServer, data_dir: Path, stream: bool
) -> None:
    session = _session(data_dir, SWE_SESSION)
    end = replay_points(session[:60], 1, user_roles=("user", "tool"))[-1]
    history = session[:end]  # under the threshold: it goes up as it came
    assert _tokens(history, "openai") < THRESHOLD
    upstream.clear()
    upstream.add(Reply.overflow(tokens=140_000, limit=128_000), Reply(text="after"))
    client = openai.OpenAI(base_url=gw.openai_url, api_key="sk-test", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=history, stream=stream, user=str(uuid.uuid4())
    )  # a conversation of its own (the other variant's state would send its retry again)
    result = raw.parse()
    text = (
        "".join(c.choices[0].delta.content or "" for c in result if c.choices)
        if stream
        else result.choices[0].message.content
    )
    assert text == "after"
    first, retry = upstream.requests
    assert first.body["messages"] == history
    sent = retry.body["messages"]
    assert _size(sent) < _size(history) and check(sent, "openai") == []
    assert sent[-1] == history[-1]
    assert raw.headers["x-agent-adapter-retried"] == "context_overflow"


def test_an_unreadable_body_goes_up_as_it_came(gw: Gateway, upstream: ProviderServer) -> None:
    before = gw.metrics().get("fail_open", 0)
    upstream.clear()
    body = b'{"model": "gpt-4o", "messages": [ not json'
    reply = httpx.post(
        f"{gw.openai_url}/chat/completions",
        content=body,
        headers={"authorization": "Bearer sk-x", "content-type": "application/json"},
    )
    assert reply.status_code == 200  # what the upstream answered, as it came
    (recorded,) = upstream.requests
    assert recorded.raw == body and recorded.headers["authorization"] == "Bearer sk-x"
    assert gw.metrics()["fail_open"] == before + 1


def test_bodies_headers_and_streams_come_back_byte_for_byte(tmp_path: Path, data_dir: Path) -> None:
    body = b'{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi \\u00e9"}]}'
    chunks = [
        b"event: message_start\ndata: {}\n\n",
        b'event: content_block_delta\ndata: {"delta":"a"}\n\n',
        b"event: message_stop\ndata: {}\n\n",
    ]
    headers = [
        ("request-id", "req_42"),
        ("anthropic-ratelimit-tokens-remaining", "1000"),
        ("set-cookie", "a=1"),
        ("set-cookie", "b=2"),
    ]
    session = _session(data_dir, CLAUDE_SESSION)
    with (
        FixedServer(body, headers, chunks) as fixed,
        gateway(
            [
                "--anthropic-upstream",
                fixed.url,
                "--openai-upstream",
                fixed.url,
                "--gemini-upstream",
                "http://127.0.0.1:1",
                "--threshold",
                "30k",
            ],
            tmp_path,
        ) as g,
    ):
        history = session[:40]
        payload = {"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": history}
        sent = json.dumps(payload).encode()
        plain = httpx.post(
            f"{g.url}/v1/messages?beta=true",
            content=sent,
            headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
        )
        assert plain.content == body
        assert plain.headers.get_list("set-cookie") == ["a=1", "b=2"]
        assert plain.headers["request-id"] == "req_42"
        assert plain.headers["anthropic-ratelimit-tokens-remaining"] == "1000"
        path, up_headers, raw = fixed.requests[-1]
        assert path == "/v1/messages" and raw == sent  # under the threshold: the same bytes
        assert up_headers["x-api-key"] == "k" and up_headers["anthropic-version"] == "2023-06-01"
        payload["stream"] = True
        with httpx.stream("POST", f"{g.url}/v1/messages", json=payload) as streamed:
            got = list(streamed.iter_raw())
        assert b"".join(got) == b"".join(chunks)
        # passed through: count_tokens and any other path, bytes both ways
        counted = httpx.post(f"{g.url}/v1/messages/count_tokens", content=sent)
        assert counted.content == body and fixed.requests[-1][0] == "/v1/messages/count_tokens"
        assert fixed.requests[-1][2] == sent
        models = httpx.get(f"{g.url}/v1/models", headers={"authorization": "Bearer z"})
        assert models.content == body and fixed.requests[-1][1]["authorization"] == "Bearer z"
        assert g.metrics()["passed_through"] >= 2
        down = httpx.post(f"{g.url}/v1beta/models/gemini-2.5-pro:generateContent", json={})
        assert down.status_code == 502 and down.json()["error"]["message"].endswith("ConnectError")
    assert "sk-" not in g.log.read_text() and "Bearer" not in g.log.read_text()


def test_two_gateways_sharing_redis_send_what_one_sends(
    gw: Gateway, upstream: ProviderServer, data_dir: Path, redis_url: str, tmp_path: Path
) -> None:
    session = _session(data_dir, SWE_SESSION)
    points = replay_points(session, 8, user_roles=("user", "tool"))

    def run(urls: list[str]) -> list[Any]:
        conversation = str(uuid.uuid4())
        upstream.clear()
        for i, end in enumerate(points):
            client = openai.OpenAI(base_url=urls[i % len(urls)], api_key="sk-test", max_retries=0)
            client.chat.completions.create(
                model="gpt-4o",
                messages=session[:end],
                extra_headers={"x-agent-adapter-conversation": conversation},
            )
        assert all("x-agent-adapter-conversation" not in r.headers for r in upstream.requests)
        return [r.body["messages"] for r in upstream.requests]

    args = [
        "--openai-upstream", upstream.openai_url, "--threshold", str(THRESHOLD),
        "--state", redis_url,
    ]  # fmt: skip
    with gateways([args, args], tmp_path) as (a, b):
        shared = run([a.openai_url, b.openai_url])
    alone = run([gw.openai_url])
    assert shared == alone
    assert any(_size(s) < _size(session[:end]) for s, end in zip(shared, points, strict=True))


def test_a_langchain_agent_through_the_gateway(
    gw: Gateway, upstream: ProviderServer, data_dir: Path
) -> None:
    from langchain_openai import ChatOpenAI

    messages = convert(_session(data_dir, SWE_SESSION)[:120], "openai").messages
    history = natives("langchain", messages)
    model = ChatOpenAI(model="gpt-4o", base_url=gw.openai_url, api_key="sk-lc", max_retries=0)
    upstream.clear()
    reply = model.invoke(history)
    assert reply.content == "done"
    (recorded,) = upstream.requests
    sent = recorded.body["messages"]
    assert recorded.headers["authorization"] == "Bearer sk-lc"
    assert check(sent, "openai") == []
    assert _tokens(sent, "openai") < _tokens(natives("openai", messages), "openai")
