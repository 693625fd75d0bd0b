"""Issue 32, item 5: every recall id a request names returns the caller's original text, or
its note says what the saved copy holds.

A step that keeps no copy (``CutLongMessages``, ``if_still_too_long="cut"``,
``SummarizeLongMessage`` without a store) may shorten a text before a saving step offloads it.
The saving step saves the caller's text (the compression's input message with the same
origin), never the shortened copy under "full text". A text that arrives already shortened
(from an earlier call) is saved as it came, and its note says so. On a memory and an SQLite
store.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_adapter import CallableModel, ModelRequest
from agent_adapter._messages import Message, ToolCall
from agent_adapter._run import RunContext
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MemoryStore,
    RemoveOldMessages,
    ShrinkToolResults,
    SQLiteStore,
    StoreError,
    SummarizeLongMessage,
    compress,
    compress_for_sync,
    recall_tool,
)

CTX = RunContext(thread_id="issue-32-item-5")
ID = re.compile(r"recall_context\(id='([0-9a-f]{32})'\)")
#: A recall note that claims the whole text.
FULL = re.compile(r"full text: call recall_context\(id='([0-9a-f]{32})'\)")
AS_SENT = re.compile(
    r"saved as sent \(already shortened\): call recall_context\(id='([0-9a-f]{32})'\)"
)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryStore()
    else:
        with SQLiteStore(tmp_path / "saved.sqlite3") as s:
            yield s


def _result(r: int, lines: int = 400) -> str:
    """A long test run's output, distinct per round, its failure on the last line."""
    body = "\n".join(f"line {r}.{i}: src/pkg/mod{i}.py ok ({'x' * 20})" for i in range(lines))
    return f"$ pytest -q tests/\n{body}\nFAILED tests/test_{r}.py::test_it - AssertionError: {r}"


def _conversation(rounds: int = 5, lines: int = 400) -> list[Message]:
    """A task, then ``rounds`` tool rounds with big results, an answer and the latest ask."""
    out = [Message("system", "You are a coding agent."), Message("user", "fix the build")]
    for r in range(rounds):
        call = ToolCall(f"c{r}", "Bash", '{"command": "pytest -q tests/"}')
        out += [
            Message("assistant", f"running the tests, try {r}", (call,)),
            Message("tool", _result(r, lines), tool_call_id=f"c{r}", name="Bash"),
        ]
    return [*out, Message("assistant", "the tests fail"), Message("user", "and now?")]


def _policy(*steps: Any, target: int = 2_000, **kw: Any) -> CompressionPolicy:
    return CompressionPolicy(
        threshold_tokens=target + 1, target_tokens=target, steps=list(steps), **kw
    )


async def _recalled(store: Any, out: list[Message]) -> dict[str, str]:
    """Every id ``out`` names -> what recall_tool returns for it."""
    tool = recall_tool(store)
    ids = {i for m in out for i in ID.findall(m.text)}
    return {i: await tool({"id": i}, CTX) for i in ids}


def _originals(messages: list[Message]) -> dict[str, str]:
    return {m.tool_call_id or "": m.text for m in messages if m.role == "tool"}


async def _assert_originals(store: Any, messages: list[Message], out: list[Message]) -> int:
    """Every id a tool result of ``out`` names recalls that result's original, byte for
    byte; returns how many ids were checked."""
    originals = _originals(messages)
    recalled = await _recalled(store, out)
    n = 0
    for m in out:
        for i in ID.findall(m.text):
            assert m.role == "tool"
            assert recalled[i] == originals[m.tool_call_id or ""], m.tool_call_id
            assert FULL.search(m.text) and not AS_SENT.search(m.text)
            n += 1
    return n


# --------------------------------------------------------------------------------------------
# a step that keeps no copy, then a saving step, in one compression


async def test_cut_then_shrink_recalls_the_original(store: Any) -> None:
    messages = _conversation()
    policy = _policy(
        CutLongMessages(max_tokens_per_message=1_000),
        ShrinkToolResults(save_to=store, bigger_than_tokens=100),
        target=3_000,
    )
    out, report = await compress(messages, policy, ctx=CTX)
    assert report.steps and [s.step for s in report.steps][:2] == [
        "cut_long_messages",
        "shrink_tool_results",
    ]
    assert await _assert_originals(store, messages, out) >= 2
    # the shortened result is cut from the original: its tail is the original's last line
    named = [m for m in out if ID.search(m.text)]
    assert all(m.text.endswith(_originals(messages)[m.tool_call_id or ""][-60:]) for m in named)


