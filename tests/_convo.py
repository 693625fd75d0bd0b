"""Helpers shared by tests: building conversations and checking provider pairing rules."""

from __future__ import annotations

from collections.abc import Sequence

from agent_adapter._messages import Message, ToolCall
from agent_adapter.context._pairing import pair_messages


def call(id_: str, name: str = "bash", args: str = '{"command": "ls"}') -> ToolCall:
    return ToolCall(id_, name, args)


def calls(*ids: str, text: str = "") -> Message:
    return Message("assistant", text, tool_calls=tuple(call(i) for i in ids))


def result(id_: str, text: str = "ok") -> Message:
    return Message("tool", text, tool_call_id=id_)


def pairing_problems(messages: Sequence[Message]) -> list[str]:
    """What breaks the library's one tool-pairing rule (``agent_adapter.context._pairing``),
    one line each; a pending round at the very end is allowed."""
    return [
        f"[{p.index}] {p.rule} {list(p.call_ids)}"
        + (f" (due before [{p.before}])" if p.before is not None else "")
        for p in pair_messages(messages).problems
        if p.rule != "calls_pending_at_end"
    ]
