"""Shared pieces of the cliver_core tests: bindings on the local wire-protocol server."""

from __future__ import annotations

import json
from typing import Any

from agent_adapter import ToolCall as WireCall
from agent_adapter.testing import ProviderServer, Reply
from cliver_core import ModelBinding, tool

#: how each protocol's SDK is pointed at the server
PROTOCOLS = ("openai", "anthropic", "gemini", "responses")


def binding(server: ProviderServer, protocol: str = "openai", **kwargs: Any) -> ModelBinding:
    """An llm binding on ``server`` through the real provider of ``protocol`` (no SDK
    retries, so every attempt is one request the server records)."""
    url = server.openai_url if protocol in ("openai", "responses") else server.url
    kwargs.setdefault("model", f"{protocol}-model")
    kwargs.setdefault("max_retries", 0)
    return ModelBinding.llm(api_key="test", base_url=url, protocol=protocol, **kwargs)


def calls(*items: tuple[str, str, dict[str, Any]], **kwargs: Any) -> Reply:
    """A reply making the tool calls ``(id, name, args)``."""
    wire = [WireCall(i, name, json.dumps(args)) for i, name, args in items]
    return Reply(tool_calls=wire, **kwargs)


def wire_messages(server: ProviderServer, n: int) -> list[dict[str, Any]]:
    """The Chat Completions messages of the server's n-th request."""
    body = server.requests[n].body
    assert isinstance(body, dict)
    messages = body["messages"]
    assert isinstance(messages, list)
    return messages


@tool(description="Read a file.", safety="safe")
def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: the file's path.
    """
    return f"contents of {path}: " + "x" * 400
