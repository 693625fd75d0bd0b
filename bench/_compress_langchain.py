"""The LangChain side of ``compress_bench.py``: a private converter to LangChain messages
(independent of the library's converters), the same chars/4 + 4 per message estimate, and
``trim_messages``.
"""

import json
import sys
from collections.abc import Sequence
from typing import Any

from agent_adapter.cli._loaders import Trace

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        trim_messages,
    )
except ImportError:  # pragma: no cover - a clear message instead of a traceback
    sys.exit("langchain-core is needed: pip install -e '.[bench]'")

IMAGE_TOKENS = 1600  # as agent_adapter.context._tokens.IMAGE_TOKENS
OVERHEAD = 4  # as agent_adapter.context._tokens.MESSAGE_OVERHEAD_TOKENS


# ----------------------------------------------------------------------------------------------
# a private converter to LangChain messages (independent of the library's converters)


def _text_blocks(content: Any) -> Any:
    """OpenAI / Anthropic content as LangChain content: a str or a list of block dicts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return [dict(b) if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]


def _parse_args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except json.JSONDecodeError:
        return {"__raw__": raw}
    return value if isinstance(value, dict) else {"__value__": value}


def openai_to_langchain(natives: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for m in natives:
        role, content = m["role"], _text_blocks(m.get("content"))
        if role in ("system", "developer"):
            out.append(SystemMessage(content=content))
        elif role == "user":
            out.append(HumanMessage(content=content))
        elif role == "assistant":
            calls = [
                {
                    "name": c["function"]["name"],
                    "args": _parse_args(c["function"].get("arguments")),
                    "id": c["id"],
                    "type": "tool_call",
                }
                for c in m.get("tool_calls") or []
            ]
            out.append(AIMessage(content=content, tool_calls=calls))
        elif role == "tool":
            extra = {"name": m["name"]} if m.get("name") else {}
            out.append(ToolMessage(content=content, tool_call_id=m["tool_call_id"], **extra))
        else:
            raise ValueError(f"unexpected OpenAI role {role!r}")
    return out


def anthropic_to_langchain(natives: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for m in natives:
        content = m["content"]
        if m["role"] == "assistant":
            if isinstance(content, str):
                out.append(AIMessage(content=content))
                continue
            blocks = [dict(b) for b in content if b.get("type") != "tool_use"]
            calls = [
                {"name": b["name"], "args": b.get("input", {}), "id": b["id"], "type": "tool_call"}
                for b in content
                if b.get("type") == "tool_use"
            ]
            out.append(AIMessage(content=blocks, tool_calls=calls))
            continue
        if isinstance(content, str):
            out.append(HumanMessage(content=content))
            continue
        pending: list[dict[str, Any]] = []
        for b in content:
            if b.get("type") != "tool_result":
                pending.append(dict(b))
                continue
            if pending:
                out.append(HumanMessage(content=pending))
                pending = []
            out.append(
                ToolMessage(
                    content=_text_blocks(b.get("content", "")), tool_call_id=b["tool_use_id"]
                )
            )
        if pending:
            out.append(HumanMessage(content=pending))
    return out


def to_langchain(trace: Trace) -> list[BaseMessage]:
    if trace.format == "openai":
        return openai_to_langchain(trace.messages)
    return anthropic_to_langchain(trace.messages)


# ----------------------------------------------------------------------------------------------
# the same chars/4 + 4 per message estimate, for LangChain messages


def _block_chars(block: Any) -> tuple[int, int]:
    """(characters, media parts) of one content block."""
    if isinstance(block, str):
        return len(block), 0
    kind = block.get("type")
    if kind == "text":
        return len(block.get("text", "")), 0
    if kind == "thinking":
        return len(block.get("thinking", "")), 0
    if kind == "redacted_thinking":
        return len(block.get("data", "")), 0
    if kind in ("image", "image_url", "document", "file"):
        return 0, 1
    return len(json.dumps(block, default=str, ensure_ascii=False)), 0


def lc_message_tokens(message: BaseMessage) -> int:
    content = message.content
    chars, media = 0, 0
    if isinstance(content, str):
        chars = len(content)
    else:
        for block in content:
            c, n = _block_chars(block)
            chars, media = chars + c, media + n
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            chars += len(call["name"]) + len(json.dumps(call["args"]))
    if isinstance(message, ToolMessage):
        chars += len(message.tool_call_id)
    if message.name:
        chars += len(message.name)
    return -(-chars // 4) + OVERHEAD + IMAGE_TOKENS * media


def lc_token_counter(messages: Sequence[BaseMessage]) -> int:
    """chars/4 + 4 per message, as agent_adapter's estimate_tokens (a list counter)."""
    return sum(lc_message_tokens(m) for m in messages)


def lc_trim(messages: list[BaseMessage], target: int) -> list[BaseMessage]:
    return trim_messages(
        messages,
        max_tokens=target,
        token_counter=lc_token_counter,
        strategy="last",
        start_on="human",
        include_system=True,
        allow_partial=False,
    )
