"""The ``openai`` format, Chat Completions dicts: mapping, rebuild, valid after compression.

The strategies live in ``_openai_cases.py``; ``test_check.py`` imports
``chat_conversations`` and ``responses_conversations`` from here.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _openai_cases import (
    OPENAI,
    STEP_LISTS,
    _assert_compression_keeps_validity,
    chat_conversations,
    responses_conversations,  # noqa: F401 (re-exported for test_check.py)
)
from agent_adapter._messages import FilePart, ImagePart, Message, OpaquePart, ToolCall
from agent_adapter.context.formats import convert
from agent_adapter.context.formats._carrier import RESERVED_KEY

FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------------
# Chat Completions mapping


def test_chat_message_fields_map_to_message() -> None:
    natives = [
        {"role": "developer", "content": "rules"},
        {
            "role": "user",
            "name": "ann",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,QUJD", "detail": "high"},
                },
                {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
                {
                    "type": "file",
                    "file": {"file_data": "data:application/pdf;base64,UEQ=", "filename": "a.pdf"},
                },
                {"type": "input_audio", "input_audio": {"data": "QQ==", "format": "wav"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}},
                {"id": "c2", "type": "custom", "custom": {"name": "patch", "input": "*** diff"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}], "refusal": "no"},
    ]
    conv = convert(natives)
    m = conv.messages
    assert conv.format == "openai"
    assert m[0] == Message("system", "rules", extras={"role": "developer"})
    assert m[1].name == "ann"
    assert m[1].content[1] == ImagePart(data="QUJD", media_type="image/png", detail="high")
    assert m[1].content[2] == ImagePart(url="https://x/a.png")
    assert m[1].content[3] == FilePart(data="UEQ=", media_type="application/pdf", filename="a.pdf")
    assert isinstance(m[1].content[4], OpaquePart)
    assert [c.id for c in m[2].tool_calls] == ["c1", "c2"]
    assert m[2].tool_calls[1] == ToolCall("c2", "patch", "*** diff", {"type": "custom"})
    assert m[5].extras == {"refusal": "no"}
    assert conv.back(list(m)) is natives
    for message in m:
        dumped = OPENAI.dump(message)
        assert RESERVED_KEY not in dumped
        assert OPENAI.load(dumped, 0) == [message]
    # chat-shaped dumps come back byte for byte for what the chat API documents
    assert OPENAI.dump(m[1])["content"][1:4] == natives[1]["content"][1:4]
    assert OPENAI.dump(m[2])["tool_calls"] == natives[2]["tool_calls"]


def test_chat_rebuild_keeps_every_field_but_the_text() -> None:
    natives = [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "long " * 50},
                {"type": "refusal", "refusal": "r"},
            ],
            "name": "bot",
            "audio": {"id": "a1"},
        },
        {"role": "user", "content": "go"},
    ]
    conv = convert(natives)
    changed = conv.messages[1].with_text("short")
    out = conv.back([conv.messages[0], changed, conv.messages[2]])
    assert out[0] is natives[0] and out[2] is natives[2]
    assert out[1] == {
        **natives[1],
        "content": [{"type": "text", "text": "short"}, natives[1]["content"][1]],
    }
    assert out[1]["content"][1] is natives[1]["content"][1]


# --------------------------------------------------------------------------------------------
# properties


@FAST
@given(chat_conversations(), STEP_LISTS, st.floats(0.02, 1.0))
def test_compressed_chat_stays_valid(
    natives: list[dict[str, Any]], steps: list[Any], ratio: float
) -> None:
    _assert_compression_keeps_validity(natives, steps, ratio)
