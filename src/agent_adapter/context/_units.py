"""Units (what is kept, changed or removed together) and Protection (what no step may touch).

A tool round, an assistant message with tool calls plus every result answering them (parallel
calls included), is one unit: providers reject a call without all its results or a result
without its call (OpenAI Chat Completions: "messages with role 'tool' must be a response to a
preceding message with 'tool_calls'"; Anthropic Messages: each ``tool_use`` must be answered
by a ``tool_result`` in the next user message). Every other message is a unit of its own.
"""

from __future__ import annotations

import re
import weakref
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agent_adapter._messages import Message, OpaquePart, ThinkingPart, compaction_start
from agent_adapter._ranges import Ranges
from agent_adapter.context._lru import Memo
from agent_adapter.context._own import is_own
from agent_adapter.context._pairing import pair_messages

__all__ = [
    "Protection",
    "ProtectionReason",
    "Unit",
    "UnitSpans",
    "carries_approval_state",
    "carries_compaction_state",
    "has_approval_marker",
    "opens_turn",
    "origins_with",
    "split_units",
    "unit_spans",
]

# Tool names that ask a human to confirm (Google ADK's adk_request_confirmation, LangGraph
# HITL "request_confirmation", Claude Code's ExitPlanMode, whose result records that the user
# approved the plan, generic approve/permission tools).
_CONFIRM_NAME = re.compile(
    r"request[_-]?confirmation|approv|permission|exit_?plan_?mode", re.IGNORECASE
)
_MAX_DEPTH = 8
_HITL_REJECTION = "User rejected the tool call for `"


def has_approval_marker(native: Any) -> bool:
    """True when a native message (any format) holds an approval or confirmation item.

    Looks for an item ``type`` naming an approval (OpenAI Responses ``mcp_approval_request`` /
    ``mcp_approval_response``), an MCP ``approval_request_id``, or a request-confirmation
    function name (Google ADK ``adk_request_confirmation``), in dicts, lists and plain or
    pydantic objects. Strings are never scanned, so large tool outputs cost nothing.
    """
    return _marker(native, 0)


