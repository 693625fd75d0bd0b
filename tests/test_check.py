"""The provider acceptance checker: every rule fires on a minimal broken list, never on a valid
one, and breaking a generated valid conversation is always caught."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ToolCall
from agent_adapter.context import CompressionPolicy, compress_for_sync
from agent_adapter.context._pairing import validate_messages
from agent_adapter.context.formats import Violation, _registry, check, convert, strip_reserved
from agent_adapter.context.formats._anthropic import check_anthropic, check_thinking_unchanged
from agent_adapter.context.formats._check import check_messages
from agent_adapter.context.formats._openai import check_openai_chat, check_responses
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


def test_a_registered_format_without_checker_is_checked_at_its_natives_indexes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Pairs(_registry.Converter[str]):
        """Each native 'x;y' holds two messages: 'c:ID' a call, 'r:ID' a result, else text."""

        name = "pairs"

        def kind(self, item: Any) -> str | None:
            return None

        def load(self, native: str, index: int) -> list[Message]:
            return [self._one(part) for part in native.split(";")]

        def _one(self, part: str) -> Message:
            if part.startswith("c:"):
                return Message("assistant", "", tool_calls=(ToolCall(part[2:], "f"),))
            if part.startswith("r:"):
                return Message("tool", "r", tool_call_id=part[2:])
            return Message("user", part)

        def rebuild(self, native: str, originals: Any, now: Any) -> list[str]:
            return [native]

        def dump(self, message: Message) -> str:
            return message.text

    monkeypatch.setattr(_registry, "_REGISTERED", {})
    _registry.register_format("pairs", Pairs())
    assert check(["hi;c:a", "r:a;bye"], "pairs") == []
    found = check(["hi;c:a", "bye;r:a", "c:b;r:c"], "pairs")
    assert rules(found) == [
        (0, "call_unanswered"),
        (1, "tool_without_call"),
        (2, "tool_without_call"),
        (2, "calls_pending_at_end"),
    ]
    assert found[0].message.startswith("messages[0]") and "messages[1]" in found[0].message


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
    assert check_anthropic([a, a]) == []  # the API combines consecutive same-role turns
    assert rules(check_anthropic([a, a], strict_alternation=True)) == [(1, "roles_not_alternating")]
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
    # mid-conversation system messages: right after a user turn, text only
    assert rules(check_anthropic([{"role": "system", "content": "s"}])) == [(0, "system_misplaced")]
    system = {"role": "system", "content": [{"type": "text", "text": "env"}]}
    assert rules(check_anthropic([{"role": "user", "content": "u"}, system])) == []
    late = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}, system]
    assert rules(check_anthropic(late)) == [(2, "system_misplaced")]
    image = {"role": "system", "content": [{"type": "image", "source": {"type": "url"}}]}
    assert rules(check_anthropic([{"role": "user", "content": "u"}, image])) == [
        (1, "system_not_text")
    ]
    assert rules(check_anthropic([{"role": "tool", "content": "s"}])) == [(0, "not_a_message")]


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
    assert check(natives, "anthropic", strict_alternation=True) == []
    k = data.draw(st.integers(1, len(natives) - 1))
    broken = natives[:k] + natives[k + 1 :]
    if k < len(natives) - 1:  # dropping the last message keeps a valid list
        assert check(broken, "anthropic", strict_alternation=True) != []


# ------------------------------------------------------------------ regressions (second tester)


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


# ------------------------------------------------------- check() and compress() agree on pairing

PAIRING_RULES = {"openai": {"tool_without_call", "call_unanswered", "duplicate_call_id"}}
PAIRING_RULES["anthropic"] = {"tool_result_without_use", "tool_use_unanswered", "duplicate_call_id"}


def compress_accepts(natives: list[Any], format: str) -> bool:
    """What compress() decides: convert, then the engine's input validation."""
    try:
        validate_messages(convert(natives, format).messages)
    except ConfigError:
        return False
    return True


def assert_agree(natives: list[Any], format: str) -> None:
    found = {v.rule for v in check(natives, format)}
    try:
        messages = convert(natives, format).messages
    except ConfigError:  # structurally invalid: check() must reject it too
        assert found
        return
    assert (not found & PAIRING_RULES[format]) == compress_accepts(natives, format), (
        found,
        messages,
    )


def test_text_between_call_and_result_is_rejected_by_both() -> None:
    natives = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        {"role": "assistant", "content": "text"},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
        {"role": "user", "content": "next"},
    ]
    assert rules(check(natives, "openai")) == [(1, "call_unanswered"), (3, "tool_without_call")]
    with pytest.raises(ConfigError, match="no tool result before"):
        compress_for_sync(natives, CompressionPolicy(target_tokens=50, threshold_tokens=60))


_IDS = st.sampled_from(["a", "b", "c"])  # few ids: reuse across rounds, as tau-bench does


@st.composite
def _rounds(draw: st.DrawFn) -> list[tuple[list[str], list[str]]]:
    """Valid rounds: (call ids, result ids in the order they come back); ([], []): text."""
    out = []
    for _ in range(draw(st.integers(0, 4))):
        ids = draw(st.lists(_IDS, max_size=3, unique=True))
        out.append((ids, draw(st.permutations(ids))))
    return out


_MUTATIONS = ("drop", "move", "dup", "text", "pending")


