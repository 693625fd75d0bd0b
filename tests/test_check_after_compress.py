"""Compressed lists the provider would accept: ``check()`` as the oracle of compression
outputs (regressions found by the second tester; moved from tests/test_check.py)."""

from __future__ import annotations

from agent_adapter.context.formats import check


def test_an_added_assistant_note_never_lands_before_the_thinking_opener() -> None:
    from agent_adapter._messages import Message
    from agent_adapter.context import CompressionPolicy, MyOwnStep, compress_for_sync

    msgs = [
        {"role": "user", "content": "old question " + "x " * 2000},
        {"role": "assistant", "content": "old answer"},
        {"role": "user", "content": "read a.py"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should read it", "signature": "EqQBSIG"},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "print(1)"}],
        },
    ]

    def add_note(ms: list[Message]) -> list[Message]:
        return [*ms[2:3], Message(role="assistant", content="[summary]"), *ms[3:]]

    policy = CompressionPolicy(
        threshold_tokens=100, target_tokens=100, steps=[MyOwnStep(fn=add_note)]
    )
    out, _ = compress_for_sync(msgs, policy, format="anthropic")
    assert check(out, "anthropic") == []
    assert out[-2] is msgs[3]  # the opener, thinking first, untouched


def test_cut_text_keeps_cache_control_on_its_block() -> None:
    from agent_adapter.context import CompressionPolicy, CutLongMessages, compress_for_sync

    big = "word " * 2000
    marker = {"type": "ephemeral"}
    msgs = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "intro"},
                {"type": "text", "text": big, "cache_control": marker},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "ok"},
                {"type": "text", "text": big, "cache_control": marker},
            ],
        },
        {"role": "user", "content": "latest question"},
    ]
    policy = CompressionPolicy(
        threshold_tokens=500,
        target_tokens=500,
        steps=[CutLongMessages(max_tokens_per_message=100, keep_first=0)],  # the task too
    )
    out, _ = compress_for_sync(msgs, policy, format="anthropic")
    for i in (0, 1):
        blocks = out[i]["content"]
        assert blocks[0] is msgs[i]["content"][0]  # the intact head block, same object
        assert blocks[1]["cache_control"] == marker and "characters cut" in blocks[1]["text"]
    assert check(out, "anthropic") == []


def test_anthropic_dump_all_makes_reused_call_ids_unique_and_loads_back() -> None:
    from agent_adapter._messages import Message, ToolCall
    from agent_adapter.context.formats import convert, strip_reserved
    from agent_adapter.context.formats._anthropic import AnthropicConverter

    def round_(text: str) -> list[Message]:
        return [
            Message("user", text),
            Message("assistant", "", tool_calls=(ToolCall("call_1", "f", "{}"),)),
            Message("tool", "ok", tool_call_id="call_1"),
            Message("assistant", "done"),
        ]

    messages = [*round_("q1"), *round_("q2"), *round_("q3")]  # OpenAI allows the reuse
    natives = AnthropicConverter().dump_all(messages)
    assert convert(natives, "anthropic").messages == messages
    sendable = strip_reserved(natives)
    assert check(sendable, "anthropic") == []
    ids = [
        b["id"]
        for n in sendable
        if isinstance(n["content"], list)
        for b in n["content"]
        if b["type"] == "tool_use"
    ]
    assert ids == ["call_1", "call_1__2", "call_1__3"]


def test_renamed_ids_survive_a_rebuild_of_the_changed_result() -> None:
    from agent_adapter._messages import Message, ToolCall
    from agent_adapter.context import CompressionPolicy, ShrinkToolResults, compress_for_sync
    from agent_adapter.context.formats import strip_reserved
    from agent_adapter.context.formats._anthropic import AnthropicConverter

    def round_(text: str) -> list[Message]:
        return [
            Message("user", text),
            Message("assistant", "", tool_calls=(ToolCall("call_1", "f", "{}"),)),
            Message("tool", "result " * 300, tool_call_id="call_1"),
            Message("assistant", "done"),
        ]

    natives = AnthropicConverter().dump_all([*round_("q1"), *round_("q2"), *round_("q3")])
    policy = CompressionPolicy(
        target_tokens=300, steps=[ShrinkToolResults(bigger_than_tokens=50, older_than_turns=1)]
    )
    out, report = compress_for_sync(natives, policy, format="anthropic")
    assert report.messages_changed >= 2
    assert check(strip_reserved(out), "anthropic") == []
