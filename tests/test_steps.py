"""Each deterministic step: what it does, oldest first, only as much as needed."""

from __future__ import annotations

import pytest

from _convo import calls, pairing_problems, result
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._run import RunContext
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MemoryStore,
    MyOwnStep,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress,
    estimate_tokens,
    recall_tool,
)
from agent_adapter.context._own import sign


def _policy(target: int, step: object, **kw: object) -> CompressionPolicy:
    return CompressionPolicy(target_tokens=target, steps=[step], **kw)  # type: ignore[list-item,arg-type]


async def test_cut_long_messages_cuts_oldest_first_and_only_as_needed() -> None:
    msgs = [
        Message("user", "task"),
        Message("assistant", "A" * 4000),
        Message("assistant", "B" * 4000),
        Message("user", "q"),
        Message("assistant", "ok"),
    ]
    total = estimate_tokens(msgs)
    out, report = await compress(
        msgs, _policy(total - 500, CutLongMessages(max_tokens_per_message=100))
    )
    assert out[1] is not msgs[1] and out[1].text.startswith("A" * 100)
    assert "characters cut" in out[1].text
    assert out[2] is msgs[2]  # the target was reached before the newer one
    assert report.reached_target and report.messages_changed == 1


async def test_cut_keeps_tool_calls_and_the_end_when_asked() -> None:
    msgs = [
        Message("user", "task"),
        calls("c1", text="T" * 2000 + "END"),
        result("c1"),
        Message("user", "q"),
        Message("assistant", "ok"),
    ]
    out, _ = await compress(
        msgs, _policy(50, CutLongMessages(max_tokens_per_message=20, keep="end"))
    )
    assert out[1].tool_calls == msgs[1].tool_calls and out[1].text.endswith("END")


async def test_remove_old_messages_keeps_edges_and_rounds() -> None:
    msgs = [
        Message("user", "task " * 100),
        Message("assistant", "a1 " * 100),
        calls("c1"),
        result("c1", "r " * 100),
        Message("user", "q2 " * 100),
        Message("assistant", "a2"),
        Message("user", "q3"),
        Message("assistant", "a3"),
    ]
    out, _ = await compress(msgs, _policy(10, RemoveOldMessages(keep_first=1, keep_last=2)))
    # the target is out of reach, so the run's note stays: [task, note, q3, a3]
    assert [out[0], *out[2:]] == [msgs[0], msgs[6], msgs[7]]
    assert out[1].text == sign("[5 earlier messages removed to fit the context window]")
    silent, _ = await compress(msgs, _policy(10, RemoveOldMessages(keep_last=2, note=False)))
    assert silent == [msgs[0], msgs[6], msgs[7]]
    assert pairing_problems(out) == []


async def test_remove_duplicates_drops_the_older_copy() -> None:
    msgs = [
        Message("user", "task"),
        calls("c1", text="look"),
        result("c1", "same " * 100),
        Message("user", "again"),
        calls("c2", text="look"),
        result("c2", "same " * 100),
        Message("user", "last"),
        Message("assistant", "done"),
    ]
    out, report = await compress(msgs, _policy(estimate_tokens(msgs) - 10, RemoveDuplicates()))
    assert msgs[1] not in out and msgs[2] not in out and msgs[4] in out
    assert report.reached_target


async def test_remove_duplicates_similar_needs_a_scorer() -> None:
    with pytest.raises(ConfigError, match="scorer"):
        RemoveDuplicates(match="similar")


async def test_shrink_tool_results_saves_and_recalls_under_the_owner_scope() -> None:
    store = MemoryStore()
    big = "line\n" * 2000
    msgs = [
        Message("user", "task"),
        calls("c1"),
        result("c1", big),
        Message("assistant", "a"),
        Message("user", "q"),
        calls("c2"),
        result("c2", big),
        Message("assistant", "b"),
        Message("user", "q3"),
        Message("assistant", "c"),
    ]
    ctx = RunContext(thread_id="t1")
    step = ShrinkToolResults(
        bigger_than_tokens=100, older_than_turns=3, save_to=store, save_for_seconds=60
    )
    out, report = await compress(msgs, _policy(10, step), ctx=ctx)
    assert out[2] is not msgs[2] and "recall_context(id=" in out[2].text
    assert out[6] is msgs[6]  # within the newest three turns (assistant messages 5, 7, 9)
    id_ = out[2].text.split("id='")[1].split("'")[0]
    tool = recall_tool(store)
    assert await tool({"id": id_}, ctx) == big
    assert "No saved result" in await tool({"id": id_}, RunContext(thread_id="other"))
    assert "No saved result" in await tool({"id": "missing"}, ctx)
    assert report.messages_changed == 1


async def test_memory_store_expiry() -> None:
    store = MemoryStore()
    id_ = await store.save("s", "text", ttl_seconds=0.01)
    import asyncio

    await asyncio.sleep(0.02)
    assert await store.load("s", id_) is None
    keep = await store.save("s", "text", ttl_seconds=None)
    assert await store.load("s", keep) == "text"


