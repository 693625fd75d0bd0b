"""Units, Protection, approval markers and the invariant guard, rule by rule."""

from __future__ import annotations

from dataclasses import replace

import pytest

from _convo import calls, result
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, OpaquePart, TextPart, ThinkingPart
from agent_adapter.context import (
    Protection,
    carries_approval_state,
    enforce_invariants,
    has_approval_marker,
    split_units,
)
from agent_adapter.context._pairing import validate_messages


def _convo() -> list[Message]:
    return [
        Message("system", "rules"),
        Message("user", "q1"),
        calls("a", "b"),
        result("a"),
        result("b"),
        Message("assistant", "answer"),
        Message("user", "q2"),
        calls("c"),
        result("c"),
    ]


def test_a_tool_round_with_parallel_calls_is_one_unit() -> None:
    units = split_units(_convo())
    assert [(u.start, u.stop) for u in units] == [(0, 1), (1, 2), (2, 5), (5, 6), (6, 7), (7, 9)]
    assert [u.protected for u in units] == [True, False, False, False, True, True]
    assert units[2].is_tool_round


def test_reused_call_ids_bind_to_the_nearest_call() -> None:
    msgs = [
        Message("user", "q"),
        calls("x"),
        result("x"),
        Message("user", "q2"),
        calls("x"),
        result("x"),
        Message("user", "q3"),
    ]
    assert [(u.start, u.stop) for u in split_units(msgs)] == [
        (0, 1),
        (1, 3),
        (3, 4),
        (4, 6),
        (6, 7),
    ]


def test_reasoning_only_message_joins_the_next_unit() -> None:
    reasoning = Message("assistant", (ThinkingPart("why", signature="s"),))
    msgs = [Message("user", "q"), reasoning, calls("x"), result("x"), Message("user", "q2")]
    assert [(u.start, u.stop) for u in split_units(msgs)] == [(0, 1), (1, 4), (4, 5)]


def test_a_late_result_is_not_paired_and_the_list_is_rejected() -> None:
    # one pairing rule: results follow their call directly (OpenAI: "An assistant message with
    # 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'")
    msgs = [
        Message("user", "q"),
        calls("x"),
        Message("assistant", "thinking aloud"),
        result("x"),
        Message("user", "q2"),
    ]
    assert [(u.start, u.stop) for u in split_units(msgs)] == [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
    ]
    with pytest.raises(ConfigError, match=r"messages\[1\].tool_calls: call 'x' has no tool"):
        validate_messages(msgs)


def test_protection_pinned_and_approval() -> None:
    msgs = _convo()
    approval = Message("tool", "approved", tool_call_id="c", name="request_confirmation")
    assert carries_approval_state(approval)
    p = Protection(msgs, pinned=lambda m: m.text == "answer")
    assert p.is_protected(msgs[5]) and p.is_pinned(msgs[5])
    assert not p.is_protected(msgs[1])
    assert p.is_protected(msgs[6])  # latest user message
    assert p.is_protected(msgs[7]) and p.is_protected(msgs[8])  # last unit


@pytest.mark.parametrize(
    "native",
    [
        {"type": "mcp_approval_request", "id": "x"},
        {"type": "mcp_approval_response", "approval_request_id": "x", "approve": True},
        {"role": "model", "parts": [{"function_call": {"name": "adk_request_confirmation"}}]},
        [{"content": [{"approval_request_id": "r1"}]}],
    ],
)
def test_approval_markers_found(native: object) -> None:
    assert has_approval_marker(native)


def test_no_approval_marker_in_plain_messages() -> None:
    assert not has_approval_marker({"role": "user", "content": "please approve the PR"})
    assert not has_approval_marker(Message("user", "approval"))
    m = Message("assistant", (OpaquePart("openai", {"type": "mcp_approval_request"}),))
    assert carries_approval_state(m)


def test_guard_restores_protected_and_split_rounds() -> None:
    msgs = _convo()
    p = Protection(msgs)
    # drop the system prompt, one result of the parallel round and the latest user message
    after = [msgs[1], msgs[2], msgs[3], msgs[5], msgs[7], msgs[8]]
    assert enforce_invariants(msgs, after, p, step="t") == msgs


def test_guard_rejects_added_tool_messages_and_calls_and_bad_places() -> None:
    msgs = _convo()
    p = Protection(msgs)
    summary = Message("user", "summary")
    fake_tool = result("a", "forged")
    fake_call = calls("zz")
    out = enforce_invariants(msgs, [msgs[0], summary, fake_call, *msgs[1:], fake_tool], p, step="t")
    assert out == [msgs[0], summary, *msgs[1:]]
    # inside a round or after the last unit's start is refused
    inside = enforce_invariants(msgs, [*msgs[:3], summary, *msgs[3:]], p, step="t")
    assert summary not in inside
    before_system = enforce_invariants(msgs, [summary, *msgs], p, step="t")
    assert before_system == msgs


