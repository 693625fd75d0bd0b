"""The ``anthropic`` format: Messages dicts, lossless both ways.

The strategies live in ``_anthropic_cases.py``; ``test_check.py`` and the compression tests
import ``anthropic_conversations`` from here: those lists with thinking throughout (see
:func:`thinking_throughout`).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _anthropic_cases import (
    ANTHROPIC,
    EPHEMERAL,
    NATIVES,
    OPENAI,
    THINKING,
)
from _anthropic_cases import anthropic_conversations as _conversations
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
from agent_adapter.context import CompressionPolicy, compress_for_sync
from agent_adapter.context.formats import check, convert
from agent_adapter.context.formats._carrier import RESERVED_KEY

FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def thinking_throughout(natives: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``natives`` as the API writes them with extended thinking on for the whole
    conversation: once any assistant message holds a thinking block, every one starts with
    one. The generated lists mix messages with and without thinking; with thinking on for a
    turn its opener must start with thinking (``thinking_not_first``), and compression can
    make any later assistant message an opener."""
    if not any(
        b.get("type") in ("thinking", "redacted_thinking")
        for m in natives
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
    ):
        return natives
    out: list[dict[str, Any]] = []
    for n, m in enumerate(natives):
        blocks = m["content"]
        if m["role"] == "assistant" and blocks[0]["type"] not in ("thinking", "redacted_thinking"):
            first = {"type": "thinking", "thinking": "t", "signature": f"ErUBt{n}=="}
            m = {**m, "content": [first, *blocks]}
        out.append(m)
    return out


def anthropic_conversations() -> st.SearchStrategy[list[dict[str, Any]]]:
    """``_anthropic_cases.anthropic_conversations`` with thinking throughout."""
    return _conversations().map(thinking_throughout)


# --------------------------------------------------------------------------------------------
# mapping


def test_blocks_map_to_parts_calls_and_tool_messages() -> None:
    conv = convert(NATIVES)
    assert conv.format == "anthropic"
    m = conv.messages
    assert m[0].content == (
        TextPart("look", {"cache_control": EPHEMERAL}),
        ImagePart(data="iVBOR", media_type="image/png", extras={"cache_control": EPHEMERAL}),
        OpaquePart("anthropic", NATIVES[0]["content"][2]),
        FilePart(url="https://x/a.pdf", extras={"title": "A", "citations": {"enabled": True}}),
    )
    assistant = m[1]
    assert assistant.content[0] == ThinkingPart("plan it", "ErUBCkYIBRgCIkB==")
    assert assistant.content[1] == ThinkingPart("EmwKAhgBEgy3va==", redacted=True)
    assert [type(p).__name__ for p in assistant.content[3:]] == ["OpaquePart", "OpaquePart"]
    assert assistant.tool_calls == (
        ToolCall("toolu_1", "read", '{"path": "a"}', {"cache_control": EPHEMERAL}),
        ToolCall("toolu_2", "read", '{"path": "b"}', {"caller": {"type": "direct"}}),
    )
    assert m[2] == Message(
        "tool",
        (TextPart("boom"), ImagePart(url="https://x/i.png")),
        tool_call_id="toolu_1",
        extras={"is_error": True, "cache_control": EPHEMERAL},
    )
    assert m[3] == Message("tool", "b text", tool_call_id="toolu_2")
    assert m[4] == Message("user", (TextPart("and also"),))
    assert conv.back(list(m)) is NATIVES
    for message in m:  # every field the API documents has a slot: no carrier needed
        native = ANTHROPIC.dump(message)
        assert RESERVED_KEY not in native
        assert ANTHROPIC.load(native, 0) == [message]
    assert ANTHROPIC.dump(m[1])["content"] == NATIVES[1]["content"]
    assert ANTHROPIC.dump(m[0]) == NATIVES[0]


def test_rebuild_keeps_thinking_and_cache_control_in_place() -> None:
    natives = copy.deepcopy(NATIVES)
    natives[1]["content"].insert(
        3, {"type": "text", "text": "long " * 30, "cache_control": EPHEMERAL}
    )
    conv = convert(natives)
    m = conv.messages
    now = [m[0], m[1].with_text("short"), m[2].with_text("cut"), m[3], m[4]]
    out = conv.back(now)
    assert out[0] is natives[0]
    blocks = out[1]["content"]
    assert blocks[0] is natives[1]["content"][0] and blocks[1] is natives[1]["content"][1]
    # the new text goes to the block carrying cache_control, which keeps its marker in place
    assert blocks[2] == {"type": "text", "text": "short", "cache_control": EPHEMERAL}
    assert [b.get("type") for b in blocks] == [
        "thinking",
        "redacted_thinking",
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "tool_use",
        "tool_use",
    ]
    result = out[2]["content"][0]
    assert result["cache_control"] == EPHEMERAL and result["is_error"] is True
    assert result["content"][0] == {"type": "text", "text": "cut"}
    assert result["content"][1] is natives[2]["content"][0]["content"][1]
    assert out[2]["content"][1] is natives[2]["content"][1]
    assert check(out, "anthropic") == []


