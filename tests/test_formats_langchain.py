"""The ``langchain`` format: BaseMessage lists (LangChain, LangGraph)."""

from __future__ import annotations

import asyncio
import copy
import functools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

from _convo import pairing_problems
from agent_adapter._errors import ConfigError, MissingDependency
from agent_adapter._messages import ImagePart, Message, OpaquePart, TextPart, ThinkingPart, ToolCall
from agent_adapter.cli._loaders import load_claude_code, load_tau_bench
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MyOwnStep,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    carries_approval_state,
    compress,
    compress_for,
    compress_for_sync,
    estimate_tokens,
    has_approval_marker,
)
from agent_adapter.context.formats import convert, detect_format
from agent_adapter.context.formats._gemini import GeminiConverter
from agent_adapter.context.formats._langchain import (
    GEMINI_SIGNATURES_KEY,
    LangChainConverter,
)

LC = LangChainConverter()
SIG = "EqQBCkgIBxABGAIiQL0l+sig/=="


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _agent() -> list[BaseMessage]:
    return [
        SystemMessage("You are terse.", id="sys"),
        HumanMessage("Weather in Paris?", id="h1", name="ann"),
        AIMessage(
            content=[
                {"type": "thinking", "thinking": "look it up", "signature": SIG},
                {"type": "text", "text": "Checking."},
            ],
            tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1"}],
            id="run-1",
            additional_kwargs={"trace": 7},
            response_metadata={"model_name": "claude", "stop_reason": "tool_use"},
            usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        ),
        ToolMessage("rain " * 300, tool_call_id="c1", name="weather", id="t1", artifact={"raw": 1}),
        AIMessage(
            "It rains in Paris. " * 20, id="run-2", response_metadata={"model_name": "claude"}
        ),
        HumanMessage("Thanks!", id="h2"),
    ]


# ------------------------------------------------------------------------------------ loading


def test_detects_message_objects_only() -> None:
    assert detect_format(_agent()) == "langchain"
    assert detect_format([AIMessageChunk(content="x")]) == "langchain"
    assert LC.kind({"role": "user", "content": "hi"}) is None
    assert LC.kind("hi") is None
    with pytest.raises(ConfigError, match=r"messages\[0\]"):
        convert([{"role": "user", "content": "hi"}], "langchain")


def test_load_maps_fields_and_blocks() -> None:
    system, human, ai, tool, answer, _ = convert(_agent(), "langchain").messages
    assert system == Message("system", "You are terse.", extras={"langchain": {"id": "sys"}})
    assert human.name == "ann" and human.extras == {"langchain": {"id": "h1"}}
    assert ai.content == (ThinkingPart("look it up", SIG), TextPart("Checking."))
    assert ai.tool_calls == (ToolCall("c1", "weather", '{"city": "Paris"}'),)
    assert ai.extras["langchain"]["usage_metadata"]["total_tokens"] == 15
    assert ai.extras["langchain"]["additional_kwargs"] == {"trace": 7}
    assert (tool.role, tool.tool_call_id, tool.name) == ("tool", "c1", "weather")
    assert tool.extras == {"langchain": {"id": "t1", "artifact": {"raw": 1}}}
    assert answer.text.startswith("It rains")


def test_reasoning_images_bare_strings_and_call_blocks() -> None:
    msg = AIMessage(
        content=[
            "bare text",
            {"type": "reasoning", "reasoning": "hmm", "extras": {"signature": SIG, "k": 1}},
            {"type": "redacted_thinking", "data": "opaque=="},
            {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}},
            {"type": "image", "base64": "aGk=", "mime_type": "image/png"},
            {"type": "tool_use", "id": "c9", "name": "f", "input": {}},
            {"type": "citation", "x": 1},
        ],
        tool_calls=[{"name": "f", "args": {}, "id": "c9"}],
    )
    (m,) = LC.load(msg, 0)
    assert m.content == (
        TextPart("bare text"),
        ThinkingPart("hmm", SIG, extras={"langchain_type": "reasoning", "extras": {"k": 1}}),
        ThinkingPart("opaque==", redacted=True),
        ImagePart(url="https://x/y.png", detail="low"),
        ImagePart(data="aGk=", media_type="image/png"),
        OpaquePart("langchain", {"type": "citation", "x": 1}),
    )
    assert LC.load(LC.dump(m), 0) == [m]
    assert LC.dump(m).content[1] == {
        "type": "reasoning",
        "reasoning": "hmm",
        "extras": {"k": 1, "signature": SIG},
    }


