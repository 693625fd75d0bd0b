"""The invariant guard: whatever a step returns, the result is a request providers accept.

Every step's output passes through :func:`enforce_invariants`; a change that breaks a rule is
skipped (the input message is kept), never the whole step, never raised.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, OpaquePart, TextPart, ThinkingPart, compaction_start
from agent_adapter._ranges import Ranges
from agent_adapter.context._own import is_own
from agent_adapter.context._provenance import same_objects, text_only_change, trace
from agent_adapter.context._units import Protection, _bounds, origins_with

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
    insertable: Callable[[Message], bool] | None = None,
    added_here: Callable[[Message], bool] | None = None,
) -> tuple[list[Message], GuardStats]:
    """:func:`enforce_invariants`, with counts; ``insertable`` as in the engine's
    ``_compress``, and ``added_here(message)``: True for a message an earlier step of the same
    compression added (see :func:`_ours`)."""
    out = _check_list(after, step)
    if same_objects(out, before):
        # the step changed nothing: every rule holds as it did on its input (most runs of a
        # step that had nothing to do, in the recency pass and after the target was near)
        return list(out), GuardStats()
    traced = trace(before, out)
    slot, added = traced.slot, traced.added

    reverted = changed = 0
    for j, m in enumerate(slot):
        old = before[j]
        if m is not None and m is not old and _blank(m):
            # an edit that leaves nothing to send is a removal (providers reject empty
            # content: Anthropic "text content blocks must be non-empty", Gemini empty parts)
            slot[j] = m = None
        if m is None:
            if protection.is_protected(old):
                slot[j] = old
                reverted += 1
            continue
        if m is old:
            continue
        if _ours(old, added_here):  # the library's additions are never changed
            slot[j] = old
            reverted += 1
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
    placeable, dropped = _placeable_additions(before, added, bounds, protection, insertable, slot)
    reverted += dropped
    reverted += _keep_opening_user_turn(before, slot, placeable)
    reverted += _no_added_assistant_before_assistant(slot, placeable)
    reverted += _keep_call_turns_after_user_turns(before, slot, placeable, bounds)
    result = _emit(slot, placeable)
    n_added = sum(len(ms) for ms in placeable.values())
    removed = sum(s is None for s in slot)
    return result, GuardStats(removed, changed, n_added, reverted)


def _ours(message: Message, added_here: Callable[[Message], bool] | None) -> bool:
    """True for what the library added: a message an earlier step of this compression added
    (``added_here``), or a note or summary of ours from an earlier call (its tag verified).

    No later step may change it (a cut note no longer verifies, and on the next call it
    would be taken for the user's words, the real latest user message then losing its
    protection); the steps that fold it may still remove it (a new note or summary takes
    its place)."""
    return (added_here is not None and added_here(message)) or is_own(message)


def _keep_units_whole(
    before: Sequence[Message], slot: list[Message | None], bounds: Sequence[tuple[int, int]]
) -> int:
    """A unit (a tool round, a reasoning item with its output) is kept whole if any of it is
    kept: providers reject a call without all its results, a result without its call, and a
    Responses output item without its reasoning item. Returns how many were put back."""
    restored = 0
    for start, stop in bounds:
        if stop - start == 1:
            continue  # a unit of one message is kept or removed whole
        kept = [slot[j] is not None for j in range(start, stop)]
        if any(kept) and not all(kept):
            for j in range(start, stop):
                if slot[j] is None:
                    slot[j] = before[j]
                    restored += 1
    return restored


def _leading_system(messages: Sequence[Message]) -> int:
    """How many system messages open ``messages`` (the index of the first other one)."""
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    return lead


def _after_compaction(before: Sequence[Message], protection: Protection) -> int:
    """The index right after the message holding the last compaction block its provider
    reads a request from (:func:`~agent_adapter._messages.compaction_start`), 0 without one
    (looked for only when ``protection`` holds a message for a provider's compaction state
    or for coming before one: the protected messages, never a walk of the list, else)."""
    if not (
        origins_with(protection, "compaction") or origins_with(protection, "before_compaction")
    ):
        return 0
    return next(
        (j + 1 for j in range(len(before) - 1, -1, -1) if compaction_start(before[j]) >= 0), 0
    )


def _placeable_additions(
    before: Sequence[Message],
    added: dict[int, list[Message]],
    bounds: Sequence[tuple[int, int]],
    protection: Protection,
    insertable: Callable[[Message], bool] | None,
    slot: Sequence[Message | None] = (),
) -> tuple[dict[int, list[Message]], int]:
    """The additions that may stay: user or assistant messages without tool calls and without
    provider state (thinking, opaque items: a step cannot sign reasoning), at a unit boundary
    after the leading system messages and before the last unit; never before the last
    compaction block of a provider that drops what precedes it (Anthropic's: the provider
    would never read it, and the request's cached prefix would change); never after the current
    turn's thinking opener (Anthropic extended thinking: the assistant turn in progress must
    keep opening on its thinking block, and an added message would end that turn); and, when
    the caller's format says where a native starts (``insertable``), only there (an addition
    between two messages of one native could not be written in place), or where every
    message of its native before it goes (``slot``: what is kept of ``before``), since the
    rest of that native is then rebuilt starting there. Returns them and how many were
    dropped."""
    if not added:
        return {}, 0  # nothing to place (most steps' outputs)
    n = len(before)
    lead = max(_leading_system(before), _after_compaction(before, protection))
    starts = _Starts(bounds)
    last = bounds[-1][0] if bounds else 0
    openers = origins_with(protection, "thinking_opener")  # (a few origins, not a walk)
    opener = (
        next((j for j, m in enumerate(before) if m.origin in openers), None) if openers else None
    )
    if opener is not None:
        last = min(last, opener)

    def native_starts_at(g: int) -> bool:
        if insertable is None or g >= n or insertable(before[g]):
            return True
        j = g - 1  # the native's earlier messages: every one of them removed
        while j >= 0 and j < len(slot) and slot[j] is None:
            if insertable(before[j]):
                return True
            j -= 1
        return False

    def fits(g: int) -> bool:
        return g in starts and lead <= g <= last and native_starts_at(g)

    def slid(g: int) -> int:
        """``g``, or when it does not fit, the first place past the removed messages right
        after it that does (the same place among what is kept: a fold's note written where
        the old note stood, inside a native whose other messages stay)."""
        if fits(g):
            return g
        h = g
        while h < len(slot) and slot[h] is None:
            h += 1
            if fits(h):
                return h
        return g

    placeable: dict[int, list[Message]] = {}
    for g, ms in sorted(added.items()):
        at = slid(g)
        kept = [
            m
            for m in ms
            if m.role in ("user", "assistant")
            and not m.tool_calls
            and not _carries_provider_state(m)
        ]
        placeable.setdefault(at, []).extend(kept if fits(at) else [])
        placeable.setdefault(g, [])
    dropped = sum(len(ms) for ms in added.values()) - sum(len(ms) for ms in placeable.values())
    return placeable, dropped


class _Starts:
    """The starts of a list's units (``g in starts``), read from their stops by bisection:
    no set of 100,000 ints for a guard that asks about a few places."""

    __slots__ = ("stops",)

    def __init__(self, bounds: Sequence[tuple[int, int]]) -> None:
        self.stops = bounds.stops if isinstance(bounds, Ranges) else [b for _, b in bounds]

    def __contains__(self, g: object) -> bool:
        stops = self.stops
        if not isinstance(g, int) or not stops:
            return False
        if g == 0:
            return True
        k = bisect_left(stops, g)  # a start is the stop of the unit before, never the last's
        return k < len(stops) - 1 and stops[k] == g


def _blank(message: Message) -> bool:
    """True when ``message`` has nothing a provider would accept as content: no tool calls,
    no part other than text, and only whitespace as text."""
    if message.tool_calls or message.text.strip():
        return False
    return isinstance(message.content, str) or all(isinstance(p, TextPart) for p in message.content)


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
    a conversation opening on an assistant turn. Added assistant messages in front are
    dropped, and the input's first user message is put back when the opening is still not a
    user turn. Returns how many messages were dropped or put back.
    """
    n = len(before)
    lead = _leading_system(before)
    if lead >= n or before[lead].role != "user":
        return 0
    changes = 0
    for g in range(lead + 1):  # additions before anything kept after the system messages
        ms = added.get(g)
        while ms and ms[0].role != "user":
            ms.pop(0)
            changes += 1
        if ms or (g < n and slot[g] is not None and before[g].role != "system"):
            break
    first = next((m for m in _emitted(slot, added) if m.role != "system"), None)
    if first is not None and first.role != "user" and slot[lead] is None:
        slot[lead] = before[lead]
        changes += 1
    return changes


