"""``OpenAIProvider``: 0.3.0a5's generic OpenAI-compatible provider, its calls on
:class:`agent_adapter.providers.OpenAIChatModel` (Chat Completions, the ``openai`` SDK)."""

from __future__ import annotations

from typing import Any

from agent_adapter import LLMPort
from cliver_core.provider.providers._port_provider import PortProvider

__all__ = ["OpenAIProvider"]


class OpenAIProvider(PortProvider):
    """Any OpenAI Chat Completions endpoint (OpenAI, and every compatible server with a
    ``base_url``). ``native`` messages are Chat Completions message dicts."""

    protocol = "openai"
    brand = "openai"
    default_base_url = "https://api.openai.com/v1"

    def _make_port(self, model: str, **kwargs: Any) -> LLMPort:
        from agent_adapter.providers import OpenAIChatModel

        return OpenAIChatModel(model, **kwargs)