def test_cut_then_shrink_in_a_provider_format_recalls_the_original(store: Any) -> None:
    messages = _conversation()  # the same tool results, as the caller's Message list
    native: list[dict[str, Any]] = [{"role": "user", "content": "fix the build"}]
    for r in range(5):
        native += [
            {
                "role": "assistant",
                "content": f"try {r}",
                "tool_calls": [
                    {
                        "id": f"c{r}",
                        "type": "function",
                        "function": {"name": "Bash", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{r}", "content": _result(r)},
        ]
    native += [{"role": "assistant", "content": "they fail"}, {"role": "user", "content": "and?"}]
    policy = _policy(
        CutLongMessages(max_tokens_per_message=1_000),
        ShrinkToolResults(save_to=store, bigger_than_tokens=100),
        target=3_000,
    )
    out, _ = compress_for_sync(native, policy, format="openai", ctx=CTX)
    originals = _originals(messages)
    tool = recall_tool(store)
    named = [(item["tool_call_id"], i) for item in out for i in ID.findall(str(item["content"]))]
    assert len(named) >= 2
    for call_id, i in named:
        assert asyncio.run(tool({"id": i}, CTX)) == originals[call_id]


async def test_a_last_resort_saving_step_recalls_the_original(store: Any) -> None:
    messages = _conversation()
    policy = _policy(
        CutLongMessages(max_tokens_per_message=1_000),
        target=1_500,
        if_still_too_long=ShrinkToolResults(save_to=store, bigger_than_tokens=100),
    )
    out, report = await compress(messages, policy, ctx=CTX)
    assert report.if_still_too_long == "step:shrink_tool_results"
    assert await _assert_originals(store, messages, out) >= 1


async def test_summarize_long_message_then_shrink_recalls_the_original(store: Any) -> None:
    messages = _conversation()
    calls: list[ModelRequest] = []

    def summarizer(request: ModelRequest) -> str:
        calls.append(request)
        return "The test run failed. " + "It printed many module lines that were ok. " * 30

    policy = _policy(
        SummarizeLongMessage(model=CallableModel(summarizer), bigger_than_tokens=1_000),
        ShrinkToolResults(save_to=store, bigger_than_tokens=100, keep_chars=200),
        target=1_500,
    )
    out, report = await compress(messages, policy, ctx=CTX)
    assert calls, "the fake model summarized"
    assert "shrink_tool_results" in [s.step for s in report.steps]
    assert await _assert_originals(store, messages, out) >= 1
    summaries = await _recalled(store, out)
    assert not any(t.startswith("[Summary of a ") for t in summaries.values())


async def test_cut_then_summarize_long_message_with_a_store_saves_the_original(
    store: Any,
) -> None:
    messages = _conversation()
    policy = _policy(
        CutLongMessages(max_tokens_per_message=1_500),
        SummarizeLongMessage(bigger_than_tokens=500, save_to=store),
        target=1_500,
    )
    out, _ = await compress(messages, policy, ctx=CTX)
    originals = _originals(messages)
    recalled = await _recalled(store, out)
    n = 0
    for m in out:
        for i in ID.findall(m.text):
            assert m.text.startswith(f"[Summary of a {len(originals[m.tool_call_id or ''])}-")
            assert "to read it," in m.text and "as sent" not in m.text
            assert recalled[i] == originals[m.tool_call_id or ""]
            n += 1
    assert n >= 1


async def test_cut_then_remove_old_messages_saves_the_original_span(store: Any) -> None:
    messages = _conversation()
    policy = _policy(
        CutLongMessages(max_tokens_per_message=500),
        RemoveOldMessages(keep_last=3, save_to=store),
        target=600,
        recent_turns=0,
    )
    out, _ = await compress(messages, policy, ctx=CTX)
    recalled = await _recalled(store, out)
    assert recalled
    joined = "\n".join(recalled.values())
    for r in range(4):  # the rounds that went: every original result is in the saved spans
        assert _result(r) in joined
    assert "characters cut" not in joined


# --------------------------------------------------------------------------------------------
# a text that arrived already shortened: saved as sent, and the note says so


async def test_cut_by_if_still_too_long_then_shrunk_on_a_later_call(store: Any) -> None:
    # call 1: the newest result alone is over the target; "cut" cuts it (no copy is kept)
    first = [
        Message("user", "fix the build"),
        Message("assistant", "running", (ToolCall("c0", "Bash", "{}"),)),
        Message("tool", _result(0, 1_200), tool_call_id="c0", name="Bash"),
    ]
    out1, report1 = await compress(first, _policy(target=1_000, if_still_too_long="cut"))
    assert report1.if_still_too_long == "cut"
    sent = out1[2].text
    assert "characters cut" in sent and len(sent) < len(first[2].text)
    # call 2: the caller goes on from what it sent; the cut result is old now and is saved
    later = [*out1]
    for r in range(1, 4):
        later += [
            Message("assistant", f"again {r}", (ToolCall(f"c{r}", "Bash", "{}"),)),
            Message("tool", _result(r, 60), tool_call_id=f"c{r}", name="Bash"),
        ]
    later += [Message("assistant", "still failing"), Message("user", "and now?")]
    shrink = ShrinkToolResults(save_to=store, bigger_than_tokens=100, keep_chars=300)
    out2, _ = await compress(later, _policy(shrink, target=1_200, recent_turns=0), ctx=CTX)
    (cut,) = [m for m in out2 if m.tool_call_id == "c0"]
    assert not FULL.search(cut.text), "a copy of a cut text is no full text"
    (id_,) = AS_SENT.findall(cut.text)
    assert (await _recalled(store, out2))[id_] == sent  # what the caller sent, byte for byte
    # and a third call on that output keeps naming the id, saves nothing new for it
    again, _ = await compress(
        [*out2, Message("assistant", "ok"), Message("user", "go on")],
        _policy(shrink, target=1_000, recent_turns=0),
        ctx=CTX,
    )
    (cut3,) = [m for m in again if m.tool_call_id == "c0"]
    assert AS_SENT.findall(cut3.text) == [id_]


async def test_summary_that_arrived_already_shortened_says_so(store: Any) -> None:
    text = _result(0)
    cut = CutLongMessages(max_tokens_per_message=800)
    arrived, _ = await compress(  # an earlier call cut it, no store
        [
            Message("user", "fix it"),
            Message("assistant", "run", (ToolCall("c0", "Bash", "{}"),)),
            Message("tool", text, tool_call_id="c0", name="Bash"),
            Message("assistant", "failed"),
            Message("user", "why?"),
        ],
        _policy(cut, target=900, recent_turns=0),
    )
    sent = arrived[2].text
    assert "characters cut" in sent
    step = SummarizeLongMessage(bigger_than_tokens=200, save_to=store)
    out, _ = await compress(arrived, _policy(step, target=400, recent_turns=0), ctx=CTX)
    assert "to read it as sent (already shortened)," in out[2].text
    (id_,) = ID.findall(out[2].text)
    assert (await _recalled(store, out))[id_] == sent


# --------------------------------------------------------------------------------------------
# what does not change


class _DownMemoryStore(MemoryStore):
    """A MemoryStore whose saves fail."""

    def save_many_sync(self, entries: Any) -> None:
        raise StoreError("MemoryStore: down")


async def test_a_failed_save_gives_back_what_the_earlier_step_left() -> None:
    messages = _conversation()
    cut = CutLongMessages(max_tokens_per_message=1_000)
    alone, _ = await compress(messages, _policy(cut, target=3_000), ctx=CTX)
    shrink = ShrinkToolResults(save_to=_DownMemoryStore(), bigger_than_tokens=100)
    out, report = await compress(messages, _policy(cut, shrink, target=3_000), ctx=CTX)
    assert [f.step for f in report.failures] == ["shrink_tool_results"]
    assert [m.text for m in out] == [m.text for m in alone]


async def test_the_same_input_gives_the_same_ids(tmp_path: Path) -> None:
    def policy(store: Any) -> CompressionPolicy:
        return _policy(
            CutLongMessages(max_tokens_per_message=1_000),
            ShrinkToolResults(save_to=store, bigger_than_tokens=100),
            target=3_000,
        )

    with SQLiteStore(tmp_path / "a.sqlite3") as store:
        a, _ = await compress(_conversation(), policy(store), ctx=CTX)
        b, _ = await compress(_conversation(), policy(store), ctx=CTX)
    assert [m.text for m in a] == [m.text for m in b]


async def test_a_text_your_own_step_changed_is_saved_as_your_step_left_it(store: Any) -> None:
    """A redaction by a step of the caller's (MyOwnStep) is not undone by a later saving
    step: what it removed is never saved, so recall cannot hand it to the model."""
    from agent_adapter.context import MyOwnStep

    secret = "sk-live-4f9a2b7c"

    def redact(messages: list[Message]) -> list[Message]:
        return [m.with_text(m.text.replace(secret, "[REDACTED]")) for m in messages]

    messages = _conversation()
    messages = [
        m.with_text(m.text.replace("$ pytest", f"$ TOKEN={secret} pytest"))
        if m.role == "tool"
        else m
        for m in messages
    ]
    policy = _policy(
        MyOwnStep(fn=redact),
        ShrinkToolResults(save_to=store, bigger_than_tokens=100),
        target=3_000,
    )
    out, _ = await compress(messages, policy, ctx=CTX)
    recalled = await _recalled(store, out)
    assert recalled
    assert all(secret not in text and "[REDACTED]" in text for text in recalled.values())
    assert all(secret not in m.text for m in out)
