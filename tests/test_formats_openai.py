"""The ``openai`` format: Chat Completions dicts and Responses items, lossless both ways.

Also home of the Hypothesis strategies shared by ``test_formats_anthropic.py`` and
``test_check.py``: any :class:`Message` (for ``load(dump(m)) == m``), and valid conversations
in Chat Completions and Responses shapes.
"""

from __future__ import annotations

import asyncio
import copy
import glob
import json
from collections.abc import Sequence
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
from agent_adapter.cli._loaders import load_swe_agent, load_tau_bench
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
from agent_adapter.context._units import Protection
from agent_adapter.context.formats import Conversion, Converter, convert, detect_format
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._checks import check, check_thinking_unchanged, strip_reserved
from agent_adapter.context.formats._openai import (
    RESERVED_KEY,
    ChatConverter,
    OpenAIChatConverter,
    ResponsesConverter,
)
from agent_adapter.context.formats._responses import ITEM_TYPES

OPENAI = OpenAIChatConverter()
RESPONSES = OPENAI.bind([{"type": "message", "role": "user", "content": "x"}])
ANTHROPIC = AnthropicConverter()
FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def every_step() -> list[Any]:
    return [
        RemoveDuplicates(),
        ShrinkToolResults(bigger_than_tokens=50, older_than_turns=1),
        CutLongMessages(max_tokens_per_message=60),
        RemoveOldMessages(keep_first=1, keep_last=2),
    ]


def compressed(natives: list[Any], fmt: str, target: int, steps: list[Any]) -> list[Any]:
    policy = CompressionPolicy(target_tokens=max(1, target), steps=steps)
    out, _ = asyncio.run(compress_for(natives, policy, format=fmt))
    return out


def tokens(natives: list[Any], fmt: str) -> int:
    return estimate_tokens(convert(natives, fmt).messages)


# --------------------------------------------------------------------------------------------
# strategies

WORDS = st.text(alphabet="abcdefgh xyz.\n", min_size=1, max_size=12)
TEXT = st.one_of(
    st.text(alphabet="abcdefghij klmno\n", min_size=1, max_size=60),
    st.builds(lambda n, c: c * n, st.integers(200, 1500), st.sampled_from(["lorem ", "x"])),
)
IDS = st.text(alphabet="abcdef0123456789", min_size=4, max_size=8)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | WORDS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(WORDS, inner, max_size=3),
    max_leaves=6,
)
TYPES = st.sampled_from(
    [
        "text",
        "image",
        "document",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "input_text",
        "output_text",
        "input_image",
        "input_file",
        "input_audio",
        "refusal",
        "image_url",
        "file",
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "computer_call",
        "computer_call_output",
        "mcp_approval_request",
        "web_search_call",
        "custom",
        "human",
        "zzz",
    ]
)
KEYS = st.sampled_from(
    [
        "type",
        "role",
        "id",
        "status",
        "output",
        "cache_control",
        "citations",
        "is_error",
        "refusal",
        "annotations",
        "file_id",
        "thought_signature",
        "additional_kwargs",
        "caller",
        "content",
        "text",
        "name",
        "zz",
    ]
)


@st.composite
def extras(draw: st.DrawFn) -> dict[str, Any]:
    out = draw(st.dictionaries(KEYS, JSONISH, max_size=3))
    if draw(st.booleans()):
        out["type"] = draw(TYPES)
    if draw(st.integers(0, 5)) == 0:
        out["thought_signature"] = b"\x00sig"
    return out


@st.composite
def opaque(draw: st.DrawFn) -> OpaquePart:
    data: Any = {"type": draw(TYPES), **draw(st.dictionaries(KEYS, JSONISH, max_size=2))}
    if draw(st.integers(0, 6)) == 0:
        data = draw(JSONISH)
    return OpaquePart(draw(st.sampled_from(["openai", "anthropic", "gemini", "x"])), data)


OPT = st.none() | WORDS
PARTS = st.one_of(
    st.builds(TextPart, st.text(max_size=20), extras()),
    st.builds(ImagePart, OPT, OPT, st.none() | st.sampled_from(["image/png", "x"]), OPT, extras()),
    st.builds(FilePart, OPT, OPT, OPT, st.none() | st.just("application/pdf"), OPT, extras()),
    st.builds(ThinkingPart, st.text(max_size=20), OPT, st.booleans(), extras()),
    opaque(),
)
ARGS = st.one_of(
    st.just('{"a": 1}'),
    st.just('{"a":1}'),
    st.just(""),
    st.just("not json"),
    st.just("[1, 2]"),
    st.just('{"action": {"type": "click", "x": 1}}'),
)
CALLS = st.builds(ToolCall, IDS, WORDS, ARGS, extras())


@st.composite
def any_messages(draw: st.DrawFn) -> Message:
    """Any valid Message, with fields and extras of every format (and colliding ones)."""
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    content: Any = draw(st.text(max_size=20) | st.lists(PARTS, max_size=4).map(tuple))
    return Message(
        role,
        content,
        tool_calls=tuple(draw(st.lists(CALLS, max_size=3))) if role == "assistant" else (),
        tool_call_id=draw(IDS) if role == "tool" else None,
        name=draw(OPT),
        extras=draw(extras()),
    )


