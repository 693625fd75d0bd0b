"""Shared pieces of the framework integration tests: the tool task, the scripted replies, and
what to assert about every request the local server received."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent_adapter import ToolCall
from agent_adapter.context import CompressionPolicy, CompressionReport, tiktoken_counter
from agent_adapter.context._tokens import _encoding
from agent_adapter.context.formats import check
from agent_adapter.testing import RecordedRequest, Reply

#: How many tool rounds the task takes before the final answer.
STEPS = 6
#: Each tool result's size: a few of them cross the threshold mid-loop.
RESULT_LINES = 40
FINAL = "All six files read; the config sets retries=3."

# the counter the policy and the figures use (o200k, exact and offline)
COUNTER = tiktoken_counter()


def policy() -> CompressionPolicy:
    """Compress above 3,000 tokens down to 2,000: crossed after four tool rounds (a result is
    about 820 tokens), with room for what stays protected (the newest round and, when the turn
    opened with thinking, its first round)."""
    return CompressionPolicy(threshold_tokens=3_000, target_tokens=2_000, token_counter=COUNTER)


def read_file(path: str) -> str:
    """Read one file of the project.

    Args:
        path: the file's path.
    """
    return "\n".join(
        f"{path}:{i}: value_{i} = compute({i}, retries=3)" for i in range(RESULT_LINES)
    )


def tool_replies(*, with_ids: bool = True, start: int = 0) -> list[Reply]:
    """STEPS replies each calling read_file once, then the final answer."""
    replies = [
        Reply(
            tool_calls=[
                ToolCall(
                    id=f"call_{start + i}" if with_ids else "",
                    name="read_file",
                    arguments=json.dumps({"path": f"src/mod_{start + i}.py"}),
                )
            ],
            input_tokens=100 + i,
        )
        for i in range(STEPS)
    ]
    return [*replies, Reply(text=FINAL)]


def history(request: RecordedRequest) -> list[Any]:
    """The message list a request carried, in its protocol's own words."""
    body = request.body
    if request.protocol == "chat":
        return list(body["messages"])
    if request.protocol == "responses":
        items = body["input"]
        return [{"role": "user", "content": items}] if isinstance(items, str) else list(items)
    if request.protocol == "anthropic":
        return list(body["messages"])
    return list(body["contents"])


def _format(request: RecordedRequest) -> str:
    return {"chat": "openai", "responses": "openai", "anthropic": "anthropic"}.get(
        request.protocol, "gemini"
    )


def assert_all_valid(requests: Sequence[RecordedRequest]) -> None:
    """Every request passes check() for its protocol."""
    for i, request in enumerate(requests):
        violations = check(history(request), _format(request))
        assert violations == [], f"request {i}: {violations}"


def request_tokens(request: RecordedRequest) -> int:
    """o200k tokens of the request's JSON body (what the server received)."""
    return len(_encoding("o200k_base").encode(request.raw.decode(), disallowed_special=()))


def fired(reports: Sequence[CompressionReport]) -> list[int]:
    """Indexes of the model calls whose messages were compressed."""
    return [i for i, r in enumerate(reports) if not r.skipped and r.tokens_after < r.tokens_before]
