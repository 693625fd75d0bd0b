"""The provider acceptance checker: every rule fires on a minimal broken list, never on a valid
one, and breaking a generated valid conversation is always caught."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_adapter.context.formats import Violation, _registry, check, strip_reserved
from agent_adapter.context.formats.checks import (
    check_anthropic,
    check_messages,
    check_openai_chat,
    check_responses,
    check_thinking_unchanged,
)
from agent_adapter.errors import ConfigError
from agent_adapter.messages import Message, ToolCall
from test_formats_anthropic import anthropic_conversations
from test_formats_openai import chat_conversations, responses_conversations

FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def rules(violations: list[Violation]) -> list[tuple[int, str]]:
    return [(v.index, v.rule) for v in violations]


def call(id_: str) -> dict[str, Any]:
    return {"id": id_, "type": "function", "function": {"name": "f", "arguments": "{}"}}


# --------------------------------------------------------------------------------------------
# Violation and dispatch


def test_violation_is_a_frozen_record() -> None:
    v = Violation(2, "tool_without_call", "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.index = 3  # type: ignore[misc]
    assert v == Violation(2, "tool_without_call", "x")


def test_check_dispatches_by_format_and_item_shape() -> None:
    chat = [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "c", "content": "r"}]
    items = [
        {"role": "user", "content": "q"},
        {"type": "function_call_output", "call_id": "c", "output": "r"},
    ]
    anthropic = [{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]
    assert rules(check(chat, "openai")) == [(1, "tool_without_call")]
    assert rules(check(chat)) == [(1, "tool_without_call")]
    assert rules(check(items, "openai")) == [(1, "output_without_call")]
    assert rules(check(anthropic, "anthropic")) == [(0, "first_not_user")]
    messages = [Message("user", "q"), Message("tool", "r", tool_call_id="c")]
    assert rules(check(messages, "agent_adapter")) == [(1, "tool_without_call")]
    assert rules(check(messages)) == [(1, "tool_without_call")]
    with pytest.raises(ConfigError):
        check(chat, "no_such_format")
    with pytest.raises(ConfigError):
        check("not a list", "openai")  # type: ignore[arg-type]


def test_real_gemini_checker_when_present() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "yo"}]},
    ]
    assert check(contents, "gemini") == []


def test_a_format_without_checker_gets_the_pairing_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    class Lines(_registry.Converter[str]):
        name = "lines"

        def kind(self, item: Any) -> str | None:
            return None

        def load(self, native: str, index: int) -> list[Message]:
            if native.startswith("call "):
                return [Message("assistant", "", tool_calls=(ToolCall(native[5:], "f"),))]
            if native.startswith("result "):
                return [Message("tool", "r", tool_call_id=native[7:])]
            return [Message("user", native)]

        def rebuild(self, native: str, originals: Any, now: Any) -> list[str]:
            return [native]

        def dump(self, message: Message) -> str:
            return message.text

    monkeypatch.setitem(_registry._REGISTERED, "lines", (Lines(), None))
    assert check(["hi", "call a", "result a", "bye"], "lines") == []
    assert rules(check(["hi", "call a", "bye", "result b"], "lines")) == [
        (1, "call_unanswered"),
        (3, "tool_without_call"),
    ]


# --------------------------------------------------------------------------------------------
# Chat Completions rules


def test_chat_rules() -> None:
    valid = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "tool_call_id": "b", "content": "r"},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
        {"role": "assistant", "content": "done"},
    ]
    assert check_openai_chat(valid) == []
    assert rules(check_openai_chat([*valid[:4], valid[5]])) == [(2, "call_unanswered")]
    assert rules(check_openai_chat([*valid, valid[4]])) == [(6, "tool_without_call")]
    assert rules(check_openai_chat([valid[1], valid[3]])) == [(1, "tool_without_call")]
    assert rules(check_openai_chat(valid[:4])) == [(2, "calls_pending_at_end")]
    assert rules(check_openai_chat([valid[1], 7])) == [(1, "not_a_message")]
    assert rules(check_openai_chat([valid[1], {"type": "reasoning", "id": "r"}])) == [
        (1, "mixed_formats")
    ]
    carried = {**valid[1], "_agent_adapter": {}}
    assert rules(check_openai_chat([carried])) == [(0, "reserved_key")]
    assert check_openai_chat(strip_reserved([carried])) == []


# --------------------------------------------------------------------------------------------
# Responses rules

REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}
FC = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
OUT = {"type": "function_call_output", "call_id": "c1", "output": "r"}
USER = {"role": "user", "content": "q"}


def test_responses_rules() -> None:
    valid = [USER, REASONING, FC, OUT, {"role": "assistant", "content": "x"}, USER]
    assert check_responses(valid) == []
    assert rules(check_responses([USER, OUT])) == [(1, "output_without_call")]
    assert rules(check_responses([USER, FC, OUT, OUT])) == [(3, "output_without_call")]
    assert rules(check_responses([USER, FC, USER])) == [(1, "call_unanswered")]
    assert rules(check_responses([USER, REASONING, FC])) == [(2, "calls_pending_at_end")]
    assert rules(check_responses([USER, REASONING])) == [(1, "reasoning_not_followed")]
    assert rules(check_responses([USER, REASONING, USER])) == [(1, "reasoning_not_followed")]
    assert rules(check_responses([USER, REASONING, REASONING, FC, OUT])) == [
        (1, "reasoning_not_followed")
    ]
    computer = {"type": "computer_call", "call_id": "cc", "action": {}}
    shell = {"type": "local_shell_call", "call_id": "ls", "action": {}}
    shell_out = {"type": "local_shell_call_output", "id": "ls", "output": "o"}
    assert rules(check_responses([USER, computer, shell, shell_out, USER])) == [
        (1, "call_unanswered")
    ]
    # the last response's calls, some answered: still the tool loop, as in Chat Completions
    assert rules(check_responses([USER, computer, shell, shell_out])) == [
        (1, "calls_pending_at_end")
    ]
    request = {
        "type": "mcp_approval_request",
        "id": "a1",
        "name": "rm",
        "arguments": "{}",
        "server_label": "s",
    }
    response = {"type": "mcp_approval_response", "approval_request_id": "a1", "approve": True}
    assert check_responses([USER, request, response]) == []
    assert check_responses([USER, request]) == []  # a pending request is fine
    assert rules(check_responses([USER, response])) == [(1, "approval_response_without_request")]
    assert rules(check_responses([USER, {"role": "tool", "tool_call_id": "c", "content": ""}])) == [
        (1, "mixed_formats")
    ]
    assert rules(check_responses([USER, 3])) == [(1, "not_an_item")]


# --------------------------------------------------------------------------------------------
# Anthropic rules

THINKING = {"type": "thinking", "thinking": "t", "signature": "sig"}
USE = {"type": "tool_use", "id": "u1", "name": "f", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "u1", "content": "r"}


def test_anthropic_rules() -> None:
    valid = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [THINKING, USE]},
        {"role": "user", "content": [RESULT, {"type": "text", "text": "more"}]},
        {"role": "assistant", "content": ""},  # an empty final assistant message is allowed
    ]
    assert check_anthropic(valid) == []
    a, b, c = valid[0], valid[1], valid[2]
    assert rules(check_anthropic([b, c])) == [(0, "first_not_user")]
    assert rules(check_anthropic([a, a])) == [(1, "roles_not_alternating")]
    assert rules(
        check_anthropic([a, {"role": "assistant", "content": "x"}, {"role": "user", "content": []}])
    ) == [(2, "empty_content")]
    assert rules(
        check_anthropic([{"role": "user", "content": [{"type": "text", "text": " "}]}])
    ) == [(0, "empty_text")]
    assert rules(check_anthropic([a, b])) == [(1, "tool_use_pending_at_end")]
    assert rules(check_anthropic([a, b, {"role": "user", "content": "no results"}])) == [
        (1, "tool_use_unanswered")
    ]
    assert rules(check_anthropic([a, {"role": "assistant", "content": "x"}, c])) == [
        (2, "tool_result_without_use")
    ]
    swapped = {"role": "user", "content": [{"type": "text", "text": "more"}, RESULT]}
    # text first: the text is the next message, so the pairing breaks too (as compress() sees it)
    assert rules(check_anthropic([a, b, swapped])) == [
        (1, "tool_use_unanswered"),
        (2, "tool_result_not_first"),
        (2, "tool_result_without_use"),
    ]
    unsigned = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}, USE]}
    assert rules(check_anthropic([a, unsigned, c])) == [(1, "thinking_signature")]
    redacted = {"role": "assistant", "content": [{"type": "redacted_thinking", "data": ""}]}
    assert rules(check_anthropic([a, redacted])) == [(1, "thinking_signature")]
    assert rules(check_anthropic([{"role": "user", "content": [USE]}])) == [(0, "block_wrong_role")]
    assert rules(check_anthropic([{"role": "system", "content": "s"}])) == [(0, "not_a_message")]


def test_thinking_unchanged() -> None:
    before = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [THINKING, USE]},
        {"role": "user", "content": [RESULT]},
    ]
    assert check_thinking_unchanged(before, before) == []
    rebuilt = {"role": "assistant", "content": [THINKING, {"type": "text", "text": "x"}, USE]}
    assert check_thinking_unchanged(before, [before[0], rebuilt, before[2]]) == []
    edited = {"role": "assistant", "content": [{**THINKING, "signature": "other"}, USE]}
    assert rules(check_thinking_unchanged(before, [before[0], edited, before[2]])) == [
        (1, "thinking_changed"),
        (1, "thinking_changed"),
        (1, "turn_thinking_dropped"),
    ]
    dropped = {"role": "assistant", "content": [USE]}
    assert rules(check_thinking_unchanged(before, [before[0], dropped, before[2]])) == [
        (1, "thinking_changed"),
        (1, "turn_thinking_dropped"),
    ]
    older = [*before, {"role": "user", "content": "next"}]  # a finished turn may lose thinking
    assert check_thinking_unchanged(older, [older[0], older[3]]) == []
    reasoning = {"type": "reasoning", "id": "rs", "summary": []}
    assert check_thinking_unchanged([reasoning], [reasoning]) == []
    assert rules(check_thinking_unchanged([reasoning], [{**reasoning, "id": "x"}])) == [
        (0, "thinking_changed")
    ]


def test_check_messages() -> None:
    calls = Message("assistant", "", tool_calls=(ToolCall("a", "f"), ToolCall("b", "f")))
    valid = [
        Message("user", "q"),
        calls,
        Message("tool", "r", tool_call_id="a"),
        Message("tool", "r", tool_call_id="b"),
        Message("assistant", "done"),
    ]
    assert check_messages(valid) == []
    assert rules(check_messages(valid[:3])) == [(1, "calls_pending_at_end")]
    assert rules(check_messages([*valid[:3], valid[4]])) == [(1, "call_unanswered")]


# --------------------------------------------------------------------------------------------
# generated conversations: valid, and any broken pair is caught


@FAST
@given(chat_conversations(), st.data())
def test_broken_chat_pairs_are_caught(natives: list[dict[str, Any]], data: st.DataObject) -> None:
    assert check(natives, "openai") == []
    pairs = [k for k, m in enumerate(natives) if m["role"] == "tool" or m.get("tool_calls")]
    if pairs:
        k = data.draw(st.sampled_from(pairs))
        broken = natives[:k] + natives[k + 1 :]
        found = {v.rule for v in check(broken, "openai")}
        assert found & {"call_unanswered", "tool_without_call"}


@FAST
@given(responses_conversations(), st.data())
def test_broken_responses_pairs_are_caught(
    items: list[dict[str, Any]], data: st.DataObject
) -> None:
    assert check(items, "openai") == []
    pairs = [
        k
        for k, m in enumerate(items)
        if str(m.get("type", "")).endswith(("_call", "_output")) and "call_id" in m
    ]
    if pairs:
        k = data.draw(st.sampled_from(pairs))
        broken = items[:k] + items[k + 1 :]
        found = {v.rule for v in check(broken, "openai")}
        assert found & {"call_unanswered", "calls_pending_at_end", "output_without_call"}
    reasoning = [k for k, m in enumerate(items) if m.get("type") == "reasoning"]
    if reasoning:
        k = data.draw(st.sampled_from(reasoning))
        cut = items[: k + 1]
        assert "reasoning_not_followed" in {v.rule for v in check(cut, "openai")}


@FAST
@given(anthropic_conversations(), st.data())
def test_broken_anthropic_lists_are_caught(
    natives: list[dict[str, Any]], data: st.DataObject
) -> None:
    assert check(natives, "anthropic") == []
    k = data.draw(st.integers(1, len(natives) - 1))
    broken = natives[:k] + natives[k + 1 :]
    if k < len(natives) - 1:  # dropping the last message keeps a valid list
        assert check(broken, "anthropic") != []


# ------------------------------------------------------------------ regressions (second tester)


def test_an_added_assistant_note_never_lands_before_the_thinking_opener() -> None:
    from agent_adapter.context import CompressionPolicy, MyOwnStep, compress_for_sync
    from agent_adapter.messages import Message

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


def test_merged_text_before_thinking_is_caught() -> None:
    bad = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "note"},
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
            ],
        },
    ]
    assert sorted(v.rule for v in check(bad, "anthropic")) == [
        "thinking_not_first",
        "tool_use_pending_at_end",
    ]


def test_duplicate_tool_use_ids_are_caught() -> None:
    def use() -> dict:
        return {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_1", "name": "f", "input": {}}],
        }

    def res() -> dict:
        return {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "ok"}],
        }

    rules = [
        v.rule
        for v in check([{"role": "user", "content": "q"}, use(), res(), use(), res()], "anthropic")
    ]
    assert rules == ["tool_use_id_duplicate"]


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
        threshold_tokens=500, target_tokens=500, steps=[CutLongMessages(max_tokens_per_message=100)]
    )
    out, _ = compress_for_sync(msgs, policy, format="anthropic")
    for i in (0, 1):
        blocks = out[i]["content"]
        assert blocks[0] is msgs[i]["content"][0]  # the intact head block, same object
        assert blocks[1]["cache_control"] == marker and "characters cut" in blocks[1]["text"]
    assert check(out, "anthropic") == []


def test_chat_content_missing_is_caught() -> None:
    assert [v.rule for v in check([{"role": "user"}], "openai")] == ["content_missing"]
    assert [v.rule for v in check([{"role": "user", "content": None}], "openai")] == [
        "content_missing"
    ]
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ok = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ]
    assert check(ok, "openai") == []


def test_a_registered_detect_that_raises_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_adapter.context.formats import _registry, detect_format, register_format
    from agent_adapter.context.formats.openai import OpenAIChatConverter
    from agent_adapter.errors import ConfigError

    class Mine(OpenAIChatConverter):
        name = "mine"

    monkeypatch.setattr(_registry, "_REGISTERED", {})
    register_format("boom", Mine(), detect=lambda ms: 1 / 0)
    with pytest.raises(ConfigError, match="'boom' raised ZeroDivisionError"):
        detect_format([{"role": "user", "content": "x"}])


def test_gemini_function_responses_in_a_model_turn_are_caught() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"function_call": {"id": "a", "name": "f", "args": {}}}]},
        {
            "role": "model",
            "parts": [{"function_response": {"id": "a", "name": "f", "response": {"output": "x"}}}],
        },
    ]
    assert [(v.index, v.rule) for v in check(contents, "gemini")] == [(2, "response_position")]


def test_anthropic_dump_all_makes_reused_call_ids_unique_and_loads_back() -> None:
    from agent_adapter.context.formats import convert, strip_reserved
    from agent_adapter.context.formats.anthropic import AnthropicConverter
    from agent_adapter.messages import Message, ToolCall

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
    from agent_adapter.context import CompressionPolicy, ShrinkToolResults, compress_for_sync
    from agent_adapter.context.formats import strip_reserved
    from agent_adapter.context.formats.anthropic import AnthropicConverter
    from agent_adapter.messages import Message, ToolCall

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
