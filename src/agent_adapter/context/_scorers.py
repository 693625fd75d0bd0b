"""Scorers: how relevant each text is to a query, as one float in 0..1 per text, in order.

:class:`Scorer` is the protocol the relevance steps (``KeepMostRelevant``,
``RemoveDuplicates(match="similar")``) call. Four come with the library:

* :class:`BM25Scorer`, the zero-model default: Okapi BM25 from ``rank-bm25``.
* :class:`EmbeddingScorer`: cosine similarity of an :class:`~agent_adapter.context.EmbeddingPort`'s
  vectors (the packaged :class:`~agent_adapter.context.LocalEmbedder` or any provider's).
* :class:`RerankerScorer`: a :class:`~agent_adapter.context.RerankerPort`'s scores.
* :class:`MyScorer`: your function.

What a text is worth is cached by content hash where it can be (a text's vector, a text's
tokens), so a conversation that grows by one turn costs one new text, not the whole history.
A step passes its run context to the ports it calls through :func:`scoring_context`, so the
spec's ``score(query, texts)`` signature stays as it is while a reranker still writes its
ledger entry on the run's ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import inspect
import math
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeGuard, TypeVar, runtime_checkable

from agent_adapter._errors import AgentAdapterError, ConfigError, ModelError, ModelOutputInvalid
from agent_adapter._model import EmbeddingPort
from agent_adapter._optional import is_loaded_instance, optional_module
from agent_adapter._rerank import RerankerPort, RerankResult
from agent_adapter.context._lexical import Terms, index, terms

if TYPE_CHECKING:
    import numpy as np
else:
    np = optional_module("numpy", "relevance", "relevance scoring")

__all__ = [
    "BM25Scorer",
    "EmbeddingScorer",
    "HybridScorer",
    "MyScorer",
    "RerankerScorer",
    "Scorer",
    "check_scorer",
    "checked_scores",
    "scoring_context",
]

_V = TypeVar("_V")

#: The run context of the step that is scoring (see :func:`scoring_context`).
_CTX: contextvars.ContextVar[Any] = contextvars.ContextVar("scoring_ctx", default=None)


@contextlib.contextmanager
def scoring_context(ctx: Any) -> Iterator[None]:
    """Within the block, scorers pass ``ctx`` to the ports they call (ledger, events)."""
    token = _CTX.set(ctx)
    try:
        yield
    finally:
        _CTX.reset(token)


@runtime_checkable
class Scorer(Protocol):
    """Scores each text against query; one float in 0..1 per text, in order."""

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score in 0..1 per text, in order."""
        ...


def check_scorer(value: object, where: str) -> None:
    """Raise unless ``value`` is a Scorer: an instance with an async ``score`` method.

    What a step checks at construction, so a wrong scorer fails there and not in ``apply``.

    Args:
        value: the scorer given.
        where: the argument, for the message (``"RemoveDuplicates.scorer"``).

    Raises:
        ConfigError: a class instead of an instance, no callable ``score``, or a ``score``
            that is a plain function (not ``async def``).
    """
    score = getattr(value, "score", None)
    if isinstance(value, type):
        got = f"the class {value.__name__} (pass an instance: {value.__name__}())"
    elif not callable(score):
        got = type(value).__name__
    elif (inspect.isfunction(score) or inspect.ismethod(score)) and not (
        inspect.iscoroutinefunction(score)
    ):
        got = f"{type(value).__name__}, whose score is not async"
    else:
        return
    raise ConfigError(f"{where} must be a Scorer (an async score(query, texts) method), got {got}")


def _is_ndarray(value: object) -> TypeGuard[np.ndarray[Any, Any]]:
    return is_loaded_instance(value, "numpy", "ndarray")  # no array without numpy loaded


def checked_scores(scores: object, count: int, who: str) -> list[float]:
    """``scores`` as floats in 0..1, one per text; what a step accepts from a scorer.

    Raises:
        ConfigError: not a sequence of ``count`` items, or an item that is not a finite number
            in 0..1 (bools and strings included); the message names ``who`` and the index.
    """
    if _is_ndarray(scores):
        scores = scores.tolist()
    if not isinstance(scores, list | tuple) or len(scores) != count:
        shown = f"{len(scores)} items" if isinstance(scores, list | tuple) else f"{scores!r:.80}"
        raise ConfigError(f"{who}: the scorer must return {count} scores, got {shown}")
    out: list[float] = []
    for i, s in enumerate(scores):
        if isinstance(s, bool) or not isinstance(s, int | float) or not 0.0 <= s <= 1.0:
            raise ConfigError(f"{who}: score [{i}] is {s!r}, not a number in 0..1")
        out.append(float(s))
    return out


