"""0.3.0a5's concrete providers and its explicit brand selection.

The protocol providers (:class:`~cliver_core.provider.providers.openai.OpenAIProvider`,
:class:`~cliver_core.provider.providers.anthropic.AnthropicProvider`) keep 0.3.0a5's
``chat(request)`` / ``stream(request)`` surface and run the calls on agent_adapter's SDK
providers (:mod:`agent_adapter.providers`); the brand classes (``deepseek``, ``glm``,
``ollama``, ``minimax``, ``seedance``) subclass them with their default endpoints and quirks.
``embed`` / ``rerank`` post to the protocol's ``/embeddings`` / ``/rerank``; media methods
raise :class:`~cliver_core.CapabilityNotSupported` (out of scope).

A brand is selected, never guessed (as in 0.3.0a5): ``provider_name`` must equal a registry
key (case-insensitive) with an entry for the protocol; only such a hit, or an explicit
``provider_class``, supplies a default endpoint. Any other OpenAI- or Anthropic-compatible
server needs no entry: pass ``base_url`` and the ``protocol``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from cliver_core.provider import Provider

__all__ = ["API_KEY_ENV", "create_provider", "resolve_provider_class"]


def _openai() -> type[Provider]:
    from cliver_core.provider.providers.openai import OpenAIProvider

    return OpenAIProvider


def _anthropic() -> type[Provider]:
    from cliver_core.provider.providers.anthropic import AnthropicProvider

    return AnthropicProvider


def _deepseek_openai() -> type[Provider]:
    from cliver_core.provider.providers.deepseek import DeepSeekOpenAIProvider

    return DeepSeekOpenAIProvider


def _deepseek_anthropic() -> type[Provider]:
    from cliver_core.provider.providers.deepseek import DeepSeekAnthropicProvider

    return DeepSeekAnthropicProvider


def _glm_openai() -> type[Provider]:
    from cliver_core.provider.providers.glm import GLMProvider

    return GLMProvider


def _glm_anthropic() -> type[Provider]:
    from cliver_core.provider.providers.glm import GLMAnthropicProvider

    return GLMAnthropicProvider


def _minimax_anthropic() -> type[Provider]:
    from cliver_core.provider.providers.minimax import MiniMaxAnthropicProvider

    return MiniMaxAnthropicProvider


def _ollama() -> type[Provider]:
    from cliver_core.provider.providers.ollama import OllamaProvider

    return OllamaProvider


def _seedance() -> type[Provider]:
    from cliver_core.provider.providers.seedance import SeedanceProvider

    return SeedanceProvider


#: brand → protocol → class (imported on first use); 0.3.0a5's registry.
_BRAND_PROTOCOL_FACTORIES: dict[str, dict[str, Callable[[], type[Provider]]]] = {
    "deepseek": {"openai": _deepseek_openai, "anthropic": _deepseek_anthropic},
    "minimax": {"anthropic": _minimax_anthropic},
    "glm": {"openai": _glm_openai, "anthropic": _glm_anthropic},
    "ollama": {"openai": _ollama},
    "openai": {"openai": _openai},
    "anthropic": {"anthropic": _anthropic},
    "seedance": {"openai": _seedance},
}

#: brand → the environment variables its key is conventionally in (first set wins).
API_KEY_ENV: dict[str, tuple[str, ...]] = {
    "deepseek": ("DEEPSEEK_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "glm": ("GLM_API_KEY", "ZHIPUAI_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "seedance": ("SEEDANCE_API_KEY",),
}

_PROTOCOLS = ("openai", "anthropic")


def _brand_class(brand: str, protocol: str) -> type[Provider] | None:
    factory = _BRAND_PROTOCOL_FACTORIES.get(brand, {}).get(protocol)
    return factory() if factory is not None else None


def _protocol_class(protocol: str) -> type[Provider]:
    if protocol not in _PROTOCOLS:
        raise ValueError(f"Unknown protocol '{protocol}'. Supported: {list(_PROTOCOLS)}")
    return _anthropic() if protocol == "anthropic" else _openai()


def resolve_provider_class(
    provider_name: str | None = None, *, protocol: str = "openai"
) -> type[Provider]:
    """The class for ``provider_name`` on ``protocol``: the brand's when the registry has that
    exact (case-insensitive) pair, else the protocol's own class.

    Raises:
        ValueError: an unknown protocol.
    """
    brand = (provider_name or "").strip().lower()
    return _brand_class(brand, protocol) or _protocol_class(protocol)


def create_provider(
    api_key: str | None = None,
    base_url: str | None = None,
    *,
    protocol: str = "openai",
    provider_class: type[Provider] | None = None,
    provider_name: str | None = None,
    user_agent: str | None = None,
    logger: logging.Logger | None = None,
) -> Provider:
    """A provider, selected as 0.3.0a5 selects it.

    1. ``provider_class`` wins, with its ``default_base_url``;
    2. else an exact (``provider_name``, ``protocol``) registry hit, with the brand's default
       endpoint;
    3. else the protocol's class and no default endpoint (``base_url`` is required).

    Args:
        api_key: the key (``""``: the SDK's environment variable).
        base_url: the server; required unless a default endpoint applies.
        protocol: ``"openai"`` or ``"anthropic"``.
        provider_class: the class to build.
        provider_name: a registry key (``"deepseek"``, ``"glm"``, ``"ollama"``...).
        user_agent: accepted, unused.
        logger: the provider's logger.

    Raises:
        ValueError: no ``base_url`` and no default endpoint, or an unknown protocol.
    """
    brand = (provider_name or "").strip().lower()
    if provider_class is not None:
        cls, default_url = provider_class, getattr(provider_class, "default_base_url", "")
    else:
        hit = _brand_class(brand, protocol)
        cls = hit or _protocol_class(protocol)
        default_url = getattr(cls, "default_base_url", "") if hit is not None else ""
    url = base_url or default_url
    if not url:
        known = sorted(_BRAND_PROTOCOL_FACTORIES)
        raise ValueError(
            f"No base_url for protocol '{protocol}'"
            + (f" and provider_name '{provider_name}'" if provider_name else "")
            + " — pass base_url explicitly (any OpenAI- or Anthropic-compatible endpoint"
            + " works; no registry entry needed).  Only these exact provider_name values"
            + f" carry a built-in default endpoint: {known}"
        )
    build: Callable[..., Provider] = cls
    return build(api_key=api_key or "", base_url=url, user_agent=user_agent, logger=logger)