@st.composite
def chat_conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid Chat Completions lists: parts, images, files, audio, refusals, names, developer
    messages, parallel and custom tool calls."""
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        out.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(TEXT)})
    for n in range(1, draw(st.integers(1, 7)) + 1):
        kind = draw(st.sampled_from(["user", "user_parts", "assistant", "calls", "calls"]))
        if kind == "user":
            out.append({"role": "user", "content": draw(TEXT)})
        elif kind == "user_parts":
            parts: list[Any] = [{"type": "text", "text": draw(TEXT)}]
            parts += draw(
                st.lists(
                    st.sampled_from(
                        [
                            {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
                            {
                                "type": "image_url",
                                "image_url": {"url": "data:image/png;base64,QUJD", "detail": "low"},
                            },
                            {"type": "file", "file": {"file_id": "file-1", "filename": "a.pdf"}},
                            {
                                "type": "input_audio",
                                "input_audio": {"data": "QQ==", "format": "wav"},
                            },
                        ]
                    ),
                    max_size=2,
                )
            )
            out.append({"role": "user", "content": parts, "name": "ann"})
        elif kind == "assistant":
            if draw(st.booleans()):
                out.append({"role": "assistant", "content": draw(TEXT)})
            else:
                out.append(
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": draw(TEXT)},
                            {"type": "refusal", "refusal": "no"},
                        ],
                    }
                )
        else:
            k = draw(st.integers(1, 3))
            ids = [f"call_{n}_{j}" for j in range(k)]
            tool_calls: list[Any] = []
            for j, id_ in enumerate(ids):
                if j == 2:
                    tool_calls.append(
                        {"id": id_, "type": "custom", "custom": {"name": "patch", "input": "x"}}
                    )
                else:
                    args = json.dumps({"q": draw(WORDS)})
                    tool_calls.append(
                        {
                            "id": id_,
                            "type": "function",
                            "function": {"name": "f", "arguments": args},
                        }
                    )
            out.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
            for id_ in draw(st.permutations(ids)):
                out.append(
                    {"role": "tool", "tool_call_id": id_, "name": "f", "content": draw(TEXT)}
                )
    if out[-1]["role"] != "user":
        out.append({"role": "user", "content": draw(TEXT)})
    return out


@st.composite
def responses_conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid Responses item lists: typed and easy messages with image/file parts, reasoning
    items before messages and calls, parallel function calls, custom and computer calls, MCP
    calls, approvals (answered or pending), web searches."""
    out: list[dict[str, Any]] = [{"role": "user", "content": draw(TEXT)}]
    n = 0

    def reasoning() -> None:
        if draw(st.booleans()):
            out.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{n}",
                    "summary": [{"type": "summary_text", "text": draw(WORDS)}],
                    "encrypted_content": f"enc{n}==",
                }
            )

    for _ in range(draw(st.integers(1, 7))):
        n += 1
        kind = draw(
            st.sampled_from(
                [
                    "user",
                    "typed_user",
                    "answer",
                    "calls",
                    "calls",
                    "computer",
                    "approval",
                    "mcp",
                    "search",
                ]
            )
        )
        if kind == "user":
            out.append({"role": "user", "content": draw(TEXT)})
        elif kind == "typed_user":
            out.append(
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": draw(TEXT)},
                        {"type": "input_image", "image_url": "https://x/i.png", "detail": "auto"},
                        {"type": "input_file", "file_id": "file-9"},
                    ],
                }
            )
        elif kind == "answer":
            reasoning()
            out.append(
                {
                    "type": "message",
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": draw(TEXT), "annotations": []}],
                }
            )
        elif kind == "calls":
            reasoning()
            k = draw(st.integers(1, 3))
            ids = [f"call_{n}_{j}" for j in range(k)]
            for j, id_ in enumerate(ids):
                if j == 2:
                    out.append(
                        {
                            "type": "custom_tool_call",
                            "id": f"ctc_{n}",
                            "call_id": id_,
                            "name": "patch",
                            "input": draw(WORDS),
                        }
                    )
                else:
                    out.append(
                        {
                            "type": "function_call",
                            "id": f"fc_{n}_{j}",
                            "call_id": id_,
                            "name": "f",
                            "arguments": json.dumps({"q": draw(WORDS)}),
                            "status": "completed",
                        }
                    )
            for id_ in draw(st.permutations(ids)):
                kind_out = (
                    "custom_tool_call_output" if id_.endswith("_2") else "function_call_output"
                )
                output: Any = draw(TEXT)
                if draw(st.booleans()):
                    output = [{"type": "input_text", "text": output}]
                out.append({"type": kind_out, "call_id": id_, "output": output})
        elif kind == "computer":
            reasoning()
            out.append(
                {
                    "type": "computer_call",
                    "id": f"cu_{n}",
                    "call_id": f"cc_{n}",
                    "action": {"type": "click", "x": n, "y": 2},
                    "pending_safety_checks": [],
                    "status": "completed",
                }
            )
            out.append(
                {
                    "type": "computer_call_output",
                    "call_id": f"cc_{n}",
                    "output": {
                        "type": "computer_screenshot",
                        "image_url": "data:image/png;base64,QQ",
                    },
                }
            )
        elif kind == "approval":
            out.append(
                {
                    "type": "mcp_approval_request",
                    "id": f"mcpr_{n}",
                    "server_label": "s",
                    "name": "delete",
                    "arguments": "{}",
                }
            )
            if draw(st.booleans()):
                out.append(
                    {
                        "type": "mcp_approval_response",
                        "approval_request_id": f"mcpr_{n}",
                        "approve": draw(st.booleans()),
                    }
                )
        elif kind == "mcp":
            reasoning()
            out.append(
                {
                    "type": "mcp_call",
                    "id": f"mcp_{n}",
                    "server_label": "s",
                    "name": "ask",
                    "arguments": "{}",
                    "output": draw(TEXT),
                }
            )
        else:
            reasoning()
            out.append(
                {
                    "type": "web_search_call",
                    "id": f"ws_{n}",
                    "status": "completed",
                    "action": {"type": "search", "query": draw(WORDS)},
                }
            )
    return out


