"""Zhipu GLM's two endpoints (0.3.0a5 classes)."""

from __future__ import annotations

from typing import ClassVar

from cliver_core.provider.providers.anthropic import AnthropicProvider
from cliver_core.provider.providers.openai import OpenAIProvider

__all__ = ["GLMAnthropicProvider", "GLMProvider"]


class GLMProvider(OpenAIProvider):
    """GLM's OpenAI-compatible endpoint."""

    brand = "glm"
    default_base_url = "https://open.bigmodel.cn/api/paas/v4"


class GLMAnthropicProvider(AnthropicProvider):
    """GLM's Anthropic-compatible endpoint."""

    brand = "glm"
    default_base_url = "https://open.bigmodel.cn/api/anthropic"
    _anthropic_use_bearer_auth: ClassVar[bool] = True