def _marker(value: Any, depth: int) -> bool:
    if depth > _MAX_DEPTH or value is None or isinstance(value, str | bytes | int | float):
        return False
    if isinstance(value, Mapping):
        kind = value.get("type")
        if isinstance(kind, str) and "approval" in kind.lower():
            return True
        if "approval_request_id" in value:
            return True
        name = value.get("name")
        if isinstance(name, str) and _CONFIRM_NAME.search(name):
            return True
        return any(_marker(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_marker(v, depth + 1) for v in value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return _marker(dump(), depth + 1)
        except Exception:  # a broken model is not an approval
            return False
    attrs = getattr(value, "__dict__", None)
    return isinstance(attrs, dict) and _marker(attrs, depth + 1)


def carries_approval_state(message: Message) -> bool:
    """True for a tool result recording an approval or policy decision, or approval raw items.

    That is: a ``tool`` message whose ``name`` is a confirmation or approval tool (a call
    message making such a call, e.g. Claude Code's ``ExitPlanMode``, too), an error
    result recording a human rejection (LangChain ``HumanInTheLoopMiddleware`` writes
    ``"User rejected the tool call for `<name>` ..."``), or any
    message whose ``extras`` or opaque parts hold an approval marker
    (:func:`has_approval_marker`). Dropping or summarizing these would let the agent repeat an
    action the user refused, or lose the record that it was allowed.
    """
    if message.role == "tool":
        if message.name and _CONFIRM_NAME.search(message.name):
            return True
        # LangChain's HumanInTheLoopMiddleware records a rejection only as an error result
        if message.extras.get("is_error") is True and message.text.startswith(_HITL_REJECTION):
            return True
    if any(_CONFIRM_NAME.search(call.name) for call in message.tool_calls):
        return True
    if message.extras and has_approval_marker(dict(message.extras)):
        return True
    if isinstance(message.content, str):
        return False
    return any(isinstance(p, OpaquePart) and has_approval_marker(p.data) for p in message.content)


def carries_compaction_state(message: Message) -> bool:
    """True for a message holding a provider's own compaction state: an Anthropic
    ``compaction`` block, an OpenAI Responses ``compaction`` or ``compaction_trigger`` item
    (:attr:`~agent_adapter.OpaquePart.is_compaction`, by the item's documented ``type``).

    The providers' rules make it untouchable: Anthropic's blocks and OpenAI's items are to be
    sent back as they came (see :data:`~agent_adapter._messages.COMPACTION_TYPES`), and the
    summary they hold is what the provider continues from, so cutting, changing or dropping
    one loses the conversation's compacted past.
    """
    content = message.content
    return not isinstance(content, str) and any(
        isinstance(p, OpaquePart) and p.is_compaction for p in content
    )


class _Flag(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to a message, carrying its key and its approval flag."""

    __slots__ = ("key", "value")
    key: int
    value: bool


#: carries_approval_state of each message, by identity, while the message lives (the
#: messages of a list compressed again are the same objects: Protection is built several
#: times a compression, and again on the next call).
_APPROVALS: dict[int, _Flag] = {}


def _forget(ref: _Flag) -> None:
    if _APPROVALS.get(ref.key) is ref:
        del _APPROVALS[ref.key]


def _approval_of(message: Message) -> bool:
    """:func:`carries_approval_state`, remembered by the message's identity (a plain message,
    most of a chat, is answered at once: no tool result, no calls, no extras, a ``str``
    content hold nothing it looks at, and a weak reference would cost more than that)."""
    if (
        type(message.content) is str
        and message.role != "tool"
        and not message.tool_calls
        and not message.extras
    ):
        return False
    ref = _APPROVALS.get(id(message))
    if ref is not None and ref() is message:
        return ref.value
    value = carries_approval_state(message)
    try:
        ref = _Flag(message, _forget)
    except TypeError:  # pragma: no cover - Message is weakly referenceable
        return value
    ref.key, ref.value = id(message), value
    _APPROVALS[ref.key] = ref
    return value


@dataclass(frozen=True, slots=True)
class Unit:
    """Messages that are kept, changed or removed together; ``messages[start:stop]``.

    Attributes:
        start: index of the first message in the list it was split from.
        stop: one past the last message.
        messages: the messages themselves.
        protected: True when no step may change or remove any of them.
    """

    start: int
    stop: int
    messages: tuple[Message, ...]
    protected: bool = False

    @property
    def is_tool_round(self) -> bool:
        """True for an assistant message with tool calls and its results."""
        return any(m.tool_calls for m in self.messages)

    def __len__(self) -> int:
        return self.stop - self.start


def _reasoning_only(message: Message) -> bool:
    """An assistant message with thinking parts and nothing else (no text, no calls)."""
    if message.role != "assistant" or message.tool_calls or isinstance(message.content, str):
        return False
    return bool(message.content) and all(isinstance(p, ThinkingPart) for p in message.content)


#: Lists' bounds, by the identities of their messages (the guard, the steps and Protection
#: split the same list several times in one compression; the next call, whose kept and
#: shortened messages are the same objects again, splits the same lists). The lists are held
#: so the identities stay valid.
_BOUNDS = Memo(entries=64, chars=4_000_000)


#: (start, stop) of each unit (see :class:`~agent_adapter._ranges.Ranges`).
Bounds = Ranges


def _bounds(messages: Sequence[Message]) -> Bounds:
    """(start, stop) of each unit, in order (the caller must not change it).

    Cached by the identities of the messages: a list split again costs a tuple of ids.
    """
    held = tuple(messages)
    return _BOUNDS.by_identity(held, lambda: _split(held), size=len(held))


def _split(messages: Sequence[Message]) -> Bounds:
    """(start, stop) of each unit, in order.

    A round runs from an assistant message with calls to the last result answering it, by
    the one pairing rule (:mod:`agent_adapter.context._pairing`; in a validated list the
    results follow their call directly). An assistant message holding only reasoning joins
    the assistant messages right after it (a Responses ``reasoning`` item must stay with the
    output items of its response: "Item of type 'function_call' was provided without its
    required 'reasoning' item"). A result whose call is nowhere is a unit of its own (callers
    validate).
    """
    last_result = pair_messages(messages).last_result
    stops: array[int] = array("q")
    i, n = 0, len(messages)
    while i < n:
        stop = i + 1
        k = i
        while k < stop:  # grow to a fixpoint over everything that starts inside the unit
            end = last_result.get(k)
            if end is not None and end >= stop:
                stop = end + 1
            m = messages[k]
            # (a str content holds no reasoning: most messages, answered without the call)
            if type(m.content) is not str and _reasoning_only(m):
                # the reasoning item belongs to every output item of its response: the
                # assistant messages right after it
                while stop < n and (stop == k + 1 or messages[stop].role == "assistant"):
                    stop += 1
            k += 1
        stops.append(stop)
        i = stop
    return Bounds(stops, "unit")


def opens_turn(part: object) -> bool:
    """True for a thinking part under Anthropic's rule: "a final assistant message must start
    with a thinking block (preceding the lastmost set of tool_use and tool_result blocks)"
    (extended thinking guide, https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking).

    Not under it: an OpenAI Responses ``reasoning`` item (its only rule is its pairing with
    the items of its response: "Item of type 'function_call' was provided without its
    required 'reasoning' item", kept by the unit, so the whole (reasoning, call, output) group
    may go) and a LangChain ``reasoning`` block (OpenAI's, by LangChain's standard content
    blocks), or pydantic-ai thinking of another provider than Anthropic's (its
    ``provider_name``). Gemini's thought parts are left out by their format
    (``turn_thinking=False``):
    Gemini asks that a function call kept in the current turn carries its
    ``thought_signature`` unchanged, which no step ever changes, not that the turn's first
    step stays.
    """
    if not isinstance(part, ThinkingPart):
        return False
    extras = part.extras
    if extras.get("type") == "reasoning" or extras.get("langchain_type") == "reasoning":
        return False
    provider = extras.get("provider_name")  # pydantic-ai's ThinkingPart names its provider
    return not isinstance(provider, str) or any(p in provider for p in ("anthropic", "bedrock"))


#: Why a message is protected (see :meth:`Protection.reason`).
ProtectionReason = Literal[
    "",
    "system",
    "pinned",
    "approval",
    "compaction",
    "before_compaction",
    "latest_user",
    "thinking_opener",
    "newest_turn",
    "unit",
]


class Protection:
    """Which messages no step may change or remove, fixed on the input of one compression.

    Protected: system messages, pinned messages, rounds carrying approval state, messages
    carrying a provider's compaction state (:func:`carries_compaction_state`), the messages
    before the last compaction block of a provider that drops them (Anthropic's, see
    :data:`~agent_adapter._messages.DROPS_BEFORE_COMPACTION`), the latest user message and
    the last unit (the newest turn, including a pending tool round). A unit with one
    protected message is protected whole.

    The messages before an Anthropic ``compaction`` block: "The API automatically drops all
    message blocks prior to the compaction block", so they cost nothing
    (:class:`~agent_adapter.context.TokenMeter` counts them 0) and removing or shortening one
    frees nothing, while sending them back unchanged keeps the request's prefix, and the
    provider's prompt cache, byte for byte.

    Protection follows a message through edits: it is keyed by the message's provenance
    (``Message.origin``), so a shortened system prompt, made with ``dataclasses.replace`` by
    one step, is still protected in the next.

    Args:
        messages: the input of the compression.
        pinned: ``pinned(message) -> bool`` marks more messages to protect.
        protect_newest_turn: protect the latest user message and the last unit (default);
            ``False`` only for last-resort passes (``if_still_too_long`` given a step).
        turn_thinking: the format may carry Anthropic thinking (the default; ``False`` for
            formats whose reasoning has no such rule: OpenAI, Gemini), so the current turn's
            opening assistant message is protected when it carries an Anthropic thinking
            block (:func:`opens_turn`).
        reason_of: why a message ``pinned`` marks is protected (default ``"pinned"``): a
            last-resort pass keeps the reasons of the compression's own protection, so its
            steps still know the current turn's thinking opener.

    The latest user message is the caller's: a note or summary this library added on an
    earlier call (its tag verified, see :mod:`agent_adapter.context._own`) never takes its
    place, and a user message in the last unit is the caller's whatever it holds.
    """

    __slots__ = ("_pinned", "_reasons")

    def __init__(
        self,
        messages: Sequence[Message],
        pinned: Callable[[Message], bool] | None = None,
        *,
        protect_newest_turn: bool = True,
        turn_thinking: bool = True,
        reason_of: Callable[[Message], ProtectionReason] | None = None,
    ) -> None:
        bounds = _bounds(messages)
        last_unit = bounds[-1][0] if bounds else 0
        why, pinned_origins, latest_user = _message_reasons(messages, pinned, reason_of, last_unit)
        if latest_user >= 0 and protect_newest_turn:
            _protect_current_turn(messages, why, latest_user, turn_thinking=turn_thinking)
        self._reasons = _unit_reasons(messages, bounds, why, protect_newest_turn)
        self._pinned = pinned_origins

    def is_protected(self, message: Message) -> bool:
        """True when no step may change or remove ``message`` (or anything derived from it)."""
        return message.origin in self._reasons

    def is_pinned(self, message: Message) -> bool:
        """True when ``message`` (or what it was derived from) was marked by ``pinned``."""
        return message.origin in self._pinned

    def reason(self, message: Message) -> ProtectionReason:
        """Why ``message`` is protected: ``"system"``, ``"pinned"``, ``"approval"``,
        ``"compaction"`` (it holds a provider's compaction state), ``"before_compaction"``
        (it comes before the last compaction block of a provider that drops what precedes
        the block: Anthropic's), ``"latest_user"``,
        ``"thinking_opener"`` (the opening assistant message of the current turn, when it
        carries thinking), ``"newest_turn"`` (in the last unit), ``"unit"`` (in the same
        unit as a protected message); ``""`` when it is not protected."""
        return self._reasons.get(message.origin, "")

    def protected(self, messages: Iterable[Message]) -> list[Message]:
        """The protected ones among ``messages``, in order."""
        return [m for m in messages if m.origin in self._reasons]


def origins_with(protection: Protection, reason: ProtectionReason) -> set[int]:
    """The origins of the messages ``protection`` protects for ``reason`` (a few: the
    protected messages only, never a walk of the list)."""
    return {origin for origin, why in protection._reasons.items() if why == reason}


def _message_reasons(
    messages: Sequence[Message],
    pinned: Callable[[Message], bool] | None,
    reason_of: Callable[[Message], ProtectionReason] | None,
    last_unit: int,
) -> tuple[list[ProtectionReason], set[int], int]:
    """Each message's own reason (pinned, system, approval, compaction, before_compaction;
    ``""``), the origins ``pinned`` marks, and the index of the caller's latest user message
    (``-1``: none)."""
    why: list[ProtectionReason] = [""] * len(messages)
    pinned_origins: set[int] = set()
    latest_user = next(  # the newest first: one user message read, mostly
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if messages[i].role == "user"
            and not _compaction(messages[i])
            and (i >= last_unit or not is_own(messages[i]))
        ),
        -1,
    )  # a note or summary of ours is never the user's; nothing in the newest turn is ours
    # (the library never adds there), whatever its tag. A Responses compaction_trigger is
    # the client's but no message of the user's: the message before it is the latest user
    # message (the trigger is protected by its own)
    cut = -1  # the message holding the last block the provider reads the request from
    for i, m in enumerate(messages):
        role = m.role
        compaction = _compaction(m)
        if compaction and compaction_start(m) >= 0:
            cut = i
        if pinned is not None and pinned(m):
            why[i] = (reason_of(m) if reason_of is not None else "") or "pinned"
            pinned_origins.add(m.origin)
        elif role == "system":
            why[i] = "system"
        elif (
            # a plain message carries no approval state (_approval_of's own first answer,
            # without the call: most of a chat)
            (type(m.content) is not str or role == "tool" or m.tool_calls or m.extras)
            and _approval_of(m)
        ):
            why[i] = "approval"
        elif compaction:
            why[i] = "compaction"
    # what the provider drops (the system prompt is no message block); a message that also
    # stands after the block (the same one sent again: a protection is by provenance) is read
    read = {messages[i].origin for i in range(cut, len(messages))} if cut > 0 else set()
    for i in range(cut):
        if not why[i] and messages[i].origin not in read:
            why[i] = "before_compaction"
    return why, pinned_origins, latest_user


def _compaction(message: Message) -> bool:
    """:func:`carries_compaction_state`, answered at once for a ``str`` content (most of a
    chat)."""
    return type(message.content) is not str and carries_compaction_state(message)


def _protect_current_turn(
    messages: Sequence[Message],
    why: list[ProtectionReason],
    latest_user: int,
    *,
    turn_thinking: bool,
) -> None:
    """The latest user message, and the current turn's thinking opener, protected in
    ``why``.

    Anthropic extended thinking: within the current tool loop, the thinking block of the
    turn's opening assistant message must be sent back ("Expected `thinking` or
    `redacted_thinking`, but found `tool_use`"), so that message is protected. The rule is
    Anthropic's alone (see opens_turn): a Responses reasoning item or a Gemini thought part
    goes with its whole round."""
    why[latest_user] = why[latest_user] or "latest_user"
    opener = next(
        (k for k in range(latest_user + 1, len(messages)) if messages[k].role == "assistant"),
        None,
    )
    if turn_thinking and opener is not None and any(opens_turn(p) for p in messages[opener].parts):
        why[opener] = why[opener] or "thinking_opener"


def _unit_reasons(
    messages: Sequence[Message],
    bounds: Sequence[tuple[int, int]],
    why: list[ProtectionReason],
    protect_newest_turn: bool,
) -> dict[int, ProtectionReason]:
    """Origin -> reason for every message of a unit that holds a protected message (or of
    the newest unit): its own reason, else ``"newest_turn"`` or ``"unit"``."""
    reasons: dict[int, ProtectionReason] = {}
    last = len(bounds) - 1
    # the units holding a message with a reason of its own (few: found from those messages,
    # never a slice of ``why`` a unit), in order, and the newest
    stops = bounds.stops if isinstance(bounds, Ranges) else [stop for _, stop in bounds]
    units = sorted({bisect_right(stops, i) for i, w in enumerate(why) if w})
    if protect_newest_turn and last >= 0 and (not units or units[-1] != last):
        units.append(last)
    for n in units:
        start, stop = bounds[n]
        newest = protect_newest_turn and n == last
        for j in range(start, stop):
            reasons[messages[j].origin] = why[j] or ("newest_turn" if newest else "unit")
    return reasons


@dataclass(frozen=True, slots=True, eq=False)
class UnitSpans:
    """A list's units as its units' bounds and flags, with no object a unit.

    What :func:`split_units` gives, for code that walks every unit: a conversation of
    100,000 messages is about 100,000 units, and a :class:`Unit` each (its object and its
    tuple of messages) is some 25 MB and most of what the garbage collector walks during a
    compression. The library's own steps read these; :meth:`unit` and :meth:`units` make
    the :class:`Unit` s ``split_units`` gives.

    Attributes:
        messages: the messages split, held.
        bounds: ``(start, stop)`` of each unit, in order.
        protected: for each unit, 1 when it holds a protected message, else 0.
    """

    messages: tuple[Message, ...]
    bounds: Bounds
    protected: bytes

    def __len__(self) -> int:
        return len(self.bounds)

    def is_tool_round(self, n: int) -> bool:
        """:attr:`Unit.is_tool_round` of unit ``n``."""
        start, stop = self.bounds[n]
        if stop - start == 1:
            return bool(self.messages[start].tool_calls)
        return any(m.tool_calls for m in self.messages[start:stop])

    def unit(self, n: int) -> Unit:
        """Unit ``n``, as :func:`split_units` gives it."""
        start, stop = self.bounds[n]
        return Unit(start, stop, self.messages[start:stop], bool(self.protected[n]))

    def units(self) -> list[Unit]:
        """Every unit, in order (:func:`split_units`)."""
        messages, flags = self.messages, self.protected
        units: list[Unit] = []
        start = 0
        for n, stop in enumerate(self.bounds.stops):  # a start: the int object of the stop before
            units.append(Unit(start, stop, messages[start:stop], bool(flags[n])))
            start = stop
        return units


def unit_spans(messages: Sequence[Message], protection: Protection) -> UnitSpans:
    """``messages``' units as a :class:`UnitSpans`, protected as ``protection`` says (a unit
    holding a protected message is protected)."""
    held = tuple(messages)
    bounds = _bounds(held)
    reasons = protection._reasons  # is_protected, inlined: this runs for every message
    flags = bytearray(len(bounds))
    stops = bounds.stops
    unit = 0
    for i, m in enumerate(held):
        if m.origin in reasons:  # few are: the unit is found from where the last one was
            while stops[unit] <= i:
                unit += 1
            flags[unit] = 1
    return UnitSpans(held, bounds, bytes(flags))


def split_units(messages: Sequence[Message], protection: Protection | None = None) -> list[Unit]:
    """``messages`` as units in order; ``protected`` follows ``protection``.

    Args:
        messages: the messages to split.
        protection: defaults to ``Protection(messages)``.
    """
    prot = protection if protection is not None else Protection(messages)
    return unit_spans(messages, prot).units()
