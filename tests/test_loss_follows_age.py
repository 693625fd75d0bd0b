"""Loss follows age: the recency window stays verbatim while older content can go; the
last-resort cut comes before history is removed; "keep" removes nothing that cannot help."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from _convo import calls, result
from agent_adapter import ConfigError, Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    CompactionStates,
    CompressionPolicy,
    CutLongMessages,
    MyOwnStep,
    ShrinkToolResults,
    compress,
    compress_for_sync,
    estimate_tokens,
)
from agent_adapter.context._own import is_own, sign


def _agent_run(turns: int, size: int) -> list[Message]:
    msgs = [Message("system", "rules"), Message("user", "fix the bug")]
    for i in range(turns):
        msgs += [calls(f"c{i}", text=f"step {i}"), result(f"c{i}", f"out{i} " * size)]
    msgs.append(Message("assistant", "done?"))
    return msgs


def test_the_newest_three_turns_stay_verbatim_while_older_results_can_shrink() -> None:
    msgs = _agent_run(8, 600)
    total = sum(len(m.text) for m in msgs) // 4
    # enough room for the window: shrinking the older results reaches the target
    policy = CompressionPolicy(
        target_tokens=total // 2, steps=[ShrinkToolResults(older_than_turns=1)]
    )
    out, report = asyncio.run(compress(msgs, policy))
    assert report.reached_target
    window = msgs[-5:]  # the 3 newest assistant messages (2 call rounds + the reply)
    assert all(any(o is m for o in out) for m in window)


def test_a_big_result_in_the_window_survives_while_old_small_rounds_can_be_dropped() -> None:
    # the default pipeline used to shrink the third-newest output (shrink runs before drop)
    # while an hour of small old rounds was still there
    msgs = [Message("system", "rules"), Message("user", "fix the bug")]
    for i in range(30):
        msgs += [calls(f"o{i}", text=f"old step {i}"), result(f"o{i}", "small output " * 20)]
    msgs += [calls("big", text="run the tests"), result("big", "FAILED test_x line\n" * 400)]
    msgs += [calls("n1", text="look"), result("n1", "ok"), Message("assistant", "next?")]
    total = sum(len(m.text) for m in msgs) // 4
    out, report = asyncio.run(compress(msgs, CompressionPolicy(target_tokens=total // 2)))
    assert report.reached_target
    big = next(m for m in msgs if m.role == "tool" and m.tool_call_id == "big")
    old = [m for m in msgs if m.role == "tool" and m.tool_call_id.startswith("o")]
    # every old round goes before the big newer result loses anything; the run they were
    # leaves its note (the note's few tokens may then cost the big result a few lines)
    assert not any(o is m for o in out for m in old)
    assert any(is_own(o) for o in out)
    kept = next(o for o in out if o.role == "tool" and o.tool_call_id == "big")
    assert kept is big or len(kept.text) > 0.9 * len(big.text)


def test_the_window_goes_only_when_everything_older_is_reduced() -> None:
    msgs = _agent_run(8, 600)
    policy = CompressionPolicy(target_tokens=300, steps=[ShrinkToolResults(older_than_turns=1)])
    out, _ = asyncio.run(compress(msgs, policy))
    by_origin = {m.origin: m for m in out}
    older = [m for m in msgs[:-5] if m.role == "tool"]
    newer = [m for m in msgs[-5:] if m.role == "tool"]
    # a newer result is only shortened when every older one was shortened first
    if any(by_origin[m.origin] is not m for m in newer):
        assert all(by_origin[m.origin] is not m for m in older)


def test_recent_turns_zero_turns_the_window_off_and_bad_values_are_config_errors() -> None:
    msgs = _agent_run(8, 600)
    policy = CompressionPolicy(
        target_tokens=1500, recent_turns=0, steps=[ShrinkToolResults(older_than_turns=1)]
    )
    out, _ = asyncio.run(compress(msgs, policy))
    assert any(o is not m for o, m in zip(out, msgs, strict=False))
    for bad in (-1, 1.5, True):
        with pytest.raises(ConfigError, match="recent_turns"):
            CompressionPolicy(target_tokens=10, recent_turns=bad)  # type: ignore[arg-type]


def _psf(data_dir: Path) -> list[dict]:
    path = data_dir / "mini-swe-agent-gemini3pro/trajs/psf__requests-1142.traj.json"
    return load_trace(path).messages


def test_cut_first_keeps_history_when_cutting_the_protected_result_is_enough(
    data_dir: Path,
) -> None:
    natives = _psf(data_dir)
    out, report = compress_for_sync(
        natives, CompressionPolicy(target_tokens=32_000, if_still_too_long="cut")
    )
    assert report.reached_target
    # today 137 of 144 messages were dropped; cutting the 217k-token result first keeps more
    assert len(out) > 40, len(out)


def test_keep_still_removes_old_rounds_when_the_protected_part_is_over_the_threshold(
    data_dir: Path,
) -> None:
    # issue 19, item 5: "keep" used to remove nothing here (the 217k-token newest result is
    # over the threshold), sending everything; old rounds go, the protected part is kept
    natives = _psf(data_dir)
    out, report = compress_for_sync(natives, CompressionPolicy(target_tokens=32_000))
    assert report.tokens_after < report.tokens_before and not report.skipped
    assert out[-1] is natives[-1] and out[0] is natives[0]
    assert "alone are" in report.explain()


def test_keep_still_compresses_when_a_step_may_shorten_the_system_prompt() -> None:
    msgs = [Message("system", "rule " * 400), Message("user", "q " * 300), Message("user", "x")]
    policy = CompressionPolicy(
        threshold_tokens=101,
        target_tokens=100,
        steps=[CutLongMessages(max_tokens_per_message=50, include_system_prompt=True)],
    )
    out, _ = asyncio.run(compress(msgs, policy))
    assert len(out[0].text) < len(msgs[0].text)


def _paths_run(rounds: range) -> list[Message]:
    """Rounds of an agent run, each reading one file and naming it in its output."""
    msgs: list[Message] = []
    for i in rounds:
        msgs += [
            calls(f"r{i}", text=f"read module {i}"),
            result(f"r{i}", f"src/pkg/module_{i}/impl_{i}.py: " + f"line {i} " * 40),
        ]
    return msgs


def test_an_earlier_note_is_bared_before_a_turn_of_the_window_goes() -> None:
    # issue 24: a note left by an earlier call is older content than the newest turns; a
    # request of system, task, that note and only window turns used to run one pass (no
    # older *turn* before the window), where dropping the note freed too little and the
    # third-newest turn went with it
    head = [Message("system", "rules"), Message("user", "fix the bug")]
    first = head + _paths_run(range(12))
    sent, _ = asyncio.run(compress(first, CompressionPolicy(target_tokens=900)))
    note = next(m for m in sent if is_own(m))
    assert "module_0" in note.text  # a note that names the dropped rounds
    # the next request: that note, the two rounds after it and a new one
    request = [*head, note, *first[-4:], *_paths_run(range(12, 13))]
    window = request[-6:]  # the three newest turns
    bare = estimate_tokens(
        [Message("user", sign("[20 earlier messages removed to fit the context window]"))]
    )
    t2 = estimate_tokens(head + window) + bare + 2
    assert estimate_tokens(request) > t2  # over with the note as it is
    out, report = asyncio.run(compress(request, CompressionPolicy(target_tokens=t2)))
    assert report.reached_target
    assert all(any(o is m for o in out) for m in window), [o.text[:30] for o in out]
    notes = [o for o in out if is_own(o)]
    assert len(notes) == 1 and len(notes[0].text) < len(note.text)  # bared, still there


def test_marshmallow_replay_keeps_the_third_newest_turn_at_its_last_call(
    data_dir: Path,
) -> None:
    # the exact input of issue 24's miss: SWE-agent marshmallow-1867
    # (function_calling_replace) replayed as an agent loop at 25% (T = 1,826); its last
    # request (task, a note of 18 messages, three turns) kept only the two newest turns
    path = (
        data_dir / "swe-agent/trajectories/demonstrations/replay__marshmallow-code__"
        "marshmallow-1867__function_calling_replace__install-1/"
        "marshmallow-code__marshmallow-1867.traj"
    )
    natives = load_trace(path).messages
    policy = CompressionPolicy(target_tokens=1826, threshold_tokens=1826)
    states = CompactionStates(max_conversations=4)
    first_user = next(i for i, n in enumerate(natives) if n["role"] == "user")
    ends = [i for i, n in enumerate(natives) if i > first_user and n["role"] == "assistant"]
    for end in [*ends, len(natives)]:
        out, report = compress_for_sync(
            natives[:end], policy, format="openai", states=states, conversation="m"
        )
    assert report.reached_target
    assert [n["role"] for n in natives[-6:]] == ["assistant", "tool"] * 3
    assert out[-6:] == natives[-6:]
    assert out[:2] == natives[:2]  # system prompt and task
    assert sum(1 for n in out if str(n.get("content", "")).startswith("[")) == 1  # the note


def test_with_fewer_turns_than_the_window_a_note_still_goes_before_a_long_turn_is_cut() -> None:
    # two turns only, so all of them are in the window: CutLongMessages used to cut the
    # older turn's long text (one pass, no window) while the earlier note kept its names
    head = [Message("system", "rules"), Message("user", "fix the bug")]
    first = head + _paths_run(range(12))
    sent, _ = asyncio.run(compress(first, CompressionPolicy(target_tokens=900)))
    note = next(m for m in sent if is_own(m))
    assert estimate_tokens([note]) > 40
    long_turn = calls("l1", text="plan: " + "think about the fix " * 600)  # ~3,000 tokens
    turns = [long_turn, result("l1"), calls("l2", text="run it"), result("l2")]
    request = [*head, note, *turns]
    bare = Message("user", sign("[8 earlier messages removed to fit the context window]"))
    target = estimate_tokens([*head, *turns, bare]) + 2
    out, report = asyncio.run(compress(request, CompressionPolicy(target_tokens=target)))
    assert report.reached_target
    assert all(any(o is m for o in out) for m in turns)
    assert [len(o.text) < len(note.text) for o in out if is_own(o)] == [True]


def test_a_short_conversation_without_a_note_of_ours_is_compressed_in_one_pass() -> None:
    # fewer turns than the window and only the task before them: no window pass, so a step
    # of the caller's written for the list it is given runs once, on that list (with a pass
    # protecting the window first, its summary was added, its removals reverted, and its
    # second run cut at the wrong indexes: nothing came of it)
    msgs = [
        Message("system", "You are terse."),
        Message("user", "Weather in Paris?"),
        calls("c1", text="Checking."),
        result("c1", "rain " * 300),
        Message("assistant", "It rains."),
        Message("user", "And tomorrow?"),
    ]
    seen: list[int] = []

    def summarize(ms: list[Message]) -> list[Message]:
        seen.append(len(ms))
        return [ms[0], ms[1], Message("user", "summary of the lookup"), *ms[4:]]

    policy = CompressionPolicy(target_tokens=20, steps=[MyOwnStep(fn=summarize)])
    out, report = asyncio.run(compress(msgs, policy))
    assert seen == [6]
    assert [m.text for m in out if m not in msgs] == ["summary of the lookup"]
    assert report.messages_added == 1 and report.messages_removed == 2
    assert all(any(o is m for o in out) for m in (msgs[0], msgs[1], msgs[4], msgs[5]))
