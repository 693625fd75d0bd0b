"""RemoveDuplicates: drop older copies of later messages or tool rounds."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._steps._base import BaseCompressionStep, StepContext
from agent_adapter.context._units import Unit

__all__ = ["RemoveDuplicates"]


def _key(unit: Unit) -> Hashable:
    """Role, text and tool calls (name and arguments, not ids) of every message."""
    return tuple(
        (m.role, m.text, tuple((c.name, c.arguments) for c in m.tool_calls)) for m in unit.messages
    )


def _checked_scores(scores: object, texts: list[int]) -> list[float]:
    """``scores`` as floats in 0..1, one per text.

    Raises:
        ConfigError: not a sequence of that length, or a score that is not a finite number
            in 0..1 (bools and strings included).
    """
    if not isinstance(scores, list | tuple) or len(scores) != len(texts):
        raise ConfigError(
            f"RemoveDuplicates: the scorer must return {len(texts)} scores, got {scores!r:.80}"
        )
    out: list[float] = []
    for i, s in enumerate(scores):
        if isinstance(s, bool) or not isinstance(s, int | float) or not 0.0 <= s <= 1.0:
            raise ConfigError(f"RemoveDuplicates: score [{i}] is {s!r}, not a number in 0..1")
        out.append(float(s))
    return out


@dataclass(kw_only=True)
class RemoveDuplicates(BaseCompressionStep):
    """Drop an older copy of a later message or tool round, oldest first, only as many as needed.

    match="exact" compares role, text and tool calls (not call ids); "similar" asks scorer and
    treats texts scoring above same_if_score_above as the same.

    Args:
        match: ``"exact"`` or ``"similar"``.
        scorer: a Scorer, needed for ``"similar"``.
        same_if_score_above: the similarity (0..1) above which two texts count as the same.

    Raises:
        ConfigError: an unknown match, "similar" without a scorer, or a score out of 0..1.
    """

    name: ClassVar[str] = "remove_duplicates"
    match: Literal["exact", "similar"] = "exact"
    scorer: Any = None
    same_if_score_above: float = 0.9

    def __post_init__(self) -> None:
        if self.match not in ("exact", "similar"):
            raise ConfigError(
                f"RemoveDuplicates.match must be 'exact' or 'similar', got {self.match!r}"
            )
        if self.match == "similar" and self.scorer is None:
            raise ConfigError("RemoveDuplicates(match='similar') needs a scorer")
        if not 0 <= self.same_if_score_above <= 1:
            raise ConfigError("RemoveDuplicates.same_if_score_above must be in 0..1")

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages without older duplicates until under the target."""
        total = context.tokens(messages)
        if context.under_target(total):
            return messages
        units = context.units(messages)
        later: dict[Hashable, int] = {}
        for n, unit in enumerate(units):
            later[_key(unit)] = n  # the newest unit holding each key
        if self.match == "similar":
            dup = await self._similar(units, context)
        else:
            dup = [later[_key(u)] > n for n, u in enumerate(units)]
        drop: set[int] = set()
        for n, unit in enumerate(units):
            if context.under_target(total):
                break
            if unit.protected or not dup[n]:
                continue
            drop.update(range(unit.start, unit.stop))
            total -= sum(context.message_tokens(m) for m in unit.messages)
        return [m for i, m in enumerate(messages) if i not in drop]

    async def _similar(self, units: list[Unit], context: StepContext) -> list[bool]:
        """For each unit, is a later single-message unit of the same role similar enough?"""
        texts = ["\n".join(m.text for m in u.messages) for u in units]
        dup = [False] * len(units)
        for n, unit in enumerate(units):
            if unit.protected or not texts[n] or unit.is_tool_round:
                continue
            later = [
                k
                for k in range(n + 1, len(units))
                if texts[k] and units[k].messages[0].role == unit.messages[0].role
            ]
            if not later:
                continue
            scores = await self.scorer.score(texts[n], [texts[k] for k in later])
            dup[n] = any(s > self.same_if_score_above for s in _checked_scores(scores, later))
        return dup
