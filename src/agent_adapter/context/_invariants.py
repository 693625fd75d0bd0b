"""The invariant guard: whatever a step returns, the result is a request providers accept.

Every step's output passes through :func:`enforce_invariants`; a change that breaks a rule is
skipped (the input message is kept), never the whole step, never raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, OpaquePart, ThinkingPart
from agent_adapter.context._provenance import text_only_change, trace
from agent_adapter.context._units import Protection, _bounds

__all__ = ["GuardStats", "enforce_invariants"]


@dataclass(frozen=True, slots=True)
class GuardStats:
    """What the guard saw in one step's output: counts of messages."""

    removed: int = 0
    changed: int = 0
    added: int = 0
    reverted: int = 0


def _check_list(after: object, step: str) -> list[Message]:
    if not isinstance(after, list):
        raise ConfigError(
            f"step {step!r} returned {type(after).__name__}, expected a list of Message"
        )
    for i, m in enumerate(after):
        if not isinstance(m, Message):
            raise ConfigError(
                f"step {step!r} returned a list whose item [{i}] is {type(m).__name__}, "
                "not a Message"
            )
    return after


def _guard(
    before: Sequence[Message],
    after: object,
    protection: Protection,
    *,
    step: str,
    allow_system_prompt_shortening: bool = False,
) -> tuple[list[Message], GuardStats]:
    out = _check_list(after, step)
    traced = trace(before, out)
    slot, added = traced.slot, traced.added

    reverted = changed = 0
    for j, m in enumerate(slot):
        old = before[j]
        if m is None:
            if protection.is_protected(old):
                slot[j] = old
                reverted += 1
            continue
        if m is old:
            continue
        ok = text_only_change(old, m)
        if ok and protection.is_protected(old):
            ok = (
                allow_system_prompt_shortening
                and old.role == "system"
                and not protection.is_pinned(old)
                and len(m.text) < len(old.text)
            )
        if ok:
            changed += 1
        else:
            slot[j] = old
            reverted += 1

    bounds = _bounds(before)
    reverted += _keep_units_whole(before, slot, bounds)
    placeable, dropped = _placeable_additions(before, added, bounds)
    reverted += dropped
    reverted += _keep_opening_user_turn(before, slot, placeable)
    reverted += _no_added_assistant_before_assistant(slot, placeable)
    reverted += _keep_call_turns_after_user_turns(before, slot, placeable, bounds)
    result = _emit(slot, placeable)
    n_added = sum(len(ms) for ms in placeable.values())
    removed = sum(s is None for s in slot)
    return result, GuardStats(removed, changed, n_added, reverted)


def _keep_units_whole(
    before: Sequence[Message], slot: list[Message | None], bounds: list[tuple[int, int]]
) -> int:
    """A unit (a tool round, a reasoning item with its output) is kept whole if any of it is
    kept: providers reject a call without all its results, a result without its call, and a
    Responses output item without its reasoning item. Returns how many were put back."""
    restored = 0
    for start, stop in bounds:
        kept = [slot[j] is not None for j in range(start, stop)]
        if any(kept) and not all(kept):
            for j in range(start, stop):
                if slot[j] is None:
                    slot[j] = before[j]
                    restored += 1
    return restored


def _placeable_additions(
    before: Sequence[Message], added: dict[int, list[Message]], bounds: list[tuple[int, int]]
) -> tuple[dict[int, list[Message]], int]:
    """The additions that may stay: user or assistant messages without tool calls and without
    provider state (thinking, opaque items: a step cannot sign reasoning), at a unit boundary
    after the leading system messages and before the last unit. Returns them and how many
    were dropped."""
    n = len(before)
    lead = 0
    while lead < n and before[lead].role == "system":
        lead += 1
    starts = {start for start, _ in bounds}
    last_start = bounds[-1][0] if bounds else 0
    placeable = {
        g: [
            m
            for m in ms
            if m.role in ("user", "assistant")
            and not m.tool_calls
            and not _carries_provider_state(m)
            and g in starts
            and lead <= g <= last_start
        ]
        for g, ms in added.items()
    }
    dropped = sum(len(ms) for ms in added.values()) - sum(len(ms) for ms in placeable.values())
    return placeable, dropped


def _carries_provider_state(message: Message) -> bool:
    """True when ``message`` holds parts only a provider can make: thinking (signed or
    redacted reasoning) and opaque provider items."""
    return not isinstance(message.content, str) and any(
        isinstance(p, ThinkingPart | OpaquePart) for p in message.content
    )