def _text_key(text: str) -> bytes:
    """A text's cache key: a 16-byte blake2b of its UTF-8 (big tool outputs are not held)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class _LRU(Generic[_V]):
    """A bounded map from text hashes to values, least recently used out first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[bytes, _V] = OrderedDict()

    def get(self, key: bytes) -> _V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: bytes, value: _V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.size:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


def _check_cache_size(value: object, who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{who}: cache_size must be an int >= 0, got {value!r}")
    return value


def _context_weight(value: object, who: str) -> float:
    w = value
    if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) or w < 0:
        raise ConfigError(f"{who}: context_weight must be a finite number >= 0, got {w!r}")
    return float(w)


def _with_neighbours(rows: np.ndarray[Any, Any], w: float) -> np.ndarray[Any, Any]:
    """Each row plus ``w`` times the rows right before and after it (scores or vectors)."""
    out = rows.copy()
    out[1:] += w * rows[:-1]
    out[:-1] += w * rows[1:]
    return out


# ----------------------------------------------------------------------------------------------
# lexical


class BM25Scorer:
    """Okapi BM25 from `rank-bm25 <https://pypi.org/project/rank-bm25/>`_: the zero-model default.

    rank-bm25's BM25Okapi scores, with Lucene's idf ``log(1 + (N - n + 0.5) / (n + 0.5))``
    (https://lucene.apache.org/core/9_0_0/core/org/apache/lucene/search/similarities/BM25Similarity.html)
    in place of its own, which goes negative for a word in more than half the texts (so two
    near-identical texts would score 0 against each other).

    Each call indexes ``texts`` (plus the query) afresh, so document frequencies are those of
    the conversation at hand; each text's word counts are cached by content hash, so a grown
    conversation reads only its new turns (rank-bm25's index is fed those counts). Words are
    runs of letters and digits, lowercased, without a few English function words; with
    ``stem``, English endings are stripped too ("camped" and "camping" are one word; see
    ``_lexical``), as in ``KeepMostRelevant``'s default.

    A score is the text's BM25 score divided by the query's own score as a document of the
    same index, clamped to 0..1: a copy of the query scores 1, a text sharing none of its
    words 0. The order is plain BM25's; the scale makes ``same_if_score_above`` meaningful for
    ``RemoveDuplicates(match="similar")``. With ``context_weight``, each text's score is
    read in its context, as :class:`EmbeddingScorer` reads its vector: plus
    ``context_weight`` times the scores of the texts right before and after it in ``texts``,
    divided by ``1 + 2 * context_weight`` (leave it 0 for ``RemoveDuplicates``).

    Args:
        k1: term-frequency saturation (rank-bm25's default 1.5).
        b: length normalisation (0.75).
        cache_size: texts whose words are kept (0: no cache).
        stem: strip English plural, -ing, -ed and -ly endings from words (default off).
        context_weight: the share of each neighbour's score added to a text's (0: none).

    Raises:
        ConfigError: k1 or b is not a finite number >= 0, a bad cache_size, stem not a bool,
            or context_weight not a finite number >= 0.
    """

    def __init__(
        self,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        cache_size: int = 100_000,
        stem: bool = False,
        context_weight: float = 0.0,
    ) -> None:
        for name, v in (("k1", k1), ("b", b)):
            bad = isinstance(v, bool) or not isinstance(v, int | float)
            if bad or not math.isfinite(v) or v < 0:
                raise ConfigError(f"BM25Scorer: {name} must be a finite number >= 0, got {v!r}")
        if not isinstance(stem, bool):
            raise ConfigError(f"BM25Scorer: stem must be a bool, got {stem!r}")
        self.k1 = float(k1)
        self.b = float(b)
        self.stem = stem
        self.context_weight = _context_weight(context_weight, "BM25Scorer")
        self._cache: _LRU[Terms] = _LRU(_check_cache_size(cache_size, "BM25Scorer"))

    def __repr__(self) -> str:
        extra = (", stem=True" if self.stem else "") + (
            f", context_weight={self.context_weight:g}" if self.context_weight else ""
        )
        return f"BM25Scorer(k1={self.k1:g}, b={self.b:g}{extra})"

    def _terms(self, text: str) -> Terms:
        """A text's length in words and its word counts (cached by content hash)."""
        if not self._cache.size:
            return terms(text, self.stem)
        key = _text_key(text)
        hit = self._cache.get(key)
        if hit is None:
            hit = terms(text, self.stem)
            self._cache.put(key, hit)
        return hit

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """:meth:`score` without the event loop (for sync code and benchmarks)."""
        if not texts:
            return []
        q = self._terms(query)
        if not q[0]:
            return [0.0] * len(texts)
        corpus = [self._terms(t) for t in texts]
        if not any(length for length, _ in corpus):
            return [0.0] * len(texts)
        okapi = index([*corpus, q], k1=self.k1, b=self.b)
        # rank-bm25 sums over the query's words one by one; words that occur the same number
        # of times are scored together, times that count (the same sum, far fewer passes)
        by_count: dict[int, list[str]] = {}
        for word, count in q[1].items():
            by_count.setdefault(count, []).append(word)
        raw = sum(count * okapi.get_scores(words) for count, words in by_count.items())
        own = float(raw[-1])
        if own <= 0:
            return [0.0] * len(texts)
        out = np.clip(raw[:-1] / own, 0.0, 1.0)
        if self.context_weight:
            out = _with_neighbours(out, self.context_weight) / (1 + 2 * self.context_weight)
        return out.tolist()  # type: ignore[no-any-return]

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """The BM25 score of each text for query, relative to the query's own, in 0..1."""
        return self.scores(query, list(texts))


