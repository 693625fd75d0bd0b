"""OpenAI wire formats: Chat Completions and Responses bodies and SSE streams for a Reply.

Shapes follow the API reference (*Create chat completion*, *The chat completion chunk object*,
*Create a model response*, *Streaming events*) as the official ``openai`` SDK parses them:
Chat Completions streams ``chat.completion.chunk`` objects as ``data:`` lines ending with
``data: [DONE]``, usage in a last chunk with empty ``choices`` when the request sets
``stream_options.include_usage``; Responses streams typed events (``event:`` and ``data:``
lines) from ``response.created`` to ``response.completed``, with no ``[DONE]``.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from agent_adapter.testing._cache import is_deepseek
from agent_adapter.testing._replies import Reply, WireUsage

__all__ = ["chat_body", "chat_stream", "responses_body", "responses_stream", "sse"]

_CHAT_FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls"}


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event frame."""
    head = f"event: {event}\n" if event else ""
    text = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {text}\n\n"


def chunks(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of ``size`` characters (at least one piece)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _chat_usage(usage: WireUsage, request: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's ``usage``, cache reads in ``prompt_tokens_details.cached_tokens``; for a
    DeepSeek model DeepSeek's, in ``prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens``
    (DeepSeek API docs, "Context Caching")."""
    body: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
    if is_deepseek(str(request.get("model", ""))):
        body["prompt_cache_hit_tokens"] = usage.cache_read_tokens
        body["prompt_cache_miss_tokens"] = usage.input_tokens - usage.cache_read_tokens
        body["completion_tokens_details"] = {"reasoning_tokens": 0}
        return body
    body["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0}
    body["completion_tokens_details"] = {"reasoning_tokens": 0, "audio_tokens": 0}
    return body


def chat_body(reply: Reply, request: dict[str, Any], n: int, usage: WireUsage) -> dict[str, Any]:
    """A ``chat.completion`` object for ``reply``."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text or None,
        "refusal": None,
        "annotations": [],
    }
    if reply.thinking:
        message["reasoning_content"] = reply.thinking
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _CHAT_FINISH[reply.finish],
            }
        ],
        "usage": _chat_usage(usage, request),
        "service_tier": "default",
        "system_fingerprint": "fp_test",
    }


