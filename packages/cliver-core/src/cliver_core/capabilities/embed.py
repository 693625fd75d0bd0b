"""Text embeddings on a binding (0.3.0a5's ``capabilities.embed``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_adapter import ConfigError
from cliver_core._provider_port import is_legacy_provider
from cliver_core.provider import EmbeddingsResult

if TYPE_CHECKING:
    from cliver_core._bindings import ModelBinding

__all__ = ["embed"]


async def embed(
    *,
    texts: str | list[str],
    binding: ModelBinding,
    **options: Any,
) -> EmbeddingsResult:
    """Embed ``texts`` with the model of ``binding``.

    The binding's provider decides how: a 0.3.0a5 ``Provider`` (given, or the one a binding
    with ``api_key`` / ``base_url`` builds: ``POST {base_url}/embeddings``) gets
    ``embed(texts, model=binding.model, **params)`` as in 0.3.0a5; an agent_adapter
    :class:`~agent_adapter.context.EmbeddingPort` gets ``embed(texts)`` (it takes no
    options, so none may be set).

    Args:
        texts: one text or a list.
        binding: the embeddings binding (``ModelBinding.embed``).
        **options: more parameters (``dimensions``...) over the binding's defaults; ``path``
            overrides the endpoint path.

    Returns:
        One vector per text, in order, with the model and the usage when known.

    Raises:
        ConfigError: options for an EmbeddingPort, or a provider that cannot embed.
        ModelError: the call failed.
    """
    items = [texts] if isinstance(texts, str) else list(texts)
    params = {**binding.call_defaults(), **options}
    target = binding._target("embed")
    if is_legacy_provider(target):
        result: EmbeddingsResult = await target.embed(items, model=binding.model, **params)
        return result
    embed_fn = getattr(target, "embed", None)
    if not callable(embed_fn):
        raise ConfigError(f"embed: {type(target).__name__} has no embed() method")
    if params:
        raise ConfigError(
            f"embed: {type(target).__name__} is an EmbeddingPort, which takes no call "
            f"parameters; got {sorted(params)}"
        )
    vectors = await embed_fn(items)
    return EmbeddingsResult(vectors=[list(v) for v in vectors], model=binding.model)