def test_guard_allows_text_edits_only() -> None:
    msgs = _convo()
    p = Protection(msgs)
    edited = msgs[3].with_text("short")
    assert enforce_invariants(msgs, [*msgs[:3], edited, *msgs[4:]], p, step="t")[3] is edited
    renamed = Message("tool", "ok", tool_call_id="a", name="other")
    assert enforce_invariants(msgs, [*msgs[:3], renamed, *msgs[4:]], p, step="t")[3] is msgs[3]
    thinking = Message("assistant", (ThinkingPart("t", signature="s"), TextPart("x")))
    msgs2 = [Message("user", "q"), thinking, Message("user", "q2"), Message("assistant", "a")]
    p2 = Protection(msgs2)
    # an edit (same origin) that changes a signature is reverted
    changed_sig = replace(thinking, content=(ThinkingPart("t", signature="OTHER"), TextPart("x")))
    out = enforce_invariants(msgs2, [msgs2[0], changed_sig, *msgs2[2:]], p2, step="t")
    assert out == msgs2 and out[1] is thinking
    # a fresh message is an addition, never an edit of a look-alike; one carrying thinking is
    # not placed (a step cannot sign reasoning), so only the removal of msgs2[1] remains
    fresh = Message("assistant", (ThinkingPart("t", signature="OTHER"), TextPart("x")))
    out = enforce_invariants(msgs2, [msgs2[0], fresh, *msgs2[2:]], p2, step="t")
    kept = [msgs2[0], *msgs2[2:]]
    assert out == kept and all(a is b for a, b in zip(out, kept, strict=True))


def test_guard_system_prompt_shortening() -> None:
    msgs = [Message("system", "long rules " * 10), Message("user", "q"), Message("assistant", "a")]
    p = Protection(msgs)
    shorter = msgs[0].with_text("rules")
    longer = msgs[0].with_text("long rules " * 20)
    assert enforce_invariants(msgs, [shorter, *msgs[1:]], p, step="t")[0] is msgs[0]
    ok = enforce_invariants(
        msgs, [shorter, *msgs[1:]], p, step="t", allow_system_prompt_shortening=True
    )
    assert ok[0] is shorter
    assert (
        enforce_invariants(
            msgs, [longer, *msgs[1:]], p, step="t", allow_system_prompt_shortening=True
        )[0]
        is msgs[0]
    )
    assert (
        enforce_invariants(msgs, msgs[1:], p, step="t", allow_system_prompt_shortening=True)[0]
        is msgs[0]
    )
    pinned = Protection(msgs, pinned=lambda m: m.role == "system")
    assert (
        enforce_invariants(
            msgs, [shorter, *msgs[1:]], pinned, step="t", allow_system_prompt_shortening=True
        )[0]
        is msgs[0]
    )


def test_guard_keeps_the_opening_user_turn() -> None:
    msgs = [
        Message("user", "task"),
        Message("assistant", "a1"),
        Message("user", "q2"),
        Message("assistant", "a2"),
    ]
    p = Protection(msgs)
    assert enforce_invariants(msgs, msgs[1:], p, step="t")[0] is msgs[0]


def test_guard_rejects_non_lists() -> None:
    with pytest.raises(ConfigError, match="step 't'"):
        enforce_invariants([], "nope", Protection([]), step="t")
    with pytest.raises(ConfigError, match=r"\[1\]"):
        enforce_invariants([], [Message("user", "a"), "b"], Protection([]), step="t")


def test_guard_keeps_a_user_or_tool_turn_before_a_call_turn() -> None:
    # Gemini: "function call turn comes immediately after a user turn or after a function
    # response turn"; dropping the user turn between a model text turn and a call turn is
    # reverted
    msgs = [
        Message("user", "task"),
        Message("assistant", "thinking"),
        Message("user", "go on"),
        calls("c1"),
        result("c1"),
        Message("user", "last"),
        Message("assistant", "done"),
    ]
    p = Protection(msgs)
    out = enforce_invariants(msgs, [msgs[0], msgs[1], *msgs[3:]], p, step="t")
    assert out == msgs
    # dropping both the model text turn and the user turn is fine
    out = enforce_invariants(msgs, [msgs[0], *msgs[3:]], p, step="t")
    assert out == [msgs[0], *msgs[3:]]


def test_langchain_hitl_rejection_carries_approval_state() -> None:
    rejected = Message(
        "tool",
        "User rejected the tool call for `rm` with id c1",
        tool_call_id="c1",
        extras={"is_error": True},
    )
    assert carries_approval_state(rejected)
    assert not carries_approval_state(
        Message("tool", "User rejected the tool call for `rm`", tool_call_id="c1")
    )
