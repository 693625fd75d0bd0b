"""The results of ``cliver_core.provider``'s embeddings and rerank calls (public there):
below the endpoints that build them and the provider interface that returns them."""

from __future__ import annotations

from pydantic import BaseModel

from cliver_core._messages import UsageInfo

__all__ = ["EmbeddingsResult", "RerankItem"]


class RerankItem(BaseModel):
    """One scored document of a rerank call: its ``index`` in the input, its
    ``relevance_score`` and the ``document`` text."""

    index: int
    relevance_score: float
    document: str | None = None


class EmbeddingsResult(BaseModel):
    """The vectors of an embeddings call, in input order, with the model that made them and
    the usage the server reported."""

    vectors: list[list[float]]
    model: str
    usage: UsageInfo | None = None


# public as cliver_core.provider's, as in 0.3.0a5
RerankItem.__module__ = EmbeddingsResult.__module__ = "cliver_core.provider"
