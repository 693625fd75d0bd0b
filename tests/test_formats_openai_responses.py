"""The ``openai`` format, Responses items: mapping, detection, rebuild, round trips and
validity after compression of generated item lists.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _openai_cases import (
    ANTHROPIC,
    ITEMS,
    OPENAI,
    REASONING,
    RESPONSES,
    STEP_LISTS,
    _assert_compression_keeps_validity,
    compressed,
    responses_conversations,
    tokens,
)
from agent_adapter._errors import ConfigError
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.context._units import Protection
from agent_adapter.context.formats import check, convert, detect_format, strip_reserved
from agent_adapter.context.formats._carrier import RESERVED_KEY
from agent_adapter.context.formats._openai import ChatConverter, ResponsesConverter
from agent_adapter.context.formats._openai._items import ITEM_TYPES

FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------------
# Responses mapping


def test_responses_items_map_one_to_one() -> None:
    assert detect_format(ITEMS) == "openai"
    conv = convert(ITEMS)
    m = conv.messages
    assert len(m) == len(ITEMS) - 1  # the two parallel function calls are one message
    assert m[0] == Message("system", "rules", extras={"role": "developer"})
    assert m[1].content[0] == TextPart("hi")
    assert m[1].content[1] == ImagePart(url="https://x/i.png", detail="low")
    assert m[1].content[2] == FilePart(data="UEQ=", media_type="application/pdf", filename="a.pdf")
    (thinking,) = m[2].content
    assert m[2].role == "assistant" and not m[2].tool_calls
    assert thinking == ThinkingPart("think\n\nmore", "gAAAA==", extras=REASONING)
    assert m[3].tool_calls == (
        ToolCall("call_1", "calc", '{"x":1}'),
        ToolCall("call_2", "calc", '{"x":2}', {"id": "fc_2", "status": "completed"}),
    )
    assert m[3].extras == {"type": "function_call", "id": "fc_1", "status": "completed"}
    assert m[4] == Message(
        "tool", "two", tool_call_id="call_2", extras={"type": "function_call_output"}
    )
    assert m[5].content[0] == TextPart("one")
    assert m[6].tool_calls == (ToolCall("call_3", "patch", "diff"),)
    assert m[8].tool_calls[0].name == "computer"
    assert json.loads(m[8].tool_calls[0].arguments) == {"action": {"type": "click", "x": 1}}
    assert m[9].tool_call_id == "cc_1"
    assert m[9].content == (
        ImagePart(data="QQ", media_type="image/png", extras={"type": "computer_screenshot"}),
    )
    assert m[10].tool_calls[0].id == "lsc_1" and m[11].tool_call_id == "lsc_1"
    for k in range(13, 22):
        assert m[k - 1].content == (OpaquePart("openai", ITEMS[k]),), k
        assert m[k - 1].content[0].data is ITEMS[k]
        assert m[k - 1].extras == {"type": ITEMS[k]["type"]}
    assert m[14].role == "user" and m[13].role == "assistant"
    assert conv.back(list(m)) is ITEMS
    for message in m:
        dumped = OPENAI.dump(message)
        assert OPENAI.load(dumped, 0) == [message]
        # one item holds one call: the second call of the parallel round rides in the carrier
        assert (RESERVED_KEY in dumped) == (message is m[3]), dumped
    assert [OPENAI.dump(x) for x in m[4:]] == ITEMS[5:]
    # written as a list, the parallel round is its two call items again
    assert strip_reserved(RESPONSES.dump_all(m[2:])) == ITEMS[2:]
    assert RESPONSES.load_all(RESPONSES.dump_all(m))[0] == m


def test_approval_items_are_protected() -> None:
    m = convert(ITEMS).messages
    protection = Protection(m, protect_newest_turn=False)
    assert protection.is_protected(m[13])  # request
    assert protection.is_protected(m[14])  # response
    assert protection.is_protected(m[15])  # mcp_call made with an approval


def test_responses_rebuild_keeps_ids_status_and_annotations() -> None:
    items = [
        {"role": "user", "content": "q"},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "long " * 40, "annotations": [{"x": 1}]},
                {"type": "refusal", "refusal": "r"},
            ],
        },
        {"type": "function_call", "id": "fc_1", "call_id": "c", "name": "f", "arguments": "{}"},
        {
            "type": "function_call_output",
            "call_id": "c",
            "output": [
                {"type": "input_text", "text": "out " * 40},
                {"type": "input_image", "file_id": "f"},
            ],
        },
        {"role": "user", "content": "go"},
    ]
    conv = convert(items)
    m = conv.messages
    out = conv.back([m[0], m[1].with_text("short"), m[2], m[3].with_text("cut"), m[4]])
    assert out[0] is items[0] and out[2] is items[2] and out[4] is items[4]
    assert out[1] == {
        **items[1],
        "content": [{**items[1]["content"][0], "text": "short"}, items[1]["content"][1]],
    }
    assert out[3] == {
        **items[3],
        "output": [{"type": "input_text", "text": "cut"}, items[3]["output"][1]],
    }
    assert out[3]["output"][1] is items[3]["output"][1]


def test_responses_detection_and_mixing() -> None:
    assert OPENAI.kind(REASONING) == "sure"
    assert OPENAI.kind({"type": "brand_new_item"}) == "maybe"
    assert OPENAI.kind({"role": "user", "content": [{"type": "input_text", "text": "x"}]}) == "sure"
    assert OPENAI.kind({"role": "user", "content": "x"}) == "maybe"
    assert ANTHROPIC.kind(REASONING) is None
    mixed = [{"role": "tool", "tool_call_id": "c", "content": "x"}, REASONING]
    with pytest.raises(ConfigError, match="mix"):
        convert(mixed, "openai")
    violations = check(mixed, "openai")
    assert any(v.rule == "mixed_formats" for v in violations)


def test_bound_converter_writes_responses_items_for_added_messages() -> None:
    assert (
        OPENAI.bind(ITEMS) is RESPONSES
        and OPENAI.bind([{"role": "user", "content": "x"}]) is OPENAI
    )
    chat_list = [
        {"role": "user", "content": "x"},
        {"role": "tool", "tool_call_id": "c", "content": ""},
    ]
    assert isinstance(OPENAI.bind(chat_list), ChatConverter)
    assert isinstance(RESPONSES, ResponsesConverter)
    summary = Message("user", (TextPart("summary"),))
    assert RESPONSES.dump(summary) == {
        "role": "user",
        "content": [{"type": "input_text", "text": "summary"}],
    }
    assert OPENAI.dump(summary) == {
        "role": "user",
        "content": [{"type": "text", "text": "summary"}],
    }
    answer = Message("assistant", "a")
    assert RESPONSES.dump(answer) == OPENAI.dump(answer) == {"role": "assistant", "content": "a"}


# --------------------------------------------------------------------------------------------
# properties


@FAST
@given(responses_conversations(), STEP_LISTS, st.floats(0.02, 1.0))
def test_compressed_responses_stay_valid(
    natives: list[dict[str, Any]], steps: list[Any], ratio: float
) -> None:
    _assert_compression_keeps_validity(natives, steps, ratio)
    out = compressed(natives, "openai", int(tokens(natives, "openai") * ratio), steps)
    for k, item in enumerate(natives):  # a reasoning item and the item after it go together
        if item.get("type") == "reasoning":
            nxt = natives[k + 1]
            kept_next = any(o is nxt or (o.get("id") and o.get("id") == nxt.get("id")) for o in out)
            assert any(o is item for o in out) == kept_next


@FAST
@given(responses_conversations())
def test_responses_round_trip(items: list[dict[str, Any]]) -> None:
    conv = convert(items)
    assert conv.back(list(conv.messages)) is items
    for message in conv.messages:
        assert OPENAI.load(OPENAI.dump(message), 0) == [message]
        assert ANTHROPIC.load(ANTHROPIC.dump(message), 0) == [message]
    assert all(t in ITEM_TYPES for t in {i.get("type", "message") for i in items})