def test_foreign_messages_round_trip_through_anthropic() -> None:
    chat = [
        {"role": "developer", "content": "rules"},
        {
            "role": "user",
            "name": "ann",
            "content": [
                {"type": "text", "text": "hi"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,QUJD", "detail": "low"},
                },
                {"type": "input_audio", "input_audio": {"data": "QQ==", "format": "wav"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}},
                {"id": "c2", "type": "custom", "custom": {"name": "g", "input": "raw"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
    ]
    conv = convert(chat)
    dumped = [ANTHROPIC.dump(m) for m in conv.messages]
    again = [ANTHROPIC.load(n, 0)[0] for n in dumped]
    assert again == conv.messages
    assert dumped[1]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"},
    }
    assert dumped[2]["content"][0]["input"] == {"a": 1}
    back = conv.back(again)
    assert all(a is b for a, b in zip(back, chat, strict=True))


def test_thinking_goes_through_chat_and_back_with_its_signature() -> None:
    conv = convert(NATIVES)
    via_chat = [OPENAI.load(OPENAI.dump(m), 0)[0] for m in conv.messages]
    assert via_chat == conv.messages
    assert via_chat[1].content[0].signature == THINKING["signature"]
    out = conv.back(via_chat)
    assert all(a is b for a, b in zip(out, NATIVES, strict=True))


def test_messages_of_other_converters_round_trip() -> None:
    gemini = [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "thinking", "thought": True, "thought_signature": "c2ln"},
                {
                    "function_call": {"name": "get", "args": {"city": "Oslo"}},
                    "thought_signature": "c2lnMg==",
                },
            ],
        },
        {
            "role": "user",
            "parts": [{"function_response": {"name": "get", "response": {"output": "rain"}}}],
        },
    ]
    conv = convert(gemini, "gemini")
    for converter in (ANTHROPIC, OPENAI):
        again = [converter.load(converter.dump(m), 0)[0] for m in conv.messages]
        assert again == conv.messages
        assert conv.back(again) == gemini


# --------------------------------------------------------------------------------------------
# properties


@FAST
@given(anthropic_conversations())
def test_anthropic_round_trip(natives: list[dict[str, Any]]) -> None:
    conv = convert(natives)
    assert conv.back(list(conv.messages)) is natives
    for message in conv.messages:
        for converter in (ANTHROPIC, OPENAI):
            native = converter.dump(message)
            assert converter.load(native, 0) == [message]
        if message.role != "assistant" or all(not isinstance(p, OpaquePart) for p in message.parts):
            assert RESERVED_KEY not in ANTHROPIC.dump(message)


def test_a_deeply_nested_tool_input_is_a_config_error() -> None:
    nested: dict[str, Any] = {}
    for _ in range(1000):
        nested = {"a": nested}
    natives: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "f", "input": nested}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
    ]
    field = r"messages\[1\]\.content\[0\]\.input is nested more than"
    with pytest.raises(ConfigError, match=field):  # was RecursionError
        convert(natives)
    with pytest.raises(ConfigError, match=field):
        compress_for_sync(natives, CompressionPolicy(target_tokens=5))
    shallow: dict[str, Any] = {}
    for _ in range(150):  # deep, but within the limit
        shallow = {"a": shallow}
    natives[1]["content"][0]["input"] = shallow
    assert len(convert(natives).messages) == 3


def test_a_mid_conversation_system_message_is_a_protected_system_message() -> None:
    """Claude Opus 4.8+ takes ``role: "system"`` right after a user turn (Claude Code 2.1
    sends its environment so): it loads as a system Message, survives a compaction as the
    same native, and the result passes the checker."""
    from agent_adapter.context import CompressionPolicy, compress_for_sync
    from agent_adapter.context.formats import check, convert

    system = {"role": "system", "content": [{"type": "text", "text": "# Environment: linux"}]}
    natives: list[dict[str, object]] = [{"role": "user", "content": "the task " * 30}, system]
    for i in range(30):
        natives.append({"role": "assistant", "content": f"step {i} " + "words " * 100})
        natives.append({"role": "user", "content": f"result {i} " + "output " * 100})
    assert [m.role for m in convert(natives[:3], "anthropic").messages] == [
        "user",
        "system",
        "assistant",
    ]
    out, report = compress_for_sync(natives, CompressionPolicy(threshold_tokens=3000))
    assert report.tokens_after < report.tokens_before
    assert out[1] is system and check(out, "anthropic") == []
