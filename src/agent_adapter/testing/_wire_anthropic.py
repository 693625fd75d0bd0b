"""Anthropic Messages wire format: the ``message`` body and its SSE stream for a Reply.

Shapes follow the Messages API reference and the streaming guide as the official
``anthropic`` SDK parses them: ``message_start`` (usage with the input tokens),
``content_block_start`` / ``content_block_delta`` (``text_delta``, ``input_json_delta``) /
``content_block_stop`` per block (a ``compaction`` block whole in its start),
``message_delta`` (``stop_reason``, cumulative output tokens), ``message_stop``; each frame
has an ``event:`` line naming its type.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from agent_adapter.testing._replies import Reply, WireUsage
from agent_adapter.testing._wire_openai import chunks, sse

__all__ = ["anthropic_body", "anthropic_stream"]

_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def _usage(usage: WireUsage, output_tokens: int) -> dict[str, Any]:
    written = usage.cache_write_tokens
    return {
        "input_tokens": usage.input_tokens - usage.cache_read_tokens - written,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": written - usage.cache_write_1h_tokens,
            "ephemeral_1h_input_tokens": usage.cache_write_1h_tokens,
        },
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def compaction_block(reply: Reply) -> dict[str, Any]:
    """The ``compaction`` block of a reply that compacts (SDK ``BetaCompactionBlock``: the
    summary as ``content``, opaque ``encrypted_content`` and a ``signature``, all to be sent
    back verbatim)."""
    sealed = base64.b64encode(f"compaction:{reply.compaction}".encode()).decode()
    return {
        "type": "compaction",
        "content": reply.compaction,
        "encrypted_content": sealed,
        "signature": reply.signature,
    }


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.compaction is not None:
        blocks.append(compaction_block(reply))
    if reply.thinking:
        blocks.append(
            {"type": "thinking", "thinking": reply.thinking, "signature": reply.signature}
        )
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": json.loads(call.arguments or "{}"),
            }
        )
    return blocks


def _message(request: dict[str, Any], n: int, usage: WireUsage) -> dict[str, Any]:
    return {
        "id": f"msg_{n:024d}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", ""),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage(usage, 1),
    }


def anthropic_body(
    reply: Reply, request: dict[str, Any], n: int, usage: WireUsage
) -> dict[str, Any]:
    """A ``message`` object for ``reply``."""
    return {
        **_message(request, n, usage),
        "content": _blocks(reply),
        "stop_reason": _STOP[reply.finish],
        "usage": _usage(usage, usage.output_tokens),
    }


def anthropic_stream(reply: Reply, request: dict[str, Any], n: int, usage: WireUsage) -> list[str]:
    """The SSE frames of a streamed Messages call."""
    frames: list[str] = []

    def emit(kind: str, **fields: Any) -> None:
        frames.append(sse({"type": kind, **fields}, event=kind))

    emit("message_start", message=_message(request, n, usage))
    emit("ping")
    calls = iter(reply.tool_calls)
    blocks = _blocks(reply)
    for index, block in enumerate(blocks):
        if block["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            emit("content_block_start", index=index, content_block=start)
            for piece in chunks(block["thinking"], reply.chunk_size):
                emit(
                    "content_block_delta",
                    index=index,
                    delta={"type": "thinking_delta", "thinking": piece},
                )
            emit(
                "content_block_delta",
                index=index,
                delta={"type": "signature_delta", "signature": reply.signature},
            )
        elif block["type"] == "compaction":
            # whole in its start event, as the SDKs accumulate any block (the beta's
            # compaction_delta events are optional to a client that reads the start)
            emit("content_block_start", index=index, content_block=block)
        elif block["type"] == "text":
            emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
            for piece in chunks(block["text"], reply.chunk_size):
                emit(
                    "content_block_delta",
                    index=index,
                    delta={"type": "text_delta", "text": piece},
                )
        else:
            emit("content_block_start", index=index, content_block={**block, "input": {}})
            arguments = next(calls).arguments
            for piece in chunks(arguments, reply.chunk_size):
                emit(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": piece},
                )
        if reply.truncated and index == len(blocks) - 1:
            return frames
        emit("content_block_stop", index=index)
    if reply.truncated:
        return frames
    emit(
        "message_delta",
        delta={"stop_reason": _STOP[reply.finish], "stop_sequence": None},
        usage={"output_tokens": usage.output_tokens},
    )
    emit("message_stop")
    return frames
