"""The ``anthropic`` format: Messages dicts, lossless both ways, valid after compression."""

from __future__ import annotations

import asyncio
import copy
import glob
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_adapter._errors import ConfigError
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.cli._loaders import load_claude_code
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MyOwnStep,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress_for,
    compress_for_sync,
    estimate_tokens,
)
from agent_adapter.context._pairing import validate_messages
from agent_adapter.context.formats import convert
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._checks import check, check_thinking_unchanged
from agent_adapter.context.formats._openai import RESERVED_KEY, OpenAIChatConverter

ANTHROPIC = AnthropicConverter()
OPENAI = OpenAIChatConverter()
EPHEMERAL = {"type": "ephemeral"}
FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: True once Conversion.back() calls Converter.finish (the hook asked of _base.py).


def every_step() -> list[Any]:
    return [
        RemoveDuplicates(),
        ShrinkToolResults(bigger_than_tokens=50, older_than_turns=1),
        CutLongMessages(max_tokens_per_message=60),
        RemoveOldMessages(keep_first=1, keep_last=2),
    ]


def compressed(natives: list[Any], target: int, steps: list[Any]) -> list[Any]:
    """compress_for, then the alternation repair back() does once _base.py calls finish()."""
    policy = CompressionPolicy(target_tokens=max(1, target), steps=steps)
    out, _ = asyncio.run(compress_for(natives, policy, format="anthropic"))
    return ANTHROPIC.finish(out)


def tokens(natives: list[Any]) -> int:
    return estimate_tokens(convert(natives, "anthropic").messages)


def thinking_blocks(natives: list[Any]) -> list[Any]:
    return [
        b
        for m in natives
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") in ("thinking", "redacted_thinking")
    ]


# --------------------------------------------------------------------------------------------
# strategies

TEXT = st.one_of(
    st.text(alphabet="abcdefghij klmno\n", min_size=1, max_size=60).map(lambda s: "a" + s),
    st.builds(lambda n, c: c * n, st.integers(200, 1500), st.sampled_from(["lorem ", "x"])),
)
WORDS = st.text(alphabet="abcdefgh", min_size=1, max_size=8)


