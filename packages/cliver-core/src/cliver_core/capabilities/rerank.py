"""Document reranking on a binding (0.3.0a5's ``capabilities.rerank``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_adapter import ConfigError
from cliver_core._provider_port import is_legacy_provider
from cliver_core.provider import RerankItem
from cliver_core.util import drop_none

if TYPE_CHECKING:
    from cliver_core._bindings import ModelBinding

__all__ = ["rerank"]


async def rerank(
    *,
    query: str,
    documents: list[str],
    binding: ModelBinding,
    top_k: int | None = None,
    **options: Any,
) -> list[RerankItem]:
    """Score ``documents`` against ``query`` with the model of ``binding``, best first.

    A 0.3.0a5 ``Provider`` (given, or the one a binding with ``api_key`` / ``base_url``
    builds: ``POST {base_url}/rerank`` with ``top_k`` in the body) gets ``rerank(query,
    documents, model=binding.model, **params)`` as in 0.3.0a5; an agent_adapter
    :class:`~agent_adapter.context.RerankerPort` scores every document and the items are
    sorted here (highest first) and cut to ``top_k``.

    Args:
        query: the query.
        documents: the candidates.
        binding: the rerank binding (``ModelBinding.rerank``).
        top_k: keep the best ``top_k`` (``None``: the binding's default, else all).
        **options: more parameters over the binding's defaults; ``path`` overrides the
            endpoint path.

    Raises:
        ConfigError: options for a RerankerPort, or a provider that cannot rerank.
        ModelError: the call failed.
    """
    params = {**binding.call_defaults(), **drop_none(top_k=top_k), **options}
    target = binding._target("rerank")
    if is_legacy_provider(target):
        items: list[RerankItem] = await target.rerank(
            query, list(documents), model=binding.model, **params
        )
        return items
    rerank_fn = getattr(target, "rerank", None)
    if not callable(rerank_fn):
        raise ConfigError(f"rerank: {type(target).__name__} has no rerank() method")
    keep = params.pop("top_k", None)
    if params:
        raise ConfigError(
            f"rerank: {type(target).__name__} is a RerankerPort, which takes no call "
            f"parameters but top_k; got {sorted(params)}"
        )
    docs = list(documents)
    result = await rerank_fn(query, docs)
    scored = [
        RerankItem(index=i, relevance_score=float(score), document=docs[i])
        for i, score in enumerate(result.scores)
    ]
    scored.sort(key=lambda item: item.relevance_score, reverse=True)
    return scored[:keep] if keep is not None else scored
