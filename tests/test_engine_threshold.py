"""Never over the threshold while something that may go is still there.

The real inputs are slices of ../shared/data read at test time: the Claude Code session
258c7280 (its first 9 natives, 19 messages) at threshold 3,000 came back with 11,267 tokens
while a 9,992-token tool round, unprotected, was still in it (``RemoveOldMessages``
kept it as the round on ``keep_last``'s edge); tau-bench dialog 125 (its first 25
messages) came back with 3,052.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _convo import calls, pairing_problems, result
from agent_adapter import Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    CompressionPolicy,
    CompressionReport,
    Protection,
    ShrinkToolResults,
    compress,
    estimate_tokens,
    split_units,
)
from agent_adapter.context._own import is_own
from agent_adapter.context.formats import check, convert

SESSION_258C = "claude-code-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
TAU_BENCH = "tau-bench/gpt-4o-airline.json"


def _left_behind(before: list[Message], after: list[Message]) -> list[Message]:
    """The caller's messages that no protection keeps and that are still in ``after`` (kept
    or shortened), other than the task (the first non-system message, ``keep_first``)."""
    protection = Protection(before)
    task = next(m for m in before if m.role != "system")
    there = {m.origin for m in after}
    return [
        m
        for unit in split_units(before, protection)
        if not unit.protected and task not in unit.messages
        for m in unit.messages
        if m.origin in there
    ]


def _counts_are_true(
    before: list[Message], after: list[Message], report: CompressionReport
) -> None:
    """The report's counts, recomputed from the lists by origin and identity."""
    origins = {m.origin for m in before}
    out = {m.origin for m in after}
    assert report.tokens_before == estimate_tokens(before)
    assert report.tokens_after == estimate_tokens(after)
    assert report.messages_before == len(before) and report.messages_after == len(after)
    assert report.messages_removed == sum(m.origin not in out for m in before)
    assert report.messages_added == sum(m.origin not in origins for m in after)
    kept = {id(m) for m in before}
    assert report.messages_changed == sum(m.origin in origins and id(m) not in kept for m in after)


def test_an_unprotected_round_on_keep_lasts_edge_goes_before_the_threshold_is_missed(
    data_dir: Path,
) -> None:
    natives = load_trace(data_dir / SESSION_258C).messages[:9]
    conversion = convert(natives, "anthropic")
    messages = conversion.messages
    policy = CompressionPolicy(threshold_tokens=3_000, target_tokens=2_250)

    out, report = asyncio.run(compress(messages, policy))

    assert report.tokens_before == 18_094 and report.protected_tokens == 1_275
    assert report.tokens_after <= 3_000  # was 11,267
    assert _left_behind(messages, out) == []
    assert sum(is_own(m) for m in out) == 1  # one note for the run, the earlier one folded
    _counts_are_true(messages, out, report)
    assert report.steps[-1].step == "remove_old_messages"
    assert report.steps[-1].tokens_before == 11_267
    assert check(conversion.back(out), "anthropic") == []


def test_an_openai_dialog_is_brought_under_the_threshold(data_dir: Path) -> None:
    natives = load_trace(data_dir / TAU_BENCH, index=125).messages[:25]
    conversion = convert(natives, "openai")
    messages = conversion.messages
    for target in (1_000, 2_250):  # the protected part over the target, then under it
        policy = CompressionPolicy(threshold_tokens=3_000, target_tokens=target)
        out, report = asyncio.run(compress(messages, policy))
        assert report.tokens_after <= 3_000, target  # was 3,052
        _counts_are_true(messages, out, report)
        problems = check(conversion.back(out), "openai")
        assert [v.rule for v in problems] == ["calls_pending_at_end"]  # as sliced: the input's


def test_the_task_and_the_protected_part_stay_when_they_alone_are_over(data_dir: Path) -> None:
    # the protected part (a 217k-token tool result in the newest turn) is over the threshold:
    # every other round goes, the task (keep_first) and the notes stay
    trace = load_trace(data_dir / "mini-swe-agent-gemini3pro/trajs/psf__requests-1142.traj.json")
    messages = convert(trace.messages, "openai").messages
    out, report = asyncio.run(compress(messages, CompressionPolicy(target_tokens=32_000)))
    assert report.protected_tokens == 217_340
    assert _left_behind(messages, out) == []
    task = next(m for m in messages if m.role != "system")
    assert any(m is task for m in out)
    _counts_are_true(messages, out, report)


def test_a_pipeline_without_remove_old_messages_drops_nothing() -> None:
    # its steps were chosen not to drop history: over the threshold, it stays as they left it
    msgs = [Message("user", "task")]
    for i in range(6):
        msgs += [calls(f"c{i}", text=f"step {i}"), result(f"c{i}", f"out {i} " * 300)]
    msgs.append(Message("user", "go on"))
    policy = CompressionPolicy(
        threshold_tokens=600, target_tokens=400, steps=[ShrinkToolResults(bigger_than_tokens=10)]
    )
    out, report = asyncio.run(compress(msgs, policy))
    assert report.tokens_after > 600 and len(out) == len(msgs)
    assert all(s.step == "shrink_tool_results" for s in report.steps)


@st.composite
def _agent_runs(draw: st.DrawFn) -> list[Message]:
    msgs: list[Message] = []
    if draw(st.booleans()):
        msgs.append(Message("system", "rules " * draw(st.integers(1, 200))))
    msgs.append(Message("user", "task " * draw(st.integers(1, 300))))
    for i in range(draw(st.integers(1, 12))):
        if draw(st.integers(0, 4)) == 0:
            msgs.append(Message("user", "and also " * draw(st.integers(1, 100))))
        ids = [f"c{i}_{j}" for j in range(draw(st.integers(1, 2)))]
        msgs.append(calls(*ids, text="step " * draw(st.integers(0, 60))))
        msgs += [result(c, "line of output\n" * draw(st.integers(0, 400))) for c in ids]
    if draw(st.booleans()):
        msgs.append(Message("assistant", "done " * draw(st.integers(1, 100))))
    return msgs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    msgs=_agent_runs(),
    threshold=st.sampled_from([500, 1_500, 3_000, 6_000]),
    share=st.sampled_from([0.1, 0.5, 0.75, 1.0]),
    turns=st.sampled_from([0, 3]),
)
def test_the_default_pipeline_is_never_over_the_threshold_with_history_left(
    msgs: list[Message], threshold: int, share: float, turns: int
) -> None:
    policy = CompressionPolicy(
        threshold_tokens=threshold, target_tokens=int(threshold * share), recent_turns=turns
    )
    out, report = asyncio.run(compress(msgs, policy))
    assert pairing_problems(out) == []
    if report.skipped:
        assert out is msgs and report.tokens_after == report.tokens_before
    elif report.tokens_after > threshold:
        assert _left_behind(msgs, out) == []
    _counts_are_true(msgs, out, report)