def chat_stream(reply: Reply, request: dict[str, Any], n: int, usage: WireUsage) -> list[str]:
    """The SSE frames of a streamed Chat Completion."""
    base = {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": request.get("model", ""),
        "system_fingerprint": "fp_test",
    }
    usage_wanted = bool((request.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = {**base, "choices": [choice]}
        if usage_wanted:
            body["usage"] = None
        return sse(body)

    frames = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if reply.thinking:
        frames += [
            chunk({"reasoning_content": piece})
            for piece in chunks(reply.thinking, reply.chunk_size)
        ]
    if reply.text:
        frames += [chunk({"content": piece}) for piece in chunks(reply.text, reply.chunk_size)]
    for i, call in enumerate(reply.tool_calls):
        head = {
            "index": i,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        frames.append(chunk({"tool_calls": [head]}))
        for piece in chunks(call.arguments, reply.chunk_size):
            frames.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    if reply.truncated:
        return frames
    frames.append(chunk({}, _CHAT_FINISH[reply.finish]))
    if usage_wanted:
        frames.append(sse({**base, "choices": [], "usage": _chat_usage(usage, request)}))
    frames.append(sse("[DONE]"))
    return frames


def _responses_usage(usage: WireUsage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _message_item(reply: Reply, n: int, text: str, status: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
    return {
        "type": "message",
        "id": f"msg_{n}",
        "status": status,
        "role": "assistant",
        "content": content if status == "completed" else [],
    }


def _reasoning_item(reply: Reply, n: int, done: bool) -> dict[str, Any]:
    summary = [{"type": "summary_text", "text": reply.thinking}] if done else []
    return {
        "type": "reasoning",
        "id": f"rs_{n}",
        "summary": summary,
        "encrypted_content": reply.signature,
    }


def _compaction_item(reply: Reply, n: int) -> dict[str, Any]:
    """The ``compaction`` output item of a reply that compacts: opaque ``encrypted_content``
    (compaction guide: "It is opaque and not intended to be human-interpretable")."""
    sealed = base64.b64encode(f"compaction:{reply.compaction}".encode()).decode()
    return {"type": "compaction", "id": f"cmp_{n}", "encrypted_content": sealed}


def _call_item(reply: Reply, n: int, i: int, arguments: str, status: str) -> dict[str, Any]:
    call = reply.tool_calls[i]
    return {
        "type": "function_call",
        "id": f"fc_{n}_{i}",
        "call_id": call.id,
        "name": call.name,
        "arguments": arguments,
        "status": status,
    }


def _response(
    reply: Reply,
    request: dict[str, Any],
    n: int,
    status: str,
    output: list[Any],
    usage: WireUsage,
) -> dict[str, Any]:
    incomplete = {"reason": "max_output_tokens"} if reply.finish == "length" else None
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": incomplete if status != "in_progress" else None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": request.get("model", ""),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": request.get("previous_response_id"),
        "temperature": request.get("temperature", 1.0),
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "top_p": request.get("top_p", 1.0),
        "usage": _responses_usage(usage) if status != "in_progress" else None,
    }


def _final_status(reply: Reply) -> str:
    return "incomplete" if reply.finish == "length" else "completed"


def responses_body(
    reply: Reply, request: dict[str, Any], n: int, usage: WireUsage
) -> dict[str, Any]:
    """A ``response`` object for ``reply``."""
    output: list[Any] = []
    if reply.compaction is not None:
        output.append(_compaction_item(reply, n))
    if reply.thinking:
        output.append(_reasoning_item(reply, n, done=True))
    if reply.text:
        output.append(_message_item(reply, n, reply.text, "completed"))
    for i, call in enumerate(reply.tool_calls):
        output.append(_call_item(reply, n, i, call.arguments, "completed"))
    return _response(reply, request, n, _final_status(reply), output, usage)


def responses_stream(reply: Reply, request: dict[str, Any], n: int, usage: WireUsage) -> list[str]:
    """The SSE frames of a streamed Responses call."""
    frames: list[str] = []
    seq = 0

    def emit(kind: str, **fields: Any) -> None:
        nonlocal seq
        frames.append(sse({"type": kind, "sequence_number": seq, **fields}, event=kind))
        seq += 1

    emit("response.created", response=_response(reply, request, n, "in_progress", [], usage))
    emit("response.in_progress", response=_response(reply, request, n, "in_progress", [], usage))
    output: list[Any] = []
    if reply.compaction is not None:
        item = _compaction_item(reply, n)
        emit("response.output_item.added", output_index=0, item=item)
        emit("response.output_item.done", output_index=0, item=item)
        output.append(item)
    if reply.thinking:
        index, item_id = len(output), f"rs_{n}"
        emit(
            "response.output_item.added", output_index=index, item=_reasoning_item(reply, n, False)
        )
        where = {"item_id": item_id, "output_index": index, "summary_index": 0}
        summary = {"type": "summary_text", "text": ""}
        emit("response.reasoning_summary_part.added", **where, part=summary)
        for piece in chunks(reply.thinking, reply.chunk_size):
            emit("response.reasoning_summary_text.delta", **where, delta=piece)
        emit("response.reasoning_summary_text.done", **where, text=reply.thinking)
        done = {**summary, "text": reply.thinking}
        emit("response.reasoning_summary_part.done", **where, part=done)
        item = _reasoning_item(reply, n, done=True)
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    if reply.text:
        index, item_id = len(output), f"msg_{n}"
        emit(
            "response.output_item.added",
            output_index=index,
            item=_message_item(reply, n, "", "in_progress"),
        )
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        emit("response.content_part.added", **where, part=part)
        for piece in chunks(reply.text, reply.chunk_size):
            emit("response.output_text.delta", **where, delta=piece, logprobs=[])
        emit("response.output_text.done", **where, text=reply.text, logprobs=[])
        emit("response.content_part.done", **where, part={**part, "text": reply.text})
        item = _message_item(reply, n, reply.text, "completed")
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    for i, call in enumerate(reply.tool_calls):
        index = len(output)
        added = _call_item(reply, n, i, "", "in_progress")
        emit("response.output_item.added", output_index=index, item=added)
        where = {"item_id": added["id"], "output_index": index}
        for piece in chunks(call.arguments, reply.chunk_size):
            emit("response.function_call_arguments.delta", **where, delta=piece)
        emit("response.function_call_arguments.done", **where, arguments=call.arguments)
        item = _call_item(reply, n, i, call.arguments, "completed")
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    if reply.truncated:
        return frames
    status = _final_status(reply)
    final = "response.incomplete" if status == "incomplete" else "response.completed"
    emit(final, response=_response(reply, request, n, status, output, usage))
    return frames