def test_chat_messages_ids_and_unsupported_types() -> None:
    user, bot = LC.load_all([ChatMessage("hi", role="user"), ChatMessage("yo", role="assistant")])[
        0
    ]
    assert (user.role, bot.role) == ("user", "assistant")
    assert LC.load(LC.dump(bot), 0) == [bot]
    (no_id,) = LC.load(AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": None}]), 4)
    assert no_id.tool_calls[0].id == "lc_call_4_0"
    assert LC.dump(no_id).tool_calls[0]["id"] is None
    with pytest.raises(ConfigError, match=r"messages\[0\] is a RemoveMessage"):
        convert([RemoveMessage(id="x")], "langchain")
    with pytest.raises(ConfigError, match="role"):
        convert([ChatMessage("?", role="critic")], "langchain")


def test_deeply_nested_call_args_are_a_config_error() -> None:
    nested: dict[str, Any] = {}
    for _ in range(1000):
        nested = {"a": nested}
    messages = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": nested, "id": "c1"}]),
        ToolMessage("x", tool_call_id="c1"),
    ]
    field = r"messages\[1\]\.tool_calls\[0\]\.args is nested more than"
    with pytest.raises(ConfigError, match=field):  # was RecursionError
        convert(messages, "langchain")
    with pytest.raises(ConfigError, match=field):
        compress_for_sync(messages, CompressionPolicy(target_tokens=5))


def test_calls_without_id_are_named_by_their_place() -> None:
    messages = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": None}]),
        HumanMessage("never mind"),
    ]
    conv = convert(messages, "langchain")
    assert conv.call_terms == ("tool_calls", "tool_call_id")
    assert conv.native_call_id(conv.messages[1].tool_calls[0].id) == "tool_calls[0] (no id)"
    with pytest.raises(ConfigError) as err:
        compress_for_sync(messages, CompressionPolicy(target_tokens=5))
    assert "lc_call" not in str(err.value) and "tool_calls[0] (no id)" in str(err.value)


# ------------------------------------------------------------------------------------ back


def test_changed_messages_keep_every_field_and_inputs_are_not_mutated() -> None:
    messages = _agent()
    snapshot = [m.model_dump() for m in messages]
    policy = CompressionPolicy(
        target_tokens=60,
        steps=[
            ShrinkToolResults(bigger_than_tokens=20, older_than_turns=0, keep_chars=30),
            CutLongMessages(max_tokens_per_message=10),
        ],
    )
    out, report = _run(compress_for(messages, policy))
    assert report.messages_changed >= 2
    assert [m.model_dump() for m in messages] == snapshot
    assert out[0] is messages[0] and out[1] is messages[1] and out[-1] is messages[-1]
    for new, old in zip(out, messages, strict=True):
        assert type(new) is type(old)
        skip = {"content"}
        assert {k: v for k, v in new.model_dump().items() if k not in skip} == {
            k: v for k, v in old.model_dump().items() if k not in skip
        }
    assert len(out[3].content) < len(messages[3].content)
    assert out[3].artifact == {"raw": 1} and out[3].name == "weather"


def test_list_content_keeps_non_text_blocks_as_the_same_objects() -> None:
    thinking = {"type": "thinking", "thinking": "t", "signature": SIG}
    image = {"type": "image_url", "image_url": {"url": "https://x/a.png"}}
    msg = AIMessage(content=[thinking, "first", {"type": "text", "text": "second"}, image])
    conv = convert([HumanMessage("q"), msg], "langchain")
    (new,) = conv.back([conv.messages[0], conv.messages[1].with_text("short")])[1:]
    assert new.content == [thinking, "short", image]
    assert new.content[0] is msg.content[0] and new.content[2] is msg.content[3]
    assert msg.content[1] == "first"