# ----------------------------------------------------------------------------------------------
# ports


def _port_error(exc: Exception, what: str) -> ModelError:
    """A port's failure that is not one of the library's errors, as a ModelError (callers
    re-raise the library's own errors as they are, never with themselves as the cause)."""
    return ModelError(f"the {what} failed: {type(exc).__name__}: {exc}")


def _check_async_port(value: object, method: str, where: str, port: str) -> None:
    """Raise unless ``value`` has an async ``method``: a port whose method is a plain
    function would fail only at its first call (``await`` on a list), so it fails here.

    Raises:
        ConfigError: ``value`` is no ``port``, or its ``method`` is not ``async def``.
    """
    call = getattr(value, method, None)
    if isinstance(value, type):
        got = f"the class {value.__name__} (pass an instance: {value.__name__}())"
    elif not callable(call):
        got = type(value).__name__
    elif (inspect.isfunction(call) or inspect.ismethod(call)) and not (
        inspect.iscoroutinefunction(call)
    ):
        got = f"{type(value).__name__}, whose {method} is not async"
    else:
        return
    raise ConfigError(f"{where} must be a {port} (an async {method} method), got {got}")


class EmbeddingScorer:
    """Cosine similarity of your embedder's vectors; negative similarity counts as 0.

    The query and every text not seen before go to the embedder in one ``embed`` call; the
    vectors are kept by content hash (``cache_size`` texts, least recently used out first), so
    scoring a conversation that grew by one turn embeds the query and that turn. A zero vector
    is similar to nothing (0).

    With ``context_weight``, each text is read in its context: its unit vector plus
    ``context_weight`` times those of the texts right before and after it in ``texts`` (which
    ``KeepMostRelevant`` passes in conversation order), renormalised, is compared with the
    query. A reply like "that sounds fun, where did you go?" then carries what it answers.
    The mix is made from the cached vectors at each call, so nothing is embedded again.
    On LoCoMo's tuning half, 0.5 with BM25 by RRF (k=10) kept all evidence for 69.2 / 77.6 /
    83.5 / 91.4% of questions at 1k / 2k / 4k / 8k tokens, against 65.2 / 75.4 / 82.7 / 89.7
    without (0.3, 0.7 and 1.0 within a point of 0.5; ``bench/locomo.py``). Leave it 0 for
    ``RemoveDuplicates``: two texts are alike or not on their own.

    Args:
        embedder: an :class:`~agent_adapter.context.EmbeddingPort`.
        cache_size: vectors kept (0: no cache).
        context_weight: the share of each neighbour's vector mixed into a text's (0: none).

    Raises:
        ConfigError: embedder is not an EmbeddingPort, a bad cache_size, or context_weight
            not a finite number >= 0.
    """

    def __init__(
        self, embedder: EmbeddingPort, *, cache_size: int = 100_000, context_weight: float = 0.0
    ) -> None:
        if not isinstance(embedder, EmbeddingPort):
            raise ConfigError(
                f"EmbeddingScorer: embedder must be an EmbeddingPort (an async embed(texts) "
                f"method), got {type(embedder).__name__}"
            )
        _check_async_port(embedder, "embed", "EmbeddingScorer: embedder", "EmbeddingPort")
        self.embedder = embedder
        self.context_weight = _context_weight(context_weight, "EmbeddingScorer")
        self._cache: _LRU[np.ndarray[Any, Any]] = _LRU(
            _check_cache_size(cache_size, "EmbeddingScorer")
        )

    def __repr__(self) -> str:
        extra = f", context_weight={self.context_weight:g}" if self.context_weight else ""
        return f"EmbeddingScorer({self.embedder!r}{extra})"

    async def _vectors(self, texts: list[str]) -> list[np.ndarray[Any, Any]]:
        """Unit vectors of texts (zero vectors stay zero), from the cache or one embed call."""
        keys = [_text_key(t) for t in texts]
        found: dict[bytes, np.ndarray[Any, Any]] = {}
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            hit = self._cache.get(key) if self._cache.size else None
            if hit is not None:
                found[key] = hit
            else:
                missing.setdefault(key, text)
        if missing:
            try:
                raw = await self.embedder.embed(list(missing.values()), ctx=_CTX.get())
            except AgentAdapterError:
                raise
            except Exception as exc:
                raise _port_error(exc, "embedder") from exc
            if isinstance(raw, str | bytes) or not isinstance(raw, Sequence | np.ndarray):
                raise ModelOutputInvalid(
                    f"the embedder returned {type(raw).__name__}, not a list of vectors"
                )
            if len(raw) != len(missing):
                raise ModelOutputInvalid(
                    f"the embedder returned {len(raw)} vectors for {len(missing)} texts"
                )
            for i, (key, vector) in enumerate(zip(missing, raw, strict=True)):
                try:
                    array = np.asarray(vector, dtype=np.float32)
                except (TypeError, ValueError) as exc:
                    raise ModelOutputInvalid(
                        f"the embedder returned a vector [{i}] that is not a list of numbers"
                    ) from exc
                if array.ndim != 1 or not array.size or not np.isfinite(array).all():
                    raise ModelOutputInvalid(
                        f"the embedder returned vector [{i}] that is empty, not flat or not finite"
                    )
                norm = float(np.linalg.norm(array))
                unit = array / norm if norm > 0 else array
                found[key] = unit
                if self._cache.size:
                    self._cache.put(key, unit)
        out = [found[k] for k in keys]
        sizes = {v.shape[0] for v in out}
        if len(sizes) > 1:
            raise ModelOutputInvalid(
                f"the embedder returned vectors of different sizes: {sorted(sizes)}"
            )
        return out

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """The cosine similarity of each text to query, clamped to 0..1.

        Raises:
            ModelOutputInvalid: the embedder returned vectors of different sizes (or the wrong
                count, or values that are not finite numbers).
            ModelError: the embedder failed.
        """
        items = list(texts)
        if not items:
            return []
        vectors = await self._vectors([query, *items])
        matrix = np.stack(vectors[1:])
        w = self.context_weight
        if w and len(items) > 1:
            mixed = _with_neighbours(matrix, w)
            norms = np.linalg.norm(mixed, axis=1, keepdims=True)
            matrix = np.divide(mixed, norms, out=np.zeros_like(mixed), where=norms > 0)
        return np.clip(matrix @ vectors[0], 0.0, 1.0).astype(float).tolist()  # type: ignore[no-any-return]


