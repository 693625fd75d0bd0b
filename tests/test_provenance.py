"""Provenance: what a step kept, changed or added is known, never guessed (regressions)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ToolCall
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MyOwnStep,
    ShrinkToolResults,
    compress,
    compress_for_sync,
)
from agent_adapter.context._provenance import trace
from agent_adapter.context.formats import check


def _drop_and_cut(drop: set[int], cut: int) -> MyOwnStep:
    """A step that removes the messages at ``drop`` and cuts the text of ``cut``."""

    def fn(messages: list[Message]) -> list[Message]:
        out = []
        for i, m in enumerate(messages):
            if i in drop:
                continue
            out.append(m.with_text(m.text[:40]) if i == cut else m)
        return out

    return MyOwnStep(fn=fn)


def _policy(step: Any, target: int = 60) -> CompressionPolicy:
    return CompressionPolicy(threshold_tokens=target + 1, target_tokens=target, steps=[step])


def test_responses_cut_report_stays_on_its_own_item_and_reasoning_keeps_its_message() -> None:
    # the exact reproducer of the issue: a bare rs_A before a user item and the REPORT gone
    items: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hello"},
        {"type": "reasoning", "id": "rs_A", "summary": [], "encrypted_content": "enc"},
        {
            "type": "message",
            "id": "msg_A",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "first answer " * 100}],
        },
        {"role": "user", "content": "please write the report " * 100},
        {
            "type": "message",
            "id": "msg_B",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "REPORT line " * 1000}],
        },
        {"role": "user", "content": "thanks"},
        {
            "type": "message",
            "id": "msg_C",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "short"}],
        },
        {"role": "user", "content": "ok last question"},
    ]
    out, report = compress_for_sync(items, CompressionPolicy(target_tokens=2100))
    assert report.reached_target
    assert check(out, "openai") == []
    by_id = {o.get("id"): o for o in out if o.get("type") == "message"}
    assert by_id["msg_B"]["content"][0]["text"].startswith("REPORT line")
    for k, o in enumerate(out):  # a reasoning item is followed by its own message
        if o.get("type") == "reasoning":
            assert out[k + 1].get("id") == "msg_A"


# one case a format: natives [user, A1, user, A2, user]; the step drops A1 and the user turn
# after it and cuts A2. Guessing put A2's text on A1's native (the first removed assistant).
GRAFTS: dict[str, tuple[Callable[[], list[Any]], Callable[[Any], tuple[Any, str]]]] = {
    "openai": (
        lambda: [
            {"role": "user", "content": "q1"},
            {"role": "assistant", "name": "alpha", "content": "first"},
            {"role": "user", "content": "q2"},
            {"role": "assistant", "name": "beta", "content": "SECOND " * 50},
            {"role": "user", "content": "q3"},
        ],
        lambda n: (n.get("name"), n["content"]),
    ),
    "anthropic": (
        lambda: [
            {"role": "user", "content": "q1"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "t1", "signature": "sig1"},
                    {"type": "text", "text": "first"},
                ],
            },
            {"role": "user", "content": "q2"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "t2", "signature": "sig2"},
                    {"type": "text", "text": "SECOND " * 50},
                ],
            },
            {"role": "user", "content": "q3"},
        ],
        lambda n: (n["content"][0]["signature"], n["content"][-1]["text"]),
    ),
    "gemini": (
        lambda: [
            {"role": "user", "parts": [{"text": "q1"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "t1", "thought": True, "thought_signature": "c2lnMQ=="},
                    {"text": "first"},
                ],
            },
            {"role": "user", "parts": [{"text": "q2"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "t2", "thought": True, "thought_signature": "c2lnMg=="},
                    {"text": "SECOND " * 50},
                ],
            },
            {"role": "user", "parts": [{"text": "q3"}]},
        ],
        lambda n: (n["parts"][0]["thought_signature"], n["parts"][-1]["text"]),
    ),
    "langchain": (
        lambda: [
            HumanMessage("q1", id="h1"),
            AIMessage("first", id="ai-1", response_metadata={"model_name": "m-one"}),
            HumanMessage("q2", id="h2"),
            AIMessage("SECOND " * 50, id="ai-2", response_metadata={"model_name": "m-two"}),
            HumanMessage("q3", id="h3"),
        ],
        lambda n: ((n.id, n.response_metadata["model_name"]), n.content),
    ),
}
OWN = {
    "openai": "beta",
    "anthropic": "sig2",
    "gemini": "c2lnMg==",
    "langchain": ("ai-2", "m-two"),
}


@pytest.mark.parametrize("fmt", sorted(GRAFTS))
def test_a_changed_message_is_rebuilt_on_its_own_native(fmt: str) -> None:
    build, fields = GRAFTS[fmt]
    natives = build()
    out, report = compress_for_sync(natives, _policy(_drop_and_cut({1, 2}, 3)), format=fmt)
    assert len(out) == 3 and out[0] is natives[0] and out[2] is natives[4]
    own, text = fields(out[1])
    assert own == OWN[fmt]
    assert text.startswith("SECOND") and len(text) < 50 * 7
    assert report.messages_removed == 2 and report.messages_changed == 1
    assert check(out, fmt) == []


def test_a_reused_call_id_keeps_each_round_its_own_arguments() -> None:
    natives = [
        {"role": "user", "content": "q1"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "user", "content": "q2"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 2}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "R2 " * 200},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "q3"},
    ]
    out, _ = compress_for_sync(natives, _policy(_drop_and_cut({1, 2, 3, 4}, 5)))
    calls = [o for o in out if o.get("tool_calls")]
    results = [o for o in out if o["role"] == "tool"]
    assert [c["tool_calls"][0]["function"]["arguments"] for c in calls] == ['{"x": 2}']
    assert [r["content"][:2] for r in results] == ["R2"]
    assert check(out, "openai") == []


def test_a_fresh_tool_result_with_the_ids_of_one_original_is_its_edit() -> None:
    msgs = [
        Message("user", "q"),
        Message("assistant", tool_calls=[ToolCall("a", "f")]),
        Message("tool", "x" * 4000, tool_call_id="a"),
        Message("assistant", "ok"),
        Message("user", "latest"),
    ]

    def rebuild(messages: list[Message]) -> list[Message]:
        return [
            Message("tool", "short", tool_call_id="a") if m.role == "tool" else m for m in messages
        ]

    out, report = _run(msgs, MyOwnStep(fn=rebuild))
    assert [m.text for m in out] == ["q", "", "short", "ok", "latest"]
    assert report.messages_changed == 1 and report.messages_added == 0


def _run(msgs: list[Message], step: Any, **kw: Any) -> Any:
    import asyncio

    return asyncio.run(compress(msgs, _policy(step, kw.pop("target", 60)), **kw))


def test_a_summary_replacing_langgraph_messages_with_ids_is_kept() -> None:
    natives = [
        SystemMessage("rules", id="s"),
        HumanMessage("old question " * 50, id="h1", name="ann"),
        AIMessage("old answer " * 50, id="a1"),
        HumanMessage("latest", id="h2"),
    ]

    def summarize(messages: list[Message]) -> list[Message]:
        return [messages[0], Message("user", "SUMMARY of earlier turns"), messages[-1]]

    out, report = compress_for_sync(natives, _policy(MyOwnStep(fn=summarize)))
    assert [type(o).__name__ for o in out] == ["SystemMessage", "HumanMessage", "HumanMessage"]
    assert out[0] is natives[0] and out[2] is natives[3]
    assert out[1].content == "SUMMARY of earlier turns" and out[1].id != "h1"
    assert report.messages_added == 1 and report.messages_removed == 2
    assert sum(s.changes_reverted for s in report.steps) == 0


def test_a_shortened_system_prompt_stays_protected_and_first() -> None:
    msgs = [
        Message("system", "rule " * 400),
        Message("user", "q " * 300),
        Message("assistant", "a " * 300),
        Message("user", "latest"),
    ]
    drop_all_but_last = MyOwnStep(fn=lambda ms: ms[-1:])
    policy = CompressionPolicy(
        threshold_tokens=101,
        target_tokens=100,
        steps=[
            CutLongMessages(max_tokens_per_message=50, include_system_prompt=True),
            drop_all_but_last,
        ],
    )
    import asyncio

    out, _ = asyncio.run(compress(msgs, policy))
    assert out[0].role == "system" and out[0].text.startswith("rule")
    assert len(out[0].text) < len(msgs[0].text)
    assert out[-1] is msgs[-1]


def test_shrink_tool_results_with_fewer_turns_than_older_than_turns_shrinks_nothing() -> None:
    msgs = [
        Message("user", "q"),
        Message("assistant", tool_calls=[ToolCall("a", "f")]),
        Message("tool", "x" * 8000, tool_call_id="a"),
        Message("assistant", tool_calls=[ToolCall("b", "f")]),
        Message("tool", "y" * 8000, tool_call_id="b"),
        Message("assistant", "done"),
        Message("user", "latest"),
    ]
    step = ShrinkToolResults(bigger_than_tokens=100, older_than_turns=5)
    out, _ = _run(msgs, step)
    assert all(a is b for a, b in zip(out, msgs, strict=True))
    out, _ = _run(msgs, ShrinkToolResults(bigger_than_tokens=100, older_than_turns=2))
    assert out[2] is not msgs[2] and out[4] is msgs[4]  # only the result older than 2 turns


@pytest.mark.parametrize("still", ["cut", MyOwnStep(fn=lambda ms: [ms[-1]])])
def test_pins_hold_in_every_if_still_too_long_mode(still: Any) -> None:
    big = Message("tool", "PINNED " * 3000, tool_call_id="a")
    msgs = [
        Message("user", "q"),
        Message("assistant", tool_calls=[ToolCall("a", "f")]),
        big,
        Message("assistant", "z " * 3000),
        Message("user", "latest"),
    ]
    policy = CompressionPolicy(
        threshold_tokens=101, target_tokens=100, steps=[], if_still_too_long=still
    )
    import asyncio

    out, _ = asyncio.run(compress(msgs, policy, pinned=lambda m: m is big))
    assert big in out and any(m is big for m in out)


def test_errors_name_the_index_in_the_callers_own_list() -> None:
    natives = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9", "content": "r"}]},
    ]
    with pytest.raises(ConfigError) as err:
        compress_for_sync(natives, CompressionPolicy(target_tokens=1), format="anthropic")
    text = str(err.value)
    assert "messages[4]" in text and "'t9'" in text and "anthropic" in text
    assert "messages[6]" not in text


def test_trace_by_identity_origin_and_unique_ids() -> None:
    a = Message("user", "a")
    b = Message("assistant", "b")
    c = Message("tool", "c", tool_call_id="x")
    calls = Message("assistant", tool_calls=[ToolCall("x", "f")])
    before = [a, calls, c, b]
    edited_b = dataclasses.replace(b, content="B")
    fresh_c = Message("tool", "C", tool_call_id="x")
    look_alike = Message("assistant", "b")  # equal to b, but not derived from it
    t = trace(before, [a, calls, fresh_c, look_alike, edited_b])
    assert t.slot[0] is a and t.slot[1] is calls and t.slot[3] is edited_b
    assert t.slot[2] is not None and t.slot[2].text == "C" and t.slot[2].origin == c.origin
    assert t.added == {3: [look_alike]}
    # a second copy of one origin is an addition with a fresh origin
    t = trace(before, [a, calls, c, b, dataclasses.replace(b)])
    (dup,) = t.added[4]
    assert dup == b and dup.origin != b.origin


def test_one_object_sent_twice_keeps_its_later_place_when_the_earlier_goes() -> None:
    # found by a break test: one Message object X twice in a list; RemoveOldMessages drops
    # the first copy and keeps the second, but the trace matched the kept X to the first
    # free position holding it: X moved up next to the note, and the later copy was lost
    # with no note in its place
    from agent_adapter.context import RemoveOldMessages, estimate_tokens
    from agent_adapter.context.formats import compress_for_sync

    big = "line of a long tool log\n" * 400
    x = Message("user", "Reminder of the rules. " + big)
    messages = [
        Message("user", "Fix the tests."), Message("assistant", "a0"), x,
        Message("assistant", "a1"), Message("user", "Y log " + big), Message("assistant", "a2"),
        Message("user", "Z log " + big), Message("assistant", "a3"), x,
        Message("assistant", "a4"), Message("user", "what now?"),
    ]  # fmt: skip
    policy = CompressionPolicy(
        threshold_tokens=estimate_tokens(messages) - 300, steps=[RemoveOldMessages()]
    )
    out, report = compress_for_sync(messages, policy, format="agent_adapter")
    assert report.steps
    texts = [m.text[:6] for m in out]
    assert [m for m in out if m is x] == [x]
    assert texts[-4:] == ["a3", x.text[:6], "a4", "what n"]