# --------------------------------------------------------------------------------------------
# Chat Completions mapping


def test_chat_message_fields_map_to_message() -> None:
    natives = [
        {"role": "developer", "content": "rules"},
        {
            "role": "user",
            "name": "ann",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,QUJD", "detail": "high"},
                },
                {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
                {
                    "type": "file",
                    "file": {"file_data": "data:application/pdf;base64,UEQ=", "filename": "a.pdf"},
                },
                {"type": "input_audio", "input_audio": {"data": "QQ==", "format": "wav"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}},
                {"id": "c2", "type": "custom", "custom": {"name": "patch", "input": "*** diff"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}], "refusal": "no"},
    ]
    conv = convert(natives)
    m = conv.messages
    assert conv.format == "openai"
    assert m[0] == Message("system", "rules", extras={"role": "developer"})
    assert m[1].name == "ann"
    assert m[1].content[1] == ImagePart(data="QUJD", media_type="image/png", detail="high")
    assert m[1].content[2] == ImagePart(url="https://x/a.png")
    assert m[1].content[3] == FilePart(data="UEQ=", media_type="application/pdf", filename="a.pdf")
    assert isinstance(m[1].content[4], OpaquePart)
    assert [c.id for c in m[2].tool_calls] == ["c1", "c2"]
    assert m[2].tool_calls[1] == ToolCall("c2", "patch", "*** diff", {"type": "custom"})
    assert m[5].extras == {"refusal": "no"}
    assert conv.back(list(m)) is natives
    for message in m:
        dumped = OPENAI.dump(message)
        assert RESERVED_KEY not in dumped
        assert OPENAI.load(dumped, 0) == [message]
    # chat-shaped dumps come back byte for byte for what the chat API documents
    assert OPENAI.dump(m[1])["content"][1:4] == natives[1]["content"][1:4]
    assert OPENAI.dump(m[2])["tool_calls"] == natives[2]["tool_calls"]


def test_chat_rebuild_keeps_every_field_but_the_text() -> None:
    natives = [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "long " * 50},
                {"type": "refusal", "refusal": "r"},
            ],
            "name": "bot",
            "audio": {"id": "a1"},
        },
        {"role": "user", "content": "go"},
    ]
    conv = convert(natives)
    changed = conv.messages[1].with_text("short")
    out = conv.back([conv.messages[0], changed, conv.messages[2]])
    assert out[0] is natives[0] and out[2] is natives[2]
    assert out[1] == {
        **natives[1],
        "content": [{"type": "text", "text": "short"}, natives[1]["content"][1]],
    }
    assert out[1]["content"][1] is natives[1]["content"][1]


# --------------------------------------------------------------------------------------------
# Responses mapping

REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [
        {"type": "summary_text", "text": "think"},
        {"type": "summary_text", "text": "more"},
    ],
    "encrypted_content": "gAAAA==",
}
ITEMS: list[dict[str, Any]] = [
    {"role": "developer", "content": "rules"},
    {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "hi"},
            {"type": "input_image", "image_url": "https://x/i.png", "detail": "low"},
            {
                "type": "input_file",
                "file_data": "data:application/pdf;base64,UEQ=",
                "filename": "a.pdf",
            },
        ],
    },
    REASONING,
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "calc",
        "arguments": '{"x":1}',
        "status": "completed",
    },
    {
        "type": "function_call",
        "id": "fc_2",
        "call_id": "call_2",
        "name": "calc",
        "arguments": '{"x":2}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_2", "output": "two"},
    {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [{"type": "input_text", "text": "one"}, {"type": "input_image", "file_id": "f1"}],
    },
    {
        "type": "custom_tool_call",
        "id": "ctc_1",
        "call_id": "call_3",
        "name": "patch",
        "input": "diff",
    },
    {"type": "custom_tool_call_output", "call_id": "call_3", "output": "ok"},
    {
        "type": "computer_call",
        "id": "cu_1",
        "call_id": "cc_1",
        "action": {"type": "click", "x": 1},
        "pending_safety_checks": [],
        "status": "completed",
    },
    {
        "type": "computer_call_output",
        "call_id": "cc_1",
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,QQ"},
    },
    {
        "type": "local_shell_call",
        "id": "ls_1",
        "call_id": "lsc_1",
        "action": {"type": "exec", "command": ["ls"]},
        "status": "completed",
    },
    {"type": "local_shell_call_output", "id": "lsc_1", "output": "a b"},
    {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "s", "tools": []},
    {
        "type": "mcp_approval_request",
        "id": "mcpr_1",
        "server_label": "s",
        "name": "rm",
        "arguments": "{}",
    },
    {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    {
        "type": "mcp_call",
        "id": "mcp_1",
        "server_label": "s",
        "name": "rm",
        "arguments": "{}",
        "output": "done",
        "approval_request_id": "mcpr_1",
    },
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"type": "file_search_call", "id": "fs_1", "queries": ["q"], "status": "completed"},
    {"type": "image_generation_call", "id": "ig_1", "result": "QQ==", "status": "completed"},
    {"type": "item_reference", "id": "msg_0"},
    {"type": "some_future_item", "id": "x_1"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "42", "annotations": []},
            {"type": "refusal", "refusal": "no"},
        ],
    },
]


