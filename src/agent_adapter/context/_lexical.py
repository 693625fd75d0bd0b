"""Words for BM25Scorer: what a word is, the stop words, a light English stemmer, and
rank-bm25's BM25Okapi fed with word counts.

The stemmer (``BM25Scorer(stem=True)``) is not Porter's algorithm but a handful of rules, so
"camped", "camping" and "camps" are one word ("camp"), "paintings" is "paint", "running" is
"run", "families" meets "family" ("fami") and "making" meets "make" ("mak"). It is for
matching, not for showing: the stems need not be words. Words of three letters or fewer, and
words with a digit or a letter outside a-z, are left as they are; irregular forms ("made",
"went", "children") are not joined. On LoCoMo's tuning conversations (``bench/locomo.py``) it
lifted BM25 from 76.9 to 81.9% of questions with all evidence kept at 4k tokens, multi-hop
questions most (31.7 to 46.8%): their evidence names the same things in other forms ("Where
has Melanie camped?", "we went camping at the beach").
"""

from __future__ import annotations

import functools
import math
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


_VOWELS = frozenset("aeiouy")
_ASCII = frozenset("abcdefghijklmnopqrstuvwxyz")


#: Words up to this long have their stems remembered (65,536 words at most): a longer one (a
#: hash, a run of base64) is seldom seen twice and would hold its whole length in the cache.
_STEM_REMEMBERED = 40


def _stem(word: str) -> str:
    """:func:`stem`, remembered for a word up to :data:`_STEM_REMEMBERED` characters."""
    return _stems(word) if len(word) <= _STEM_REMEMBERED else stem(word)


def stem(word: str) -> str:
    """``word`` (lowercase) without its plural, -ing, -ed or -ly ending and a final "e".

    Args:
        word: one lowercased word.

    Returns:
        Its stem; the word itself when it is short or not plain a-z.
    """
    if len(word) <= 3 or not _ASCII.issuperset(word):
        return word
    w = word
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5 and _VOWELS.intersection(w[:-3]):
        w = w[:-3]
    elif (w.endswith("ed") and len(w) > 4 and _VOWELS.intersection(w[:-2])) or (
        w.endswith("ly") and len(w) > 5
    ):
        w = w[:-2]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz" and w[-1] not in _VOWELS:
        w = w[:-1]  # running -> runn -> run
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]  # make / making -> mak
    return w


_stems = functools.lru_cache(maxsize=65536)(stem)
