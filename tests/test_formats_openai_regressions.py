"""The ``openai`` format, Responses regressions: outputs, reasoning items and approval
requests stay with what they belong to; deep arguments are config errors.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from _openai_cases import ANTHROPIC, ITEMS, REASONING, compressed, every_step
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ThinkingPart, ToolCall
from agent_adapter.context import CompressionPolicy, MyOwnStep, RemoveOldMessages, compress_for_sync
from agent_adapter.context.formats import check, convert, strip_reserved

# --------------------------------------------------------------------------------------------
# Responses regressions


def test_output_never_sent_without_its_call() -> None:
    items = [
        {"role": "user", "content": "hi"},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "calc",
            "arguments": "{}",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "x" * 2000},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "42"}],
        },
    ]
    out = compressed(items, "openai", 1, [RemoveOldMessages(keep_first=0, keep_last=2)])
    kinds = [i.get("type") for i in out]
    assert ("function_call" in kinds) == ("function_call_output" in kinds)
    assert check(out, "openai") == []


def test_a_pending_parallel_round_of_responses_items_is_one_message() -> None:
    items = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
    ]
    chat = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                for i in ("a", "b")
            ],
        },
    ]
    conv = convert(items)
    user, calls = conv.messages  # was: one message per call item, so 'a' went unanswered
    assert [c.id for c in calls.tool_calls] == ["a", "b"]
    assert [(m.role, m.text, m.tool_calls) for m in conv.messages] == [
        (m.role, m.text, m.tool_calls) for m in convert(chat).messages
    ]
    for target in (1, 5, 1000):  # the newest round may be pending, as in Chat
        out, _ = compress_for_sync(items, CompressionPolicy(target_tokens=target))
        assert out is items
    assert conv.back([user]) == items[:1]  # the round goes whole
    same = conv.back([user, calls.with_text("")])  # rebuilt: the very same call items
    assert all(a is b for a, b in zip(same, items, strict=True))
    out = conv.back([user, calls.with_text("Looking.")])
    assert convert(out).messages[1] == calls.with_text("Looking.")
    assert out[2:] == items[1:]
    assert {v.rule for v in check(strip_reserved(out), "openai")} == {"calls_pending_at_end"}


def _nested_json(depth: int) -> str:
    return '{"a":' * depth + "{}" + "}" * depth


def test_deeply_nested_arguments_are_config_errors() -> None:
    deep = _nested_json(1000)
    chat = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "t", "type": "function", "function": {"name": "f", "arguments": deep}}
            ],
        },
        {"role": "tool", "tool_call_id": "t", "content": "x"},
    ]
    action: Any = {}
    for _ in range(1000):
        action = {"a": action}
    responses = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "t", "name": "f", "arguments": deep},
        {"type": "function_call_output", "call_id": "t", "output": "x"},
    ]
    computer = [
        {"role": "user", "content": "hi"},
        {"type": "computer_call", "call_id": "t", "action": action},
        {"type": "computer_call_output", "call_id": "t", "output": "x"},
    ]
    policy = CompressionPolicy(target_tokens=5)
    for natives, field in [
        (chat, r"messages\[1\]\.tool_calls\[0\]\.function\.arguments"),
        (responses, r"input\[1\]\.arguments"),
        (computer, r"input\[1\]\.action"),
    ]:
        with pytest.raises(ConfigError, match=field + " is nested more than"):
            convert(natives)
        with pytest.raises(ConfigError, match=field):  # was RecursionError (computer_call)
            compress_for_sync(natives, policy)
    chat[1]["tool_calls"][0]["function"]["arguments"] = _nested_json(150)
    assert len(convert(chat).messages) == 3  # deep, but within the limit
    # a message holding such arguments is never parsed on dump: the text rides in the carrier
    message = Message("assistant", "", tool_calls=(ToolCall("t", "f", deep),))
    assert ANTHROPIC.load(ANTHROPIC.dump(message), 0) == [message]


@pytest.mark.parametrize("drop", ["reasoning", "call"])
def test_reasoning_and_its_call_go_together(drop: str) -> None:
    items = [
        {"role": "user", "content": "old " * 200},
        {"role": "assistant", "content": "ok " * 200},
        dict(REASONING),
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "f",
            "arguments": "{}",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "r " * 200},
        {"role": "user", "content": "new"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
    ]
    victim = 2 if drop == "reasoning" else 3

    def remove(messages: list[Message]) -> list[Message]:
        return [m for k, m in enumerate(messages) if k != victim]

    for steps in ([MyOwnStep(fn=remove)], [RemoveOldMessages(keep_first=0, keep_last=1)]):
        out = compressed(items, "openai", 5, steps)
        assert check(out, "openai") == []
        assert (items[2] in out) == (items[3] in out)


def test_reasoning_is_never_split_from_its_item_in_units() -> None:
    from agent_adapter.context import split_units

    m = convert(ITEMS).messages
    for unit in split_units(m):
        if unit.messages[-1].content and isinstance(unit.messages[-1].content[0], ThinkingPart):
            pytest.fail("a unit ends on a reasoning item")
    (unit,) = [u for u in split_units(m) if u.start == 2]
    assert unit.stop >= 6  # reasoning, the parallel calls (one message) and both outputs


@pytest.mark.parametrize("answered", [False, True])
def test_approval_request_is_never_dropped_or_changed(answered: bool) -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "clean up " * 100},
        {
            "type": "mcp_approval_request",
            "id": "mcpr_1",
            "server_label": "s",
            "name": "rm",
            "arguments": json.dumps({"path": "x" * 3000}),
        },
    ]
    if answered:
        items.append(
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": False}
        )
    items += [
        {"role": "assistant", "content": "waiting " * 100},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": "done"},
    ]
    for step in [*every_step(), RemoveOldMessages(keep_first=0, keep_last=0)]:
        out = compressed(items, "openai", 1, [step])
        assert items[1] in out and any(o is items[1] for o in out)
        if answered:
            assert any(o is items[2] for o in out)
        assert check(out, "openai") == []
