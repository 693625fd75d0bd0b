"""Ollama (0.3.0a5 class): a local OpenAI-compatible server; the options it rejects are
dropped, as in 0.3.0a5."""

from __future__ import annotations

from typing import Any, ClassVar

from cliver_core.provider.providers.openai import OpenAIProvider

__all__ = ["OllamaProvider"]


class OllamaProvider(OpenAIProvider):
    """Ollama's OpenAI-compatible endpoint (any non-empty key)."""

    brand = "ollama"
    default_base_url = "http://localhost:11434/v1"
    _standard_media_fallback: ClassVar[bool] = False

    UNSUPPORTED_PARAMS: ClassVar[frozenset[str]] = frozenset(
        {
            "frequency_penalty",
            "presence_penalty",
            "logit_bias",
            "reasoning_effort",
            "parallel_tool_calls",
        }
    )

    def filter_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """``options`` without those Ollama rejects."""
        return {k: v for k, v in options.items() if k not in self.UNSUPPORTED_PARAMS}
