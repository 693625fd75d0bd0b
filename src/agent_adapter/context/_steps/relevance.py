"""KeepMostRelevant: drop what matters least to the current question first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._default_scorer import default_scorer
from agent_adapter.context._own import is_own
from agent_adapter.context._scorers import (
    Scorer,
    check_scorer,
    checked_scores,
    scoring_context,
)
from agent_adapter.context._steps._base import BaseCompressionStep, StepContext
from agent_adapter.context._steps._drop_note import _text as message_text
from agent_adapter.context._steps.drop import SAVED_NOTE_TOKENS, with_saved_notes
from agent_adapter.context._stores._base import check_save_to
from agent_adapter.context._units import Unit

__all__ = ["KeepMostRelevant", "unit_text"]


def unit_text(unit: Unit) -> str:
    """What a unit says, for scoring: each message's text and its tool calls' names and
    arguments, one message a line."""
    return "\n".join(filter(None, (message_text(m) for m in unit.messages)))


def latest_user_text(messages: Sequence[Message]) -> str:
    """The text of the user's latest message ("" when there is none); a note or summary this
    library added is never the user's (:mod:`agent_adapter.context._own`), and the last
    message is the user's whatever it holds (the library never adds there)."""
    last = len(messages) - 1
    for i in range(last, -1, -1):
        m = messages[i]
        if m.role == "user" and (i == last or not is_own(m)):
            return m.text
    return ""