class RerankerScorer:
    """Your reranker's scores, which must be in 0..1 (apply a sigmoid to raw logits first).

    Args:
        reranker: a :class:`~agent_adapter.context.RerankerPort`, such as
            :class:`~agent_adapter.context.CallableReranker` or a provider's rerank endpoint.

    Raises:
        ConfigError: reranker is not a RerankerPort.
    """

    def __init__(self, reranker: RerankerPort) -> None:
        if not isinstance(reranker, RerankerPort):
            raise ConfigError(
                f"RerankerScorer: reranker must be a RerankerPort (an async rerank(query, "
                f"texts) method), got {type(reranker).__name__}"
            )
        _check_async_port(reranker, "rerank", "RerankerScorer: reranker", "RerankerPort")
        self.reranker = reranker

    def __repr__(self) -> str:
        return f"RerankerScorer({self.reranker!r})"

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """The reranker's score of each text for query.

        Raises:
            ModelOutputInvalid: the wrong count, or a score outside 0..1.
            ModelError: the reranker failed.
        """
        items = list(texts)
        if not items:
            return []
        try:
            result = await self.reranker.rerank(query, items, ctx=_CTX.get())
        except AgentAdapterError:
            raise
        except Exception as exc:
            raise _port_error(exc, "reranker") from exc
        if not isinstance(result, RerankResult):
            raise ModelOutputInvalid(
                f"the reranker returned {type(result).__name__}, not a RerankResult"
            )
        if len(result.scores) != len(items):
            raise ModelOutputInvalid(
                f"the reranker returned {len(result.scores)} scores for {len(items)} texts"
            )
        for i, s in enumerate(result.scores):
            if not math.isfinite(s) or not 0.0 <= s <= 1.0:
                raise ModelOutputInvalid(
                    f"the reranker's score [{i}] is {s!r}, not in 0..1 (apply a sigmoid to "
                    f"raw logits first)"
                )
        return [float(s) for s in result.scores]


