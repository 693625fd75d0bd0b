"""save_to on the steps that remove or summarize spans: what is saved, when, under whom, and
what comes back when the store fails (every store: memory, SQLite, Redis)."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ToolCall
from agent_adapter._run import RunContext, owner_scope
from agent_adapter.context import (
    CompressionPolicy,
    KeepMostRelevant,
    MemoryStore,
    RedisStore,
    RemoveOldMessages,
    ShrinkToolResults,
    StoreEntry,
    StoreError,
    Summarize,
    SummarizeLongMessage,
    compress,
    compress_for_sync,
    recall_tool,
)
from agent_adapter.context._own import unsigned

ID = re.compile(r"recall_context\(id='([0-9a-f]{32})'\)")
CTX = RunContext(thread_id="thread-a")


def _conversation(rounds: int = 8) -> list[Message]:
    """A task, then rounds each reading one file (a fact per file), then the latest ask."""
    out = [Message("system", "You are a coding agent."), Message("user", "fix the parser")]
    for i in range(rounds):
        args = f'{{"path": "src/mod{i}.py"}}'
        out.append(
            Message("assistant", f"reading mod{i}", tool_calls=(ToolCall(f"c{i}", "read", args),))
        )
        out.append(
            Message(
                "tool",
                f"def f{i}(): return {i * 7}  # magic-{i}\n" * 30,
                tool_call_id=f"c{i}",
                name="read",
            )
        )
        out.append(Message("assistant", f"mod{i} read"))
    out.append(Message("user", "now run the tests"))
    return out


def _policy(*steps: Any, target: int = 600, **kw: Any) -> CompressionPolicy:
    return CompressionPolicy(threshold_tokens=target, target_tokens=target, steps=list(steps), **kw)


def _ids(messages: Sequence[Message]) -> list[str]:
    return [i for m in messages for i in ID.findall(m.text)]


async def _all(store: Any) -> dict[str, str]:
    return dict(await store.load_all(owner_scope(CTX)))


# ---------------------------------------------------------------------------------------------
# RemoveOldMessages


async def test_a_dropped_run_is_saved_and_recalled_as_a_transcript(store: Any) -> None:
    msgs = _conversation()
    out, report = await compress(msgs, _policy(RemoveOldMessages(save_to=store)), ctx=CTX)
    assert report.reached_target and not report.failures
    notes = [m for m in out if m.text.startswith("[") and "earlier messages removed" in m.text]
    assert len(notes) == 1
    head = notes[0].text.splitlines()[0]
    assert "(saved: call recall_context(id='" in head and "search_context(query)" in head
    (id_,) = _ids(out)
    assert set(await _all(store)) == {id_}  # written: exactly what the output names
    text = await recall_tool(store)({"id": id_}, CTX)
    dropped = [m for m in msgs if m not in out]
    assert dropped and all(m.text.splitlines()[0] in text for m in dropped if m.text)
    # roles, tool calls with their arguments, results with their tool
    assert 'assistant: reading mod0\n-> read({"path": "src/mod0.py"})' in text
    assert "tool result (read): def f0(): return 0  # magic-0" in text


async def test_the_same_input_gives_the_same_ids_and_output(store: Any) -> None:
    msgs = _conversation()
    policy = _policy(RemoveOldMessages(save_to=store))
    first, _ = await compress(msgs, policy, ctx=CTX)
    again, _ = await compress(msgs, policy, ctx=CTX)
    assert [m.text for m in first] == [m.text for m in again]
    other, _ = await compress(msgs, policy, ctx=RunContext(thread_id="thread-b"))
    assert _ids(other) != _ids(first)  # another owner: another id


async def test_another_owner_expired_and_unknown_answer_alike(store: Any) -> None:
    out, _ = await compress(
        _conversation(), _policy(RemoveOldMessages(save_to=store, save_for_seconds=0.3)), ctx=CTX
    )
    (id_,) = _ids(out)
    recall = recall_tool(store)
    assert "magic-0" in await recall({"id": id_}, CTX)
    other = await recall({"id": id_}, RunContext(thread_id="thread-b"))
    unknown = await recall({"id": "0" * 32}, CTX)
    await asyncio.sleep(0.5)
    expired = await recall({"id": id_}, CTX)
    assert other == f"No saved result with id {id_!r} (expired or unknown)."
    assert expired == other and unknown.replace("0" * 32, id_) == other


async def test_a_note_without_a_store_says_nothing_of_saving() -> None:
    out, _ = await compress(_conversation(), _policy(RemoveOldMessages()), ctx=CTX)
    assert not _ids(out) and not any("saved:" in m.text for m in out)


async def test_a_span_over_the_stores_limit_is_not_saved_nor_offered(tmp_path: Path) -> None:
    store = MemoryStore(max_text_chars=500)
    out, report = await compress(
        _conversation(), _policy(RemoveOldMessages(save_to=store)), ctx=CTX
    )
    assert report.reached_target and not _ids(out) and len(store) == 0


async def test_a_later_compression_folds_the_note_and_its_span_holds_it(store: Any) -> None:
    msgs = _conversation(12)
    first, _ = await compress(msgs, _policy(RemoveOldMessages(save_to=store), target=1500), ctx=CTX)
    (old,) = _ids(first)
    grown = [*first, Message("assistant", "ran them"), Message("user", "and again")]
    second, _ = await compress(
        grown, _policy(RemoveOldMessages(save_to=store), target=500), ctx=CTX
    )
    (new,) = _ids(second)
    assert new != old and set(await _all(store)) == {old, new}
    # the folded note is in the new span's transcript, its id readable from there
    assert f"recall_context(id='{old}')" in await recall_tool(store)({"id": new}, CTX)


# ---------------------------------------------------------------------------------------------
# Summarize, SummarizeLongMessage, KeepMostRelevant


async def test_a_summarized_run_is_saved_and_the_head_says_so(store: Any) -> None:
    msgs = _conversation()
    out, report = await compress(
        msgs, _policy(Summarize(save_to=store, keep_recent_messages=2), target=900), ctx=CTX
    )
    summaries = [m for m in out if m.text.startswith("[Summary of the earlier conversation")]
    assert len(summaries) == 1 and not report.failures
    head = summaries[0].text.splitlines()[0]
    assert "are saved: call recall_context(id='" in head and "gone" not in head
    (id_,) = _ids(out)
    text = await recall_tool(store)({"id": id_}, CTX)
    assert "magic-0" in text and "magic-5" in text and "user: fix the parser" in text


async def test_a_summary_without_a_store_keeps_its_head() -> None:
    out, _ = await compress(
        _conversation(), _policy(Summarize(keep_recent_messages=2), target=900), ctx=CTX
    )
    heads = [(unsigned(m.text) or "").split("\n")[0] for m in out]
    assert any(h.endswith("the messages it replaced are gone]") for h in heads)


async def test_a_summary_folding_this_calls_note_saves_the_originals_once(store: Any) -> None:
    msgs = _conversation(12)
    steps = [
        RemoveOldMessages(save_to=store, keep_last=20),
        Summarize(save_to=store, keep_recent_messages=2),
    ]
    out, _ = await compress(msgs, _policy(*steps, target=700), ctx=CTX)
    (id_,) = _ids(out)  # the summary's; the note it folded is not written
    saved = await _all(store)
    assert set(saved) == {id_}
    text = await recall_tool(store)({"id": id_}, CTX)
    # the note stands in the span for the messages it replaced: the originals, not the note
    assert "magic-0" in text and "earlier messages removed" not in text


async def test_a_long_message_is_saved_whole_and_recalled(store: Any) -> None:
    long = "\n".join(f"line {i}: value {i * 3}" for i in range(2000))
    msgs = [Message("user", "look at this"), Message("assistant", long), Message("user", "ok?")]
    step = SummarizeLongMessage(save_to=store, bigger_than_tokens=500)
    out, _ = await compress(msgs, _policy(step, target=1500), ctx=CTX)
    assert (
        out[1].text.startswith("[Summary of a ")
        and "(saved: call recall_context(id='" in out[1].text
    )
    (id_,) = _ids(out)
    assert await recall_tool(store)({"id": id_}, CTX) == long


async def test_keep_most_relevant_leaves_a_saved_note_per_run(store: Any) -> None:
    msgs = [Message("user", "what colour is the car?")]
    for i in range(30):
        msgs += [
            Message("user", f"story part {i} about a lighthouse keeper " * 5),
            Message("assistant", "go on"),
        ]
    msgs += [
        Message("user", "the car is teal"),
        Message("assistant", "noted"),
        Message("user", "what colour is the car?"),
    ]
    step = KeepMostRelevant(save_to=store, keep_count=2)
    out, report = await compress(msgs, _policy(step, target=300), ctx=CTX)
    assert report.reached_target
    ids = _ids(out)
    assert ids and set(await _all(store)) == set(ids)
    assert all(m.text.startswith("[") for m in out if ID.search(m.text))
    recalled = "".join([await recall_tool(store)({"id": i}, CTX) for i in ids])
    assert recalled.count("lighthouse keeper") >= 25 * 5


# ---------------------------------------------------------------------------------------------
# one transaction per store; a failing store


class CountingStore(MemoryStore):
    """A real MemoryStore that counts its batches (and can fail them)."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.fail = fail

    async def save_many(self, entries: Sequence[StoreEntry]) -> None:
        if self.fail:
            raise StoreError("store down")
        self.save_many_sync(entries)

    def save_many_sync(self, entries: Sequence[StoreEntry]) -> None:
        if self.fail:
            raise StoreError("store down")
        self.batches.append(len(entries))
        super().save_many_sync(entries)


