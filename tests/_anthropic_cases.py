"""Shared by the ``test_formats_anthropic*`` modules (and ``test_check.py``, through
``test_formats_anthropic``): converters, compression helpers, the Hypothesis strategy of
valid Messages lists and the example conversation with every kind of block.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import strategies as st

from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress_for,
    estimate_tokens,
)
from agent_adapter.context.formats import convert
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._openai import OpenAIChatConverter

ANTHROPIC = AnthropicConverter()
OPENAI = OpenAIChatConverter()
EPHEMERAL = {"type": "ephemeral"}


def every_step() -> list[Any]:
    return [
        RemoveDuplicates(),
        ShrinkToolResults(bigger_than_tokens=50, older_than_turns=1),
        CutLongMessages(max_tokens_per_message=60),
        RemoveOldMessages(keep_first=1, keep_last=2),
    ]


def compressed(natives: list[Any], target: int, steps: list[Any]) -> list[Any]:
    """compress_for's output (adjacent same-role turns left as they are), one compression on
    its own: no compaction state, so an earlier example whose history was equal to this one
    (Hypothesis makes many) cannot make this call an append to what that one sent (its
    changed natives are that call's objects: equal, but not this list's blocks)."""
    policy = CompressionPolicy(target_tokens=max(1, target), steps=steps)
    out, _ = asyncio.run(compress_for(natives, policy, format="anthropic", states=False))
    return out


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
# an example with every kind of block

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