def test_responses_items_map_one_to_one() -> None:
    assert detect_format(ITEMS) == "openai"
    conv = convert(ITEMS)
    m = conv.messages
    assert len(m) == len(ITEMS) - 1  # the two parallel function calls are one message
    assert m[0] == Message("system", "rules", extras={"role": "developer"})
    assert m[1].content[0] == TextPart("hi")
    assert m[1].content[1] == ImagePart(url="https://x/i.png", detail="low")
    assert m[1].content[2] == FilePart(data="UEQ=", media_type="application/pdf", filename="a.pdf")
    (thinking,) = m[2].content
    assert m[2].role == "assistant" and not m[2].tool_calls
    assert thinking == ThinkingPart("think\n\nmore", "gAAAA==", extras=REASONING)
    assert m[3].tool_calls == (
        ToolCall("call_1", "calc", '{"x":1}'),
        ToolCall("call_2", "calc", '{"x":2}', {"id": "fc_2", "status": "completed"}),
    )
    assert m[3].extras == {"type": "function_call", "id": "fc_1", "status": "completed"}
    assert m[4] == Message(
        "tool", "two", tool_call_id="call_2", extras={"type": "function_call_output"}
    )
    assert m[5].content[0] == TextPart("one")
    assert m[6].tool_calls == (ToolCall("call_3", "patch", "diff"),)
    assert m[8].tool_calls[0].name == "computer"
    assert json.loads(m[8].tool_calls[0].arguments) == {"action": {"type": "click", "x": 1}}
    assert m[9].tool_call_id == "cc_1"
    assert m[9].content == (
        ImagePart(data="QQ", media_type="image/png", extras={"type": "computer_screenshot"}),
    )
    assert m[10].tool_calls[0].id == "lsc_1" and m[11].tool_call_id == "lsc_1"
    for k in range(13, 22):
        assert m[k - 1].content == (OpaquePart("openai", ITEMS[k]),), k
        assert m[k - 1].content[0].data is ITEMS[k]
        assert m[k - 1].extras == {"type": ITEMS[k]["type"]}
    assert m[14].role == "user" and m[13].role == "assistant"
    assert conv.back(list(m)) is ITEMS
    for message in m:
        dumped = OPENAI.dump(message)
        assert OPENAI.load(dumped, 0) == [message]
        # one item holds one call: the second call of the parallel round rides in the carrier
        assert (RESERVED_KEY in dumped) == (message is m[3]), dumped
    assert [OPENAI.dump(x) for x in m[4:]] == ITEMS[5:]
    # written as a list, the parallel round is its two call items again
    assert strip_reserved(RESPONSES.dump_all(m[2:])) == ITEMS[2:]
    assert RESPONSES.load_all(RESPONSES.dump_all(m))[0] == m


def test_approval_items_are_protected() -> None:
    m = convert(ITEMS).messages
    protection = Protection(m, protect_newest_turn=False)
    assert protection.is_protected(m[13])  # request
    assert protection.is_protected(m[14])  # response
    assert protection.is_protected(m[15])  # mcp_call made with an approval


def test_responses_rebuild_keeps_ids_status_and_annotations() -> None:
    items = [
        {"role": "user", "content": "q"},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "long " * 40, "annotations": [{"x": 1}]},
                {"type": "refusal", "refusal": "r"},
            ],
        },
        {"type": "function_call", "id": "fc_1", "call_id": "c", "name": "f", "arguments": "{}"},
        {
            "type": "function_call_output",
            "call_id": "c",
            "output": [
                {"type": "input_text", "text": "out " * 40},
                {"type": "input_image", "file_id": "f"},
            ],
        },
        {"role": "user", "content": "go"},
    ]
    conv = convert(items)
    m = conv.messages
    out = conv.back([m[0], m[1].with_text("short"), m[2], m[3].with_text("cut"), m[4]])
    assert out[0] is items[0] and out[2] is items[2] and out[4] is items[4]
    assert out[1] == {
        **items[1],
        "content": [{**items[1]["content"][0], "text": "short"}, items[1]["content"][1]],
    }
    assert out[3] == {
        **items[3],
        "output": [{"type": "input_text", "text": "cut"}, items[3]["output"][1]],
    }
    assert out[3]["output"][1] is items[3]["output"][1]


def test_responses_detection_and_mixing() -> None:
    assert OPENAI.kind(REASONING) == "sure"
    assert OPENAI.kind({"type": "brand_new_item"}) == "maybe"
    assert OPENAI.kind({"role": "user", "content": [{"type": "input_text", "text": "x"}]}) == "sure"
    assert OPENAI.kind({"role": "user", "content": "x"}) == "maybe"
    assert ANTHROPIC.kind(REASONING) is None
    mixed = [{"role": "tool", "tool_call_id": "c", "content": "x"}, REASONING]
    with pytest.raises(ConfigError, match="mix"):
        convert(mixed, "openai")
    violations = check(mixed, "openai")
    assert any(v.rule == "mixed_formats" for v in violations)


def test_bound_converter_writes_responses_items_for_added_messages() -> None:
    assert (
        OPENAI.bind(ITEMS) is RESPONSES
        and OPENAI.bind([{"role": "user", "content": "x"}]) is OPENAI
    )
    chat_list = [
        {"role": "user", "content": "x"},
        {"role": "tool", "tool_call_id": "c", "content": ""},
    ]
    assert isinstance(OPENAI.bind(chat_list), ChatConverter)
    assert isinstance(RESPONSES, ResponsesConverter)
    summary = Message("user", (TextPart("summary"),))
    assert RESPONSES.dump(summary) == {
        "role": "user",
        "content": [{"type": "input_text", "text": "summary"}],
    }
    assert OPENAI.dump(summary) == {
        "role": "user",
        "content": [{"type": "text", "text": "summary"}],
    }
    answer = Message("assistant", "a")
    assert RESPONSES.dump(answer) == OPENAI.dump(answer) == {"role": "assistant", "content": "a"}