async def test_every_save_of_a_compression_is_one_batch_per_store() -> None:
    store = CountingStore()
    steps = [
        ShrinkToolResults(save_to=store, bigger_than_tokens=100, keep_chars=100),
        RemoveOldMessages(save_to=store),
    ]
    out, _ = await compress(_conversation(), _policy(*steps, target=700), ctx=CTX)
    assert len(store.batches) == 1 and store.batches[0] == len(set(_ids(out))) >= 2


async def test_a_failing_store_removes_nothing_and_reports_a_step_failure() -> None:
    msgs = _conversation()
    out, report = await compress(
        msgs, _policy(RemoveOldMessages(save_to=CountingStore(fail=True))), ctx=CTX
    )
    assert [f.step for f in report.failures] == ["remove_old_messages"]
    assert out == msgs and all(a is b for a, b in zip(out, msgs, strict=True))
    assert not _ids(out)
    with pytest.raises(StoreError):
        await compress(
            msgs,
            _policy(RemoveOldMessages(save_to=CountingStore(fail=True)), on_step_error="raise"),
            ctx=CTX,
        )


async def test_a_failing_store_gives_back_a_summarized_run() -> None:
    msgs = _conversation()
    step = Summarize(save_to=CountingStore(fail=True), keep_recent_messages=2)
    out, report = await compress(msgs, _policy(step, target=900), ctx=CTX)
    assert report.failures and out == msgs and not _ids(out)


