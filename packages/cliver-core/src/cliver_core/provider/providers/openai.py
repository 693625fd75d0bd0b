"""``OpenAIProvider``: 0.3.0a5's generic OpenAI-compatible provider, its calls on
:class:`agent_adapter.providers.OpenAIChatModel` (Chat Completions, the ``openai`` SDK)."""

from __future__ import annotations

from typing import Any

from agent_adapter import LLMPort
from cliver_core.provider.providers._port_provider import PortProvider

__all__ = ["OpenAIProvider"]


class OpenAIProvider(PortProvider):
    """Any OpenAI Chat Completions endpoint (OpenAI, and every compatible server with a
    ``base_url``). ``native`` messages are Chat Completions message dicts.

    Every assistant turn that came with reasoning sends it back as ``reasoning_content``
    (``reasoning_back="always"``), whatever the brand: 0.3.0a5 replays each reply's wire
    message as it came, and DeepSeek and GLM reject a tool-call turn without it.
    """

    protocol = "openai"
    brand = "openai"
    default_base_url = "https://api.openai.com/v1"

    def _make_port(self, model: str, **kwargs: Any) -> LLMPort:
        from agent_adapter.providers import OpenAIChatModel

        return OpenAIChatModel(model, reasoning_back="always", **kwargs)
