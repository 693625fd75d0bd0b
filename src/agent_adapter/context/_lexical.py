"""Words for BM25Scorer: what a word is, the stop words, an English stemmer, and rank-bm25's
BM25Okapi fed with word counts.

The stemmer (``BM25Scorer(stem=True)``) is Snowball's English stemmer (Porter2, the
``snowballstemmer`` package: maintained, pure Python), so "camped", "camping" and "camps" are
one word ("camp"), "paintings" is "paint", "running" is "run", "families" meets "family"
("famili") and "making" meets "make". It is for matching, not for showing: the stems need not
be words. Words of three letters or fewer, and words with a digit or a letter outside a-z, are
left as they are; irregular forms ("made", "went", "children") are not joined. It replaced a
handful of rules of this library's own (issue 37); on LoCoMo's tuning conversations
(``bench/locomo.py``) the home-made rules had lifted BM25 from 76.9 to 81.9% of questions with
all evidence kept at 4k tokens, multi-hop questions most: their evidence names the same
things in other forms ("Where has Melanie camped?", "we went camping at the beach").

rank-bm25 stays the engine (unmaintained since 2022, but small and correct): ``bm25s``, the
maintained one, gives the same relative scores and is 6x (50 texts) to 60x (200 to 720 texts)
slower for this use, a fresh index per call (``bench/bm25_engines.py``: its index build alone
takes about 15 ms for 200 short texts, rank-bm25's whole call 0.4 ms).
"""

from __future__ import annotations

import functools
import math
import threading
from collections import Counter
from typing import Any

import regex

from agent_adapter._errors import MissingDependency

__all__ = ["Terms", "index", "stem", "terms"]

#: Words: runs of letters and digits (any script), lowercased; a few English function words
#: that carry no topic are left out so short questions are not ranked by "the" and "did".
_WORD = regex.compile(r"[\p{L}\p{N}]+")
_STOP = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from",
    "had", "has", "have", "he", "her", "his", "how", "i", "in", "is", "it", "its", "me", "my",
    "of", "on", "or", "our", "she", "so", "that", "the", "their", "them", "they", "this", "to",
    "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "you",
    "your",
))  # fmt: skip


#: A text's length in words and how often each word occurs in it.
Terms = tuple[int, dict[str, int]]


def terms(text: str, stemmed: bool = False) -> Terms:
    """A text's length in words and its word counts (stemmed with ``stemmed``)."""
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    return len(words), dict(Counter(map(_stem, words) if stemmed else words))


def _okapi() -> type[Any]:
    """rank-bm25's BM25Okapi fed with word counts made once per text (see BM25Scorer)."""
    global _OKAPI
    if _OKAPI is None:
        try:
            from rank_bm25 import BM25Okapi
        except ImportError as e:
            raise MissingDependency("rank-bm25", "relevance", "BM25Scorer") from e

        class Okapi(BM25Okapi):  # type: ignore[misc]
            def _initialize(self, corpus: list[Terms]) -> dict[str, int]:
                # BM25._initialize, on word counts instead of word lists
                nd: dict[str, int] = {}
                for length, counts in corpus:
                    self.doc_len.append(length)
                    self.doc_freqs.append(counts)
                    for word in counts:
                        nd[word] = nd.get(word, 0) + 1
                self.corpus_size = len(corpus)
                self.avgdl = sum(self.doc_len) / self.corpus_size
                return nd

            def _calc_idf(self, nd: dict[str, int]) -> None:
                # Lucene's idf, log(1 + (N - n + 0.5) / (n + 0.5)): never negative, so a word
                # in most texts (or in both of two) still counts a little, not below zero
                n_docs = self.corpus_size
                self.idf = {w: math.log1p((n_docs - n + 0.5) / (n + 0.5)) for w, n in nd.items()}

        _OKAPI = Okapi
    return _OKAPI


_OKAPI: type[Any] | None = None


def index(corpus: list[Terms], *, k1: float, b: float) -> Any:
    """A BM25 index of the texts' word counts (rank-bm25's, Lucene's idf)."""
    return _okapi()(corpus, k1=k1, b=b)


_ASCII = frozenset("abcdefghijklmnopqrstuvwxyz")


#: Words up to this long have their stems remembered (65,536 words at most): a longer one (a
#: hash, a run of base64) is seldom seen twice and would hold its whole length in the cache.
_STEM_REMEMBERED = 40


def _stem(word: str) -> str:
    """:func:`stem`, remembered for a word up to :data:`_STEM_REMEMBERED` characters."""
    return _stems(word) if len(word) <= _STEM_REMEMBERED else stem(word)


@functools.cache
def _snowball() -> Any:
    """Snowball's English (Porter2) stemmer, from ``snowballstemmer`` (pure Python)."""
    try:
        import snowballstemmer
    except ImportError as e:
        raise MissingDependency("snowballstemmer", "relevance", "BM25Scorer(stem=True)") from e
    return snowballstemmer.stemmer("english")


#: serializes the stemmer: a snowballstemmer stemmer object keeps its state while it works
_SNOWBALL_LOCK = threading.Lock()


def stem(word: str) -> str:
    """``word`` (lowercase) as Snowball's English stemmer (Porter2) stems it.

    Args:
        word: one lowercased word.

    Returns:
        Its stem; the word itself when it has three letters or fewer or is not plain a-z
        (identifiers, numbers, other scripts are matched as they are written).

    Raises:
        MissingDependency: ``snowballstemmer`` is not installed (extra ``relevance``).
    """
    if len(word) <= 3 or not _ASCII.issuperset(word):
        return word
    stemmer = _snowball()
    with _SNOWBALL_LOCK:
        stemmed: str = stemmer.stemWord(word)
    return stemmed


_stems = functools.lru_cache(maxsize=65536)(stem)