def test_compress_for_sync_saves_through_the_sync_face(redis_url: str) -> None:
    store = RedisStore(redis_url, prefix=f"t:{uuid.uuid4().hex}:")
    try:
        natives = [
            {"role": m.role, "content": m.text}
            for m in _conversation()
            if not m.tool_calls and m.role != "tool"
        ]
        natives += [{"role": "user", "content": f"more {i} " * 200} for i in range(6)]
        natives.append({"role": "user", "content": "go"})
        out, report = compress_for_sync(
            natives, _policy(RemoveOldMessages(save_to=store, keep_last=1)), ctx=CTX
        )
        (id_,) = {i for m in out for i in ID.findall(str(m["content"]))}
        assert report.reached_target and "more 0" in (store.load_sync(owner_scope(CTX), id_) or "")
    finally:
        store.close()


def test_save_settings_are_checked() -> None:
    for make in (RemoveOldMessages, Summarize, SummarizeLongMessage, KeepMostRelevant):
        with pytest.raises(ConfigError, match="save_to must be a ToolResultStore"):
            make(save_to=object())
        with pytest.raises(ConfigError, match="save_for_seconds"):
            make(save_to=MemoryStore(), save_for_seconds=0)


def _thinking_loop() -> list[dict[str, Any]]:
    """A Claude tool loop that opened on thinking: its dropped rounds' note goes before the
    opener (nothing may be added inside the loop)."""
    natives: list[dict[str, Any]] = [{"role": "user", "content": "Fix the bug in src/app.py"}]
    for i in range(10):
        use = {"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {"cmd": f"cat m{i}"}}
        natives.append({"role": "assistant", "content": [use]})
        body = "\n".join(f"src/m{i}.py:{j}: y={j}" for j in range(80))
        res = {"type": "tool_result", "tool_use_id": f"t{i}", "content": body}
        natives.append({"role": "user", "content": [res]})
    natives[1]["content"].insert(
        0, {"type": "thinking", "thinking": "Plan " * 50, "signature": "S"}
    )
    return natives


def test_a_thinking_loops_saved_run_is_noted_before_its_opener() -> None:
    from agent_adapter.context.formats import check

    store = MemoryStore()
    natives = _thinking_loop()
    policy = CompressionPolicy(
        threshold_tokens=2500, target_tokens=2500, steps=[RemoveOldMessages(save_to=store)]
    )
    out, report = compress_for_sync(natives, policy, format="anthropic", ctx=CTX)
    assert report.reached_target and out[2] is natives[1]
    (id_,) = ID.findall(str(out[1]["content"]))
    assert "src/m2.py:79" in (store.load_sync(owner_scope(CTX), id_) or "")
    assert check(out, "anthropic", thinking=True) == []
    failing = CompressionPolicy(
        threshold_tokens=2500,
        target_tokens=2500,
        steps=[RemoveOldMessages(save_to=CountingStore(fail=True))],
    )
    back, report = compress_for_sync(natives, failing, format="anthropic", ctx=CTX)
    assert report.failures and all(a is b for a, b in zip(back, natives, strict=True))