@st.composite
def anthropic_conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid Messages lists: alternating roles from a user message; thinking and redacted
    thinking with signatures; parallel tool uses answered first in the next user message;
    server tool use with its result; cache_control on text, image, tool_use and tool_result;
    is_error and block content in results; documents and images."""

    def cache() -> dict[str, Any]:
        return {"cache_control": EPHEMERAL} if draw(st.integers(0, 3)) == 0 else {}

    def user_content() -> Any:
        if draw(st.booleans()):
            return draw(TEXT)
        blocks: list[Any] = [{"type": "text", "text": draw(TEXT), **cache()}]
        if draw(st.booleans()):
            blocks.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"},
                    **cache(),
                }
            )
        if draw(st.booleans()):
            blocks.append(
                {
                    "type": "document",
                    "source": {"type": "url", "url": "https://x/a.pdf"},
                    "title": "a",
                }
            )
        return blocks

    out: list[dict[str, Any]] = [{"role": "user", "content": user_content()}]
    for n in range(draw(st.integers(1, 6))):
        blocks: list[Any] = []
        if draw(st.booleans()):
            if draw(st.integers(0, 4)) == 0:
                blocks.append({"type": "redacted_thinking", "data": f"EmwK{n}=="})
            else:
                blocks.append(
                    {"type": "thinking", "thinking": draw(TEXT), "signature": f"ErUB{n}=="}
                )
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": draw(TEXT), **cache()})
        if draw(st.integers(0, 3)) == 0:
            blocks.append(
                {
                    "type": "server_tool_use",
                    "id": f"srvtoolu_{n}",
                    "name": "web_search",
                    "input": {"query": draw(WORDS)},
                }
            )
            blocks.append(
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": f"srvtoolu_{n}",
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://x",
                            "title": "x",
                            "encrypted_content": "E",
                        }
                    ],
                }
            )
        ids = [f"toolu_{n}_{k}" for k in range(draw(st.integers(0, 3)))]
        for id_ in ids:
            blocks.append(
                {"type": "tool_use", "id": id_, "name": "f", "input": {"q": draw(WORDS)}, **cache()}
            )
        if not blocks:
            blocks.append({"type": "text", "text": draw(TEXT)})
        out.append({"role": "assistant", "content": blocks})
        if not ids:
            out.append({"role": "user", "content": user_content()})
            continue
        results: list[Any] = []
        for id_ in draw(st.permutations(ids)):
            body: Any = draw(TEXT)
            if draw(st.booleans()):
                body = [{"type": "text", "text": body, **cache()}]
            result = {"type": "tool_result", "tool_use_id": id_, "content": body, **cache()}
            if draw(st.integers(0, 4)) == 0:
                result["is_error"] = True
            results.append(result)
        if draw(st.booleans()):
            results.append({"type": "text", "text": draw(TEXT)})
        out.append({"role": "user", "content": results})
    return out


# --------------------------------------------------------------------------------------------
# mapping

THINKING = {"type": "thinking", "thinking": "plan it", "signature": "ErUBCkYIBRgCIkB=="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va=="}
NATIVES: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "look", "cache_control": EPHEMERAL},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"},
                "cache_control": EPHEMERAL,
            },
            {"type": "image", "source": {"type": "file", "file_id": "file_1"}},
            {
                "type": "document",
                "source": {"type": "url", "url": "https://x/a.pdf"},
                "title": "A",
                "citations": {"enabled": True},
            },
        ],
    },
    {
        "role": "assistant",
        "content": [
            THINKING,
            REDACTED,
            {"type": "text", "text": "searching"},
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "q"},
            },
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "read",
                "input": {"path": "a"},
                "cache_control": EPHEMERAL,
            },
            {
                "type": "tool_use",
                "id": "toolu_2",
                "name": "read",
                "input": {"path": "b"},
                "caller": {"type": "direct"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "is_error": True,
                "content": [
                    {"type": "text", "text": "boom"},
                    {"type": "image", "source": {"type": "url", "url": "https://x/i.png"}},
                ],
                "cache_control": EPHEMERAL,
            },
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "b text"},
            {"type": "text", "text": "and also"},
        ],
    },
]


def test_blocks_map_to_parts_calls_and_tool_messages() -> None:
    conv = convert(NATIVES)
    assert conv.format == "anthropic"
    m = conv.messages
    assert m[0].content == (
        TextPart("look", {"cache_control": EPHEMERAL}),
        ImagePart(data="iVBOR", media_type="image/png", extras={"cache_control": EPHEMERAL}),
        OpaquePart("anthropic", NATIVES[0]["content"][2]),
        FilePart(url="https://x/a.pdf", extras={"title": "A", "citations": {"enabled": True}}),
    )
    assistant = m[1]
    assert assistant.content[0] == ThinkingPart("plan it", "ErUBCkYIBRgCIkB==")
    assert assistant.content[1] == ThinkingPart("EmwKAhgBEgy3va==", redacted=True)
    assert [type(p).__name__ for p in assistant.content[3:]] == ["OpaquePart", "OpaquePart"]
    assert assistant.tool_calls == (
        ToolCall("toolu_1", "read", '{"path": "a"}', {"cache_control": EPHEMERAL}),
        ToolCall("toolu_2", "read", '{"path": "b"}', {"caller": {"type": "direct"}}),
    )
    assert m[2] == Message(
        "tool",
        (TextPart("boom"), ImagePart(url="https://x/i.png")),
        tool_call_id="toolu_1",
        extras={"is_error": True, "cache_control": EPHEMERAL},
    )
    assert m[3] == Message("tool", "b text", tool_call_id="toolu_2")
    assert m[4] == Message("user", (TextPart("and also"),))
    assert conv.back(list(m)) is NATIVES
    for message in m:  # every field the API documents has a slot: no carrier needed
        native = ANTHROPIC.dump(message)
        assert RESERVED_KEY not in native
        assert ANTHROPIC.load(native, 0) == [message]
    assert ANTHROPIC.dump(m[1])["content"] == NATIVES[1]["content"]
    assert ANTHROPIC.dump(m[0]) == NATIVES[0]


def test_rebuild_keeps_thinking_and_cache_control_in_place() -> None:
    natives = copy.deepcopy(NATIVES)
    natives[1]["content"].insert(
        3, {"type": "text", "text": "long " * 30, "cache_control": EPHEMERAL}
    )
    conv = convert(natives)
    m = conv.messages
    now = [m[0], m[1].with_text("short"), m[2].with_text("cut"), m[3], m[4]]
    out = conv.back(now)
    assert out[0] is natives[0]
    blocks = out[1]["content"]
    assert blocks[0] is natives[1]["content"][0] and blocks[1] is natives[1]["content"][1]
    # the new text goes to the block carrying cache_control, which keeps its marker in place
    assert blocks[2] == {"type": "text", "text": "short", "cache_control": EPHEMERAL}
    assert [b.get("type") for b in blocks] == [
        "thinking",
        "redacted_thinking",
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "tool_use",
        "tool_use",
    ]
    result = out[2]["content"][0]
    assert result["cache_control"] == EPHEMERAL and result["is_error"] is True
    assert result["content"][0] == {"type": "text", "text": "cut"}
    assert result["content"][1] is natives[2]["content"][0]["content"][1]
    assert out[2]["content"][1] is natives[2]["content"][1]
    assert check(out, "anthropic") == []


def test_foreign_messages_round_trip_through_anthropic() -> None:
    chat = [
        {"role": "developer", "content": "rules"},
        {
            "role": "user",
            "name": "ann",
            "content": [
                {"type": "text", "text": "hi"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,QUJD", "detail": "low"},
                },
                {"type": "input_audio", "input_audio": {"data": "QQ==", "format": "wav"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}},
                {"id": "c2", "type": "custom", "custom": {"name": "g", "input": "raw"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
    ]
    conv = convert(chat)
    dumped = [ANTHROPIC.dump(m) for m in conv.messages]
    again = [ANTHROPIC.load(n, 0)[0] for n in dumped]
    assert again == conv.messages
    assert dumped[1]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"},
    }
    assert dumped[2]["content"][0]["input"] == {"a": 1}
    back = conv.back(again)
    assert all(a is b for a, b in zip(back, chat, strict=True))


def test_thinking_goes_through_chat_and_back_with_its_signature() -> None:
    conv = convert(NATIVES)
    via_chat = [OPENAI.load(OPENAI.dump(m), 0)[0] for m in conv.messages]
    assert via_chat == conv.messages
    assert via_chat[1].content[0].signature == THINKING["signature"]
    out = conv.back(via_chat)
    assert all(a is b for a, b in zip(out, NATIVES, strict=True))


def test_messages_of_other_converters_round_trip() -> None:
    gemini = [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "thinking", "thought": True, "thought_signature": "c2ln"},
                {
                    "function_call": {"name": "get", "args": {"city": "Oslo"}},
                    "thought_signature": "c2lnMg==",
                },
            ],
        },
        {
            "role": "user",
            "parts": [{"function_response": {"name": "get", "response": {"output": "rain"}}}],
        },
    ]
    conv = convert(gemini, "gemini")
    for converter in (ANTHROPIC, OPENAI):
        again = [converter.load(converter.dump(m), 0)[0] for m in conv.messages]
        assert again == conv.messages
        assert conv.back(again) == gemini


# --------------------------------------------------------------------------------------------
# alternation


def test_finish_merges_adjacent_same_role_messages() -> None:
    a = {"role": "user", "content": "one"}
    b = {"role": "user", "content": [{"type": "text", "text": "two", "cache_control": EPHEMERAL}]}
    c = {"role": "assistant", "content": [THINKING, {"type": "text", "text": "x"}]}
    d = {"role": "assistant", "content": "y"}
    valid = [a, c]
    assert ANTHROPIC.finish(valid) is valid
    out = ANTHROPIC.finish([a, b, c, d])
    assert out == [
        {"role": "user", "content": [{"type": "text", "text": "one"}, b["content"][0]]},
        {
            "role": "assistant",
            "content": [THINKING, c["content"][1], {"type": "text", "text": "y"}],
        },
    ]
    assert out[0]["content"][1] is b["content"][0] and out[1]["content"][0] is THINKING
    assert check(out, "anthropic") == []


def _alternating() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "old answer " * 200},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": [THINKING, {"type": "text", "text": "ok"}]},
        {"role": "user", "content": "latest"},
    ]


def _drop_old_answer(messages: list[Message]) -> list[Message]:
    return [m for m in messages if not m.text.startswith("old answer")]


def test_removing_an_assistant_between_users_is_repaired_by_merging() -> None:
    natives = _alternating()
    conversion = convert(natives, "anthropic")
    kept = [m for m in conversion.messages if not m.text.startswith("old answer")]
    raw = [n for n in natives if n is not natives[1]]
    assert [v.rule for v in check(raw, "anthropic")] == ["roles_not_alternating"]
    out = conversion.back(kept)  # back() merges through ANTHROPIC.finish
    assert check(out, "anthropic") == []
    assert out[0] == {
        "role": "user",
        "content": [{"type": "text", "text": "task"}, {"type": "text", "text": "more"}],
    }
    assert out[1] is natives[3] and out[2] is natives[4]
    assert ANTHROPIC.finish(out) is out  # nothing left to merge: the same list


SEED = [{"role": "user", "content": "s"}]  # binds a conversion that dumps everything


def test_a_merge_keeps_the_names_of_the_messages_it_merged() -> None:
    messages = [Message("user", "a", name="n1"), Message("user", "b", name="n2")]
    out = convert(SEED, "anthropic").back(messages)
    assert len(out) == 1 and [b["text"] for b in out[0]["content"]] == ["a", "b"]
    assert convert(out, "anthropic").messages == messages


def _reused_ids(second: list[str]) -> list[Message]:
    """Two tool rounds that both use the call id ``c0``, then a user message."""
    out = [Message("user", "q")]
    for ids in (["c0"], second):
        out.append(Message("assistant", "", tool_calls=[ToolCall(c, "f", "{}") for c in ids]))
        out.extend(Message("tool", f"r {c}", tool_call_id=c) for c in ids)
    return [*out, Message("user", "done")]


@pytest.mark.parametrize("second", [["c0", "c1"], ["c0"]])
def test_reused_ids_through_a_merged_result_turn_load_and_validate(second: list[str]) -> None:
    messages = _reused_ids(second)
    natives = convert(SEED, "anthropic").back(messages)
    assert natives[-1]["content"][0]["tool_use_id"] == "c0__2"  # results and "done": merged
    conversion = convert(natives, "anthropic")
    validate_messages(conversion.messages)  # was: 'c0__2' answers no open tool call
    assert conversion.messages == messages
    compress_for_sync(natives, CompressionPolicy(target_tokens=5), format="anthropic")


def test_a_merged_native_rebuilds_part_by_part() -> None:
    messages = [Message("user", f"{t} " * 40, name=t) for t in ("a", "b", "c")]
    natives = convert(SEED, "anthropic").back(messages)
    conversion = convert(natives, "anthropic")
    assert conversion.back(list(conversion.messages)) is natives
    kept = conversion.messages
    cut = [kept[0], kept[1].with_text("b cut"), kept[2]]
    assert convert(conversion.back(cut), "anthropic").messages == cut
    out = conversion.back([kept[0], kept[2]])
    assert convert(out, "anthropic").messages == [kept[0], kept[2]]
    only = conversion.back([kept[1]])  # one source left: its own native, no merge
    assert only == [ANTHROPIC.dump(kept[1])]


def test_merges_of_merges_and_other_keys_load_as_their_sources() -> None:
    plain = {"role": "user", "content": "p", "id": "x1"}  # loads with extras {"id": "x1"}
    named = [ANTHROPIC.dump(Message("user", t, name=t)) for t in ("a", "b")]
    twice = ANTHROPIC.finish([ANTHROPIC.finish([plain, named[0]])[0], named[1]])
    assert len(twice) == 1 and twice[0]["id"] == "x1"
    expected = [m for i, n in enumerate([plain, *named]) for m in ANTHROPIC.load(n, i)]
    assert ANTHROPIC.load(twice[0], 0) == expected
    assert ANTHROPIC.finish([named[1], plain])[0][RESERVED_KEY]["merged"][1][3] == {"id": "x1"}
    bad = {**twice[0], RESERVED_KEY: {"merged": [[1, None, True]]}}
    with pytest.raises(ConfigError, match=r"merged counts 1 blocks; the message has 3"):
        ANTHROPIC.load(bad, 0)


NAMES = st.sampled_from(["ann", "bob"])


@st.composite
def reusing_conversations(draw: st.DrawFn) -> list[Message]:
    """Valid Message lists with same-role neighbours and call ids reused by rounds. User and
    assistant messages have names (a merge of natives with no carrier is one message, as
    before); tool messages may not (their results load apart anyway)."""
    out = [Message("user", draw(WORDS), name=draw(NAMES))]
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            out.append(Message("user", draw(WORDS), name=draw(NAMES)))
        if draw(st.booleans()):
            out.append(Message("assistant", draw(WORDS), name=draw(NAMES)))
        ids = draw(st.lists(st.sampled_from(["c0", "c1", "c2"]), min_size=1, unique=True))
        calls = [ToolCall(c, "f", '{"q": 1}') for c in ids]
        out.append(Message("assistant", draw(WORDS), tool_calls=calls, name=draw(NAMES)))
        for c in draw(st.permutations(ids)):
            name = draw(st.one_of(st.none(), NAMES))
            out.append(Message("tool", draw(WORDS), tool_call_id=c, name=name))
        if draw(st.booleans()):
            out.append(Message("user", draw(WORDS), name=draw(NAMES)))
    return validate_messages(out)


@FAST
@given(reusing_conversations(), st.data())
def test_dumped_conversations_round_trip_through_merges(
    messages: list[Message], data: st.DataObject
) -> None:
    natives = convert(SEED, "anthropic").back(messages)
    blocks = [b for n in natives if isinstance(n["content"], list) for b in n["content"]]
    ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    assert len(ids) == len(set(ids))
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(natives))
    conversion = convert(natives, "anthropic")
    assert conversion.messages == messages
    validate_messages(conversion.messages)
    # dropping messages rebuilds merged natives part by part and merges again
    keep = data.draw(st.lists(st.booleans(), min_size=len(messages), max_size=len(messages)))
    kept = [m for m, k in zip(conversion.messages, keep, strict=True) if k]
    assert convert(conversion.back(kept), "anthropic").messages == kept


def test_compress_for_output_alternates_without_help() -> None:
    natives = _alternating()
    out, _ = asyncio.run(
        compress_for(
            natives,
            CompressionPolicy(target_tokens=10, steps=[MyOwnStep(fn=_drop_old_answer)]),
            format="anthropic",
        )
    )
    assert check(out, "anthropic") == []


# --------------------------------------------------------------------------------------------
# thinking mid-loop


def _mid_loop() -> list[dict[str, Any]]:
    big = "line of output\n" * 300
    return [
        {"role": "user", "content": "fix the bug"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I will read a then b", "signature": "ErUBsig=="},
                {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": big}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "now b " * 100},
                {"type": "tool_use", "id": "t2", "name": "read", "input": {"path": "b"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": big}]},
    ]


@pytest.mark.parametrize(
    "step",
    [
        CutLongMessages(max_tokens_per_message=20),
        ShrinkToolResults(bigger_than_tokens=10, older_than_turns=0),
        RemoveOldMessages(),
        RemoveOldMessages(keep_first=1, keep_last=2),
    ],
    ids=["cut", "shrink", "remove_old_default", "remove_old_keep_last_2"],
)
def test_thinking_of_the_turn_opener_stays_byte_identical(step: Any) -> None:
    natives = _mid_loop()
    before = json.dumps(natives[1]["content"][0])
    out = compressed(natives, 30, [step])
    assert check(out, "anthropic") == []
    assert check_thinking_unchanged(natives, out) == []
    (block,) = thinking_blocks(out)
    assert block is natives[1]["content"][0] and json.dumps(block) == before


# --------------------------------------------------------------------------------------------
# real data


def _sessions(data_dir: Path) -> list[list[dict[str, Any]]]:
    files = sorted(
        glob.glob(str(data_dir / "claude-code-spotter" / "**" / "*.jsonl"), recursive=True)
    )
    return [load_claude_code(f) for f in files]


def test_real_claude_code_sessions_round_trip_unchanged(data_dir: Path) -> None:
    sessions = _sessions(data_dir)
    assert len(sessions) == 20
    for natives in sessions:
        assert check(natives, "anthropic") == []
        conv = convert(natives, "anthropic")
        assert conv.back(list(conv.messages)) is natives
        for message in conv.messages:
            assert ANTHROPIC.load(ANTHROPIC.dump(message), 0) == [message]
        via_chat = [OPENAI.load(OPENAI.dump(m), 0)[0] for m in conv.messages]
        assert via_chat == conv.messages  # Anthropic -> chat -> Message keeps everything
        back = conv.back(via_chat)  # and the natives rebuilt from them are the originals
        assert len(back) == len(natives) and all(a is b for a, b in zip(back, natives, strict=True))


@pytest.mark.parametrize("ratio", [0.7, 0.4, 0.1])
def test_real_claude_code_sessions_stay_valid_after_compression(
    data_dir: Path, ratio: float
) -> None:
    for natives in _sessions(data_dir):
        snapshot = copy.deepcopy(natives)
        total = tokens(natives)
        blocks = {id(b) for b in thinking_blocks(natives)}
        for step in every_step():
            out = compressed(natives, int(total * ratio), [step])
            assert check(out, "anthropic") == [], step.name
            assert all(id(b) in blocks for b in thinking_blocks(out))
            changed = [
                v
                for v in check_thinking_unchanged(natives, out)
                if v.rule != "turn_thinking_dropped"
            ]
            assert changed == []
        assert natives == snapshot


def test_real_sessions_keep_the_turn_openers_thinking(data_dir: Path) -> None:
    dropped = 0
    for natives in _sessions(data_dir):
        total = tokens(natives)
        for ratio in (0.7, 0.4, 0.1):
            out = compressed(
                natives, int(total * ratio), [RemoveOldMessages(keep_first=1, keep_last=2)]
            )
            dropped += len(check_thinking_unchanged(natives, out))
    assert dropped == 0


# --------------------------------------------------------------------------------------------
# properties


STEP_LISTS = st.lists(
    st.sampled_from([*every_step(), RemoveOldMessages(keep_first=0, keep_last=1)]),
    min_size=1,
    max_size=4,
)


@FAST
@given(anthropic_conversations(), STEP_LISTS, st.floats(0.02, 1.0))
def test_compressed_anthropic_stays_valid(
    natives: list[dict[str, Any]], steps: list[Any], ratio: float
) -> None:
    assert check(natives, "anthropic") == []
    out = compressed(natives, int(tokens(natives) * ratio), steps)
    assert check(out, "anthropic") == []
    kept = {id(n) for n in out}
    for native in out:
        twins = [n for n in natives if n == native]
        # equal to an input native: it is that native, unless every equal input native is
        # also in the output itself (a rebuilt message that happens to equal another one)
        if twins and not any(native is n for n in twins):
            assert all(id(n) in kept for n in twins)
    blocks = {id(b) for b in thinking_blocks(natives)}
    assert all(id(b) in blocks for b in thinking_blocks(out))
    changed = [v for v in check_thinking_unchanged(natives, out) if v.rule == "thinking_changed"]
    assert changed == []


@FAST
@given(anthropic_conversations())
def test_anthropic_round_trip(natives: list[dict[str, Any]]) -> None:
    conv = convert(natives)
    assert conv.back(list(conv.messages)) is natives
    for message in conv.messages:
        for converter in (ANTHROPIC, OPENAI):
            native = converter.dump(message)
            assert converter.load(native, 0) == [message]
        if message.role != "assistant" or all(not isinstance(p, OpaquePart) for p in message.parts):
            assert RESERVED_KEY not in ANTHROPIC.dump(message)


def test_a_deeply_nested_tool_input_is_a_config_error() -> None:
    nested: dict[str, Any] = {}
    for _ in range(1000):
        nested = {"a": nested}
    natives: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "f", "input": nested}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
    ]
    field = r"messages\[1\]\.content\[0\]\.input is nested more than"
    with pytest.raises(ConfigError, match=field):  # was RecursionError
        convert(natives)
    with pytest.raises(ConfigError, match=field):
        compress_for_sync(natives, CompressionPolicy(target_tokens=5))
    shallow: dict[str, Any] = {}
    for _ in range(150):  # deep, but within the limit
        shallow = {"a": shallow}
    natives[1]["content"][0]["input"] = shallow
    assert len(convert(natives).messages) == 3
