"""Regressions of the converters, each on the exact input a tester found it with: Responses
parallel calls named by their own item, Anthropic tool results after text, and no converter
writing an empty native for a message cut to blank text."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest

from _gemini_cases import _objects
from agent_adapter._errors import ConfigError
from agent_adapter.context import CompressionPolicy, compress_for_sync
from agent_adapter.context.formats import check, convert
from agent_adapter.context.formats._gemini import GeminiConverter
from agent_adapter.context.formats._openai import ChatConverter, ResponsesConverter

# --------------------------------------------------------------------------------------------
# A. Responses: a call of a group of parallel call items is named by its own item


def _fc(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}


PARALLEL = [
    {"role": "user", "content": "u"},
    _fc("call_1"),
    _fc("call_2"),
    {"type": "function_call_output", "call_id": "call_1", "output": "r"},
    {"role": "user", "content": "q"},
]
DUPLICATE = [*PARALLEL[:2], _fc("call_1"), *PARALLEL[3:]]


def test_the_converter_names_the_item_holding_a_grouped_call() -> None:
    conv = ResponsesConverter()
    assert conv.call_index(PARALLEL, 1, ("call_2",)) == 2
    assert conv.call_index(PARALLEL, 1, ("call_1",)) == 1
    assert conv.call_index(PARALLEL, 1, ("nope",)) == 1
    assert conv.call_index(PARALLEL, 0, ("call_2",)) == 0  # no group: the native itself
    assert conv.call_index(DUPLICATE, 1, ("call_1",), last=True) == 2
    assert ChatConverter().call_index(PARALLEL, 1, ("call_2",)) == 1  # the default
    assert [v.index for v in check(PARALLEL, "openai")] == [2]
    assert [v.index for v in check(DUPLICATE, "openai")] == [2]


@pytest.mark.parametrize(
    ("natives", "says"),
    [(PARALLEL, r"messages\[2\]\.call_id: call 'call_2'"), (DUPLICATE, r"messages\[2\]\.call_id")],
)
def test_compress_names_the_item_holding_the_call_as_check_does(
    natives: list[Any], says: str
) -> None:
    with pytest.raises(ConfigError, match=says):
        compress_for_sync(natives, CompressionPolicy(target_tokens=1))


# --------------------------------------------------------------------------------------------
# D. Anthropic: tool_result blocks come first in a user message


def test_a_tool_result_after_text_is_rejected_naming_its_block() -> None:
    natives = [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "x"},
                {"type": "tool_result", "tool_use_id": "c1", "content": "r"},
            ],
        },
    ]
    says = r"messages\[2\]\.content\[1\]: a tool_result block after a text block; tool_result "
    with pytest.raises(ConfigError, match=says):
        convert(natives, "anthropic")
    with pytest.raises(ConfigError, match=says):
        compress_for_sync(natives, CompressionPolicy(target_tokens=1))
    natives[2]["content"].reverse()  # results first: fine
    assert check(natives, "anthropic") == []
    assert len(convert(natives, "anthropic").messages) == 4


# --------------------------------------------------------------------------------------------
# E. A message cut to blank text never leaves an empty native


def _blanked(natives: Sequence[Any], fmt: str, j: int, text: str = "") -> list[Any]:
    """``natives`` back from their messages with message ``j`` cut to ``text``."""
    conversion = convert(natives, fmt)
    messages = list(conversion.messages)
    messages[j] = messages[j].with_text(text)
    return conversion.back(messages)


@pytest.mark.parametrize("text", ["", "  \n"])
def test_anthropic_keeps_the_text_a_blank_cut_would_empty(text: str) -> None:
    natives = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        {"role": "user", "content": [{"type": "text", "text": "x"}]},
        {"role": "assistant", "content": "str"},
    ]
    before = copy.deepcopy(natives)
    for j in range(4):
        out = _blanked(natives, "anthropic", j, text)
        assert out == before and all(a is b for a, b in zip(out, natives, strict=True))
        assert check(out, "anthropic") == []
    with_call = [
        natives[0],
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "a"},
                {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "r"},
                {"type": "text", "text": "x"},
            ],
        },
    ]
    # the text goes, the call and the result stay: no blank text block is left
    out = _blanked(with_call, "anthropic", 1, text)
    assert out[1]["content"] == [with_call[1]["content"][1]]
    out = _blanked(with_call, "anthropic", 3, text)
    assert out[2]["content"] == [with_call[2]["content"][0]]
    assert check(out, "anthropic") == []


def test_anthropic_drops_a_native_only_when_all_its_messages_went() -> None:
    natives = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "b"},
    ]
    conversion = convert(natives, "anthropic")
    assert conversion.back(list(conversion.messages[:2])) == natives[:2]


GEMINI = [
    {"role": "user", "parts": [{"text": "u"}]},
    {"role": "model", "parts": [{"text": "m"}]},
    {"role": "user", "parts": [{"text": "u2"}]},
]


@pytest.mark.parametrize("text", ["", " "])
def test_gemini_dicts_keep_the_text_a_blank_cut_would_empty(text: str) -> None:
    for j in range(3):
        out = _blanked(GEMINI, "gemini", j, text)
        assert out == GEMINI  # no {"parts": []}, no dropped turn
        assert check(out, "gemini") == []


@pytest.mark.parametrize("text", ["", " "])
def test_gemini_content_objects_keep_the_turn_a_blank_cut_would_empty(text: str) -> None:
    contents = _objects(GEMINI)
    for j in range(3):
        out = _blanked(contents, "gemini", j, text)
        assert len(out) == 3 and all(c.parts for c in out)
        assert [c.parts[0].text for c in out] == ["u", "m", "u2"]


def test_gemini_user_turn_keeps_its_text_when_its_response_went_and_the_text_blanked() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "u"}]},
        {"role": "model", "parts": [{"function_call": {"id": "a", "name": "f", "args": {}}}]},
        {
            "role": "user",
            "parts": [
                {"function_response": {"id": "a", "name": "f", "response": {"output": "r"}}},
                {"text": "note"},
            ],
        },
    ]
    conversion = convert(contents, "gemini")
    tool, note = conversion.messages[2], conversion.messages[3]
    assert (tool.role, note.role) == ("tool", "user")
    gemini = GeminiConverter()
    rebuilt = gemini.rebuild(contents[2], [tool, note], [None, note.with_text("")])
    assert rebuilt == [{"role": "user", "parts": [{"text": "note"}]}]
    assert gemini.rebuild(contents[2], [tool, note], [None, None]) == []
    # the response still there: the blank text goes, the turn keeps its response
    messages = list(conversion.messages)
    out = conversion.back([*messages[:3], messages[3].with_text("")])
    assert out[2] == {"role": "user", "parts": [contents[2]["parts"][0]]}


CHAT = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u"},
    {"role": "assistant", "content": "a"},
    {"role": "user", "content": [{"type": "text", "text": "p"}]},
]
RESPONSES = [
    {"role": "user", "content": "u"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]},
    {"role": "user", "content": [{"type": "input_text", "text": "p"}]},
]


@pytest.mark.parametrize("natives", [CHAT, RESPONSES], ids=["chat", "responses"])
@pytest.mark.parametrize("text", ["", "\t"])
def test_openai_keeps_the_text_a_blank_cut_would_empty(natives: list[Any], text: str) -> None:
    for j in range(len(natives)):
        out = _blanked(natives, "openai", j, text)
        assert out == natives  # no "content": "" or []
        assert check(out, "openai") == []


def test_chat_assistant_with_calls_may_lose_all_its_text() -> None:
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    natives = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "x", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
    ]
    out = _blanked(natives, "openai", 1)
    assert out[1] == {"role": "assistant", "content": "", "tool_calls": [call]}
    tool_cut = _blanked(natives, "openai", 2)  # an empty tool output is an answer
    assert tool_cut[2] == {"role": "tool", "tool_call_id": "a", "content": ""}
