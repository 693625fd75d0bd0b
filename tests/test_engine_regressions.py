"""Regression tests for the failures users hit, each on the exact small input."""

from __future__ import annotations

import copy

import pytest

from _convo import calls, pairing_problems, result
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    RemoveOldMessages,
    compress,
    estimate_tokens,
)
from agent_adapter.context._text import cut_text
from agent_adapter.errors import ConfigError
from agent_adapter.messages import Message


def _policy(target: int, *steps: object) -> CompressionPolicy:
    return CompressionPolicy(target_tokens=target, steps=list(steps) or None)  # type: ignore[arg-type]


async def test_hard_trim_never_starts_with_a_tool_result() -> None:
    msgs = [
        Message("user", "q1 " * 50),
        calls("c1"),
        result("c1", "r1 " * 200),
        Message("user", "q2 " * 50),
        Message("assistant", "a2 " * 50),
        Message("user", "q3"),
        Message("assistant", "a3"),
    ]
    for keep_first in (0, 1):
        out, _ = await compress(
            msgs, _policy(10, RemoveOldMessages(keep_first=keep_first, keep_last=0))
        )
        assert out[0].role == "user"
        assert pairing_problems(out) == []
        assert msgs[5] in out  # the latest user message


async def test_parallel_calls_are_kept_or_dropped_whole() -> None:
    ids = [f"c{i}" for i in range(1, 11)]
    round_ = [calls(*ids), *(result(i, "x" * 400) for i in ids)]
    msgs = [Message("user", "go"), *round_, Message("user", "next"), Message("assistant", "ok")]
    full = estimate_tokens(msgs)
    half = full - 5 * estimate_tokens([round_[1]])
    out, report = await compress(msgs, _policy(half, RemoveOldMessages(keep_first=0, keep_last=0)))
    kept = [m for m in round_ if m in out]
    assert len(kept) in (0, 11)
    assert pairing_problems(out) == []
    assert report.reached_target


async def test_under_threshold_returns_the_same_list_of_same_objects() -> None:
    msgs = [Message("system", "s"), Message("user", "hi"), Message("assistant", "hello")]
    snapshot = copy.deepcopy(msgs)
    out, report = await compress(msgs, CompressionPolicy(threshold_tokens=10_000))
    assert out is msgs
    assert msgs == snapshot
    assert report.skipped == "under_threshold"
    assert report.tokens_after == report.tokens_before


async def test_system_and_latest_user_never_removed_changed_or_moved() -> None:
    system = Message("system", "rules " * 300)
    latest = Message("user", "latest " * 300)
    msgs = [
        system,
        Message("user", "old " * 300),
        Message("assistant", "old answer " * 300),
        latest,
        calls("c1"),
        result("c1", "big " * 3000),
    ]
    out, report = await compress(
        msgs,
        _policy(
            50,
            CutLongMessages(max_tokens_per_message=10),
            RemoveOldMessages(keep_first=0, keep_last=0),
        ),
    )
    assert out[0] is system
    assert latest in out
    assert [m for m in out if m is system or m is latest] == [system, latest]
    assert not report.reached_target  # the protected newest turn alone is over the target
    assert "protected" in report.explain()


def test_cut_never_leaves_a_lone_surrogate_or_replacement_char() -> None:
    text = "aaaaaaaaa🦊bbbb"
    for n in range(len(text) + 1):
        for keep in ("start", "end", "both"):
            out = cut_text(text, n, keep)  # type: ignore[arg-type]
            out.encode("utf-8")  # strict: raises on a lone surrogate
            assert "\ufffd" not in out
    # a string holding the fox as a UTF-16 surrogate pair is never split between the halves
    pair = "aaaaaaaaa\ud83e\udd8abbbb"
    for n in range(len(pair) + 1):
        out = cut_text(pair, n, "start")
        assert not out.endswith("\ud83e") and "\ud83e\n" not in out
    zwj = "ab👩‍💻cd"
    for n in range(len(zwj) + 1):
        out = cut_text(zwj, n, "start")
        assert "\u200d\n" not in out and not out.startswith("ab\u200d")


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ("not a list", "messages must be a list"),
        ([Message("user", "x"), {"role": "user"}], "messages[1]"),
        (
            [Message("user", "x"), Message("tool", "r", tool_call_id="nope")],
            "messages[1].tool_call_id",
        ),
    ],
)
async def test_bad_input_names_index_and_field(bad: object, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        await compress(bad, _policy(1))  # type: ignore[arg-type]
    assert needle in str(err.value)


def test_unknown_role_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="role"):
        Message("robot", "x")  # type: ignore[arg-type]


async def test_caller_list_and_messages_never_mutated() -> None:
    msgs = [
        Message("user", "q " * 400),
        calls("c1"),
        result("c1", "r " * 4000),
        Message("user", "again"),
        Message("assistant", "done"),
    ]
    before = list(msgs)
    snapshot = copy.deepcopy(msgs)
    out, _ = await compress(msgs, _policy(100))
    assert msgs == before and all(a is b for a, b in zip(msgs, before, strict=True))
    assert msgs == snapshot
    assert out is not msgs
    # the protected newest turn comes back as the very same objects
    assert any(m is msgs[3] for m in out) and any(m is msgs[4] for m in out)