# --------------------------------------------------------------------------------------------
# lossless both ways


@FAST
@given(any_messages())
def test_dump_then_load_gives_the_message_back(message: Message) -> None:
    for converter in (OPENAI, RESPONSES, ANTHROPIC):
        native = converter.dump(message)
        assert converter.load(native, 0) == [message]
        if RESERVED_KEY in native:  # the carrier only holds what has no slot
            assert set(native[RESERVED_KEY]) <= {
                "message",
                "content",
                "insert",
                "parts",
                "tool_calls",
                "calls",
            }


def test_carrier_keeps_foreign_fields_and_is_stripped_for_sending() -> None:
    thinking = ThinkingPart("plan", "SIG==")
    message = Message(
        "assistant",
        (thinking, TextPart("hi", {"cache_control": {"type": "ephemeral"}})),
        tool_calls=(ToolCall("t1", "f", '{"a": 1}', {"thought_signature": b"gem"}),),
        extras={"id": "lc-run-1"},
    )
    native = OPENAI.dump(message)
    assert native["content"] == [{"type": "text", "text": "hi"}]
    assert native["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": 1}'}
    carrier = native[RESERVED_KEY]
    assert carrier["insert"] == [
        [
            0,
            {
                "kind": "thinking",
                "text": "plan",
                "signature": "SIG==",
                "redacted": False,
                "extras": {},
            },
        ]
    ]
    assert OPENAI.load(native, 0) == [message]
    result = {"role": "tool", "tool_call_id": "t1", "content": "r"}
    request = [{"role": "user", "content": "q"}, native, result]
    assert [(v.index, v.rule) for v in check(request, "openai")] == [(1, "reserved_key")]
    clean = strip_reserved(request)
    assert RESERVED_KEY not in clean[1] and check(clean, "openai") == []
    assert clean[0] is request[0] and clean[2] is request[2]
    plain = {"role": "user", "content": "x"}
    assert strip_reserved([plain])[0] is plain


def test_changed_message_with_carrier_is_dumped_again() -> None:
    message = Message("assistant", (ThinkingPart("p", "S"), TextPart("long " * 20)))
    natives = [
        {"role": "user", "content": "q"},
        OPENAI.dump(message),
        {"role": "user", "content": "n"},
    ]
    conv = convert(natives, "openai")
    m = conv.messages
    out = conv.back([m[0], m[1].with_text("short"), m[2]])
    assert OPENAI.load(out[1], 1) == [m[1].with_text("short")]


def test_chat_to_anthropic_and_back_keeps_everything(data_dir: Path) -> None:
    dialogs = load_tau_bench(data_dir / "tau-bench" / "gpt-4o-airline.json")
    for natives in dialogs:
        conv = convert(natives, "openai")
        again = [ANTHROPIC.load(ANTHROPIC.dump(m), 0)[0] for m in conv.messages]
        assert again == conv.messages
        back = conv.back(again)  # equal but new messages: rebuilt natives are the originals
        assert len(back) == len(natives) and all(a is b for a, b in zip(back, natives, strict=True))


# --------------------------------------------------------------------------------------------
# real data


def _openai_traces(data_dir: Path) -> list[list[dict[str, Any]]]:
    traces = load_tau_bench(data_dir / "tau-bench" / "gpt-4o-airline.json")
    traces += [
        load_swe_agent(f)
        for f in sorted(glob.glob(str(data_dir / "swe-agent" / "**" / "*.traj"), recursive=True))
    ]
    return traces


def test_real_openai_conversations_round_trip_unchanged(data_dir: Path) -> None:
    traces = _openai_traces(data_dir)
    assert len(traces) == 222
    for natives in traces:
        assert check(natives, "openai") == []
        conv = convert(natives, "openai")
        assert conv.back(list(conv.messages)) is natives
        for message in conv.messages:
            assert OPENAI.load(OPENAI.dump(message), 0) == [message]


@pytest.mark.parametrize("ratio", [0.7, 0.4, 0.1])
def test_real_openai_conversations_stay_valid_after_compression(
    data_dir: Path, ratio: float
) -> None:
    for natives in _openai_traces(data_dir):
        snapshot = copy.deepcopy(natives)
        total = tokens(natives, "openai")
        for step in every_step():
            out = compressed(natives, "openai", int(total * ratio), [step])
            assert check(out, "openai") == [], step.name
            for native in out:
                if any(native == n for n in natives):
                    assert any(native is n for n in natives)
        assert natives == snapshot  # the caller's list is never mutated


# --------------------------------------------------------------------------------------------
# Responses regressions


def test_output_never_sent_without_its_call() -> None:
    items = [
        {"role": "user", "content": "hi"},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "calc",
            "arguments": "{}",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "x" * 2000},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "42"}],
        },
    ]
    out = compressed(items, "openai", 1, [RemoveOldMessages(keep_first=0, keep_last=2)])
    kinds = [i.get("type") for i in out]
    assert ("function_call" in kinds) == ("function_call_output" in kinds)
    assert check(out, "openai") == []


