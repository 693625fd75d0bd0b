"""Gemini API wire format: ``GenerateContentResponse`` bodies and the ``alt=sse`` stream.

Shapes follow the Gemini API reference (``models.generateContent``,
``models.streamGenerateContent``) as ``google-genai`` parses them: camelCase JSON,
``candidates[0].content`` with role ``model`` and ``text`` / ``functionCall`` parts,
``finishReason`` and ``usageMetadata`` (``promptTokenCount``, ``candidatesTokenCount``,
``cachedContentTokenCount``). Streamed, each ``data:`` line is a whole response holding the
next piece; the last carries the finish reason and the usage. The Gemini API sends function
calls without ids.
"""

from __future__ import annotations

import json
from typing import Any

from agent_adapter.testing._replies import Reply, WireUsage
from agent_adapter.testing._wire_openai import chunks, sse

__all__ = ["gemini_body", "gemini_stream"]

_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP"}


def _usage(usage: WireUsage) -> dict[str, Any]:
    body = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens:
        body["cachedContentTokenCount"] = usage.cache_read_tokens
    return body


def _calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"functionCall": {"name": c.name, "args": json.loads(c.arguments or "{}")}}
        for c in reply.tool_calls
    ]


def _response(
    reply: Reply, request_model: str, n: int, parts: list[Any], usage: WireUsage | None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": request_model}
    body["responseId"] = f"resp-{n}"
    if usage is not None:  # the last response of a stream, or the only one
        candidate["finishReason"] = _FINISH[reply.finish]
        body["usageMetadata"] = _usage(usage)
    return body


def gemini_body(reply: Reply, model: str, n: int, usage: WireUsage) -> dict[str, Any]:
    """A ``GenerateContentResponse`` for ``reply``."""
    parts: list[Any] = [{"text": reply.text}] if reply.text else []
    return _response(reply, model, n, _thought(reply) + parts + _calls(reply), usage)


def _thought(reply: Reply) -> list[Any]:
    if not reply.thinking:
        return []
    return [{"text": reply.thinking, "thought": True, "thoughtSignature": reply.signature}]


def gemini_stream(reply: Reply, model: str, n: int, usage: WireUsage) -> list[str]:
    """The SSE frames of ``streamGenerateContent?alt=sse``."""
    pieces: list[list[Any]] = [_thought(reply)] if reply.thinking else []
    pieces += [[{"text": piece}] for piece in chunks(reply.text, reply.chunk_size) if piece]
    if reply.tool_calls:
        pieces.append(_calls(reply))
    if not pieces:
        pieces.append([{"text": ""}])
    frames = [
        _response(reply, model, n, parts, usage if i == len(pieces) - 1 else None)
        for i, parts in enumerate(pieces)
    ]
    if reply.truncated:  # the last response carries finishReason and the usage
        frames = frames[:-1]
    return [sse(frame).replace("\n\n", "\r\n\r\n") for frame in frames]
