"""Shared by the ``test_formats_openai*`` modules (and ``test_check.py``, through
``test_formats_openai``): converters, compression helpers, the Hypothesis strategies (any
:class:`Message`, for ``load(dump(m)) == m``; valid conversations in Chat Completions and
Responses shapes), the Responses example items and the compression-validity assertion.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import strategies as st

from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress_for,
    estimate_tokens,
)
from agent_adapter.context.formats import check, convert
from agent_adapter.context.formats._anthropic import AnthropicConverter, check_thinking_unchanged
from agent_adapter.context.formats._openai import OpenAIChatConverter

OPENAI = OpenAIChatConverter()
RESPONSES = OPENAI.bind([{"type": "message", "role": "user", "content": "x"}])
ANTHROPIC = AnthropicConverter()


def every_step() -> list[Any]:
    return [
        RemoveDuplicates(),
        ShrinkToolResults(bigger_than_tokens=50, older_than_turns=1),
        CutLongMessages(max_tokens_per_message=60),
        RemoveOldMessages(keep_first=1, keep_last=2),
    ]


def compressed(natives: list[Any], fmt: str, target: int, steps: list[Any]) -> list[Any]:
    policy = CompressionPolicy(target_tokens=max(1, target), steps=steps)
    out, _ = asyncio.run(compress_for(natives, policy, format=fmt, states=False))
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
# Responses example items

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
