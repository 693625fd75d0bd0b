"""MiniMax (0.3.0a5 classes): chat on its Anthropic-compatible endpoint. Its image, TTS and
ASR endpoints are media, out of this version's scope (they raise
:class:`~cliver_core.CapabilityNotSupported`); the endpoint table is kept."""

from __future__ import annotations

from typing import ClassVar

from cliver_core.provider import Provider
from cliver_core.provider.providers.anthropic import AnthropicProvider

__all__ = ["MiniMaxAnthropicProvider"]


class _MiniMaxBase(Provider):
    """MiniMax's shared settings (an intermediate base: no protocol)."""

    protocol = ""
    brand = "minimax"
    _MEDIA_GEN_BASE: ClassVar[str] = "https://api.minimaxi.com/v1"
    _media_gen_urls: ClassVar[dict[str, str]] = {
        "image": "/image_generation",
        "tts": "/t2a_v2",
        "asr": "/speech_to_text",
    }
    _standard_media_fallback: ClassVar[bool] = False


class MiniMaxAnthropicProvider(_MiniMaxBase, AnthropicProvider):
    """MiniMax's Anthropic-compatible chat endpoint."""

    protocol = "anthropic"
    default_base_url = "https://api.minimaxi.com/anthropic"
    _anthropic_use_bearer_auth: ClassVar[bool] = True