# ------------------------------------------------------------------------------------ signatures


def test_gemini_call_signatures_map_to_tool_call_extras_and_back() -> None:
    msg = AIMessage(
        content="",
        tool_calls=[
            {"name": "f", "args": {"a": 1}, "id": "c1"},
            {"name": "g", "args": {}, "id": "c2"},
        ],
        additional_kwargs={GEMINI_SIGNATURES_KEY: {"c1": SIG}, "other": 1},
    )
    (m,) = LC.load(msg, 0)
    assert m.tool_calls[0].extras == {"thought_signature": SIG}
    assert m.tool_calls[1].extras == {}
    assert m.extras["langchain"] == {"additional_kwargs": {"other": 1}}
    dumped = LC.dump(m)
    assert dumped.additional_kwargs == {"other": 1, GEMINI_SIGNATURES_KEY: {"c1": SIG}}
    # and through the gemini format, byte-identical
    gem = GeminiConverter(objects=False)
    native = gem.dump(m)
    assert native["parts"][0]["thought_signature"] == SIG
    (again,) = gem.load(native, 0)
    assert LC.dump(again).additional_kwargs[GEMINI_SIGNATURES_KEY] == {"c1": SIG}


def test_new_messages_without_langchain_core_raise_missing_dependency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    messages = _agent()

    def add_summary(msgs: list[Message]) -> list[Message]:
        return [msgs[0], msgs[1], Message("user", "summary"), *msgs[4:]]

    monkeypatch.setitem(sys.modules, "langchain_core", None)
    # reading and changing messages never imports langchain-core
    cut = CompressionPolicy(target_tokens=60, steps=[CutLongMessages(max_tokens_per_message=10)])
    out, report = _run(compress_for(messages, cut))
    assert report.messages_changed > 0 and len(out) == len(messages)
    with pytest.raises(MissingDependency, match=r"agent-adapter\[langchain\]"):
        LC.dump(Message("user", "summary"))
    add = CompressionPolicy(target_tokens=20, steps=[MyOwnStep(fn=add_summary)])
    with pytest.raises(MissingDependency, match="langchain-core"):
        _run(compress_for(messages, add))


def test_summaries_become_human_or_ai_messages() -> None:
    def summarize(msgs: list[Message]) -> list[Message]:
        # a user summary: an assistant one right before the kept AIMessage would be dropped by
        # the guard (the two would merge into one turn)
        return [msgs[0], msgs[1], Message("user", "summary of the lookup"), *msgs[4:]]

    policy = CompressionPolicy(target_tokens=20, steps=[MyOwnStep(fn=summarize)])
    out, report = _run(compress_for(_agent(), policy))
    assert report.messages_added == 1
    (summary,) = [m for m in out if m.content == "summary of the lookup"]
    assert type(summary) is HumanMessage
    ai = LC.dump(Message("assistant", "s"))
    assert type(ai) is AIMessage and ai.tool_calls == []


# ------------------------------------------------------------------------------------ approvals


def test_approval_markers_in_langchain_messages() -> None:
    ask = AIMessage(
        "",
        tool_calls=[{"name": "adk_request_confirmation", "args": {"hint": "ok?"}, "id": "a1"}],
    )
    answer = ToolMessage('{"confirmed": true}', tool_call_id="a1", name="adk_request_confirmation")
    plain = AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": "s1"}])
    assert has_approval_marker(ask) and has_approval_marker(answer)
    assert not has_approval_marker(plain)
    msgs = convert([HumanMessage("go"), ask, answer], "langchain").messages
    assert [carries_approval_state(m) for m in msgs] == [False, True, True]


def test_langchain_hitl_rejection_is_an_approval_marker() -> None:
    rejected = ToolMessage(
        "User rejected the tool call for `write_file` with id c1",
        tool_call_id="c1",
        name="write_file",
        status="error",
    )
    (m,) = LC.load(rejected, 0)
    assert has_approval_marker(rejected) or carries_approval_state(m)


# ------------------------------------------------------------------------------------ real data


