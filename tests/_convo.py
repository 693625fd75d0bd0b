"""Helpers shared by tests: building conversations and checking provider pairing rules."""

from __future__ import annotations

from collections.abc import Sequence

from agent_adapter.messages import Message, ToolCall


def call(id_: str, name: str = "bash", args: str = '{"command": "ls"}') -> ToolCall:
    return ToolCall(id_, name, args)


def calls(*ids: str, text: str = "") -> Message:
    return Message("assistant", text, tool_calls=tuple(call(i) for i in ids))


def result(id_: str, text: str = "ok") -> Message:
    return Message("tool", text, tool_call_id=id_)


def pairing_problems(messages: Sequence[Message]) -> list[str]:
    """OpenAI Chat Completions pairing: every tool message answers a call of the nearest
    preceding assistant message with calls, and every call is answered before the next
    non-tool message (a trailing pending round is allowed only at the very end)."""
    problems: list[str] = []
    open_calls: set[str] = set()
    active: set[str] = set()
    for i, m in enumerate(messages):
        if m.role == "tool":
            if m.tool_call_id not in active:
                problems.append(f"[{i}] tool result {m.tool_call_id} without its call")
            open_calls.discard(m.tool_call_id or "")
            continue
        if open_calls:
            problems.append(f"[{i}] calls {sorted(open_calls)} left without results")
        open_calls = {c.id for c in m.tool_calls}
        active = set(open_calls)
    return problems