def _no_added_assistant_before_assistant(
    slot: list[Message | None], added: dict[int, list[Message]]
) -> int:
    """An added assistant message never lands right before a kept assistant message that
    opens on thinking or makes tool calls.

    Providers merge consecutive same-role turns (Anthropic: "Consecutive user or assistant
    turns in your request will be combined into a single turn"), and the merged turn would no
    longer open on its thinking block (extended thinking) nor be a call turn right after a
    user turn (Gemini). Returns how many additions were dropped.
    """
    dropped = 0
    for g, ms in added.items():
        nxt = next((m for m in slot[g:] if m is not None), None)
        if nxt is None or nxt.role != "assistant":
            continue
        if not nxt.tool_calls and not any(isinstance(p, ThinkingPart) for p in nxt.parts):
            continue  # a plain assistant text: merging with it breaks nothing
        while ms and ms[-1].role == "assistant":
            ms.pop()
            dropped += 1
    return dropped


def _keep_call_turns_after_user_turns(
    before: Sequence[Message],
    slot: list[Message | None],
    added: dict[int, list[Message]],
    bounds: Sequence[tuple[int, int]],
) -> int:
    """Restore units so that no kept assistant message with tool calls comes right after an
    assistant message when, in the input, a user or tool message stood before it.

    Gemini rejects it ("Please ensure that function call turn comes immediately after a user
    turn or after a function response turn"); Bedrock's Converse API too. Returns how many
    messages were put back.
    """
    starts: list[int] | None = None  # the units' starts, made when a unit is restored
    restored = 0
    prev: Message | None = None
    j = 0
    while j < len(slot):  # one pass; a restore only steps back to the restored unit's start
        if added.get(j):
            prev = added[j][-1]
        m = slot[j]
        if (
            m is not None
            and m.tool_calls
            and prev is not None
            and prev.role == "assistant"
            and j > 0
            and before[j - 1].role in ("user", "tool")
            and slot[j - 1] is None
        ):
            if starts is None:
                starts = [start for start, _ in bounds]
            start, stop = bounds[bisect_right(starts, j - 1) - 1]  # the unit of j - 1
            for k in range(start, stop):
                if slot[k] is None:
                    slot[k] = before[k]
                    restored += 1
            j = start
            prev = _last_emitted(slot, added, start)
            continue
        if m is not None:
            prev = m
        j += 1
    return restored