@functools.cache
def _real(data_dir: Path) -> list[list[Message]]:
    tau = load_tau_bench(data_dir / "tau-bench" / "gpt-4o-airline.json")
    sessions = [
        load_claude_code(p) for p in sorted((data_dir / "claude-code-spotter").glob("*.jsonl"))
    ]
    return [
        *(convert(d, "openai").messages for d in tau),
        *(convert(s, "anthropic").messages for s in sessions),
    ]


def _decorate(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Each message with an id, additional_kwargs and response_metadata, as LangGraph has."""
    return [
        m.model_copy(
            update={
                "id": f"msg-{i}",
                "additional_kwargs": {**m.additional_kwargs, "n": i},
                "response_metadata": {"model_name": "m", "i": i},
            }
        )
        for i, m in enumerate(messages)
    ]


def test_dump_then_load_is_identity_for_messages_of_every_format(data_dir: Path) -> None:
    gem = GeminiConverter(objects=False)
    n = 0
    for msgs in _real(data_dir):
        for m in msgs:
            assert LC.load(LC.dump(m), 3) == [m]
            n += 1
    for msgs in _real(data_dir)[:20]:
        for m in convert(gem.dump_all(msgs), "gemini").messages:
            assert LC.load(LC.dump(m), 0) == [m]
            n += 1
    assert n > 7000


def _shape(m: Message) -> tuple[Any, ...]:
    """``m`` up to how its text is split into text blocks (a changed text goes back into the
    native's blocks, which keep their place; a step's message holds it in one part)."""
    others = tuple(p for p in m.parts if not isinstance(p, TextPart))
    return (m.role, m.text, others, m.tool_calls, m.tool_call_id, m.name, m.extras)


def _policies(total: int) -> list[CompressionPolicy]:
    steps: list[Any] = [
        [RemoveDuplicates()],
        [ShrinkToolResults(bigger_than_tokens=40, older_than_turns=1, keep_chars=80)],
        [CutLongMessages(max_tokens_per_message=60)],
        [RemoveOldMessages()],
        None,
    ]
    return [
        CompressionPolicy(target_tokens=max(1, int(total * r)), steps=s)
        for s in steps
        for r in (0.6, 0.2)
    ]


def test_real_conversations_compress_with_pairs_and_fields_kept(data_dir: Path) -> None:
    real = _real(data_dir)
    # a sample: 15 tau-bench dialogs and every other Claude Code session (4 of 8);
    # bench/roundtrip_report.py sweeps every conversation in the langchain format
    conversations = [*real[:15], *real[200::2]]
    runs = 0
    for msgs in conversations:
        natives = _decorate([LC.dump(m) for m in msgs])
        assert detect_format(natives) == "langchain"
        snapshot = copy.deepcopy(natives)
        by_id = {m.id: m for m in natives}
        for policy in _policies(estimate_tokens(msgs)):
            conv = convert(natives, "langchain")
            result, _ = _run(compress(conv.messages, policy))
            out = conv.back(result)
            runs += 1
            kept = {id(m) for m in result}
            for native, message in zip(natives, conv.messages, strict=True):
                if id(message) in kept:
                    assert any(o is native for o in out)
            for o in out:
                if o.id is None:  # the note RemoveOldMessages leaves for a dropped run
                    assert type(o).__name__ == "HumanMessage"
                    assert "earlier messages removed" in o.content
                    continue
                old = by_id[o.id]
                assert type(o) is type(old)
                assert o.additional_kwargs == old.additional_kwargs
                assert o.response_metadata == old.response_metadata
                if isinstance(o, AIMessage):
                    assert o.tool_calls == old.tool_calls
                    thinking = [b for b in old.content if isinstance(b, dict) and "signature" in b]
                    assert all(any(b is c for c in o.content) for b in thinking)
            # back() then load: what was compressed (the text in the native's text blocks)
            assert [_shape(m) for m in LC.load_all(out)[0]] == [_shape(m) for m in result]
            assert pairing_problems(result) == []
        out, _ = _run(compress_for(natives, _policies(estimate_tokens(msgs))[-1]))
        assert pairing_problems(LC.load_all(out)[0]) == []
        assert natives == snapshot
    assert runs == len(conversations) * 10
