"""RemoveDuplicates(match="similar") under BM25Scorer: near-copies through an inverted index.

A pair of units is scored on its own: the later text's BM25 score with the older one as the
query, in the pair's own two-text index, exactly what ``BM25Scorer.scores(older, [later])``
returns (:func:`_pair_score` repeats its arithmetic, bit for bit). Scoring every pair of units
of one shape cost O(n**2) scores; :class:`Bm25Index` visits units newest first and looks each
up among the later ones by its rarest words, as many as a later text must share one of to
score above the threshold (:func:`_probe_count`: BM25's term weights bounded over the lengths
a later text may have). Texts ruled out by a cheaper bound (:func:`_may_score_above`) are not
scored word by word, and a set of units already chained as near-copies is skipped once one of
them scored above. The drops are those of scoring every pair (``tests/test_dedup_scale.py``);
``bench/dedup_scale.py`` times it.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent_adapter._optional import optional_module
from agent_adapter.context._scorers import BM25Scorer

if TYPE_CHECKING:
    import numpy as np
else:
    np = optional_module("numpy", "relevance", 'RemoveDuplicates(match="similar")')

__all__ = ["Bm25Index", "Chains", "comparable"]


def comparable(size: int, other: int) -> bool:
    """Two texts of these lengths may be near-copies: within a factor of two."""
    return size <= 2 * other <= 4 * size


class Chains:
    """Units chained as near-copies: disjoint sets (union-find, path halving)."""

    def __init__(self, count: int) -> None:
        self.parent = list(range(count))

    def root(self, i: int) -> int:
        """The set ``i`` is in, by its root."""
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(self, a: int, b: int) -> None:
        """One set of the sets of ``a`` and ``b``."""
        self.parent[self.root(a)] = self.root(b)


#: BM25Scorer's idf (Lucene's) in the index of a pair: a word of both texts, of the query alone.
_BOTH = math.log1p((2 - 2 + 0.5) / (2 + 0.5))
_ALONE = math.log1p((2 - 1 + 0.5) / (1 + 0.5))


def _pair_score(
    groups: list[tuple[int, list[str]]],
    length: int,
    doc: tuple[int, dict[str, int]],
    k1: float,
    b: float,
) -> float:
    """``BM25Scorer.scores(query, [doc])[0]``, bit for bit: the same operations in the same
    order as rank-bm25's ``get_scores`` over the pair's two-text index, for a query given as
    its words grouped by count (as ``scores`` groups them) and ``length`` words long."""
    doc_length, counts = doc
    avgdl = (doc_length + length) / 2
    k_doc = k1 * (1 - b + b * doc_length / avgdl)
    k_query = k1 * (1 - b + b * length / avgdl)
    raw = own = 0.0
    for count, words in groups:
        score = self_score = 0.0
        for word in words:
            tf = counts.get(word)
            if tf:
                score += _BOTH * (tf * (k1 + 1) / (tf + k_doc))
                self_score += _BOTH * (count * (k1 + 1) / (count + k_query))
            else:
                self_score += _ALONE * (count * (k1 + 1) / (count + k_query))
        raw += count * score
        own += count * self_score
    return min(max(raw / own, 0.0), 1.0)


def _may_score_above(
    counts: dict[str, int],
    length: int,
    peak: int,
    doc: tuple[int, dict[str, int]],
    k1: float,
    b: float,
    above: float,
) -> bool:
    """False when the query (word ``counts``, ``length`` words, no word more than ``peak``
    times) cannot score above ``above`` against ``doc``: :func:`_rough_probe_count`'s bound
    at the doc's own length, with the query's words it lacks (one set intersection), so
    most texts that merely share a common word are never scored word by word."""
    doc_length, doc_counts = doc
    common = len(counts.keys() & doc_counts.keys())
    if not common:
        return False
    shared = length - len(counts) + common  # each word missing takes one count at least
    avgdl = (doc_length + length) / 2
    k_doc = k1 * (1 - b + b * doc_length / avgdl)
    k_query = k1 * (1 - b + b * length / avgdl)
    x = peak * doc_length / shared
    most = _BOTH * shared * (x * (k1 + 1) / (x + k_doc))
    least_own = (k1 + 1) / (1 + k_query) * (_BOTH * shared + _ALONE * (length - shared))
    return most * (1 + 1e-9) > above * least_own


#: Units a probe may find before _probe_count's tighter bound is worth its cost.
_ROUGH_ENOUGH = 16


class _Rough:
    """:func:`_probe_count`'s bound over one span for all text lengths, with each word's own
    score taken at a count of 1 (``Q f(Q) >= Q f(1)``): looser, in a few float operations."""

    def __init__(
        self, length: int, peak: int, lengths: tuple[int, int], k1: float, b: float
    ) -> None:
        lo, self.hi = lengths
        avgdl = (length + lo) / 2
        self.length, self.peak, self.weight = length, peak, k1 + 1
        self.k_doc = k1 * (1 - b + b * lo / avgdl)
        self.f1 = (k1 + 1) / (1 + k1 * (1 - b + b * length / avgdl))

    def fatal(self, missing: int, above: float) -> bool:
        """True when a text lacking query words of ``missing`` counts in all (and sharing
        the rest) scores at most ``above``."""
        rest = self.length - missing
        if rest <= 0:
            return True  # nothing shared scores 0
        x = self.peak * self.hi / rest
        most = _BOTH * rest * (x * self.weight / (x + self.k_doc))
        return most * (1 + 1e-9) <= above * self.f1 * (_BOTH * rest + _ALONE * missing)


def _rough_probe_count(
    counts: Sequence[int],
    length: int,
    lengths: tuple[int, int],
    k1: float,
    b: float,
    above: float,
) -> int:
    """:func:`_probe_count` by the looser :class:`_Rough` bound (more words to probe, fewer
    operations)."""
    rough = _Rough(length, max(counts), lengths, k1, b)
    missing = 0
    for k, count in enumerate(counts):  # the first k words missing, the rest shared
        if rough.fatal(missing, above):
            return k
        missing += count
    return len(counts)


#: The spans of text lengths _probe_count bounds over: one word wide up to this length, then
#: this factor wide (wider spans bound more loosely: more words to probe, found the same).
_STEP_FROM, _STEP = 8, 1.5


def _probe_count(
    counts: Sequence[int],
    length: int,
    lengths: tuple[int, int],
    k1: float,
    b: float,
    above: float,
) -> int:
    """How many of a query's words (``counts``: their counts, in the order probed) a text
    ``lengths[0]..lengths[1]`` words long must share at least one of to score above ``above``.

    With the query's first ``k`` words missing from the text and every other word shared
    (sharing more only lowers the query's own score, whose words alone weigh ``_ALONE``), the
    pair's score is at most ``S / own``, bounded on each span of text lengths ``[lo, hi]``
    with BM25's term weight ``f(tf) = tf (k1 + 1) / (tf + K)`` increasing in ``tf`` and
    decreasing in ``K``: the text's ``K`` is least and the query's most at ``lo``; and since
    ``f`` is concave, the text's counts ``D`` of the shared words (``sum D <= hi``) give
    ``sum Q f(D) <= sum(Q) f(max(Q) hi / sum(Q))`` (Jensen). The answer is the least ``k``
    bounded at or under ``above`` on every span (a margin of 1e-9 covers rounding).
    """
    m = len(counts)
    if m <= 1:
        return m
    lo_len, hi_len = lengths
    points = [float(lo_len)]
    while points[-1] < hi_len:
        x = points[-1]
        points.append(min(float(hi_len), x + 1 if x < _STEP_FROM else x * _STEP))
    ends = np.array(points)
    lo, hi = (ends[:-1], ends[1:]) if len(points) > 1 else (ends, ends)
    q = np.array(counts, dtype=float)
    weight = k1 + 1
    avgdl = (length + lo) / 2
    k_doc = k1 * (1 - b + b * lo / avgdl)
    k_query = k1 * (1 - b + b * length / avgdl)
    own = (q * q * weight)[:, None] / (q[:, None] + k_query)  # each word's own score
    before = np.cumsum(own, axis=0) - own  # the own score of the words before each
    least_own = _BOTH * (before[-1] + own[-1]) + (_ALONE - _BOTH) * before
    rest = np.cumsum(q[::-1])[::-1]  # the counts from each word on: the most shared
    x = (np.maximum.accumulate(q[::-1])[::-1] / rest)[:, None] * hi
    most = (_BOTH * rest)[:, None] * (x * weight / (x + k_doc))
    fits = np.flatnonzero((most * (1 + 1e-9) <= above * least_own).all(axis=1))
    return int(fits[0]) if fits.size else m  # all m missing: nothing shared scores 0


class Bm25Index:
    """RemoveDuplicates' near-copies under BM25Scorer, each pair scored alone, via an index.

    Units are visited newest first; each is looked up among the later ones, then filed under
    its words. The index files units by the set of near-copies they are in (the root of its
    chain), and a text once per set, so a query skips a whole set once one of its units
    scored above, and copies of one text cost one filing and one score, not one each.
    """

    def __init__(self, scorer: BM25Scorer, texts: list[str], above: float) -> None:
        self.scorer = scorer
        self.texts = texts
        self.above = above
        self.postings: defaultdict[str, dict[int, list[int]]] = defaultdict(dict)
        # ^ word -> chain root -> units filed under both
        self.sizes: defaultdict[str, int] = defaultdict(int)  # word -> units filed under it
        self.words: dict[int, set[str]] = {}  # chain root -> the words it is filed under
        self.filed: dict[int, set[str]] = {}  # chain root -> the texts filed under it

    def chain(self, members: list[int], protected: list[bool], chains: Chains) -> None:
        """Chain the near-copies among ``members`` (one shape, oldest first)."""
        texts = self.texts
        terms = {n: self.scorer._terms(texts[n]) for n in members}
        docs = [n for n in members if terms[n][0]]  # no words: scores 0 either way
        by_size = sorted(docs, key=lambda n: len(texts[n]))
        sizes = [len(texts[n]) for n in by_size]
        longest = np.maximum.accumulate([terms[n][0] for n in by_size]).tolist()
        shortest = np.minimum.accumulate([terms[n][0] for n in reversed(by_size)]).tolist()
        shortest.reverse()
        for n in reversed(docs):
            size = len(texts[n])
            first = bisect.bisect_left(sizes, (size + 1) // 2)
            last = bisect.bisect_right(sizes, 2 * size) - 1
            found: list[int] = []
            if self.postings and not protected[n] and first <= last:
                order = sorted(terms[n][1], key=self.sizes.__getitem__)  # rarest first
                if self.sizes[order[-1]]:  # else no later unit shares a word
                    span = (shortest[first], longest[last])
                    found = self._look_up(n, terms, order, span)
            root = n
            for other in found:
                root = self._merge(root, other, chains)
            kinds = self.filed.setdefault(root, set())
            if texts[n] not in kinds:  # a copy finds and scores as its text's first unit
                kinds.add(texts[n])
                self.words.setdefault(root, set()).update(terms[n][1])
                postings, counted = self.postings, self.sizes
                for word in terms[n][1]:
                    postings[word].setdefault(root, []).append(n)
                    counted[word] += 1

    def _look_up(
        self,
        n: int,
        terms: dict[int, tuple[int, dict[str, int]]],
        order: list[str],
        span: tuple[int, int],
    ) -> list[int]:
        """The chains (roots) among the later units that hold a near-copy of unit ``n``
        (``order``: its words, rarest first; ``span``: the lengths in words of the units it
        may be compared with)."""
        k1, b, above, texts = self.scorer.k1, self.scorer.b, self.above, self.texts
        length, counts = terms[n]
        size = len(texts[n])
        in_order = [counts[w] for w in order]
        probe = order[: _rough_probe_count(in_order, length, span, k1, b, above)]
        if sum(map(self.sizes.__getitem__, probe)) > _ROUGH_ENOUGH:
            probe = order[: _probe_count(in_order, length, span, k1, b, above)]
        peak = max(in_order)
        query: list[tuple[int, list[str]]] = []  # by count, as BM25Scorer.scores groups them
        near: dict[str, bool] = {}  # the texts scored: above or not (copies score alike)

        def scores_above(k: int) -> bool:
            text = texts[k]
            above_it = near.get(text)
            if above_it is None:
                doc = terms[k]
                above_it = comparable(size, len(text)) and _may_score_above(
                    counts, length, peak, doc, k1, b, above
                )
                if above_it:
                    if not query:
                        groups: dict[int, list[str]] = {}
                        for w, count in counts.items():
                            groups.setdefault(count, []).append(w)
                        query.extend(groups.items())
                    above_it = _pair_score(query, length, doc, k1, b) > above
                near[text] = above_it
            return above_it

        found: list[int] = []
        for word in probe:
            for root, units in self.postings.get(word, {}).items():
                if root not in found and any(map(scores_above, units)):
                    found.append(root)
        return found

    def _merge(self, a: int, b: int, chains: Chains) -> int:
        """Join the chains of roots ``a`` and ``b`` in ``chains`` and the index; the new
        root. The chain filed under fewer words moves into the other (so each filing moves
        O(log n) times)."""
        words = self.words
        if len(words.get(a, ())) > len(words.get(b, ())):
            a, b = b, a
        into = words.setdefault(b, set())
        for word in words.pop(a, ()):
            lists = self.postings[word]
            moved = lists.pop(a)
            kept = lists.get(b)
            if kept is None:
                lists[b] = moved
            elif len(kept) >= len(moved):
                kept.extend(moved)
            else:
                moved.extend(kept)
                lists[b] = moved
            into.add(word)
        kinds = self.filed.pop(a, set())
        self.filed.setdefault(b, set()).update(kinds)
        chains.parent[a] = b
        return b
