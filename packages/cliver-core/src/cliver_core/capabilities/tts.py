"""Text-to-speech on a binding (0.3.0a5's ``capabilities.text_to_speech``; out of this
version's scope)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cliver_core._messages import CLIverResponse
from cliver_core.capabilities._base import drop_none, media_provider

if TYPE_CHECKING:
    from cliver_core._bindings import ModelBinding

__all__ = ["text_to_speech"]


async def text_to_speech(
    *,
    text: str,
    binding: ModelBinding,
    voice: str | None = None,
    response_format: str | None = None,
    output_dir: str | None = None,
    **options: Any,
) -> CLIverResponse:
    """Synthesize speech from ``text`` (0.3.0a5's signature).

    Out of scope: raises :class:`~cliver_core.CapabilityNotSupported` ("text-to-speech")
    unless ``binding.provider`` is a 0.3.0a5 ``Provider`` of yours implementing ``tts()``.
    """
    provider = media_provider(binding, "tts")
    params = {
        **binding.call_defaults(),
        **drop_none(voice=voice, response_format=response_format),
        **options,
    }
    result: CLIverResponse = await provider.tts(
        text, binding.model, output_dir=output_dir, **params
    )
    return result
