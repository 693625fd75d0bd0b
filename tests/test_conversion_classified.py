"""A Chat Completions conversion classifies each native once (``load_classified`` after the
list's ``bind`` / ``check_one_api``): the same messages and the same errors, naming the same
index, as loading each native with ``ChatConverter.load``."""

from __future__ import annotations

from typing import Any

import pytest

from agent_adapter._errors import ConfigError
from agent_adapter.context.formats import convert
from agent_adapter.context.formats._openai import ChatConverter

_CHAT = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "where is order 7?", "name": "ann"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
    {"role": "developer", "content": "x", "extra": 1},
    {"role": "assistant", "content": [{"type": "text", "text": "it shipped"}]},
]


@pytest.mark.parametrize("fmt", ["openai", "chat"])
def test_the_messages_are_each_natives_own_load(fmt: str) -> None:
    converter: Any = ChatConverter() if fmt == "chat" else fmt
    messages = convert(list(_CHAT), converter).messages
    one_by_one = [m for i, n in enumerate(_CHAT) for m in ChatConverter().load(n, i)]
    assert messages == one_by_one
    assert [ChatConverter().load_classified(n, i)[0] for i, n in enumerate(_CHAT)] == one_by_one


@pytest.mark.parametrize(
    ("bad", "fmt", "error"),
    [
        (
            {"type": "message", "role": "user", "content": "x"},
            "chat",
            "messages[1] is an OpenAI Responses item, not a Chat Completions message",
        ),
        ({"role": "robot", "content": "x"}, "openai", "messages[1].role 'robot' is not"),
        ({"role": "robot", "content": "x"}, "chat", "messages[1].role 'robot' is not"),
        (5, "chat", "messages[1] is int, not an OpenAI chat message dict"),
        (["x"], "openai", "messages[1] is list, not an OpenAI chat message dict"),
    ],
)
def test_errors_name_the_same_native(bad: Any, fmt: str, error: str) -> None:
    natives = [{"role": "user", "content": "a"}, bad, *[{"role": "user", "content": "b"}] * 3]
    converter: Any = ChatConverter() if fmt == "chat" else fmt
    with pytest.raises(ConfigError, match=error.replace("[", r"\[").replace("]", r"\]")):
        convert(natives, converter)


def test_a_chat_list_mixing_apis_names_both() -> None:
    natives = [
        {"role": "tool", "tool_call_id": "x", "content": "a"},
        {"type": "message", "role": "user", "content": "x"},
        *[{"role": "user", "content": "b"}] * 3,
    ]
    with pytest.raises(ConfigError, match=r"messages\[0\]\) and Responses items \(messages\[1\]"):
        convert(natives, ChatConverter())


def test_a_cold_conversion_loads_what_a_warm_one_reuses() -> None:
    from agent_adapter.context.formats import _conversion

    natives = [dict(n) for n in _CHAT] * 3  # the same dicts again: each place its own message
    _conversion._REMEMBERED.clear()
    cold = convert(natives, "openai").messages
    assert len({id(m) for m in cold}) == len(cold)
    warm = convert(natives, "openai").messages  # through what the cold one remembered
    assert warm == cold and len({id(m) for m in warm}) == len(warm)
    fresh = [dict(n) for n in natives]  # no native twice
    _conversion._REMEMBERED.clear()
    assert convert(fresh, "openai").messages == cold
