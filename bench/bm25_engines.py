"""BM25 engines for BM25Scorer: rank-bm25 (what it runs on) against bm25s (issue 37: rank-bm25
is unmaintained since 2022; switch only if bm25s is at least as fast for this use).

The use: every ``BM25Scorer.scores(query, texts)`` builds a fresh index over the texts plus
the query (the query's own score normalizes the others) and scores one query; the texts'
word counts are cached by content, so what is timed is the index and the scoring. Both
engines get the same word counts (the scorer's own ``terms``, stemmed) and Lucene's idf;
bm25s gets them as its ``Tokenized`` ids (no tokenizing of its own). The relative scores are
compared too (bm25s' Lucene variant drops Okapi's ``(k1 + 1)`` factor, a constant per word
that the normalization cancels).

Texts: the turns of LoCoMo's longest conversation (``../shared/data/locomo``), windows of
50, 200 and 689 turns, each question of the conversation as the query.

    pip install bm25s  # numpy only
    python bench/bm25_engines.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _compress_cases import data_dir
from _locomo_data import load_locomo
from agent_adapter.context._lexical import Terms, index, terms

K1, B = 1.5, 0.75


def rank_bm25_scores(query: Terms, corpus: list[Terms]) -> np.ndarray:
    """The scorer's path today: rank-bm25's Okapi on word counts, Lucene's idf."""
    okapi = index([*corpus, query], k1=K1, b=B)
    by_count: dict[int, list[str]] = {}
    for word, count in query[1].items():
        by_count.setdefault(count, []).append(word)
    raw = sum(count * okapi.get_scores(words) for count, words in by_count.items())
    return np.clip(raw[:-1] / raw[-1], 0.0, 1.0) if raw[-1] > 0 else np.zeros(len(corpus))


def bm25s_scores(query: Terms, corpus: list[Terms]) -> np.ndarray:
    """The same with bm25s (method "lucene"), fed the same word counts as token ids."""
    import bm25s
    from bm25s.tokenization import Tokenized

    vocab: dict[str, int] = {}
    ids = []
    for _, counts in [*corpus, query]:
        doc = []
        for word, count in counts.items():
            doc += [vocab.setdefault(word, len(vocab))] * count
        ids.append(doc)
    retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
    retriever.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    by_count: dict[int, list[str]] = {}
    for word, count in query[1].items():
        by_count.setdefault(count, []).append(word)
    raw = sum(count * retriever.get_scores(words) for count, words in by_count.items())
    return np.clip(raw[:-1] / raw[-1], 0.0, 1.0) if raw[-1] > 0 else np.zeros(len(corpus))


def _time(fn: Any, query: Terms, corpus: list[Terms], repeat: int) -> float:
    best = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(query, corpus)
        best.append(time.perf_counter() - start)
    return min(best)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="the shared data folder (default ../shared/data)")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    chats = load_locomo(data_dir(args.data))
    chat = max(chats, key=lambda c: len(c.messages))
    texts = [terms(m.text, True) for m in chat.messages]
    queries = [terms(q.text, True) for q in chat.questions[: args.queries]]
    bm25s_scores(queries[0], texts[:10])  # imports, numba-free warm-up
    print(f"{chat.name}: {len(texts)} turns, {len(queries)} queries, best of {args.repeat}")
    print(f"{'texts':>6} {'rank-bm25 ms':>13} {'bm25s ms':>9} {'ratio':>6} {'max |diff|':>11}")
    for n in (50, 200, len(texts)):
        corpus = texts[-n:]
        ours = [_time(rank_bm25_scores, q, corpus, args.repeat) for q in queries]
        theirs = [_time(bm25s_scores, q, corpus, args.repeat) for q in queries]
        diff = max(
            float(np.max(np.abs(rank_bm25_scores(q, corpus) - bm25s_scores(q, corpus))))
            for q in queries
        )
        a, b = statistics.median(ours) * 1000, statistics.median(theirs) * 1000
        print(f"{n:>6} {a:>13.2f} {b:>9.2f} {b / a:>6.2f} {diff:>11.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