def test_a_pending_parallel_round_of_responses_items_is_one_message() -> None:
    items = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
    ]
    chat = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                for i in ("a", "b")
            ],
        },
    ]
    conv = convert(items)
    user, calls = conv.messages  # was: one message per call item, so 'a' went unanswered
    assert [c.id for c in calls.tool_calls] == ["a", "b"]
    assert [(m.role, m.text, m.tool_calls) for m in conv.messages] == [
        (m.role, m.text, m.tool_calls) for m in convert(chat).messages
    ]
    for target in (1, 5, 1000):  # the newest round may be pending, as in Chat
        out, _ = compress_for_sync(items, CompressionPolicy(target_tokens=target))
        assert out is items
    assert conv.back([user]) == items[:1]  # the round goes whole
    same = conv.back([user, calls.with_text("")])  # rebuilt: the very same call items
    assert all(a is b for a, b in zip(same, items, strict=True))
    out = conv.back([user, calls.with_text("Looking.")])
    assert convert(out).messages[1] == calls.with_text("Looking.")
    assert out[2:] == items[1:]
    assert {v.rule for v in check(strip_reserved(out), "openai")} == {"calls_pending_at_end"}


def _nested_json(depth: int) -> str:
    return '{"a":' * depth + "{}" + "}" * depth


def test_deeply_nested_arguments_are_config_errors() -> None:
    deep = _nested_json(1000)
    chat = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "t", "type": "function", "function": {"name": "f", "arguments": deep}}
            ],
        },
        {"role": "tool", "tool_call_id": "t", "content": "x"},
    ]
    action: Any = {}
    for _ in range(1000):
        action = {"a": action}
    responses = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "t", "name": "f", "arguments": deep},
        {"type": "function_call_output", "call_id": "t", "output": "x"},
    ]
    computer = [
        {"role": "user", "content": "hi"},
        {"type": "computer_call", "call_id": "t", "action": action},
        {"type": "computer_call_output", "call_id": "t", "output": "x"},
    ]
    policy = CompressionPolicy(target_tokens=5)
    for natives, field in [
        (chat, r"messages\[1\]\.tool_calls\[0\]\.function\.arguments"),
        (responses, r"input\[1\]\.arguments"),
        (computer, r"input\[1\]\.action"),
    ]:
        with pytest.raises(ConfigError, match=field + " is nested more than"):
            convert(natives)
        with pytest.raises(ConfigError, match=field):  # was RecursionError (computer_call)
            compress_for_sync(natives, policy)
    chat[1]["tool_calls"][0]["function"]["arguments"] = _nested_json(150)
    assert len(convert(chat).messages) == 3  # deep, but within the limit
    # a message holding such arguments is never parsed on dump: the text rides in the carrier
    message = Message("assistant", "", tool_calls=(ToolCall("t", "f", deep),))
    assert ANTHROPIC.load(ANTHROPIC.dump(message), 0) == [message]


@pytest.mark.parametrize("drop", ["reasoning", "call"])
def test_reasoning_and_its_call_go_together(drop: str) -> None:
    items = [
        {"role": "user", "content": "old " * 200},
        {"role": "assistant", "content": "ok " * 200},
        dict(REASONING),
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "f",
            "arguments": "{}",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "r " * 200},
        {"role": "user", "content": "new"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
    ]
    victim = 2 if drop == "reasoning" else 3

    def remove(messages: list[Message]) -> list[Message]:
        return [m for k, m in enumerate(messages) if k != victim]

    for steps in ([MyOwnStep(fn=remove)], [RemoveOldMessages(keep_first=0, keep_last=1)]):
        out = compressed(items, "openai", 5, steps)
        assert check(out, "openai") == []
        assert (items[2] in out) == (items[3] in out)


def test_reasoning_is_never_split_from_its_item_in_units() -> None:
    from agent_adapter.context import split_units

    m = convert(ITEMS).messages
    for unit in split_units(m):
        if unit.messages[-1].content and isinstance(unit.messages[-1].content[0], ThinkingPart):
            pytest.fail("a unit ends on a reasoning item")
    (unit,) = [u for u in split_units(m) if u.start == 2]
    assert unit.stop >= 6  # reasoning, the parallel calls (one message) and both outputs


@pytest.mark.parametrize("answered", [False, True])
def test_approval_request_is_never_dropped_or_changed(answered: bool) -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "clean up " * 100},
        {
            "type": "mcp_approval_request",
            "id": "mcpr_1",
            "server_label": "s",
            "name": "rm",
            "arguments": json.dumps({"path": "x" * 3000}),
        },
    ]
    if answered:
        items.append(
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": False}
        )
    items += [
        {"role": "assistant", "content": "waiting " * 100},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": "done"},
    ]
    for step in [*every_step(), RemoveOldMessages(keep_first=0, keep_last=0)]:
        out = compressed(items, "openai", 1, [step])
        assert items[1] in out and any(o is items[1] for o in out)
        if answered:
            assert any(o is items[2] for o in out)
        assert check(out, "openai") == []


# --------------------------------------------------------------------------------------------
# properties


STEP_LISTS = st.lists(
    st.sampled_from([*every_step(), RemoveOldMessages(keep_first=0, keep_last=1)]),
    min_size=1,
    max_size=4,
)


def _assert_compression_keeps_validity(
    natives: list[dict[str, Any]], steps: list[Any], ratio: float
) -> None:
    fmt = "openai"
    assert check(natives, fmt) == []
    out = compressed(natives, fmt, int(tokens(natives, fmt) * ratio), steps)
    assert check(out, fmt) == []
    for native in out:
        if any(native == n for n in natives):
            assert any(native is n for n in natives)
    thinking = check_thinking_unchanged(natives, out)
    assert [v for v in thinking if v.rule == "thinking_changed"] == []
    for native in out:
        if native.get("type") == "reasoning":
            assert any(native is n for n in natives)


@FAST
@given(chat_conversations(), STEP_LISTS, st.floats(0.02, 1.0))
def test_compressed_chat_stays_valid(
    natives: list[dict[str, Any]], steps: list[Any], ratio: float
) -> None:
    _assert_compression_keeps_validity(natives, steps, ratio)


