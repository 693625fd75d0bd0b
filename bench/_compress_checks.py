"""The checks of ``compress_bench.py``: tool pairing, Anthropic role alternation, why a target
is not reached, survival of the system prompt and the latest user message.
"""

from collections.abc import Sequence
from typing import Any

from _compress_cases import Case
from _compress_langchain import AIMessage, HumanMessage, SystemMessage, ToolMessage
from agent_adapter.context import (
    CompressionPolicy,
    Protection,
    RemoveOldMessages,
    compress,
    split_units,
)
from agent_adapter.context import estimate_tokens as _estimate_tokens
from agent_adapter.context._pairing import Pairing
from agent_adapter.context.formats import convert

# ----------------------------------------------------------------------------------------------
# pairing check


def _events(kind: str, items: Sequence[Any]) -> list[tuple[str, Any]]:
    """Messages as ("calls", ids) / ("result", id) / ("other", None) events, in order."""
    events: list[tuple[str, Any]] = []
    for m in items:
        if kind == "langchain":
            if isinstance(m, ToolMessage):
                events.append(("result", m.tool_call_id))
            elif isinstance(m, AIMessage) and m.tool_calls:
                events.append(("calls", [c["id"] for c in m.tool_calls]))
            else:
                events.append(("other", None))
        elif kind == "openai":
            if m.get("role") == "tool":
                events.append(("result", m.get("tool_call_id")))
            elif m.get("role") == "assistant" and m.get("tool_calls"):
                events.append(("calls", [c["id"] for c in m["tool_calls"]]))
            else:
                events.append(("other", None))
        else:  # anthropic
            content = m.get("content")
            blocks = content if isinstance(content, list) else []
            if m.get("role") == "assistant":
                ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
                events.append(("calls", ids) if ids else ("other", None))
                continue
            other = isinstance(content, str)
            for b in blocks:
                if b.get("type") == "tool_result":
                    if other:  # text before a result: the results are not answered first
                        events.append(("other", None))
                        other = False
                    events.append(("result", b.get("tool_use_id")))
                else:
                    other = True
            if other or not blocks:
                events.append(("other", None))
    return events


def pairing_problem(kind: str, items: Sequence[Any]) -> str:
    """Empty when the events of ``items`` keep the library's one pairing rule
    (``agent_adapter.context._pairing.Pairing``: every result answers an open call of the
    nearest preceding message with calls, every call is answered before the next non-tool
    message); else the first violation. Calls still open at the very end (a pending round) are
    allowed."""
    pairing = Pairing()
    for i, (event, value) in enumerate(_events(kind, items)):
        if event == "result":
            pairing.result(i, value)
        else:
            pairing.turn(i, value if event == "calls" else [])
    pairing.end()
    for problem in pairing.problems:
        if problem.rule != "calls_pending_at_end":
            due = f" (due before event {problem.before})" if problem.before is not None else ""
            return f"event {problem.index}: {problem.rule} {list(problem.call_ids)}{due}"
    return ""


def anthropic_shape_problem(items: Sequence[dict[str, Any]]) -> str:
    """Beyond pairing, the Messages API wants user first and strictly alternating roles."""
    if items and items[0].get("role") != "user":
        return "the first message is not a user message"
    for i in range(1, len(items)):
        if items[i].get("role") == items[i - 1].get("role"):
            return f"messages {i - 1} and {i} are both {items[i].get('role')!r}"
    return ""


async def why_not_reached(case: Case) -> str:
    """Why the default pipeline stopped above the target: what RemoveOldMessages, the last
    step, was not allowed to drop, and whether any unit it could drop is left."""
    messages = convert(case.trace.messages, case.trace.format).messages
    result, report = await compress(messages, CompressionPolicy(target_tokens=case.target))
    step = RemoveOldMessages()
    non_system = [i for i, m in enumerate(result) if m.role != "system"]
    keep = set(non_system[: step.keep_first])
    if step.keep_last:
        keep |= set(non_system[-step.keep_last :])
    protected = kept = 0
    droppable: list[int] = []
    for unit in split_units(result, Protection(messages)):
        tokens = _estimate_tokens(list(unit.messages))
        if unit.protected:
            protected += tokens
        elif keep.intersection(range(unit.start, unit.stop)):
            kept += tokens
        else:
            droppable.append(tokens)
    text = (
        f"ours stops at {report.tokens_after:,} > target {report.target_tokens:,}: "
        f"protected units {protected:,} tokens + units kept by RemoveOldMessages(keep_first="
        f"{step.keep_first}, keep_last={step.keep_last}) {kept:,} tokens"
    )
    if droppable:
        return f"{text}; BUT {len(droppable)} droppable units ({sum(droppable):,} tokens) left"
    return f"{text}; nothing droppable left (by design, if_still_too_long='keep')"


# ----------------------------------------------------------------------------------------------
# survival of the system prompt and the latest user message


def _system_and_user(kind: str, items: Sequence[Any]) -> tuple[Any, Any]:
    """(first system message, latest user message) as comparable keys; None when absent."""
    if kind == "langchain":
        system = next((m for m in items if isinstance(m, SystemMessage)), None)
        user = next((m for m in reversed(items) if isinstance(m, HumanMessage)), None)
        return system, user
    messages = convert(list(items), kind).messages if items else []
    system = next((m for m in messages if m.role == "system"), None)
    user = next((m for m in reversed(messages) if m.role == "user"), None)
    return (
        (system.role, system.content) if system else None,
        (user.role, user.content) if user else None,
    )


def survived(kind: str, before: Sequence[Any], after: Sequence[Any]) -> tuple[str, str]:
    """("y"/"n"/"-", "y"/"n"/"-") for the system prompt and the latest user message."""
    want = _system_and_user(kind, before)
    if kind == "langchain":
        have = {id(m) for m in after}
        got = [w is not None and id(w) in have for w in want]
    else:
        kept = convert(list(after), kind).messages if after else []
        keys = {(m.role, m.content) for m in kept}
        got = [w is not None and w in keys for w in want]
    return tuple("-" if w is None else ("y" if g else "n") for w, g in zip(want, got, strict=True))
