"""``AnthropicProvider``: 0.3.0a5's generic Anthropic-compatible provider, its calls on
:class:`agent_adapter.providers.AnthropicModel` (Messages, the ``anthropic`` SDK).

The SDK authenticates with ``x-api-key``; 0.3.0a5's Bearer option for third-party endpoints
(``_anthropic_use_bearer_auth``) is kept as a class attribute but not used (DeepSeek's, GLM's
and MiniMax's Anthropic endpoints take ``x-api-key`` too)."""

from __future__ import annotations

from typing import Any, ClassVar

from agent_adapter import LLMPort
from cliver_core.provider.providers._port_provider import PortProvider

__all__ = ["AnthropicProvider"]


class AnthropicProvider(PortProvider):
    """Any Anthropic Messages endpoint. ``native`` messages are Messages API message dicts
    (content blocks)."""

    protocol = "anthropic"
    brand = "anthropic"
    default_base_url = "https://api.anthropic.com"
    _anthropic_use_bearer_auth: ClassVar[bool] = False

    def _make_port(self, model: str, **kwargs: Any) -> LLMPort:
        from agent_adapter.providers import AnthropicModel

        return AnthropicModel(model, **kwargs)
