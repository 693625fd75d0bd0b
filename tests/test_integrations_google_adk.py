"""Google ADK with compression_callback: the real LlmAgent / Runner loop, ADK's Gemini model
(google-genai) over real HTTP to the local server, thought signatures on every call, and a
SqliteSessionService on disk to resume from.

google-adk needs google-genai below 3 while the dev extra pins google-genai 3, so this module
runs where google-adk is installed next to it (pip install --no-deps google-adk and its few
import-time dependencies; ADK runs on google-genai 3 here) and is skipped elsewhere."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.models import Gemini
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

import _prefix_cases as pc
from _integration_cases import (
    FINAL,
    STEPS,
    assert_all_valid,
    fired,
    history,
    policy,
    read_file,
    request_tokens,
    tool_replies,
)
from agent_adapter import ConfigError
from agent_adapter.context import CompactionStates, CompressionReport
from agent_adapter.integrations.google_adk import compression_callback
from agent_adapter.testing import ProviderServer, Reply

TASK = "Read src/mod_0.py to src/mod_5.py one at a time and tell me the retries setting."
APP, USER = "reader-app", "u1"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)


def _replies(**kw: Any) -> list[Reply]:
    """tool_replies() without call ids (Gemini sends none), each call with a signed thought."""
    return [
        Reply(
            thinking=f"step {i}",
            signature=base64.b64encode(f"sig_{i}".encode()).decode(),
            tool_calls=r.tool_calls,
        )
        if r.tool_calls
        else r
        for i, r in enumerate(tool_replies(with_ids=False, **kw))
    ]


def _runner(
    server: ProviderServer,
    service: Any,
    reports: list[CompressionReport] | None,
    states: CompactionStates | None = None,
) -> Runner:
    callback = (
        None
        if reports is None
        else compression_callback(policy(), on_report=reports.append, states=states)
    )
    agent = LlmAgent(
        name="reader",
        model=Gemini(model="gemini-2.5-flash", base_url=server.url),
        instruction="You are a careful code reader.",
        tools=[read_file],
        before_model_callback=callback,
    )
    return Runner(agent=agent, app_name=APP, session_service=service)


async def _run(runner: Runner, session_id: str, text: str) -> str:
    final = ""
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            final = "".join(p.text or "" for p in event.content.parts if not p.thought)
    return final


def _responses(events: list[Any]) -> list[Any]:
    return [
        p.function_response
        for e in events
        if e.content
        for p in e.content.parts or []
        if p.function_response
    ]


async def test_runner_compresses_mid_loop_and_resumes_from_the_session_db(tmp_path: Path) -> None:
    db = str(tmp_path / "sessions.db")
    reports: list[CompressionReport] = []
    with ProviderServer(_replies()) as server:
        service = SqliteSessionService(db)
        session = await service.create_session(app_name=APP, user_id=USER)
        assert await _run(_runner(server, service, reports), session.id, TASK) == FINAL
        first = server.requests
        # a new process: a new service on the same file, a new runner, no compaction state
        server.add(*_replies(start=STEPS)[-3:])
        resumed = SqliteSessionService(db)
        runner = _runner(server, resumed, reports, CompactionStates())
        assert await _run(runner, session.id, "Two more?") == FINAL
        requests = server.requests
        stored = await resumed.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert len(first) == STEPS + 1 and len(requests) == len(reports) == STEPS + 4
    assert all(r.protocol == "gemini" for r in requests)
    assert_all_valid(requests)
    hits = fired(reports)
    assert hits and 0 < hits[0] < STEPS
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)
    # the resumed run: compressed again from the session's full record
    assert not reports[STEPS + 1].skipped and reports[STEPS + 1].prefix_tokens == 0
    assert reports[STEPS + 1].messages_before >= 2 * STEPS + 3
    # every call went out with its signed thought (Gemini 3 rejects a call without one)
    for r in requests:
        for content in history(r):
            parts = content.get("parts", [])
            if any("functionCall" in p for p in parts):
                assert any(p.get("thoughtSignature") for p in parts), content
    # the session keeps every event: all results in full
    assert stored is not None
    results = _responses(stored.events)
    assert len(results) == STEPS + 2
    assert results[0].response == {"result": read_file("src/mod_0.py")}
    assert len(history(requests[-1])) < len([e for e in stored.events if e.content])


async def test_without_the_callback_every_request_carries_the_whole_history(
    tmp_path: Path,
) -> None:
    sizes: dict[str, list[int]] = {}
    for name, reports in (("plain", None), ("compressed", [])):
        with ProviderServer(_replies()) as server:
            service = SqliteSessionService(str(tmp_path / f"{name}.db"))
            session = await service.create_session(app_name=APP, user_id=USER)
            await _run(_runner(server, service, reports), session.id, TASK)
            sizes[name] = [request_tokens(r) for r in server.requests]
    assert sizes["compressed"][0] == sizes["plain"][0]
    assert sizes["compressed"][-1] < sizes["plain"][-1] * 0.7


# -- compact once, then append (issue 20): the session is the conversation --------------------


async def _session_run(
    states: Any, session_id: str = "prefix", user: str = USER
) -> tuple[list[Any], list[CompressionReport]]:
    """Two user turns of one session, ROUNDS tool rounds each: past the threshold."""
    reports: list[CompressionReport] = []
    with ProviderServer(pc.turn_replies(0, with_ids=False, signed=True)) as server:
        service = InMemorySessionService()
        await service.create_session(app_name=APP, user_id=user, session_id=session_id)
        agent = LlmAgent(
            name="reader",
            model=Gemini(model="gemini-2.5-flash", base_url=server.url),
            instruction=pc.INSTRUCTIONS,
            tools=[pc.read_file],
            before_model_callback=compression_callback(
                pc.policy(), on_report=reports.append, states=states
            ),
        )
        runner = Runner(agent=agent, app_name=APP, session_service=service)
        for turn, text in enumerate(pc.TURNS):
            if turn:
                server.add(*pc.turn_replies(turn, with_ids=False, signed=True))
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(
                user_id=user, session_id=session_id, new_message=message
            ):
                pass
        requests = server.requests
    return requests, reports


async def test_each_call_sends_the_previous_request_plus_the_new_contents() -> None:
    requests, reports = await _session_run(CompactionStates())
    assert len(requests) == len(reports) == 2 * (pc.ROUNDS + 1)
    assert_all_valid(requests)
    assert pc.measure(requests, reports).compactions >= 2
    assert pc.assert_appends(requests, reports) >= len(requests) // 2
    assert all(r.tokens_after <= r.threshold_tokens for r in reports)
    before = pc.measure(*await _session_run(False))
    pc.assert_better("Google ADK", pc.measure(requests, reports), before)


async def test_the_session_is_the_conversation_key() -> None:
    """One state a session (the first contents' fingerprint changes while the history is
    shorter than them); another session id, or another user's session of the same id,
    another state."""
    states = CompactionStates()
    await _session_run(states, "s1")
    assert len(states) == 1
    await _session_run(states, "s2")
    assert len(states) == 2
    await _session_run(states, "s1", user="u2")
    assert len(states) == 3


def test_states_must_be_compaction_states() -> None:
    with pytest.raises(ConfigError, match="states must be a CompactionStates"):
        compression_callback(policy(), states=[])  # type: ignore[arg-type]
