"""The ``openai`` format, whole Responses lists: rebuilt carried items stay Responses items,
``dump_all`` writes each call as its own item and groups stay together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _openai_cases import (
    ARGS,
    OPENAI,
    OPT,
    RESPONSES,
    STEP_LISTS,
    TEXT,
    WORDS,
    any_messages,
    compressed,
    tokens,
)
from agent_adapter._messages import Message, TextPart, ThinkingPart, ToolCall
from agent_adapter.context.formats import Conversion, Converter, check, convert, strip_reserved
from agent_adapter.context.formats._carrier import RESERVED_KEY

FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------------
# Responses lists: rebuilt carried items stay Responses items; dump_all writes call items


def _rules(natives: list[Any], ignore: tuple[str, ...] = ("reserved_key",)) -> list[str]:
    return [v.rule for v in check(natives, "openai") if v.rule not in ignore]


def test_changed_carried_item_in_a_responses_list_stays_a_responses_item() -> None:
    msgs = [
        Message("user", "q"),
        Message("assistant", "Let me look.", tool_calls=(ToolCall("c1", "f", "{}"),)),
        Message("tool", "r", tool_call_id="c1"),
    ]
    conv = convert([RESPONSES.dump(m) for m in msgs], "openai")
    m = conv.messages
    now = [m[0], m[1].with_text("Look."), m[2]]
    out = conv.back(now)
    assert _rules(out) == []  # was mixed_formats: a Chat dict with tool_calls
    assert check(strip_reserved(out), "openai") == []  # the call is an item of its own now
    assert convert(out, "openai").messages == now
    assert all("tool_calls" not in item for item in out)


def test_dump_all_writes_each_call_as_its_own_item() -> None:
    thinking = ThinkingPart("plan", "SIG==")
    msgs = [
        Message("user", "q"),
        Message(
            "assistant",
            (thinking, TextPart("Let me look.")),
            tool_calls=(
                ToolCall("c1", "f", '{"a": 1}'),
                ToolCall("c2", "patch", "raw", {"type": "custom"}),
            ),
        ),
        Message("tool", "r1", tool_call_id="c1"),
        Message("tool", "r2", tool_call_id="c2"),
        Message("assistant", "", tool_calls=(ToolCall("c3", "f"), ToolCall("c4", "g"))),
        Message("tool", "r3", tool_call_id="c3"),
        Message("tool", "r4", tool_call_id="c4"),
        Message("user", "thanks"),
    ]
    items = RESPONSES.dump_all(msgs)
    clean = strip_reserved(items)
    assert clean[1:4] == [
        {
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}],
        },
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a": 1}'},
        {"type": "custom_tool_call", "call_id": "c2", "name": "patch", "input": "raw"},
    ]
    assert clean[6:8] == [  # no text: the first call's item leads the group
        {"type": "function_call", "call_id": "c3", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c4", "name": "g", "arguments": "{}"},
    ]
    assert items[1][RESERVED_KEY]["group"] == 3 and items[6][RESERVED_KEY]["group"] == 2
    assert check(clean, "openai") == []
    assert RESPONSES.load_all(items)[0] == msgs
    _, ranges, members = RESPONSES.load_grouped(items)
    assert ranges[1:4] == [(1, 2), (2, 2), (2, 2)] and members == {2: 1, 3: 1, 7: 6}
    # dump (one native per message) stays lossless, with the calls in the carrier
    assert RESPONSES.load(RESPONSES.dump(msgs[1]), 1) == [msgs[1]]
    assert [RESPONSES.dump(m) for m in msgs] != items
    # without its group marker (stripped) the message item and the run of call items after
    # it (parallel calls) are two messages
    stripped = convert(clean, "openai").messages
    assert len(stripped) == len(clean) - 2
    assert stripped[1] == Message("assistant", (TextPart("Let me look."),))
    assert [c.id for c in stripped[2].tool_calls] == ["c1", "c2"]


def test_a_group_stays_together_through_back() -> None:
    msgs = [
        Message("user", "q"),
        Message("assistant", "long " * 30, tool_calls=(ToolCall("c1", "f"), ToolCall("c2", "g"))),
        Message("tool", "r1", tool_call_id="c1"),
        Message("tool", "r2", tool_call_id="c2"),
        Message("user", "next"),
    ]
    items = RESPONSES.dump_all(msgs)
    conv = convert(items, "openai")
    m = conv.messages
    assert m == msgs
    assert conv.back(list(m)) is items
    # changed text: the message item is rebuilt, its call items are the very same objects
    out = conv.back([m[0], m[1].with_text("short"), *m[2:]])
    assert len(out) == len(items) and out[1] is not items[1]
    assert all(out[k] is items[k] for k in (0, 2, 3, 4, 5, 6))
    assert convert(out, "openai").messages == [m[0], m[1].with_text("short"), *m[2:]]
    # an equal copy of the message: every item comes back as the same object
    again = [Message(x.role, x.content, x.tool_calls, x.tool_call_id, x.name, x.extras) for x in m]
    assert all(a is b for a, b in zip(conv.back(again), items, strict=True))
    # the message dropped with its results: no orphan call item is left
    out = conv.back([m[0], m[4]])
    assert out == [items[0], items[6]] and check(out, "openai") == []
    # a message added after the group's message goes after its call items
    note = Message("user", "note")
    out = conv.back([m[0], m[1], note, *m[2:]])
    assert out[:4] == items[:4] and convert(out, "openai").messages[2] == note
    # text emptied: the group is written again from its first call (a new leader)
    out = conv.back([m[0], m[1].with_text(""), *m[2:]])
    assert convert(out, "openai").messages[1] == m[1].with_text("")
    assert check(strip_reserved(out), "openai") == []


def test_an_edited_group_loads_one_message_per_item() -> None:
    msgs = [
        Message("user", "q"),
        Message("assistant", "x", tool_calls=(ToolCall("c1", "f"),)),
        Message("tool", "r", tool_call_id="c1"),
    ]
    items = RESPONSES.dump_all(msgs)
    items[2] = {**items[2], "zz": 1}  # a member with a key dump_all does not write
    loaded, _, members = RESPONSES.load_grouped(items)
    assert members == {} and len(loaded) == 4 and loaded[2].tool_calls[0].id == "c1"
    assert RESPONSES.load_all(items[:2])[0][1].text == "x"  # the leader without its member


def test_back_dumps_runs_of_added_messages_once() -> None:
    runs: list[list[str]] = []

    class Lines(Converter[str]):
        name = "lines"

        def kind(self, item: Any) -> str | None:
            return None

        def load(self, native: str, index: int) -> list[Message]:
            return [Message("user", native)] if native else []  # "" loads to no message

        def rebuild(self, native: str, originals: Any, now: Any) -> list[str]:
            return [native]

        def dump(self, message: Message) -> str:
            return message.text

        def dump_all(self, messages: Sequence[Message]) -> list[str]:
            runs.append([m.text for m in messages])
            return [m.text.upper() for m in messages]

    conv = Conversion(["a", "", "b"], Lines())
    a, b = conv.messages
    out = conv.back([a, Message("user", "x"), Message("user", "y"), b, Message("user", "z")])
    assert out == ["a", "X", "Y", "", "b", "Z"]
    assert [r for r in runs if r] == [["x", "y"], ["z"]]


GROUP_CALL_EXTRAS = st.sampled_from([{}, {}, {"type": "custom"}, {"thought_signature": "c2ln"}])


@st.composite
def multi_call_conversations(draw: st.DrawFn, pending: bool = True) -> list[Message]:
    """Conversations whose assistant messages hold text, thinking parts and 0..4 calls, each
    call answered (in any order) unless ``pending`` leaves the last ones open."""
    out = [Message("user", draw(TEXT))]
    rounds = draw(st.integers(1, 4))
    for n in range(rounds):
        calls = tuple(
            ToolCall(f"call_{n}_{j}", draw(st.sampled_from(["f", "g"])), draw(ARGS), extras)
            for j, extras in enumerate(draw(st.lists(GROUP_CALL_EXTRAS, max_size=4)))
        )
        thinking = draw(st.lists(st.builds(ThinkingPart, WORDS, OPT), max_size=2))
        text = draw(st.none() | TEXT)
        if text is None and not calls:
            text = draw(TEXT)  # a thinking-only message is a reasoning item: not tested here
        content: Any
        if not thinking and draw(st.booleans()):
            content = text or ""
        else:
            content = (*thinking, *([TextPart(text)] if text is not None else []))
        out.append(Message("assistant", content, tool_calls=calls, name=draw(st.none() | WORDS)))
        open_end = pending and n == rounds - 1 and draw(st.booleans())
        if calls and not open_end:
            for call in draw(st.permutations(calls)):
                out.append(Message("tool", draw(TEXT), tool_call_id=call.id))
        if not open_end:
            out.append(Message("user", draw(TEXT)))
    return out


@FAST
@given(multi_call_conversations())
def test_dump_all_is_lossless_and_sendable_once_stripped(msgs: list[Message]) -> None:
    items = RESPONSES.dump_all(msgs)
    assert RESPONSES.load_all(items)[0] == msgs
    assert convert(items, "openai").messages == msgs
    assert set(_rules(strip_reserved(items), ())) <= {"calls_pending_at_end"}
    calls = sum(len(m.tool_calls) for m in msgs)
    assert sum(1 for i in items if i.get("type") in ("function_call", "custom_tool_call")) == calls
    assert OPENAI.dump_all(msgs) == [OPENAI.dump(m) for m in msgs]  # a Chat dict holds any


@FAST
@given(st.lists(any_messages(), max_size=5))
def test_dump_all_of_any_messages_loads_back(msgs: list[Message]) -> None:
    items = RESPONSES.dump_all(msgs)
    assert RESPONSES.load_all(items)[0] == msgs
    assert "mixed_formats" not in _rules(items)  # only Responses items in a Responses list


@FAST
@given(multi_call_conversations(pending=False), STEP_LISTS, st.floats(0.02, 1.0))
def test_compressed_dump_all_lists_stay_valid(
    msgs: list[Message], steps: list[Any], ratio: float
) -> None:
    items = RESPONSES.dump_all(msgs)
    assert _rules(items) == []
    target = int(tokens(items, "openai") * ratio)
    out = compressed(items, "openai", target, steps)
    assert _rules(out) == []
    assert check(strip_reserved(out), "openai") == []
    for native in out:
        if any(native == n for n in items):
            assert any(native is n for n in items)
    stripped = strip_reserved(items)
    assert check(compressed(stripped, "openai", target, steps), "openai") == []