@FAST
@given(responses_conversations(), STEP_LISTS, st.floats(0.02, 1.0))
def test_compressed_responses_stay_valid(
    natives: list[dict[str, Any]], steps: list[Any], ratio: float
) -> None:
    _assert_compression_keeps_validity(natives, steps, ratio)
    out = compressed(natives, "openai", int(tokens(natives, "openai") * ratio), steps)
    for k, item in enumerate(natives):  # a reasoning item and the item after it go together
        if item.get("type") == "reasoning":
            nxt = natives[k + 1]
            kept_next = any(o is nxt or (o.get("id") and o.get("id") == nxt.get("id")) for o in out)
            assert any(o is item for o in out) == kept_next


@FAST
@given(responses_conversations())
def test_responses_round_trip(items: list[dict[str, Any]]) -> None:
    conv = convert(items)
    assert conv.back(list(conv.messages)) is items
    for message in conv.messages:
        assert OPENAI.load(OPENAI.dump(message), 0) == [message]
        assert ANTHROPIC.load(ANTHROPIC.dump(message), 0) == [message]
    assert all(t in ITEM_TYPES for t in {i.get("type", "message") for i in items})


# --------------------------------------------------------------------------------------------
# Responses lists: rebuilt carried items stay Responses items; dump_all writes call items


def _rules(natives: list[Any], ignore: tuple[str, ...] = ("reserved_key",)) -> list[str]:
    return [v.rule for v in check(natives, "openai") if v.rule not in ignore]


def test_changed_carried_item_in_a_responses_list_stays_a_responses_item() -> None:
    msgs = [
        Message("user", "q"),
        Message("assistant", "Let me look.", tool_calls=(ToolCall("c1", "f", "{}"),)),
        Message("tool", "r", tool_call_id="c1"),
    ]
    conv = convert([RESPONSES.dump(m) for m in msgs], "openai")
    m = conv.messages
    now = [m[0], m[1].with_text("Look."), m[2]]
    out = conv.back(now)
    assert _rules(out) == []  # was mixed_formats: a Chat dict with tool_calls
    assert check(strip_reserved(out), "openai") == []  # the call is an item of its own now
    assert convert(out, "openai").messages == now
    assert all("tool_calls" not in item for item in out)


