"""Scorers: one float in 0..1 per text, in order; the spec's errors; the per-text caches."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from agent_adapter import ConfigError, ModelError, ModelOutputInvalid, RunContext
from agent_adapter.context import (
    BM25Scorer,
    CallableReranker,
    EmbeddingScorer,
    HybridScorer,
    LocalEmbedder,
    MyScorer,
    RerankerScorer,
    Scorer,
)
from agent_adapter.context._scorers import checked_scores, scoring_context


class FnEmbedder:
    """An EmbeddingPort backed by a function (a test double of a provider's endpoint)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.seen: list[list[str]] = []

    async def embed(self, texts: Sequence[str], *, ctx: Any = None) -> list[list[float]]:
        self.seen.append(list(texts))
        return self.fn(list(texts))  # type: ignore[no-any-return]


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


def test_every_scorer_is_a_scorer(minilm: LocalEmbedder) -> None:
    reranker = CallableReranker(lambda q, t: [0.5] * len(t))
    for scorer in (
        BM25Scorer(),
        EmbeddingScorer(minilm),
        RerankerScorer(reranker),
        MyScorer(lambda q, t: [0.0] * len(t)),
        HybridScorer(BM25Scorer(), EmbeddingScorer(minilm)),
    ):
        assert isinstance(scorer, Scorer)


# ------------------------------------------------------------------------------------------
# the packaged embedding model


async def test_the_packaged_model_ranks_by_meaning_offline(minilm: LocalEmbedder) -> None:
    scorer = EmbeddingScorer(minilm)
    texts = [
        "I went hiking in the mountains last weekend.",
        "My dog Oscar loves chasing squirrels in the park.",
        "The quarterly report is due on Friday.",
    ]
    scores = await scorer.score("What pets does she have?", texts)
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    assert max(range(3), key=lambda i: scores[i]) == 1
    same = await scorer.score(texts[0], [texts[0]])
    assert same[0] == pytest.approx(1.0, abs=1e-5)


async def test_vectors_are_unit_length_of_384_and_long_texts_are_read_to_256_tokens(
    minilm: LocalEmbedder,
) -> None:
    long = "word " * 2000
    vectors = await minilm.embed(["short", long, long + " tail that is never read"])
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert sum(x * x for x in vectors[0]) == pytest.approx(1.0, abs=1e-4)
    assert vectors[1] == pytest.approx(vectors[2], abs=1e-6)  # truncated alike
    assert await minilm.embed([]) == []


async def test_a_grown_conversation_embeds_only_its_new_turn(minilm: LocalEmbedder) -> None:
    counting = Counting(minilm)
    scorer = EmbeddingScorer(counting)  # type: ignore[arg-type]
    turns = [f"turn {i}: we talked about topic number {i}" for i in range(40)]
    await scorer.score("what about topic 7?", turns)
    assert counting.texts == 41
    await scorer.score("what about topic 8?", [*turns, "a new turn about topic 8"])
    assert counting.texts == 41 + 2  # the new query and the new turn


async def test_embedding_scorer_clamps_negative_similarity_and_zero_vectors() -> None:
    embedder = FnEmbedder(
        lambda texts: [{"q": [1.0, 0.0], "same": [2.0, 0.0], "opposite": [-1.0, 0.0]}.get(
            t, [0.0, 0.0]) for t in texts]
    )  # fmt: skip
    scores = await EmbeddingScorer(embedder).score("q", ["same", "opposite", "zero"])
    assert scores == [1.0, 0.0, 0.0]
    assert await EmbeddingScorer(embedder).score("q", []) == []


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        (lambda texts: [[1.0, 0.0]] + [[1.0, 0.0, 0.0]] * (len(texts) - 1), "different sizes"),
        (lambda texts: [[1.0]], "1 vectors for 3 texts"),
        (lambda texts: [[float("nan")]] * len(texts), "not finite"),
        (lambda texts: "nope", "not a list of vectors"),
    ],
)
async def test_embedding_scorer_rejects_bad_vectors(vectors: Any, message: str) -> None:
    with pytest.raises(ModelOutputInvalid, match=message):
        await EmbeddingScorer(FnEmbedder(vectors), cache_size=0).score("q", ["a", "b"])


