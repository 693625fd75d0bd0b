"""Seedance on Volcano Engine Ark (0.3.0a5 class): chat on Ark's OpenAI-compatible
``/api/v3``. Its video generation (create-and-poll tasks) is media, out of this version's
scope: ``video()`` raises :class:`~cliver_core.CapabilityNotSupported`."""

from __future__ import annotations

from typing import ClassVar

from cliver_core.provider.providers.openai import OpenAIProvider

__all__ = ["SeedanceProvider"]


class SeedanceProvider(OpenAIProvider):
    """Ark's OpenAI-compatible endpoint."""

    brand = "seedance"
    default_base_url = "https://ark.cn-beijing.volces.com/api/v3"
    _media_gen_urls: ClassVar[dict[str, str]] = {"video": "/contents/generations/tasks"}
    _standard_media_fallback: ClassVar[bool] = False
