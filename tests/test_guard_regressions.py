"""Regressions a fresh user found in the guard and the engine, each on its exact input."""

from __future__ import annotations

from typing import Any

import pytest

from agent_adapter import ConfigError, Message
from agent_adapter.context import (
    CompressionPolicy,
    MyOwnStep,
    RemoveOldMessages,
    compress_for_sync,
)
from agent_adapter.context.formats import check, convert

X = "x" * 2000


def _pol(fn: Any, **kw: Any) -> CompressionPolicy:
    return CompressionPolicy(threshold_tokens=10, target_tokens=10, steps=[MyOwnStep(fn=fn)], **kw)


def _tu(i: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"c{i}", "name": "f", "input": {}}


def _tr(i: int) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": f"c{i}", "content": "r " + X}],
    }


@pytest.mark.parametrize("fmt", ["anthropic", "gemini"])
def test_an_added_assistant_summary_never_opens_the_history(fmt: str) -> None:
    msgs = [Message("user", "task " + X), Message("assistant", "a " + X), Message("user", "latest")]
    natives = convert(
        [{"role": "user", "parts": [{"text": "s"}]}]
        if fmt == "gemini"
        else [{"role": "user", "content": "s"}],
        fmt,
    ).back(msgs)
    out, _ = compress_for_sync(
        natives, _pol(lambda ms: [Message("assistant", "summary"), ms[2]]), format=fmt
    )
    assert check(out, fmt) == []
    first = out[0]
    assert first["role"] == "user"


def test_no_addition_inside_the_current_thinking_tool_loop() -> None:
    natives = [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "t", "signature": "SIG"}, _tu(1)],
        },
        _tr(1),
        {"role": "assistant", "content": [{"type": "text", "text": "next"}, _tu(2)]},
        _tr(2),
        {"role": "assistant", "content": [_tu(3)]},
        _tr(3),
    ]
    out, report = compress_for_sync(
        natives, _pol(lambda ms: [*ms[:3], Message("user", "summary"), *ms[3:]]), format="anthropic"
    )
    assert report.messages_added == 0
    assert all(a is b for a, b in zip(out, natives, strict=True))


@pytest.mark.parametrize("blank", ["", " ", "\n"])
@pytest.mark.parametrize("fmt", ["anthropic", "gemini", "openai"])
def test_a_blanked_message_is_a_removal(fmt: str, blank: str) -> None:
    msgs = [Message("user", "task " + X), Message("assistant", "a " + X), Message("user", "latest")]
    seed = (
        [{"role": "user", "parts": [{"text": "s"}]}]
        if fmt == "gemini"
        else [{"role": "user", "content": "s"}]
    )
    natives = convert(seed, fmt).back(msgs)
    step = _pol(lambda ms: [m.with_text(blank) if m.role == "assistant" else m for m in ms])
    out, report = compress_for_sync(natives, step, format=fmt)
    assert report.messages_changed == 0 and report.messages_removed == 1
    assert not any(n.get("role") in ("assistant", "model") for n in out)


def test_a_last_resort_step_keeps_the_callers_latest_user_message() -> None:
    msgs = [
        Message("system", "sys"),
        Message("user", "QUESTION " + X),
        Message("assistant", "A1 " + X),
        Message("assistant", "A2 " + X),
    ]
    add = MyOwnStep(fn=lambda m: [*m[:2], Message("user", "summary"), *m[2:]])
    policy = CompressionPolicy(
        threshold_tokens=10,
        target_tokens=10,
        steps=[add],
        if_still_too_long=RemoveOldMessages(keep_first=0, keep_last=0),
    )
    out, _ = compress_for_sync(msgs, policy)
    assert any(m is msgs[1] for m in out)


def test_a_last_resort_step_keeps_the_thinking_opener() -> None:
    natives = [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "t", "signature": "SIG"}, _tu(1)],
        },
        _tr(1),
        {"role": "assistant", "content": [_tu(2)]},
        _tr(2),
    ]
    policy = CompressionPolicy(
        threshold_tokens=10,
        target_tokens=10,
        if_still_too_long=RemoveOldMessages(keep_first=0, keep_last=2),
    )
    out, _ = compress_for_sync(natives, policy, format="anthropic")
    assert any(o is natives[1] for o in out)


def test_an_addition_never_splits_a_native() -> None:
    # the latest user text shares a native with a tool result: a summary "before" it could
    # only be written after it, so it is not placed
    natives = [
        {"role": "user", "content": "task " + X},
        {"role": "assistant", "content": [_tu(1)]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "r"},
                {"type": "text", "text": "LATEST QUESTION"},
            ],
        },
    ]
    out, _ = compress_for_sync(
        natives, _pol(lambda ms: [*ms[:3], Message("user", "SUMMARY"), *ms[3:]]), format="anthropic"
    )
    assert out[-1] is natives[-1]


def test_an_added_assistant_summary_before_a_plain_assistant_text_is_kept() -> None:
    natives = [
        {"role": "user", "content": "task " + X},
        {"role": "assistant", "content": "a1 " + X},
        {"role": "user", "content": "u2 " + X},
        {"role": "assistant", "content": "a2"},
        {"role": "user", "content": "latest"},
    ]
    out, report = compress_for_sync(
        natives, _pol(lambda ms: [ms[0], Message("assistant", "SUMMARY"), *ms[3:]]), format="openai"
    )
    assert [o["content"][:7] for o in out] == ["task xx", "SUMMARY", "a2", "latest"]
    assert report.messages_added == 1


def test_pinned_must_be_callable_for_message_lists() -> None:
    msgs = [Message("user", X), Message("assistant", X), Message("user", "q")]
    with pytest.raises(ConfigError, match="pinned must be callable"):
        compress_for_sync(msgs, CompressionPolicy(threshold_tokens=10, target_tokens=10), pinned=3)  # type: ignore[arg-type]


def test_back_refuses_a_reordered_list() -> None:
    conversion = convert([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    with pytest.raises(ConfigError, match="order"):
        conversion.back(list(reversed(conversion.messages)))


def test_restoring_call_turns_on_a_long_list_keeps_every_call_after_a_user_turn() -> None:
    # was quadratic: every restore restarted the scan (4,000 rounds took 6.4 s)
    from agent_adapter import ToolCall

    msgs: list[Message] = []
    for i in range(2000):
        msgs += [
            Message("user", f"u{i}"),
            Message("assistant", tool_calls=[ToolCall(f"c{i}", "f")]),
            Message("tool", "r", tool_call_id=f"c{i}"),
            Message("assistant", "ok"),
        ]
    msgs.append(Message("user", "latest"))
    drop_users = MyOwnStep(fn=lambda ms: [m for m in ms[:-1] if m.role != "user"] + ms[-1:])
    policy = CompressionPolicy(threshold_tokens=10, target_tokens=10, steps=[drop_users])
    out, _ = compress_for_sync(msgs, policy)
    for k, m in enumerate(out):
        if m.tool_calls:
            assert out[k - 1].role in ("user", "tool")


def test_explain_names_what_the_steps_kept_next_to_the_protected_part() -> None:
    from agent_adapter.context import CompressionReport

    report = CompressionReport(
        tokens_before=900,
        tokens_after=332,
        threshold_tokens=10,
        target_tokens=10,
        messages_before=9,
        messages_after=6,
        protected_tokens=11,
        if_still_too_long="keep",
    )
    text = report.explain()
    assert "alone are 11 tokens" in text and "kept 321 tokens of unprotected history" in text
