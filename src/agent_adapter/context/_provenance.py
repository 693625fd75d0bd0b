"""Provenance: what a list of messages kept, changed and added, known and never guessed.

Every :class:`~agent_adapter._messages.Message` carries an ``origin`` token: fresh when it is
built, copied by :func:`dataclasses.replace` (and so by ``Message.with_text``, deep copies and
pickling). So an output message is, relative to an input list:

* **kept**: the very same object as an input message;
* **changed**: a new object with the ``origin`` of an input message (a step edited it);
* **changed, by ids**: a new object with a fresh origin that is a tool result answering, or an
  assistant message making, exactly the call ids of one input message no other output message
  stands for (call ids are unique within a validated round; when the ids match more than one
  input message, nothing is assumed);
* **added**: anything else, including a second copy of an input message's origin.

This is the one mechanism the invariant guard, ``Conversion.back`` and the report use. An
ambiguous case is an addition, never a graft onto a look-alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from itertools import pairwise

from agent_adapter._messages import Message, TextPart

__all__ = ["Trace", "fresh", "same_objects", "text_only_change", "trace"]


@dataclasses.dataclass(frozen=True, slots=True)
class Trace:
    """``after`` mapped onto ``before``.

    Attributes:
        slot: for each ``before[j]``, the output message standing for it (``before[j]`` itself
            when kept, a new object when changed) or ``None`` (removed). A message matched by
            ids is given ``before[j]``'s origin here, so what comes after knows it too.
        added: ``added[g]`` lists the new messages standing right before ``before[g]``
            (``g == len(before)``: at the end), in output order.
        ordered: False when the output puts messages it kept or changed in another order
            than the input's.
    """

    slot: list[Message | None]
    added: dict[int, list[Message]]
    ordered: bool = True

    @property
    def removed(self) -> int:
        """How many input messages nothing stands for."""
        return sum(m is None for m in self.slot)

    def changed(self, before: Sequence[Message]) -> int:
        """How many input messages a new object stands for."""
        return sum(m is not None and m is not o for m, o in zip(self.slot, before, strict=True))

    @property
    def n_added(self) -> int:
        """How many messages were added."""
        return sum(len(ms) for ms in self.added.values())


def same_objects(a: Sequence[object], b: Sequence[object]) -> bool:
    """True when ``a`` and ``b`` hold the very same objects in the same order (kept, all)."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def text_only_change(old: Message, new: Message) -> bool:
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


def fresh(message: Message) -> Message:
    """``message`` as a new message with a fresh origin (it claims no input message)."""
    return dataclasses.replace(message, origin=0)


def _call_key(m: Message) -> tuple[str, ...] | None:
    """The call ids that identify ``m`` within a round, or ``None`` when it has none."""
    if m.role == "tool":
        return ("result", m.tool_call_id or "")
    if m.tool_calls:
        return ("calls", *(c.id for c in m.tool_calls))
    return None


def trace(before: Sequence[Message], after: Sequence[Message]) -> Trace:
    """Map ``after`` onto ``before`` by identity, origin and (for fresh messages) call ids.

    Additions are placed after the input message that the nearest preceding output message
    stands for. An output message carrying the origin of an input message that something else
    already stands for is an addition and comes back with a fresh origin (so origins stay
    unique in every list the engine builds).
    """
    last = _LAST[0]
    if (
        last is not None and same_objects(last[1], after) and same_objects(last[0], before)
    ):  # the same two lists again (the report's trace, then Conversion.back's): a copy
        done = last[2]
        return Trace(list(done.slot), {g: list(ms) for g, ms in done.added.items()}, done.ordered)
    traced = _trace(before, after)
    _LAST[0] = (
        tuple(before),
        tuple(after),
        Trace(list(traced.slot), {g: list(ms) for g, ms in traced.added.items()}, traced.ordered),
    )
    return traced


#: The last two lists traced (held) and their trace, kept apart from what callers change.
_LAST: list[tuple[tuple[Message, ...], tuple[Message, ...], Trace] | None] = [None]


