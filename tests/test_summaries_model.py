"""Summaries by a real model interface (CallableModel with real functions, and a real provider
over HTTP to the local wire-protocol server): failures never kill the run, the summarizer's
own window bounds its input, the fidelity check, cost through the ledger."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from _provider_cases import Make, make, server, srv
from agent_adapter import (
    CallableModel,
    ImagePart,
    Message,
    ModelContextOverflow,
    ModelError,
    ModelRequest,
    Price,
    PriceTable,
    RunContext,
    TextPart,
    ToolCall,
)
from agent_adapter.context import (
    CompressionPolicy,
    ContextSummary,
    Summarize,
    SummarizeLongMessage,
    compress,
    estimate_tokens,
)
from agent_adapter.context._steps._summary_text import SUMMARY_HEAD
from agent_adapter.testing import ProviderServer, Reply

__all__ = ["make", "server", "srv"]


def _conversation(rounds: int = 8, pad: int = 200) -> list[Message]:
    out = [Message("system", "You are a coding agent."), Message("user", "Fix issue #42.")]
    for i in range(rounds):
        call = ToolCall(f"c{i}", "Read", json.dumps({"file_path": f"src/m{i}.py"}))
        out.append(Message("assistant", f"Reading src/m{i}.py.", (call,)))
        out.append(Message("tool", f"code {i}\n" + "x = 1\n" * pad, tool_call_id=f"c{i}"))
    out.append(Message("assistant", "All read."))
    out.append(Message("user", "Now write the fix."))
    return out


def _policy(step: object, target: int = 600, **kw: Any) -> CompressionPolicy:
    return CompressionPolicy(target_tokens=target, steps=[step], recent_turns=0, **kw)  # type: ignore[list-item]


def _reply(**fields: Any) -> str:
    return ContextSummary(**fields).model_dump_json()


def _good(request: ModelRequest) -> str:
    files = [f"src/m{i}.py" for i in range(8)]
    return _reply(task="Fix issue #42.", files_read=files, open_tasks=["Now write the fix."])


async def test_a_model_summary_is_used_and_its_cost_goes_through_the_ledger() -> None:
    seen: list[ModelRequest] = []

    def fn(request: ModelRequest) -> str:
        seen.append(request)
        return _good(request)

    model = CallableModel(fn, provider="acme", model="sum-1")
    ctx = RunContext(prices=PriceTable({"acme:sum-1": Price(1.0, 2.0)}))
    out, report = await compress(
        _conversation(), _policy(Summarize(model=model, keep_recent_messages=2)), ctx=ctx
    )
    assert out[1].role == "user" and out[1].text.startswith(SUMMARY_HEAD)
    assert "src/m7.py" in out[1].text and "Fix issue #42." in out[1].text
    (entry,) = ctx.ledger.entries
    assert entry.stage == "summary" and entry.cost_usd
    assert report.summary_cost_usd == pytest.approx(entry.cost_usd)
    request = seen[0]
    assert request.stage == "summary" and request.response_format is not None
    system, user = request.messages
    assert system.role == "system" and "DATA" in system.text
    assert "<transcript>" in user.text and "Reading src/m0.py." in user.text


async def test_non_text_parts_reach_the_summarizer_as_placeholders() -> None:
    seen: list[str] = []

    def fn(request: ModelRequest) -> str:
        seen.append(request.messages[-1].text)
        return _good(request)

    messages = _conversation()
    image = ImagePart(data="iVBORw0KGgo" * 500, media_type="image/png")
    messages.insert(2, Message("user", (TextPart("look at this"), image)))
    await compress(messages, _policy(Summarize(model=CallableModel(fn), keep_recent_messages=2)))
    assert "[image: image/png]" in seen[0] and "iVBORw0KGgo" not in seen[0]


async def test_a_summarizer_raising_mid_run_leaves_the_history_unchanged() -> None:
    def fn(request: ModelRequest) -> str:
        raise RuntimeError("connection reset")

    messages = _conversation()
    step = Summarize(model=CallableModel(fn), keep_recent_messages=2)
    out, report = await compress(messages, _policy(step))
    assert all(a is b for a, b in zip(out, messages, strict=True)) and len(out) == len(messages)
    assert [(f.step, f.error_type) for f in report.failures] == [("summarize", "ModelError")]
    with pytest.raises(ModelError):
        await compress(messages, _policy(step, on_step_error="raise"))


async def test_a_timing_out_summarizer_is_a_step_failure() -> None:
    async def fn(request: ModelRequest) -> str:
        await asyncio.sleep(5)
        return _good(request)

    step = Summarize(model=CallableModel(fn), keep_recent_messages=2, timeout_s=0.05)
    messages = _conversation()
    out, report = await compress(messages, _policy(step))
    assert [f.error_type for f in report.failures] == ["ModelTimeout"]
    assert all(a is b for a, b in zip(out, messages, strict=True))


@pytest.mark.parametrize(
    "text", ["Error: rate limit exceeded, try again later", "{}", '{"task": 3}', ""]
)
async def test_an_invalid_reply_skips_the_step_and_never_becomes_a_summary(text: str) -> None:
    messages = _conversation()
    step = Summarize(model=CallableModel(lambda r: text), keep_recent_messages=2)
    out, report = await compress(messages, _policy(step))
    assert not report.failures
    assert all(a is b for a, b in zip(out, messages, strict=True))
    # visible in the report: explain() gives the cause, not the steps' keep limits
    assert report.summary_invalid_replies == 1
    assert "no usable summary 1 time " in report.explain()
    assert "keep_first" not in report.explain()


async def test_explain_names_the_step_that_failed() -> None:
    async def fn(request: ModelRequest) -> str:
        await asyncio.sleep(5)
        return _good(request)

    step = Summarize(model=CallableModel(fn), keep_recent_messages=2, timeout_s=0.05)
    _, report = await compress(_conversation(), _policy(step))
    assert "Steps that failed and were skipped: summarize (ModelTimeout)." in report.explain()


async def test_a_205k_token_history_against_a_200k_summarizer_window() -> None:
    window = 200_000
    sizes: list[int] = []

    def fn(request: ModelRequest) -> str:
        tokens = estimate_tokens(list(request.messages))
        sizes.append(tokens)
        if tokens > window:
            raise ModelContextOverflow("prompt is too long", tokens=tokens, limit=window)
        return _reply(task="Fix issue #42.", files_read=["src/m0.py"])

    messages = _conversation(rounds=40, pad=3_420)
    assert estimate_tokens(messages) > 205_000
    model = CallableModel(fn, context_window=window)
    step = Summarize(model=model, keep_recent_messages=2)
    out, report = await compress(messages, _policy(step, target=4_000))
    assert not report.failures and len(sizes) >= 2 and max(sizes) <= window
    assert report.reached_target and out[1].text.startswith(SUMMARY_HEAD)
    assert sum(m.text.startswith(SUMMARY_HEAD) for m in out) == 1  # chunks fold into one


async def test_the_fidelity_check_adds_what_the_model_left_out() -> None:
    ctx = RunContext()
    events: list[Any] = []
    ctx.subscribe(events.append)

    def fn(request: ModelRequest) -> str:  # names only one of the eight files
        return _reply(task="Fix issue #42.", files_read=["src/m0.py"])

    step = Summarize(model=CallableModel(fn), keep_recent_messages=2)
    out, report = await compress(_conversation(), _policy(step), ctx=ctx)
    assert all(f"src/m{i}.py" in out[1].text for i in range(8))
    (event,) = [e for e in events if e.name == "context.summary"]
    assert event.data["probes"] > event.data["found"] >= 1 and event.data["added"] >= 7
    assert 0 < event.data["coverage"] < 1
    # the report carries the same coverage (the model's own, before the additions)
    assert (report.summary_probes, report.summary_probes_found) == (
        event.data["probes"],
        event.data["found"],
    )
    assert report.summary_coverage == event.data["coverage"]


async def test_the_report_has_no_coverage_without_a_model_summary() -> None:
    out, report = await compress(_conversation(), _policy(Summarize(keep_recent_messages=2)))
    assert out[1].text.startswith(SUMMARY_HEAD)  # the extractive summary was made
    assert (report.summary_probes, report.summary_coverage) == (0, None)


async def test_on_missing_retry_asks_once_more_with_the_missing_names() -> None:
    asked: list[str] = []

    def fn(request: ModelRequest) -> str:
        asked.append(request.messages[-1].text)
        if len(asked) == 1:
            return _reply(task="Fix issue #42.", files_read=["src/m0.py"])
        return _good(request)

    step = Summarize(model=CallableModel(fn), keep_recent_messages=2, on_missing="retry")
    out, report = await compress(_conversation(), _policy(step))
    assert len(asked) == 2 and "src/m5.py" in asked[1].split("left these out")[1]
    assert "src/m7.py" in out[1].text
    # coverage counts the retried reply (all eight files), not the first (one file of them)
    assert report.summary_probes >= 8 and report.summary_probes_found >= 8


async def test_three_parallel_results_in_the_newest_turn_against_a_131k_window() -> None:
    """The newest turn alone is over the target: the last-resort pass summarizes its results;
    the summarizer counts denser than chars/4, overflows once per result, and each retry is
    strictly smaller and fits."""
    window = 131_072
    sent: list[tuple[int, bool]] = []

    def fn(request: ModelRequest) -> str:
        tokens = sum(len(m.text) for m in request.messages) // 2  # denser than chars/4
        fits = tokens <= window
        sent.append((tokens, fits))
        if not fits:
            raise ModelContextOverflow("too long", tokens=tokens, limit=window)
        return "The log names src/app/big.py and ends with KeyError: 'port'."

    calls = tuple(ToolCall(f"p{i}", "Bash", json.dumps({"command": f"job {i}"})) for i in range(3))
    results = [
        Message("tool", f"result {i}\n" + "y" * size, tool_call_id=f"p{i}")
        for i, size in enumerate((270_000, 210_000, 189_000))
    ]
    messages = [
        Message("user", "run the three jobs"),
        Message("assistant", "", calls),
        *results,
    ]
    summarizer = CallableModel(fn, context_window=window)
    policy = CompressionPolicy(
        target_tokens=int(window * 0.6),
        steps=[Summarize()],
        recent_turns=0,
        if_still_too_long=SummarizeLongMessage(model=summarizer, bigger_than_tokens=10_000),
    )
    out, report = await compress(messages, policy)
    assert not report.failures and report.reached_target
    assert [m.tool_call_id for m in out[2:]] == ["p0", "p1", "p2"] and out[1] is messages[1]
    first_overflow = next(i for i, (_, fits) in enumerate(sent) if not fits)
    retry = sent[first_overflow + 1]
    assert retry[0] < sent[first_overflow][0] and retry[1]


# ---------------------------------------------------------------------------------------------
# a real provider over HTTP


async def test_summarize_with_a_real_provider_over_http(srv: ProviderServer, make: Make) -> None:
    srv.add(Reply(text=_good(None), finish_reason="stop"))  # type: ignore[arg-type]
    model = make("chat")
    ctx = RunContext()
    out, report = await compress(
        _conversation(), _policy(Summarize(model=model, keep_recent_messages=2)), ctx=ctx
    )
    assert out[1].text.startswith(SUMMARY_HEAD) and "src/m3.py" in out[1].text
    (request,) = srv.requests
    body = request.body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "ContextSummary"
    assert body["messages"][0]["role"] == "system"
    assert [e.stage for e in ctx.ledger.entries] == ["summary"]
    assert not report.failures


async def test_a_real_provider_failing_is_a_step_failure(srv: ProviderServer, make: Make) -> None:
    srv.add(Reply.server_error())
    messages = _conversation()
    model = make("chat")
    out, report = await compress(messages, _policy(Summarize(model=model, keep_recent_messages=2)))
    assert report.failures and report.failures[0].step == "summarize"
    assert all(a is b for a, b in zip(out, messages, strict=True))


async def test_compaction_that_cannot_reach_the_target_does_not_summarize_again() -> None:
    calls: list[int] = []

    def fn(request: ModelRequest) -> str:
        calls.append(1)
        return _good(request)

    step = Summarize(model=CallableModel(fn), keep_recent_messages=2)
    policy = _policy(step, target=80)  # below what must stay: unreachable
    out, report = await compress(_conversation(), policy)
    assert len(calls) == 1 and not report.reached_target
    assert report.if_still_too_long == "keep" and report.steps[0].step == "summarize"
    again, report2 = await compress(out, policy, force=True)
    assert len(calls) == 1  # the summary alone is never summarized again
    assert all(a is b for a, b in zip(again, out, strict=True))
    assert not report2.reached_target


async def test_a_model_that_repeats_an_item_gets_each_item_once() -> None:
    """SmolLM2-135M's reply under llama.cpp's grammar: one item repeated to fill a list."""

    def fn(request: ModelRequest) -> str:
        return _reply(
            task="Fix issue #42.",
            files_read=["src/m0.py", " src/m0.py ", "src/m0.py", ""],
            commands=["test_empty"] * 3,
        )

    out, _ = await compress(_conversation(), _policy(Summarize(model=CallableModel(fn))))
    assert out[1].text.count("src/m0.py") == 1 and out[1].text.count("test_empty") == 1


async def test_a_made_up_task_and_made_up_paths_never_reach_the_summary() -> None:
    """SmolLM2-135M on a real Claude Code session wrote ``Task: [Task: [Task: ...`` and a
    working directory of ``1.1.1.2.3.4...``: the task is the user's words again, and a path
    the span does not hold verbatim is dropped (a path that is there stays)."""
    ctx = RunContext()
    events: list[Any] = []
    ctx.subscribe(events.append)

    def fn(request: ModelRequest) -> str:
        return _reply(
            task="Task: [Task: [Task: [Task:",
            working_directory="1.1.1.2.3.4.5.6",
            files_read=["src/m3.py", "src/made_up.py"],
            files_changed=["lib/nowhere.py"],
            identifiers=["`test_index.py::test_index`", "#42", "parse_config/2", "Reading()"],
        )

    step = Summarize(model=CallableModel(fn), keep_recent_messages=2)
    out, _ = await compress(_conversation(), _policy(step), ctx=ctx)
    summary = out[1].text
    assert "Task: Fix issue #42." in summary and "[Task:" not in summary
    assert "1.1.1.2" not in summary and "made_up" not in summary and "nowhere" not in summary
    assert "src/m3.py" in summary
    assert "test_index" not in summary and "parse_config" not in summary
    assert "#42" in summary and "Reading()" in summary  # in the span: "Reading src/m0.py."
    (event,) = [e for e in events if e.name == "context.summary"]
    assert event.data["dropped"] == 5