@st.composite
def chat_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Chat Completions lists, valid or with broken pairing."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    for ids, results in draw(_rounds()):
        if not ids:
            out += [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}]
            continue
        out.append({"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]})
        out += [{"role": "tool", "tool_call_id": r, "content": "r"} for r in results]
    for mutation in draw(st.lists(st.sampled_from(_MUTATIONS), max_size=2)):
        tools = [k for k, m in enumerate(out) if m["role"] == "tool"]
        callers = [k for k, m in enumerate(out) if m.get("tool_calls")]
        if mutation in ("drop", "move") and tools:
            moved = out.pop(draw(st.sampled_from(tools)))
            if mutation == "move":
                out.insert(draw(st.integers(0, len(out))), moved)
        elif mutation == "dup" and callers:
            k = draw(st.sampled_from(callers))
            out[k] = {**out[k], "tool_calls": [*out[k]["tool_calls"], out[k]["tool_calls"][0]]}
        elif mutation == "text" and callers:
            out.insert(draw(st.sampled_from(callers)) + 1, {"role": "assistant", "content": "t"})
        elif mutation == "pending" and callers:
            del out[callers[-1] + 1 :]
    return out


@st.composite
def anthropic_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Anthropic lists, valid or with broken pairing (or results after text)."""

    def use(i: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": i, "name": "f", "input": {}}

    def result(i: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": i, "content": "r"}

    text = {"type": "text", "text": "t"}
    out: list[dict[str, Any]] = [{"role": "user", "content": [text]}]
    for ids, results in draw(_rounds()):
        out.append({"role": "assistant", "content": [text, *map(use, ids)]})
        tail = [text] if not ids or draw(st.booleans()) else []
        out.append({"role": "user", "content": [*map(result, results), *tail]})
    for mutation in draw(st.lists(st.sampled_from((*_MUTATIONS, "swap")), max_size=2)):
        spots = [(k, b) for k, m in enumerate(out) for b in range(len(m["content"]))]
        results_at = [(k, b) for k, b in spots if out[k]["content"][b]["type"] == "tool_result"]
        users = [k for k, m in enumerate(out) if m["role"] == "user"]
        callers = [
            k for k, m in enumerate(out) if any(b["type"] == "tool_use" for b in m["content"])
        ]
        if mutation in ("drop", "move", "swap") and results_at:
            k, b = draw(st.sampled_from(results_at))
            block = out[k]["content"][b]
            out[k] = {**out[k], "content": [x for x in out[k]["content"] if x is not block]}
            if mutation != "drop":
                to = k if mutation == "swap" else draw(st.sampled_from(users))
                extra = [text] if mutation == "swap" else []
                out[to] = {**out[to], "content": [*extra, block, *out[to]["content"]]}
        elif mutation == "dup" and callers:
            k = draw(st.sampled_from(callers))
            first = next(b for b in out[k]["content"] if b["type"] == "tool_use")
            out[k] = {**out[k], "content": [*out[k]["content"], first]}
        elif mutation == "text" and callers:
            k = draw(st.sampled_from(callers)) + 1
            out[k:k] = [
                {"role": "assistant", "content": [text]},
                {"role": "user", "content": [text]},
            ]
        elif mutation == "pending" and callers:
            del out[callers[-1] + 1 :]
    return out


AGREE = settings(FAST, max_examples=400)


@AGREE
@given(chat_lists())
def test_check_and_compress_agree_on_chat_pairing(natives: list[dict[str, Any]]) -> None:
    assert_agree(natives, "openai")


@AGREE
@given(anthropic_lists())
def test_check_and_compress_agree_on_anthropic_pairing(natives: list[dict[str, Any]]) -> None:
    assert_agree(natives, "anthropic")


# ------------------------------------------------------------------ regressions (this change)


def test_a_responses_call_without_call_id_is_reported() -> None:
    items = [USER, {"type": "function_call", "name": "f", "arguments": "{}"}]
    assert rules(check(items, "openai")) == [(1, "call_id_missing")]
    orphan = {"type": "function_call_output", "output": "r"}
    assert rules(check([USER, orphan], "openai")) == [(1, "call_id_missing")]


@pytest.mark.parametrize("role", ["system", "developer", "user", "tool", "assistant"])
@pytest.mark.parametrize("content", [{"content": None}, {}])
def test_chat_content_none_or_absent_is_reported_where_required(
    role: str, content: dict[str, Any]
) -> None:
    item: dict[str, Any] = {"role": role, **content}
    natives = [item]
    if role == "tool":
        item["tool_call_id"] = "a"
        natives = [{"role": "assistant", "content": None, "tool_calls": [call("a")]}, item]
    assert rules(check(natives, "openai")) == [(len(natives) - 1, "content_missing")]


def test_strip_reserved_of_a_non_list_is_a_config_error() -> None:
    for bad in (None, "text", {"role": "user"}):
        with pytest.raises(ConfigError, match="natives must be a list"):
            strip_reserved(bad)  # type: ignore[arg-type]


def test_duplicate_tool_use_ids_in_one_message_are_duplicate_ids() -> None:
    use = {"type": "tool_use", "id": "a", "name": "f", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "a", "content": "r"}
    natives = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [use, use]},
        {"role": "user", "content": [result, result]},
    ]
    assert rules(check(natives, "anthropic")) == [(1, "duplicate_call_id")]
    chat = [USER, {"role": "assistant", "content": None, "tool_calls": [call("a"), call("a")]}]
    assert rules(check([*chat, {"role": "tool", "tool_call_id": "a", "content": "r"}])) == [
        (1, "duplicate_call_id")
    ]