def _trace(before: Sequence[Message], after: Sequence[Message]) -> Trace:
    """:func:`trace`, computed: the input positions by origin, then each output message
    matched to the input position it stands for (by object and origin, then by call ids),
    then what is left over as added."""
    where, repeated = _positions(before)
    slot: list[Message | None] = [None] * len(before)
    claim: list[int] = [-1] * len(after)  # after index -> the input position it stands for
    pending = _match_origins(before, after, where, repeated, slot, claim)
    out = _match_call_ids(before, after, where, pending, slot, claim)
    claimed = [j for j in claim if j >= 0]
    ordered = all(a < b for a, b in pairwise(claimed))
    return Trace(slot, _added(out, claim, where), ordered)


def _positions(before: Sequence[Message]) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Origin -> its input position (the first, when repeated), and origin -> every
    position, for repeated origins."""
    where: dict[int, int] = {}
    repeated: dict[int, list[int]] = {}
    for j, m in enumerate(before):
        o = m.origin
        first = where.setdefault(o, j)
        if first != j:
            repeated.setdefault(o, [first]).append(j)
    return where, repeated


def _match_origins(
    before: Sequence[Message],
    after: Sequence[Message],
    where: dict[int, int],
    repeated: dict[int, list[int]],
    slot: list[Message | None],
    claim: list[int],
) -> list[int]:
    """Pass 1: the same object, then the same origin (first free position with that
    origin); fills ``slot`` and ``claim``, and returns the output indexes left unmatched.

    An origin at several positions (one object sent twice) is matched in order: the first
    free one after the position matched last, so a kept later copy is not taken for an
    earlier one that went (a break test found the copy after an Anthropic compaction block
    moved before it, and the one dropped there lost with no note)."""
    pending: list[int] = []
    last = -1  # the input position matched last
    for k, m in enumerate(after):
        j = where.get(m.origin, -1)
        if j >= 0 and repeated and m.origin in repeated:
            spots = [j for j in repeated[m.origin] if slot[j] is None]  # the free ones
            j = _in_order([j for j in spots if before[j] is m], last)
            if j < 0:
                j = _in_order(spots, last)
        if j < 0 or slot[j] is not None:
            pending.append(k)
            continue
        slot[j] = m
        claim[k] = j
        last = j
    return pending


def _in_order(spots: list[int], last: int) -> int:
    """The first of ``spots`` (ascending) after ``last``, else the first, else ``-1``."""
    return next((j for j in spots if j > last), spots[0] if spots else -1)


def _match_call_ids(
    before: Sequence[Message],
    after: Sequence[Message],
    where: dict[int, int],
    pending: list[int],
    slot: list[Message | None],
    claim: list[int],
) -> list[Message]:
    """Pass 2: fresh messages with call ids that match exactly one free input message
    take its origin; fills ``slot`` and ``claim``, and returns the output so renamed."""
    out = list(after)
    by_key: dict[tuple[str, ...], list[int]] = {}
    for k in pending:
        key = _call_key(after[k])
        if key is not None and after[k].origin not in where:
            by_key.setdefault(key, [])
    if by_key:
        for j, m in enumerate(before):
            key = _call_key(m)
            if key in by_key and slot[j] is None:
                by_key[key].append(j)
    taken: set[tuple[str, ...]] = set()
    for k in pending:
        m = after[k]
        key = _call_key(m)
        found = by_key.get(key) if key is not None and m.origin not in where else None
        if key is not None and found is not None and len(found) == 1 and key not in taken:
            j = found[0]
            taken.add(key)
            m = dataclasses.replace(m, origin=before[j].origin)
            out[k] = m
            slot[j] = m
            claim[k] = j
    return out


def _added(out: list[Message], claim: list[int], where: dict[int, int]) -> dict[int, list[Message]]:
    """The unmatched output messages, by the input position they come before (an input's
    origin that something else already stands for is made fresh)."""
    added: dict[int, list[Message]] = {}
    last = -1
    for k, m in enumerate(out):
        if claim[k] >= 0:
            last = claim[k]
            continue
        if m.origin in where:  # an input's origin that something else already stands for
            m = fresh(m)
        added.setdefault(last + 1, []).append(m)
    return added
