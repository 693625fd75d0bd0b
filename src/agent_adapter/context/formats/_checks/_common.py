"""What every checker shares: :class:`Violation`, the reserved key, the checks registry and
the translation of :mod:`agent_adapter.context._pairing` problems into violations."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from agent_adapter._errors import ConfigError
from agent_adapter.context._pairing import Pairing, PairingProblem, PairingRule, describe
from agent_adapter.context.formats._carrier import RESERVED_KEY, split_carrier

__all__ = ["Checker", "Violation", "strip_reserved"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule.

    Attributes:
        index: the offending item's index in the checked list (for a missing answer, the item
            that waits for it).
        rule: the rule's name, e.g. ``"tool_without_call"``.
        message: what is wrong, naming ids; never message text.
    """

    index: int
    rule: str
    message: str


Checker: TypeAlias = Callable[[Sequence[Any]], list[Violation]]

#: format name -> its checker; each checker module registers its own at import.
_CHECKERS: dict[str, Checker] = {}


def register_checker(name: str, checker: Checker) -> None:
    """Make ``check(natives, name)`` use ``checker`` (private to this package)."""
    _CHECKERS[name] = checker


def checker_for(name: str) -> Checker | None:
    """The checker registered for format ``name``, or ``None``."""
    return _CHECKERS.get(name)


def strip_reserved(natives: Sequence[Any]) -> list[Any]:
    """``natives`` without the reserved carrier key ``"_agent_adapter"`` (which providers
    reject as an unknown field); natives without it are the same objects.

    Raises:
        ConfigError: ``natives`` is not a list.
    """
    if isinstance(natives, str | bytes | Mapping) or not isinstance(natives, Sequence):
        raise ConfigError(f"natives must be a list, got {type(natives).__name__}")
    return [split_carrier(n)[0] for n in natives]


def reserved(item: Any, index: int) -> list[Violation]:
    """``reserved_key`` when ``item`` holds the carrier key (OpenAI answers "Unknown
    parameter", Anthropic "Extra inputs are not permitted")."""
    if isinstance(item, Mapping) and RESERVED_KEY in item:
        return [
            Violation(
                index,
                "reserved_key",
                f"holds {RESERVED_KEY!r}, which providers reject as an unknown field "
                "(remove it with strip_reserved)",
            )
        ]
    return []


def _call_turns(pairing: Pairing) -> list[int]:
    """Every index that made calls: each such turn got an answer or has a problem."""
    turns = set(pairing.answers.values())
    turns.update(p.index for p in pairing.problems if p.rule != "tool_without_call")
    return sorted(turns)


def reported_problems(pairing: Pairing) -> list[PairingProblem]:
    """The problems of an ended ``pairing`` worth a violation: all but the
    ``tool_without_call`` of a result repeating an id its call turn made twice (that turn's
    ``duplicate_call_id`` problem already names it)."""
    dups = {p.index: set(p.call_ids) for p in pairing.problems if p.rule == "duplicate_call_id"}
    if not dups:
        return list(pairing.problems)
    turns = _call_turns(pairing)
    out: list[PairingProblem] = []
    for p in pairing.problems:
        if p.rule == "tool_without_call":
            opener = max((t for t in turns if t < p.index), default=None)
            if opener in dups and p.call_ids[0] in dups[opener]:
                continue
        out.append(p)
    return out


def pairing_violations(
    pairing: Pairing,
    names: Mapping[PairingRule, str],
    *,
    call: str = "tool_calls",
    result: str = "tool_call_id",
    items: str = "messages",
) -> list[Violation]:
    """One violation per problem of an ended ``pairing``: the rule renamed by ``names``
    (unnamed rules keep theirs), the message by
    :func:`~agent_adapter.context._pairing.describe` in the format's terms (``call`` and
    ``result``: the fields holding calls and results; ``items``: what the list is called)."""
    return [
        Violation(
            p.index,
            names.get(p.rule, p.rule),
            describe(p, call=call, result=result, at=lambda i: f"{items}[{i}]"),
        )
        for p in reported_problems(pairing)
    ]


def by_index(violations: list[Violation]) -> list[Violation]:
    """``violations`` in order of index (stable: the order found within one index)."""
    return sorted(violations, key=lambda v: v.index)
