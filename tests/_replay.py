"""Helpers for replays: message lists dumped into every format, as a provider takes them."""

from __future__ import annotations

from typing import Any

from agent_adapter._messages import Message
from agent_adapter.context.formats import convert, strip_reserved

#: Every built-in format; "responses" is the openai format's Responses items.
FORMATS = ["agent_adapter", "openai", "responses", "anthropic", "gemini", "langchain"]


def _seed(fmt: str) -> tuple[list[Any], str]:
    """One native of the format, to bind a conversion that dumps new messages in it."""
    if fmt == "responses":
        return [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "s"}]}
        ], "openai"
    if fmt == "langchain":
        from langchain_core.messages import HumanMessage

        return [HumanMessage("s")], "langchain"
    if fmt == "gemini":
        return [{"role": "user", "parts": [{"text": "s"}]}], "gemini"
    return [{"role": "user", "content": "s"}], fmt


def format_name(fmt: str) -> str:
    """The ``format=`` name of a test format."""
    return "agent_adapter" if fmt == "agent_adapter" else _seed(fmt)[1]


def natives(fmt: str, messages: list[Message]) -> list[Any]:
    """``messages`` as new natives of the format (without the reserved carrier key)."""
    if fmt == "agent_adapter":
        return list(messages)
    seed, name = _seed(fmt)
    return strip_reserved(convert(seed, name).back(messages))


def messages_of(fmt: str, items: list[Any]) -> list[Message]:
    """The messages of a native list (the list itself for agent_adapter)."""
    return list(items) if fmt == "agent_adapter" else convert(items, format_name(fmt)).messages
