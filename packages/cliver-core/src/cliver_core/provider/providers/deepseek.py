"""DeepSeek's two endpoints (0.3.0a5 classes): OpenAI-compatible (on
:class:`agent_adapter.providers.DeepSeekModel`, which keeps ``reasoning_content`` and reads
DeepSeek's cache counters) and Anthropic-compatible. Chat only: media purposes have no
endpoint."""

from __future__ import annotations

from typing import Any, ClassVar

from agent_adapter import LLMPort
from cliver_core.provider.providers.anthropic import AnthropicProvider
from cliver_core.provider.providers.openai import OpenAIProvider

__all__ = ["DeepSeekAnthropicProvider", "DeepSeekOpenAIProvider"]


class DeepSeekOpenAIProvider(OpenAIProvider):
    """DeepSeek's OpenAI-compatible endpoint."""

    brand = "deepseek"
    default_base_url = "https://api.deepseek.com/v1"
    _standard_media_fallback: ClassVar[bool] = False

    def _make_port(self, model: str, **kwargs: Any) -> LLMPort:
        from agent_adapter.providers import DeepSeekModel

        return DeepSeekModel(model, reasoning_back="always", **kwargs)


class DeepSeekAnthropicProvider(AnthropicProvider):
    """DeepSeek's Anthropic-compatible endpoint."""

    brand = "deepseek"
    default_base_url = "https://api.deepseek.com/anthropic"
    _anthropic_use_bearer_auth: ClassVar[bool] = True
