"""The reranker port and its result, a pydantic model (loaded with pydantic, on first use).

:class:`RerankerPort` scores texts against a query (``CallableReranker``, ``cliver_core``'s
rerank bindings); :class:`RerankResult` is what it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from agent_adapter._model import Usage

__all__ = ["RerankResult", "RerankerPort"]


class RerankResult(BaseModel):
    """Scores in input order, plus what the call used, for billing.

    Attributes:
        scores: one relevance score per text, in the order the texts were given.
        usage: what the call used (tokens or billing units), when known.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    scores: list[float]
    usage: Usage | None = None


@runtime_checkable
class RerankerPort(Protocol):
    """Scores how relevant each text is to query; one float per text, in order."""

    async def rerank(self, query: str, texts: Sequence[str], *, ctx: Any = None) -> RerankResult:
        """One score per text, in order."""
        ...