async def test_my_own_step_sync_async_and_bad_output() -> None:
    msgs = [
        Message("user", "a " * 400),
        Message("assistant", "b " * 400),
        Message("user", "q"),
        Message("assistant", "ok"),
    ]

    def drop_first_two(ms: list[Message]) -> list[Message]:
        return ms[2:]

    async def adrop(ms: list[Message]) -> list[Message]:
        return ms[2:]

    for fn in (drop_first_two, adrop):
        out, _ = await compress(msgs, _policy(10, MyOwnStep(fn=fn)))
        assert out == msgs[2:]
    bad = MyOwnStep(fn=lambda ms: "nope")
    with pytest.raises(ConfigError, match="list of Message"):
        await compress(msgs, _policy(10, bad, on_step_error="raise"))
    out, report = await compress(msgs, _policy(10, bad))
    assert report.failures[0].error_type == "ConfigError" and out == msgs


async def test_failing_step_is_skipped_and_reported_without_text() -> None:
    def boom(ms: list[Message]) -> list[Message]:
        raise RuntimeError("secret customer data")

    msgs = [
        Message("user", "x " * 400),
        Message("assistant", "y " * 400),
        Message("user", "q"),
        Message("assistant", "ok"),
    ]
    policy = CompressionPolicy(
        target_tokens=10, steps=[MyOwnStep(fn=boom), RemoveOldMessages(keep_last=2)]
    )
    out, report = await compress(msgs, policy)
    assert [f.error_type for f in report.failures] == ["RuntimeError"]
    assert "secret" not in repr(report)
    assert msgs[0] in out and msgs[1] not in out


async def test_if_still_too_long_cut_and_raise() -> None:
    from agent_adapter._errors import ModelContextOverflow

    msgs = [
        Message("system", "s"),
        Message("user", "fix it"),
        calls("c1"),
        result("c1", "x" * 100_000),
    ]
    out, report = await compress(
        msgs, CompressionPolicy(target_tokens=2000, if_still_too_long="cut")
    )
    assert report.if_still_too_long == "cut" and report.reached_target
    assert out[3].tool_call_id == "c1" and "characters cut" in out[3].text
    assert out[0] is msgs[0] and out[1] is msgs[1] and out[2] is msgs[2]
    with pytest.raises(ModelContextOverflow):
        await compress(msgs, CompressionPolicy(target_tokens=2000, if_still_too_long="raise"))
    kept, report = await compress(msgs, CompressionPolicy(target_tokens=2000))
    assert kept is msgs and not report.reached_target and "protected" in report.explain()


async def test_step_errors_anywhere_are_skipped_in_skip_mode() -> None:
    from agent_adapter.context import BaseCompressionStep, StepContext

    class Garbage(BaseCompressionStep):
        name = "garbage"

        async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
            return "nope"  # type: ignore[return-value]

    def boom(ms: list[Message]) -> list[Message]:
        raise ZeroDivisionError

    msgs = [Message("user", "x " * 400), Message("assistant", "y " * 400), Message("user", "q")]
    policy = CompressionPolicy(
        target_tokens=10, steps=[Garbage()], if_still_too_long=MyOwnStep(fn=boom)
    )
    out, report = await compress(msgs, policy)
    assert out == msgs
    assert [(f.step, f.error_type) for f in report.failures] == [
        ("garbage", "ConfigError"),
        ("my_own_step", "ZeroDivisionError"),
    ]
    with pytest.raises(ConfigError):
        await compress(
            msgs, CompressionPolicy(target_tokens=10, steps=[Garbage()], on_step_error="raise")
        )


@pytest.mark.parametrize("scores", [[None], [5.0], ["1"], [True], [0.5, 0.5], "0.5"])
async def test_similar_duplicates_reject_bad_scores(scores: object) -> None:
    class Scorer:
        async def score(self, query: str, texts: list[str]) -> object:
            return scores

    msgs = [
        Message("user", "task"),
        Message("assistant", "same " * 200),
        Message("assistant", "same " * 200),
        Message("user", "q"),
        Message("assistant", "a"),
    ]
    step = RemoveDuplicates(match="similar", scorer=Scorer())
    with pytest.raises(ConfigError, match="RemoveDuplicates"):
        await compress(msgs, _policy(10, step, on_step_error="raise"))


def test_sync_call_inside_a_running_loop_keeps_context_variables() -> None:
    import asyncio
    import contextvars

    from agent_adapter.context import compress_for_sync

    var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="unset")
    seen: list[str] = []

    def spy(ms: list[Message]) -> list[Message]:
        seen.append(var.get())
        return ms

    msgs = [Message("user", "x " * 400), Message("assistant", "y " * 400), Message("user", "q")]

    async def main() -> None:
        var.set("req-42")
        compress_for_sync(msgs, _policy(10, MyOwnStep(fn=spy)))

    asyncio.run(main())
    assert seen == ["req-42"]


async def test_shrink_keeps_as_much_of_one_huge_result_as_the_target_allows() -> None:
    huge = "line of output\n" * 300_000  # ~4.5 MB
    msgs = [
        Message("user", "task"),
        calls("c1"),
        result("c1", huge),
        Message("assistant", "a"),
        Message("user", "q"),
        Message("assistant", "b"),
        Message("user", "q3"),
        Message("assistant", "c"),
    ]
    step = ShrinkToolResults(bigger_than_tokens=100, older_than_turns=2)
    out, report = await compress(msgs, _policy(50_000, step))
    assert report.reached_target
    assert 40_000 < report.tokens_after <= 50_000  # not cut down to 400 characters
    assert out[2].tool_call_id == "c1" and "characters cut" in out[2].text
