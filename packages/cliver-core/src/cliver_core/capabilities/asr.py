"""Speech-to-text on a binding (0.3.0a5's ``capabilities.transcribe_audio``; out of this
version's scope)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from cliver_core._messages import CLIverResponse
from cliver_core.capabilities._base import coerce_media, drop_none, media_provider
from cliver_core.media import MediaContent

if TYPE_CHECKING:
    from cliver_core._bindings import ModelBinding

__all__ = ["transcribe_audio"]


async def transcribe_audio(
    *,
    audio: MediaContent | bytes | str | Path,
    binding: ModelBinding,
    language: str | None = None,
    **options: Any,
) -> CLIverResponse:
    """Transcribe ``audio`` (0.3.0a5's signature).

    Out of scope: raises :class:`~cliver_core.CapabilityNotSupported` ("audio
    transcription") unless ``binding.provider`` is a 0.3.0a5 ``Provider`` of yours
    implementing ``asr()``, which then gets the audio as a ``MediaContent``.
    """
    provider = media_provider(binding, "asr")
    params = {**binding.call_defaults(), **drop_none(language=language), **options}
    result: CLIverResponse = await provider.asr(coerce_media(audio), binding.model, **params)
    return result