def _last_emitted(
    slot: list[Message | None], added: dict[int, list[Message]], g: int
) -> Message | None:
    """The message emitted last before position ``g`` (before ``added[g]``)."""
    for k in range(g - 1, -1, -1):
        m = slot[k]
        if m is not None:
            return m
        if added.get(k):
            return added[k][-1]
    return None


def _emitted(slot: list[Message | None], added: dict[int, list[Message]]) -> Iterator[Message]:
    """What :func:`_emit` returns, one message at a time (to look at the first few)."""
    for g in range(len(slot) + 1):
        if g in added:
            yield from added[g]
        if g < len(slot):
            m = slot[g]
            if m is not None:
                yield m


def _emit(slot: list[Message | None], added: dict[int, list[Message]]) -> list[Message]:
    if not added:
        return [m for m in slot if m is not None]
    result: list[Message] = []
    for g in range(len(slot) + 1):
        if g in added:
            result.extend(added[g])
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

    Rules: protected messages stay as they were; a note or summary of the library's (its
    tag verified) is never changed, only removed or folded; a tool round is kept whole if any
    of it is kept; a step may not add system or tool messages or tool calls; added messages
    land after the leading system messages (and after the last Anthropic ``compaction``
    block: the API drops what precedes it), outside tool rounds and before the last unit. With
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