def _keep_opening_user_turn(
    before: Sequence[Message], slot: list[Message | None], added: dict[int, list[Message]]
) -> int:
    """The history after the system messages opens on a user message when the input did.

    Anthropic ("The first message must always use the user role"), Gemini and Bedrock reject
    a conversation opening on an assistant turn. Returns how many messages were put back.
    """
    n = len(before)
    lead = 0
    while lead < n and before[lead].role == "system":
        lead += 1
    if lead >= n or before[lead].role != "user" or slot[lead] is not None:
        return 0
    first = next((m for m in _emit(slot, added) if m.role != "system"), None)
    if first is None or first.role == "user":
        return 0
    slot[lead] = before[lead]
    return 1


def _no_added_assistant_before_assistant(
    slot: list[Message | None], added: dict[int, list[Message]]
) -> int:
    """An added assistant message never lands right before a kept assistant message.

    Providers merge consecutive same-role turns (Anthropic: "Consecutive user or assistant
    turns in your request will be combined into a single turn"), and the merged turn would no
    longer open on its thinking block (extended thinking) nor be a call turn right after a
    user turn (Gemini). Returns how many additions were dropped.
    """
    dropped = 0
    for g, ms in added.items():
        nxt = next((m for m in slot[g:] if m is not None), None)
        while ms and ms[-1].role == "assistant" and nxt is not None and nxt.role == "assistant":
            ms.pop()
            dropped += 1
    return dropped


def _keep_call_turns_after_user_turns(
    before: Sequence[Message],
    slot: list[Message | None],
    added: dict[int, list[Message]],
    bounds: list[tuple[int, int]],
) -> int:
    """Restore units so that no kept assistant message with tool calls comes right after an
    assistant message when, in the input, a user or tool message stood before it.

    Gemini rejects it ("Please ensure that function call turn comes immediately after a user
    turn or after a function response turn"); Bedrock's Converse API too. Returns how many
    messages were put back.
    """
    unit_of = [0] * len(before)
    for u, (start, stop) in enumerate(bounds):
        for j in range(start, stop):
            unit_of[j] = u
    restored = 0
    again = True
    while again:
        again = False
        prev: Message | None = None
        for j, m in enumerate(slot):
            if added.get(j):
                prev = added[j][-1]
            if m is None:
                continue
            if (
                m.tool_calls
                and prev is not None
                and prev.role == "assistant"
                and j > 0
                and before[j - 1].role in ("user", "tool")
                and slot[j - 1] is None
            ):
                start, stop = bounds[unit_of[j - 1]]
                for k in range(start, stop):
                    if slot[k] is None:
                        slot[k] = before[k]
                        restored += 1
                again = True
                break
            prev = m
    return restored


def _emit(slot: list[Message | None], added: dict[int, list[Message]]) -> list[Message]:
    result: list[Message] = []
    for g in range(len(slot) + 1):
        result.extend(added.get(g, ()))
        if g < len(slot):
            m = slot[g]
            if m is not None:
                result.append(m)
    return result


def enforce_invariants(
    before: Sequence[Message],
    after: object,
    protection: Protection,
    *,
    step: str,
    allow_system_prompt_shortening: bool = False,
) -> list[Message]:
    """``after`` with every change that breaks an invariant skipped (the input message kept).

    Rules: protected messages stay as they were; a tool round is kept whole if any of it is
    kept; a step may not add system or tool messages or tool calls; added messages land after
    the leading system messages, outside tool rounds and before the last unit. With
    ``allow_system_prompt_shortening``, an unpinned system message may get shorter content in
    place (nothing else about it may change, and it is never removed). One more rule keeps
    every provider's opening-turn requirement: when the input's first non-system message is a
    user message, the output opens on a user message too (the original one is kept if needed);
    an assistant message with tool calls that followed a user or tool message still does
    (Gemini and Bedrock reject a call turn right after another model turn); and an added
    assistant message never lands right before a kept assistant message (providers merge
    them, and the merged turn must still open on its thinking block).

    A changed message is a new object standing where an original is missing, with the same
    role and call ids; it may differ only in its text parts (thinking parts, signatures,
    images, tool calls and extras must be equal). Kept messages keep their input order.

    Args:
        before: the step's input.
        after: what the step returned.
        protection: fixed on the input of the compression.
        step: the step's name, for error messages.
        allow_system_prompt_shortening: see above.

    Returns:
        A new list; kept messages are the very objects of ``before``.

    Raises:
        ConfigError: ``after`` is not a list of Message.
    """
    return _guard(
        before,
        after,
        protection,
        step=step,
        allow_system_prompt_shortening=allow_system_prompt_shortening,
    )[0]