def test_dump_all_writes_each_call_as_its_own_item() -> None:
    thinking = ThinkingPart("plan", "SIG==")
    msgs = [
        Message("user", "q"),
        Message(
            "assistant",
            (thinking, TextPart("Let me look.")),
            tool_calls=(
                ToolCall("c1", "f", '{"a": 1}'),
                ToolCall("c2", "patch", "raw", {"type": "custom"}),
            ),
        ),
        Message("tool", "r1", tool_call_id="c1"),
        Message("tool", "r2", tool_call_id="c2"),
        Message("assistant", "", tool_calls=(ToolCall("c3", "f"), ToolCall("c4", "g"))),
        Message("tool", "r3", tool_call_id="c3"),
        Message("tool", "r4", tool_call_id="c4"),
        Message("user", "thanks"),
    ]
    items = RESPONSES.dump_all(msgs)
    clean = strip_reserved(items)
    assert clean[1:4] == [
        {
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}],
        },
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a": 1}'},
        {"type": "custom_tool_call", "call_id": "c2", "name": "patch", "input": "raw"},
    ]
    assert clean[6:8] == [  # no text: the first call's item leads the group
        {"type": "function_call", "call_id": "c3", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c4", "name": "g", "arguments": "{}"},
    ]
    assert items[1][RESERVED_KEY]["group"] == 3 and items[6][RESERVED_KEY]["group"] == 2
    assert check(clean, "openai") == []
    assert RESPONSES.load_all(items)[0] == msgs
    _, ranges, members = RESPONSES.load_grouped(items)
    assert ranges[1:4] == [(1, 2), (2, 2), (2, 2)] and members == {2: 1, 3: 1, 7: 6}
    # dump (one native per message) stays lossless, with the calls in the carrier
    assert RESPONSES.load(RESPONSES.dump(msgs[1]), 1) == [msgs[1]]
    assert [RESPONSES.dump(m) for m in msgs] != items
    # without its group marker (stripped) the message item and the run of call items after
    # it (parallel calls) are two messages
    stripped = convert(clean, "openai").messages
    assert len(stripped) == len(clean) - 2
    assert stripped[1] == Message("assistant", (TextPart("Let me look."),))
    assert [c.id for c in stripped[2].tool_calls] == ["c1", "c2"]


def test_a_group_stays_together_through_back() -> None:
    msgs = [
        Message("user", "q"),
        Message("assistant", "long " * 30, tool_calls=(ToolCall("c1", "f"), ToolCall("c2", "g"))),
        Message("tool", "r1", tool_call_id="c1"),
        Message("tool", "r2", tool_call_id="c2"),
        Message("user", "next"),
    ]
    items = RESPONSES.dump_all(msgs)
    conv = convert(items, "openai")
    m = conv.messages
    assert m == msgs
    assert conv.back(list(m)) is items
    # changed text: the message item is rebuilt, its call items are the very same objects
    out = conv.back([m[0], m[1].with_text("short"), *m[2:]])
    assert len(out) == len(items) and out[1] is not items[1]
    assert all(out[k] is items[k] for k in (0, 2, 3, 4, 5, 6))
    assert convert(out, "openai").messages == [m[0], m[1].with_text("short"), *m[2:]]
    # an equal copy of the message: every item comes back as the same object
    again = [Message(x.role, x.content, x.tool_calls, x.tool_call_id, x.name, x.extras) for x in m]
    assert all(a is b for a, b in zip(conv.back(again), items, strict=True))
    # the message dropped with its results: no orphan call item is left
    out = conv.back([m[0], m[4]])
    assert out == [items[0], items[6]] and check(out, "openai") == []
    # a message added after the group's message goes after its call items
    note = Message("user", "note")
    out = conv.back([m[0], m[1], note, *m[2:]])
    assert out[:4] == items[:4] and convert(out, "openai").messages[2] == note
    # text emptied: the group is written again from its first call (a new leader)
    out = conv.back([m[0], m[1].with_text(""), *m[2:]])
    assert convert(out, "openai").messages[1] == m[1].with_text("")
    assert check(strip_reserved(out), "openai") == []


def test_an_edited_group_loads_one_message_per_item() -> None:
    msgs = [
        Message("user", "q"),
        Message("assistant", "x", tool_calls=(ToolCall("c1", "f"),)),
        Message("tool", "r", tool_call_id="c1"),
    ]
    items = RESPONSES.dump_all(msgs)
    items[2] = {**items[2], "zz": 1}  # a member with a key dump_all does not write
    loaded, _, members = RESPONSES.load_grouped(items)
    assert members == {} and len(loaded) == 4 and loaded[2].tool_calls[0].id == "c1"
    assert RESPONSES.load_all(items[:2])[0][1].text == "x"  # the leader without its member


def test_back_dumps_runs_of_added_messages_once() -> None:
    runs: list[list[str]] = []

    class Lines(Converter[str]):
        name = "lines"

        def kind(self, item: Any) -> str | None:
            return None

        def load(self, native: str, index: int) -> list[Message]:
            return [Message("user", native)] if native else []  # "" loads to no message

        def rebuild(self, native: str, originals: Any, now: Any) -> list[str]:
            return [native]

        def dump(self, message: Message) -> str:
            return message.text

        def dump_all(self, messages: Sequence[Message]) -> list[str]:
            runs.append([m.text for m in messages])
            return [m.text.upper() for m in messages]

    conv = Conversion(["a", "", "b"], Lines())
    a, b = conv.messages
    out = conv.back([a, Message("user", "x"), Message("user", "y"), b, Message("user", "z")])
    assert out == ["a", "X", "Y", "", "b", "Z"]
    assert [r for r in runs if r] == [["x", "y"], ["z"]]


GROUP_CALL_EXTRAS = st.sampled_from([{}, {}, {"type": "custom"}, {"thought_signature": "c2ln"}])


@st.composite
def multi_call_conversations(draw: st.DrawFn, pending: bool = True) -> list[Message]:
    """Conversations whose assistant messages hold text, thinking parts and 0..4 calls, each
    call answered (in any order) unless ``pending`` leaves the last ones open."""
    out = [Message("user", draw(TEXT))]
    rounds = draw(st.integers(1, 4))
    for n in range(rounds):
        calls = tuple(
            ToolCall(f"call_{n}_{j}", draw(st.sampled_from(["f", "g"])), draw(ARGS), extras)
            for j, extras in enumerate(draw(st.lists(GROUP_CALL_EXTRAS, max_size=4)))
        )
        thinking = draw(st.lists(st.builds(ThinkingPart, WORDS, OPT), max_size=2))
        text = draw(st.none() | TEXT)
        if text is None and not calls:
            text = draw(TEXT)  # a thinking-only message is a reasoning item: not tested here
        content: Any
        if not thinking and draw(st.booleans()):
            content = text or ""
        else:
            content = (*thinking, *([TextPart(text)] if text is not None else []))
        out.append(Message("assistant", content, tool_calls=calls, name=draw(st.none() | WORDS)))
        open_end = pending and n == rounds - 1 and draw(st.booleans())
        if calls and not open_end:
            for call in draw(st.permutations(calls)):
                out.append(Message("tool", draw(TEXT), tool_call_id=call.id))
        if not open_end:
            out.append(Message("user", draw(TEXT)))
    return out


@FAST
@given(multi_call_conversations())
def test_dump_all_is_lossless_and_sendable_once_stripped(msgs: list[Message]) -> None:
    items = RESPONSES.dump_all(msgs)
    assert RESPONSES.load_all(items)[0] == msgs
    assert convert(items, "openai").messages == msgs
    assert set(_rules(strip_reserved(items), ())) <= {"calls_pending_at_end"}
    calls = sum(len(m.tool_calls) for m in msgs)
    assert sum(1 for i in items if i.get("type") in ("function_call", "custom_tool_call")) == calls
    assert OPENAI.dump_all(msgs) == [OPENAI.dump(m) for m in msgs]  # a Chat dict holds any


@FAST
@given(st.lists(any_messages(), max_size=5))
def test_dump_all_of_any_messages_loads_back(msgs: list[Message]) -> None:
    items = RESPONSES.dump_all(msgs)
    assert RESPONSES.load_all(items)[0] == msgs
    assert "mixed_formats" not in _rules(items)  # only Responses items in a Responses list


@FAST
@given(multi_call_conversations(pending=False), STEP_LISTS, st.floats(0.02, 1.0))
def test_compressed_dump_all_lists_stay_valid(
    msgs: list[Message], steps: list[Any], ratio: float
) -> None:
    items = RESPONSES.dump_all(msgs)
    assert _rules(items) == []
    target = int(tokens(items, "openai") * ratio)
    out = compressed(items, "openai", target, steps)
    assert _rules(out) == []
    assert check(strip_reserved(out), "openai") == []
    for native in out:
        if any(native == n for n in items):
            assert any(native is n for n in items)
    stripped = strip_reserved(items)
    assert check(compressed(stripped, "openai", target, steps), "openai") == []
