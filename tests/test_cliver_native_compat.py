"""``CLIverMessage.from_native`` / ``to_native`` give 0.3.0a5's fields and shapes (issue 21):
the fields are 0.3.0a5's reading of the native, the native itself goes back on the wire."""

from __future__ import annotations

from _cliver_helpers import binding
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import AgentCore, CLIverMessage, CompactionContext, ModelBindings


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


_PARALLEL = [
    {"role": "user", "content": "check both files"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "reading"},
            {"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_B", "name": "Read", "input": {"path": "b"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_A", "content": "AAA"},
            {"type": "tool_result", "tool_use_id": "toolu_B", "content": "BBB"},
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "both read"}]},
]


async def test_a_turn_of_parallel_anthropic_results_sends_every_result() -> None:
    """Regression: the user turn holding both results became one tool message of the first
    (its fields), so the wire lost toolu_B's result (a provider 400) and a compactor that
    returned the history as it was failed the pairing check."""
    conversation = [CLIverMessage.from_native(m, "anthropic") for m in _PARALLEL]
    seen: list[str] = []

    def identity(context: CompactionContext) -> list[CLIverMessage]:
        seen.append(context.render(context.messages))
        return context.messages

    for compactor in (None, identity):
        with ProviderServer([Reply(text="ok")]) as server:
            async with AgentCore(
                ModelBindings(llm=binding(server, "anthropic")), context_compactor=compactor
            ) as agent:
                await agent.chat("next", conversation=conversation)
            body = server.requests[0].body
            assert isinstance(body, dict)
            assert body["messages"][:4] == _PARALLEL
    assert "[Read result] AAA\n[Read result] BBB" in seen[0]
    assert [m.to_native("anthropic") for m in conversation] == _PARALLEL  # not mutated


def test_compress_for_over_a_turn_of_parallel_results_keeps_or_drops_both() -> None:
    from agent_adapter.context import CompressionPolicy, RemoveOldMessages, compress_for_sync

    history = [CLIverMessage.from_native(m, "anthropic") for m in _PARALLEL]
    history.append(CLIverMessage(role="user", content="next " + "x" * 4000))
    out, _ = compress_for_sync(history, CompressionPolicy(threshold_tokens=100_000), states=False)
    assert out == history and all(a is b for a, b in zip(out, history, strict=True))
    policy = CompressionPolicy(
        threshold_tokens=100, target_tokens=100, steps=[RemoveOldMessages(keep_last=1)]
    )
    out, _ = compress_for_sync(history, policy, states=False)
    assert out[-1] is history[-1]
    answered = [m.tool_call_id for m in out if m.role == "tool"]
    called = [c.id for m in out for c in (m.tool_calls or ())]
    assert sorted(answered) == sorted(called)
