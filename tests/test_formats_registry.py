"""The format registry: convert, detect_format, register_format, and their errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context import CompressionPolicy, compress_for_sync
from agent_adapter.context.formats import (
    FORMATS,
    Converter,
    _registry,
    convert,
    detect_format,
    register_format,
    registered_names,
)


def test_formats_constant() -> None:
    assert FORMATS == ("agent_adapter", "langchain", "openai", "anthropic", "gemini")


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([{"role": "user", "content": "hi"}], "openai"),
        (
            [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "x", "content": "r"},
            ],
            "openai",
        ),
        ([{"type": "message", "role": "user", "content": "hi"}], "openai"),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}],
                }
            ],
            "anthropic",
        ),
        ([{"role": "user", "parts": [{"text": "hi"}]}], "gemini"),
        ([Message("user", "hi")], "agent_adapter"),
    ],
)
def test_detect_format(messages: list[Any], expected: str) -> None:
    assert detect_format(messages) == expected


def test_detect_and_convert_errors_name_the_problem() -> None:
    mixed = [
        {"role": "tool", "tool_call_id": "x", "content": "r"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]},
    ]
    with pytest.raises(ConfigError, match="mix"):
        detect_format(mixed)
    with pytest.raises(ConfigError, match=r"messages\[1\]"):
        detect_format([{"role": "user", "content": "x"}, 42])
    with pytest.raises(ConfigError, match="unknown format 'mistral'"):
        convert([{"role": "user", "content": "x"}], "mistral")
    with pytest.raises(ConfigError, match="no conversion needed"):
        convert([Message("user", "x")], "agent_adapter")
    with pytest.raises(ConfigError, match=r"messages\[0\]"):
        convert([{"role": "robot", "content": "x"}], "openai")
    with pytest.raises(ConfigError, match="must be a list"):
        convert("hello", "openai")  # type: ignore[arg-type]


class _Upper(Converter[str]):
    """A toy format: each message is a string 'role: text'."""

    name = "toy"

    def kind(self, item: Any) -> str | None:
        return "sure" if isinstance(item, str) and ": " in item else None

    def load(self, native: str, index: int) -> list[Message]:
        if not isinstance(native, str) or ": " not in native:
            raise ConfigError(f"messages[{index}] is not 'role: text'")
        role, text = native.split(": ", 1)
        return [Message(role, text)]  # type: ignore[arg-type]

    def rebuild(
        self, native: str, originals: Sequence[Message], now: Sequence[Message | None]
    ) -> list[str]:
        return [f"{m.role}: {m.text}" for m in now if m is not None]

    def dump(self, message: Message) -> str:
        return f"{message.role}: {message.text}"


def test_register_format_and_use_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_registry, "_REGISTERED", {})
    register_format("toy", _Upper(), detect=lambda ms: all(isinstance(m, str) for m in ms))
    assert registered_names() == ["toy"]
    natives = [
        "system: be brief",
        "user: task",
        "assistant: " + "long answer " * 100,
        *(f"{role}: {n}" for n in range(3) for role in ("user", "assistant")),
        "user: latest",
    ]
    assert detect_format(natives) == "toy"
    out, report = compress_for_sync(natives, CompressionPolicy(target_tokens=60))
    assert out[0] is natives[0] and out[-1] is natives[-1]
    assert report.messages_removed + report.messages_changed > 0
    register_format("toy", _Upper())  # the same class again (a module reload) replaces it
    assert registered_names() == ["toy"]

    class Other(_Upper):
        pass

    with pytest.raises(ConfigError, match="already registered"):
        register_format("toy", Other())
    for bad_name in ("", "openai", "auto", "agent_adapter"):
        with pytest.raises(ConfigError):
            register_format(bad_name, _Upper())
    with pytest.raises(ConfigError, match="not a Converter"):
        register_format("x", object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="callable"):
        register_format("y", _Upper(), detect=42)  # type: ignore[arg-type]


def test_a_class_of_another_module_with_the_same_qualname_is_no_reload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_registry, "_REGISTERED", {})
    register_format("toy", _Upper())
    namesake = type("_Upper", (_Upper,), {"__module__": "someone_else.formats"})
    assert namesake.__qualname__ == _Upper.__qualname__
    with pytest.raises(ConfigError, match=r"already registered to test_formats_registry\._Upper"):
        register_format("toy", namesake())
    reloaded = type("_Upper", (_Upper,), {"__module__": _Upper.__module__})  # a module reload
    register_format("toy", reloaded())
    assert isinstance(_registry._REGISTERED["toy"][0], reloaded)


def test_an_empty_list_has_no_format() -> None:
    with pytest.raises(ConfigError, match="empty message list has no format"):
        detect_format([])
    with pytest.raises(ConfigError, match="empty message list has no format"):
        convert([], "auto")
    assert convert([], "openai").messages == []


def test_a_registered_detect_that_raises_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_adapter.context.formats._openai import OpenAIChatConverter

    class Mine(OpenAIChatConverter):
        name = "mine"

    monkeypatch.setattr(_registry, "_REGISTERED", {})
    register_format("boom", Mine(), detect=lambda ms: 1 / 0)
    with pytest.raises(ConfigError, match="'boom' raised ZeroDivisionError"):
        detect_format([{"role": "user", "content": "x"}])


@pytest.mark.parametrize("order", [1, -1])
def test_messages_mixed_with_dicts_name_the_dict(order: int) -> None:
    """Regression: [Message, dict] blamed the Message (messages[0], "not a message of any
    known format ('agent_adapter', ...)"), in either order."""
    items: list[Any] = [Message("user", "hi"), {"role": "user", "content": "x"}][::order]
    where = 1 if order == 1 else 0
    with pytest.raises(ConfigError, match=rf"mix formats: .*messages\[{where}\], a dict"):
        detect_format(items)
    with pytest.raises(ConfigError, match=rf"messages\[{where}\], a dict"):
        compress_for_sync(items, CompressionPolicy(threshold_tokens=50), states=False)


def test_an_sdk_response_object_appended_as_it_came_says_how_to_make_it_a_message() -> None:
    # a user appended resp.choices[0].message (openai's ChatCompletionMessage) to the history
    from openai.types.chat import ChatCompletionMessage

    reply = ChatCompletionMessage(role="assistant", content="hi")
    history: list[Any] = [{"role": "user", "content": "x"}, reply]
    with pytest.raises(ConfigError, match=r"messages\[1\] \(ChatCompletionMessage\).*model_dump"):
        compress_for_sync(history, CompressionPolicy(threshold_tokens=100))
    history[1] = reply.model_dump(exclude_none=True)
    _, report = compress_for_sync(history, CompressionPolicy(threshold_tokens=100))
    assert report.skipped == "under_threshold"
