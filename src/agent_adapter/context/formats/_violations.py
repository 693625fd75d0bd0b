"""What every checker shares: :class:`Violation`, the reserved key, text that is valid UTF-8 and
the translation of :mod:`agent_adapter.context._pairing` problems into violations."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from agent_adapter._errors import ConfigError
from agent_adapter.context._pairing import Pairing, PairingProblem, PairingRule, describe
from agent_adapter.context.formats._carrier import RESERVED_KEY, split_carrier

__all__ = ["Checker", "Violation", "invalid_text", "strip_reserved"]


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


#: How deep a native is walked for its strings (``content[0].text`` is three levels down).
_TEXT_DEPTH = 16


def _field(where: str, key: Any) -> str:
    return f"{where}.{key}" if isinstance(key, str) and key.isidentifier() else f"{where}[{key!r}]"


def _bad_strings(value: Any, where: str, depth: int) -> Iterator[tuple[str, int]]:
    """``(field, character)`` of each string in ``value`` that is not valid UTF-8 (a lone
    surrogate), walking dicts, lists, dataclasses (Message, parts) and pydantic models."""
    if isinstance(value, str):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                yield where, exc.start
        return
    if depth >= _TEXT_DEPTH or isinstance(value, bytes | bytearray | int | float | None):
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _bad_strings(item, _field(where, key), depth + 1)
    elif isinstance(value, list | tuple):
        for k, item in enumerate(value):
            yield from _bad_strings(item, f"{where}[{k}]", depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _bad_strings(getattr(value, f.name, None), _field(where, f.name), depth + 1)
    else:
        fields = getattr(type(value), "model_fields", None)  # a pydantic model
        if isinstance(fields, Mapping):
            for name in fields:
                yield from _bad_strings(getattr(value, name, None), _field(where, name), depth + 1)


def invalid_text(natives: Sequence[Any]) -> list[Violation]:
    """``invalid_utf8``: a string of a native that is not valid UTF-8, such as a lone
    surrogate (``"\\ud800"``) a model reply or a lossy decoder left. JSON cannot carry it
    to a provider as UTF-8 (``json.dumps(..., ensure_ascii=False).encode()`` and the SDKs'
    encoders raise ``UnicodeEncodeError``; an escaped one is rejected as invalid Unicode by
    the API). Named by index, field and character, never by text."""
    out: list[Violation] = []
    for i, item in enumerate(natives):
        for where, at in _bad_strings(item, f"messages[{i}]", 0):
            out.append(
                Violation(
                    i,
                    "invalid_utf8",
                    f"{where} is not valid UTF-8: a lone surrogate at character {at}",
                )
            )
    return out


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