async def test_a_failing_embedder_is_a_model_error_with_its_cause() -> None:
    def boom(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("connection reset")

    with pytest.raises(ModelError, match="connection reset") as info:
        await EmbeddingScorer(FnEmbedder(boom)).score("q", ["a"])
    assert isinstance(info.value.__cause__, RuntimeError)


def test_ports_are_checked_at_construction() -> None:
    with pytest.raises(ConfigError, match="EmbeddingPort"):
        EmbeddingScorer(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="RerankerPort"):
        RerankerScorer(lambda q, t: t)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="callable"):
        MyScorer("not a function")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="cache_size"):
        BM25Scorer(cache_size=-1)
    with pytest.raises(ConfigError, match="two or more"):
        HybridScorer(BM25Scorer())


# ------------------------------------------------------------------------------------------
# reranker


async def test_reranker_scores_come_in_order_and_write_a_ledger_entry() -> None:
    def fn(query: str, texts: list[str]) -> list[float]:
        return [0.9 if "dog" in t else 0.1 for t in texts]

    scorer = RerankerScorer(CallableReranker(fn, provider="local", model="toy"))
    ctx = RunContext()
    with scoring_context(ctx):
        scores = await scorer.score("pets?", ["a cat", "my dog", "taxes"])
    assert scores == [0.1, 0.9, 0.1]
    assert [e.stage for e in ctx.ledger.entries] == ["rerank"]
    assert await scorer.score("pets?", []) == []


async def test_reranker_logits_outside_0_1_are_refused() -> None:
    scorer = RerankerScorer(CallableReranker(lambda q, t: [3.2] * len(t)))
    with pytest.raises(ModelOutputInvalid, match="sigmoid"):
        await scorer.score("q", ["a"])


async def test_a_failing_reranker_is_a_model_error() -> None:
    def boom(query: str, texts: list[str]) -> list[float]:
        raise OSError("down")

    with pytest.raises(ModelError):
        await RerankerScorer(CallableReranker(boom)).score("q", ["a"])


# ------------------------------------------------------------------------------------------
# your function


async def test_my_scorer_runs_a_sync_function_in_a_thread_on_a_copy() -> None:
    seen: dict[str, Any] = {}

    def fn(query: str, texts: list[str]) -> list[float]:
        seen["thread"] = threading.get_ident()
        texts.append("mutated")
        return [1.0] * (len(texts) - 1)

    texts = ["a", "b"]
    assert await MyScorer(fn).score("q", texts) == [1.0, 1.0]
    assert texts == ["a", "b"]
    assert seen["thread"] != threading.get_ident()


async def test_my_scorer_awaits_an_async_function_and_lets_its_errors_through() -> None:
    async def fn(query: str, texts: list[str]) -> list[float]:
        await asyncio.sleep(0)
        return [0.25] * len(texts)

    assert await MyScorer(fn).score("q", ["a"]) == [0.25]

    def bad(query: str, texts: list[str]) -> list[float]:
        raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        await MyScorer(bad).score("q", ["a"])


def test_checked_scores_name_the_index() -> None:
    assert checked_scores([0, 1, 0.5], 3, "Step") == [0.0, 1.0, 0.5]
    for bad, match in (([0.5], "3 scores"), ([0.1, 2.0, 0.1], r"\[1\]"), ([0, True, 0], r"\[1\]")):
        with pytest.raises(ConfigError, match=match):
            checked_scores(bad, 3, "Step")


# ------------------------------------------------------------------------------------------
# lexical default


async def test_bm25_scores_a_copy_of_the_query_1_and_unrelated_text_0() -> None:
    scorer = BM25Scorer()
    texts = [
        "Caroline went to the LGBTQ support group on Tuesday.",
        "Melanie painted a sunrise over the lake.",
        "When did Caroline go to the LGBTQ support group?",
    ]
    scores = await scorer.score("When did Caroline go to the LGBTQ support group?", texts)
    assert scores[2] == 1.0
    assert scores[1] == 0.0
    assert 0.0 < scores[0] < 1.0
    assert await scorer.score("the and of", texts) == [0.0, 0.0, 0.0]  # only function words
    assert await scorer.score("q", []) == []


async def test_hybrid_fuses_ranks_into_0_1(minilm: LocalEmbedder) -> None:
    scorer = HybridScorer(BM25Scorer(), EmbeddingScorer(minilm))
    texts = ["my dog Oscar", "taxes are due", "Oscar the dog chased a ball"]
    scores = await scorer.score("Oscar dog", texts)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[1] == min(scores)