class MyScorer:
    """Your function fn(query, texts) -> list[float] in 0..1; a sync one runs in a thread.

    ``fn`` gets a copy of the texts, so it may keep or change the list. The step that calls
    the scorer checks what it returns (one number in 0..1 per text, else ``ConfigError``).

    Args:
        fn: ``fn(query, texts) -> list[float]``, sync or async.

    Raises:
        ConfigError: fn is not callable.
    """

    def __init__(self, fn: Callable[[str, list[str]], Any]) -> None:
        if not callable(fn):
            raise ConfigError(f"MyScorer: fn must be callable, got {type(fn).__name__}")
        self.fn = fn

    def __repr__(self) -> str:
        return f"MyScorer({getattr(self.fn, '__qualname__', type(self.fn).__qualname__)})"

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """What fn returns for query and a copy of texts; its errors propagate."""
        copy = list(texts)
        if inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(
            getattr(self.fn, "__call__", None)  # noqa: B004 - an object with an async __call__
        ):
            result = await self.fn(query, copy)
        else:
            result = await asyncio.to_thread(self.fn, query, copy)
            if inspect.isawaitable(result):
                result = await result
        return result  # type: ignore[no-any-return]


class HybridScorer:
    """Lexical and semantic scorers fused by reciprocal rank (RRF, Cormack et al. 2009).

    Each scorer ranks the texts; a text's score is ``sum(1 / (k + rank))`` over the scorers,
    divided by its best possible value (rank 1 in every one), so it is in 0..1 and 1 only for
    a text ranked first by all. Ranks, not raw scores, are fused, so scorers of different
    scales (BM25, cosine) weigh the same. Meant for ranking (``KeepMostRelevant``); it says
    nothing about how alike two texts are, so it is no scorer for ``RemoveDuplicates``.

    Args:
        *scorers: two or more scorers, e.g. ``BM25Scorer()`` and
            ``EmbeddingScorer(LocalEmbedder())``.
        k: RRF's constant (60 in the paper): larger flattens the weight of the top ranks.

    Raises:
        ConfigError: fewer than two scorers, one without ``score``, or k not a number > 0.
    """

    def __init__(self, *scorers: Scorer, k: float = 60.0) -> None:
        if len(scorers) < 2:
            raise ConfigError("HybridScorer: give two or more scorers")
        for i, s in enumerate(scorers):
            if not callable(getattr(s, "score", None)):
                raise ConfigError(f"HybridScorer: scorers[{i}] is not a Scorer")
        if isinstance(k, bool) or not isinstance(k, int | float) or not k > 0:
            raise ConfigError(f"HybridScorer: k must be a number > 0, got {k!r}")
        self.scorers = scorers
        self.k = float(k)

    def __repr__(self) -> str:
        return f"HybridScorer({', '.join(map(repr, self.scorers))})"

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """The fused rank score of each text for query, in 0..1.

        Raises:
            ConfigError: a scorer returned bad scores.
        """
        items = list(texts)
        if not items:
            return []
        fused = np.zeros(len(items))
        for i, scorer in enumerate(self.scorers):
            got = checked_scores(await scorer.score(query, items), len(items), f"scorers[{i}]")
            order = np.argsort(-np.asarray(got), kind="stable")
            ranks = np.empty(len(items))
            ranks[order] = np.arange(1, len(items) + 1)
            fused += 1.0 / (self.k + ranks)
        best = len(self.scorers) / (self.k + 1)
        return np.clip(fused / best, 0.0, 1.0).tolist()  # type: ignore[no-any-return]
