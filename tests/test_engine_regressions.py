"""Regression tests for the failures users hit, each on the exact small input."""

from __future__ import annotations

import copy

import pytest

from _convo import calls, pairing_problems, result
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    RemoveOldMessages,
    compress,
    estimate_tokens,
)
from agent_adapter.context._text import cut_text


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


_CLUSTERS = [
    "a",
    "🦊",
    "🇯🇵",
    "🇫🇷",
    "🏴󠁧󠁢󠁥󠁮󠁧󠁿",
    "👩‍💻",
    "👍🏽",
    "é",
    "한",
    "\r\n",
    "न्",
    "ส",
    "ำ",
    "1️⃣",
    "\n",
]


def test_cut_falls_on_grapheme_boundaries_for_every_cluster_kind() -> None:
    import regex
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None)
    @given(
        st.lists(st.sampled_from(_CLUSTERS), min_size=1, max_size=60),
        st.integers(0, 80),
        st.sampled_from(["start", "end", "both"]),
    )
    def check(clusters: list[str], n: int, keep: str) -> None:
        text = "".join(clusters)
        allowed = set(regex.findall(r"\X", text)) | {"\n"}
        out = cut_text(text, n, keep)  # type: ignore[arg-type]
        out.encode("utf-8")
        assert "\ufffd" not in out
        for piece in regex.split(r"\n?\[\.\.\. \d+ characters cut \.\.\.\]\n?", out):
            assert set(regex.findall(r"\X", piece)) <= allowed

    check()


def test_lone_surrogates_from_bad_json_become_replacement_chars_when_cut() -> None:
    import json

    text = json.loads('"abc\\ud800def"') * 100
    out = cut_text(text, 20, "both")
    out.encode("utf-8")  # strict
    assert "\ufffd" in out and "\ud800" not in out


@pytest.mark.parametrize(
    ("msgs", "needle"),
    [
        (  # a call never answered before the next user message
            [Message("user", "q"), calls("c1"), Message("user", "q2"), Message("assistant", "a")],
            "messages[1].tool_calls: call 'c1' has no tool result before messages[2]",
        ),
        (  # a parallel round half answered
            [Message("user", "q"), calls("c1", "c2"), result("c1"), Message("user", "q2")],
            "call 'c2'",
        ),
        (  # a duplicate result
            [Message("user", "q"), calls("c1"), result("c1"), result("c1")],
            "messages[3].tool_call_id 'c1' answers no open tool call",
        ),
        (  # an old round left pending, then a newer one
            [Message("user", "q"), calls("c1"), Message("assistant", "x"), calls("c2")],
            "call 'c1'",
        ),
    ],
)
async def test_broken_pairing_in_the_input_is_a_config_error(
    msgs: list[Message], needle: str
) -> None:
    with pytest.raises(ConfigError) as err:
        await compress(msgs, _policy(1))
    assert needle in str(err.value)


async def test_only_the_newest_round_may_be_pending() -> None:
    msgs = [
        Message("user", "q " * 300),
        calls("c1"),
        result("c1", "r " * 300),
        Message("user", "go"),
        calls("c2", "c3"),
        result("c2"),
    ]
    out, _ = await compress(msgs, _policy(10))
    assert out[-3:] == msgs[-3:]


def test_anthropic_tool_input_that_is_not_json_is_a_config_error() -> None:
    from agent_adapter.context.formats import convert

    natives = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {"b": b"\x00"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]},
    ]
    with pytest.raises(ConfigError, match=r"messages\[1\]\.content\[0\]\.input"):
        convert(natives, "anthropic")


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"type": "text", "text": {"nested": "junk"}}, "content[0].text"),
        ({"type": "thinking", "thinking": None, "signature": "s"}, "content[0].thinking"),
        ({"type": "tool_use", "id": "t1", "name": "f", "input": None}, "content[0].input"),
    ],
)
def test_malformed_anthropic_blocks_name_index_and_field(block: dict, field: str) -> None:
    from agent_adapter.context.formats import convert

    natives = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [block]}]
    import re

    with pytest.raises(ConfigError, match=re.escape(f"messages[1].{field}")):
        convert(natives, "anthropic")


def test_gemini_text_part_that_is_not_a_string_is_a_config_error() -> None:
    from agent_adapter.context.formats import convert

    with pytest.raises(
        ConfigError, match=r"contents\[0\]\.parts\[1\]\.text|\[0\]\.parts\[1\]\.text"
    ):
        convert([{"role": "user", "parts": [{"text": "ok"}, {"text": 5}]}], "gemini")


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_pinned_natives_are_never_changed_or_removed(fmt: str) -> None:
    from agent_adapter.context import compress_for_sync

    msgs = [
        {"role": "user", "content": "task " * 100},
        {"role": "assistant", "content": "PIN " * 100},
        {"role": "user", "content": "q " * 100},
        {"role": "assistant", "content": "a " * 100},
        {"role": "user", "content": "latest"},
    ]
    policy = CompressionPolicy(
        target_tokens=150,
        steps=[
            CutLongMessages(max_tokens_per_message=5),
            RemoveOldMessages(keep_first=0, keep_last=0),
        ],
    )
    out, _ = compress_for_sync(
        msgs, policy, format=fmt, pinned=lambda n: n["content"].startswith("PIN")
    )
    assert any(o is msgs[1] for o in out)
    assert not any(o is msgs[3] for o in out)  # unpinned: cut or removed
