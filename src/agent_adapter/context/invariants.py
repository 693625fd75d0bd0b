"""The invariant guard: whatever a step returns, the result is a request providers accept.

Every step's output passes through :func:`enforce_invariants`; a change that breaks a rule is
skipped (the input message is kept), never the whole step, never raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter.context.units import Protection, _bounds
from agent_adapter.errors import ConfigError
from agent_adapter.messages import Message, TextPart

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


def _same_shape(old: Message, new: Message) -> bool:
    """True when ``new`` differs from ``old`` in text only (thinking, calls, ids kept)."""
    if (
        old.role != new.role
        or old.tool_calls != new.tool_calls
        or old.tool_call_id != new.tool_call_id
        or old.name != new.name
        or old.extras != new.extras
    ):
        return False
    old_other = [p for p in old.parts if not isinstance(p, TextPart)]
    new_other = [p for p in new.parts if not isinstance(p, TextPart)]
    return old_other == new_other


def _replaces(old: Message, new: Message) -> bool:
    """Could ``new`` be an edited ``old``? Same role and the same call ids."""
    return (
        old.role == new.role
        and old.tool_call_id == new.tool_call_id
        and [c.id for c in old.tool_calls] == [c.id for c in new.tool_calls]
    )


def next_known(items: Sequence[Any], pos: dict[int, int], default: int) -> list[int]:
    """For each index ``k`` of ``items`` (and one past the end), the position in ``pos`` of
    the first item at or after ``k`` that ``pos`` knows by identity, else ``default``."""
    out = [default] * (len(items) + 1)
    for k in range(len(items) - 1, -1, -1):
        j = pos.get(id(items[k]))
        out[k] = j if j is not None else out[k + 1]
    return out


def align(
    before: Sequence[Message], after: Sequence[Message]
) -> tuple[list[Message | None], dict[int, list[Message]]]:
    """Map ``after`` onto ``before``: what stands in each original slot, and what was added.

    ``slot[j]`` is ``before[j]`` itself (kept), a new object standing for it (changed: same
    role and call ids, placed where ``before[j]`` is missing, between the kept neighbours), or
    ``None`` (removed). ``added[g]`` lists new messages that stand before ``before[g]``.
    """
    n = len(before)
    pos = {id(m): i for i, m in enumerate(before)}
    present = {id(m) for m in after if id(m) in pos}
    slot: list[Message | None] = [None] * n
    added: dict[int, list[Message]] = {}
    next_orig = next_known(after, pos, n)
    last = -1
    for k, m in enumerate(after):
        j = pos.get(id(m))
        if j is not None:
            if slot[j] is None:
                slot[j] = m
                last = j
            continue
        match = -1
        for c in range(last + 1, min(next_orig[k + 1], n)):
            if slot[c] is None and id(before[c]) not in present and _replaces(before[c], m):
                match = c
                break
        if match >= 0:
            slot[match] = m
            last = match
        else:
            added.setdefault(last + 1, []).append(m)
    return slot, added


def _guard(
    before: Sequence[Message],
    after: object,
    protection: Protection,
    *,
    step: str,
    allow_system_prompt_shortening: bool = False,
) -> tuple[list[Message], GuardStats]:
    out = _check_list(after, step)
    n = len(before)
    slot, added = align(before, out)

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
        ok = _same_shape(old, m)
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
    starts = {start for start, _ in bounds}
    for start, stop in bounds:  # a tool round is kept whole if any of it is kept
        kept = [slot[j] is not None for j in range(start, stop)]
        if any(kept) and not all(kept):
            for j in range(start, stop):
                if slot[j] is None:
                    slot[j] = before[j]
                    reverted += 1

    lead = 0
    while lead < n and before[lead].role == "system":
        lead += 1
    last_start = bounds[-1][0] if bounds else 0
    placeable = {
        g: [
            m
            for m in ms
            if m.role in ("user", "assistant")
            and not m.tool_calls
            and g in starts
            and lead <= g <= last_start
        ]
        for g, ms in added.items()
    }
    n_added = sum(len(ms) for ms in placeable.values())
    reverted += sum(len(ms) for ms in added.values()) - n_added
    result = _emit(slot, placeable)
    # the history after the system messages opens on a user message when the input did
    # (Anthropic, Gemini and Bedrock reject a conversation opening on an assistant turn)
    if lead < n and before[lead].role == "user" and slot[lead] is None:
        first = next((m for m in result if m.role != "system"), None)
        if first is not None and first.role != "user":
            slot[lead] = before[lead]
            reverted += 1
            result = _emit(slot, placeable)
    # an added assistant message never lands right before a kept assistant message: providers
    # merge the two, and the merged turn would no longer open on its thinking block (Anthropic
    # extended thinking) nor be a call turn after a user turn (Gemini)
    for g, ms in placeable.items():
        nxt = next((m for m in slot[g:] if m is not None), None)
        while ms and ms[-1].role == "assistant" and nxt is not None and nxt.role == "assistant":
            ms.pop()
            reverted += 1
            n_added -= 1
    reverted += _keep_call_turns_after_user_turns(before, slot, placeable, bounds)
    if reverted:
        result = _emit(slot, placeable)
    removed = sum(s is None for s in slot)
    return result, GuardStats(removed, changed, n_added, reverted)


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