@dataclass(kw_only=True)
class KeepMostRelevant(BaseCompressionStep):
    """Score every unprotected unit against compare_to; keep the keep_count best ones.

    The rest are dropped least relevant first (older first on a tie), only as many as needed.
    compare_to is the latest user message's text by default, or any text you give.

    A unit is a message, or a tool round whole (the call and its results are scored as one
    text and go together, so no result loses its call). A unit's text is its messages' text
    plus its tool calls' names and arguments. With no text to compare to (no user message, or
    an empty one), nothing is dropped. Nothing marks where units went: the relevant ones stay
    where they were, in order. The opening user message (the first after the system
    messages) stays: Anthropic, Gemini and Bedrock reject a history that opens on an
    assistant turn (the invariant guard would put it back anyway), and it is usually the task.

    Args:
        scorer: a :class:`~agent_adapter.context.Scorer`; default: the best offline one
            installed. With the ``embeddings`` extra, ``HybridScorer(BM25Scorer(stem=True,
            context_weight=0.3), EmbeddingScorer(LocalEmbedder(), context_weight=0.5),
            k=10)``; without it, that ``BM25Scorer`` alone (no model). On the held-out half
            of LoCoMo they keep all evidence for 83.1% and 80.0% of questions at 4k tokens
            where a plain ``BM25Scorer()`` keeps 74.1% (``bench/locomo.py``). Its per-text
            caches live on the instance, so reuse the step: the first call embeds every turn
            (the model loads then too), later ones only the new turns and the question. Pass
            ``scorer=BM25Scorer()`` for plain BM25 whatever is installed.
        keep_count: this many of the best-scoring units are never dropped by this step.
        compare_to: the text to score against; ``None``: the latest user message's text.
        neighbor_weight: a unit is at least this share as relevant as the unit right before
            or after it (a reply is relevant to what made its question relevant, and a
            question to its relevant answer); 0 scores each unit alone. The default 0.8 is
            the measured best on LoCoMo (``bench/locomo.py``: +9 to +11 points of questions
            with all evidence kept at 2k and 4k tokens with BM25, against 0).
        save_to: a ToolResultStore: each unbroken run of dropped units is saved there, as
            ``RemoveOldMessages(save_to=...)`` saves its runs, and a bare note in its place
            names it (``[N earlier messages removed to fit the context window (saved: call
            recall_context(id='...') ...)]``); ``None``: nothing marks where units went.
        save_for_seconds: how long saved runs live, a finite number > 0 (``None``: no
            expiry).

    Raises:
        ConfigError: a scorer that is not a Scorer instance with an async ``score`` (a
            class, an int, a sync ``score``), keep_count not an int >= 0, neighbor_weight
            not in 0..1, compare_to not a str, or a bad save_to / save_for_seconds (at
            construction); the scorer returned bad scores (in ``apply``).
    """

    name: ClassVar[str] = "keep_most_relevant"
    scorer: Scorer = field(default_factory=default_scorer)
    keep_count: int = 10
    compare_to: str | None = None
    neighbor_weight: float = 0.8
    save_to: Any = None
    save_for_seconds: float | None = 24 * 3600

    def __post_init__(self) -> None:
        check_scorer(self.scorer, "KeepMostRelevant.scorer")
        k = self.keep_count
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ConfigError(f"KeepMostRelevant.keep_count must be an int >= 0, got {k!r}")
        w = self.neighbor_weight
        if isinstance(w, bool) or not isinstance(w, int | float) or not 0 <= w <= 1:
            raise ConfigError(f"KeepMostRelevant.neighbor_weight must be in 0..1, got {w!r}")
        if self.compare_to is not None and not isinstance(self.compare_to, str):
            raise ConfigError(
                f"KeepMostRelevant.compare_to must be a str or None, got "
                f"{type(self.compare_to).__name__}"
            )
        check_save_to("KeepMostRelevant", self.save_to, self.save_for_seconds)

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages without the least relevant units until under the target.

        Raises:
            ConfigError: the scorer returned bad scores.
        """
        total = context.tokens(messages)
        if context.under_target(total):
            return messages
        query = self.compare_to if self.compare_to is not None else latest_user_text(messages)
        units = context.units(messages)
        opening = next((u for u in units if u.messages[0].role != "system"), None)
        candidates = [
            u
            for u in units
            if not u.protected and not (u is opening and u.messages[0].role == "user")
        ]
        if not query.strip() or len(candidates) <= self.keep_count:
            return messages
        order = await rank(
            self.scorer, query, candidates, context, "KeepMostRelevant", self.neighbor_weight
        )
        drop: set[int] = set()
        notes = 0  # with save_to: what the notes of the dropped runs will cost
        for n in reversed(order[self.keep_count :]):
            if context.under_target(total + notes):
                break
            unit = candidates[n]
            if self.save_to is not None:  # a new run, or one joining its neighbours
                joins = (unit.start - 1 in drop) + (unit.stop in drop)
                notes += SAVED_NOTE_TOKENS * (1 - joins)
            drop.update(range(unit.start, unit.stop))
            total -= sum(context.message_tokens(m) for m in unit.messages)
        if self.save_to is not None and drop:
            return await with_saved_notes(self, messages, drop, context)
        return [m for i, m in enumerate(messages) if i not in drop]


async def rank(
    scorer: Any,
    query: str,
    units: Sequence[Unit],
    context: StepContext,
    who: str,
    neighbor_weight: float = 0.0,
) -> list[int]:
    """Indexes of ``units``, most relevant to ``query`` first (newer first on a tie).

    With ``neighbor_weight``, a unit scores at least that share of the unit right before or
    after it in the conversation (when that one is a candidate too).

    Raises:
        ConfigError: the scorer returned bad scores.
    """
    texts = [unit_text(u) for u in units]
    with scoring_context(context.ctx):
        raw = await scorer.score(query, texts)
    scores = checked_scores(raw, len(texts), who)
    if neighbor_weight > 0:
        own = list(scores)
        for n in range(1, len(units)):
            if units[n - 1].stop == units[n].start:  # next to each other in the list
                scores[n] = max(scores[n], neighbor_weight * own[n - 1])
                scores[n - 1] = max(scores[n - 1], neighbor_weight * own[n])
    return sorted(range(len(units)), key=lambda n: (-scores[n], -n))
