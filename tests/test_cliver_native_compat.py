"""``CLIverMessage.from_native`` / ``to_native`` give 0.3.0a5's fields and shapes (issue 21):
the fields are 0.3.0a5's reading of the native, the native itself goes back on the wire."""

from __future__ import annotations

from cliver_core import CLIverMessage


def test_an_anthropic_user_turn_of_two_results_reads_as_the_first() -> None:
    native = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a"},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": [{"type": "text", "text": "b"}],
            },
        ],
    }
    message = CLIverMessage.from_native(native, "anthropic")
    assert (message.role, message.content, message.tool_call_id) == ("tool", "a", "t1")
    assert message.to_native("anthropic") == native


def test_anthropic_text_blocks_are_joined_and_tool_uses_are_calls() -> None:
    native = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "a"},
            {"type": "text", "text": "b"},
            {"type": "tool_use", "id": "t1", "name": "read", "input": {"p": 1}},
        ],
    }
    message = CLIverMessage.from_native(native, "anthropic")
    assert message.content == "a\nb"
    assert message.tool_calls is not None and message.tool_calls[0].args == {"p": 1}


def test_an_openai_native_keeps_its_content_and_defaults_to_assistant() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}
    user = CLIverMessage.from_native(
        {"role": "user", "content": [{"type": "text", "text": "see"}, image]}, "openai"
    )
    assert user.content == [{"type": "text", "text": "see"}, image]
    assert CLIverMessage.from_native({"content": "x"}, "openai").role == "assistant"


def test_a_system_message_as_anthropic_native() -> None:
    native = CLIverMessage(role="system", content="be brief").to_native("anthropic")
    assert native == {"role": "system", "content": [{"type": "text", "text": "be brief"}]}
