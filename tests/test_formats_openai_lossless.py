"""The ``openai`` format, lossless both ways: any Message dumps and loads back, the reserved
carrier holds what has no slot, and Chat Completions go through Anthropic and back.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings

from _openai_cases import ANTHROPIC, OPENAI, RESPONSES, any_messages
from agent_adapter._messages import Message, TextPart, ThinkingPart, ToolCall
from agent_adapter.cli._loaders import load_tau_bench
from agent_adapter.context.formats import check, convert, strip_reserved
from agent_adapter.context.formats._carrier import RESERVED_KEY

FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------------
# lossless both ways


@FAST
@given(any_messages())
def test_dump_then_load_gives_the_message_back(message: Message) -> None:
    for converter in (OPENAI, RESPONSES, ANTHROPIC):
        native = converter.dump(message)
        assert converter.load(native, 0) == [message]
        if RESERVED_KEY in native:  # the carrier only holds what has no slot
            assert set(native[RESERVED_KEY]) <= {
                "message",
                "content",
                "insert",
                "parts",
                "tool_calls",
                "calls",
            }


def test_carrier_keeps_foreign_fields_and_is_stripped_for_sending() -> None:
    thinking = ThinkingPart("plan", "SIG==")
    message = Message(
        "assistant",
        (thinking, TextPart("hi", {"cache_control": {"type": "ephemeral"}})),
        tool_calls=(ToolCall("t1", "f", '{"a": 1}', {"thought_signature": b"gem"}),),
        extras={"id": "lc-run-1"},
    )
    native = OPENAI.dump(message)
    assert native["content"] == [{"type": "text", "text": "hi"}]
    assert native["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": 1}'}
    carrier = native[RESERVED_KEY]
    assert carrier["insert"] == [
        [
            0,
            {
                "kind": "thinking",
                "text": "plan",
                "signature": "SIG==",
                "redacted": False,
                "extras": {},
            },
        ]
    ]
    assert OPENAI.load(native, 0) == [message]
    result = {"role": "tool", "tool_call_id": "t1", "content": "r"}
    request = [{"role": "user", "content": "q"}, native, result]
    assert [(v.index, v.rule) for v in check(request, "openai")] == [(1, "reserved_key")]
    clean = strip_reserved(request)
    assert RESERVED_KEY not in clean[1] and check(clean, "openai") == []
    assert clean[0] is request[0] and clean[2] is request[2]
    plain = {"role": "user", "content": "x"}
    assert strip_reserved([plain])[0] is plain


def test_changed_message_with_carrier_is_dumped_again() -> None:
    message = Message("assistant", (ThinkingPart("p", "S"), TextPart("long " * 20)))
    natives = [
        {"role": "user", "content": "q"},
        OPENAI.dump(message),
        {"role": "user", "content": "n"},
    ]
    conv = convert(natives, "openai")
    m = conv.messages
    out = conv.back([m[0], m[1].with_text("short"), m[2]])
    assert OPENAI.load(out[1], 1) == [m[1].with_text("short")]


def test_chat_to_anthropic_and_back_keeps_everything(data_dir: Path) -> None:
    dialogs = load_tau_bench(data_dir / "tau-bench" / "gpt-4o-airline.json")
    for natives in dialogs:
        conv = convert(natives, "openai")
        again = [ANTHROPIC.load(ANTHROPIC.dump(m), 0)[0] for m in conv.messages]
        assert again == conv.messages
        back = conv.back(again)  # equal but new messages: rebuilt natives are the originals
        assert len(back) == len(natives) and all(a is b for a, b in zip(back, natives, strict=True))
