"""Video generation on a binding (0.3.0a5's ``capabilities.generate_video``; out of this
version's scope)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cliver_core._messages import CLIverResponse
from cliver_core.capabilities._base import drop_none, media_provider
from cliver_core.media import MediaContent

if TYPE_CHECKING:
    from cliver_core._bindings import ModelBinding

__all__ = ["generate_video"]


async def generate_video(
    *,
    prompt: str,
    binding: ModelBinding,
    media: list[MediaContent] | None = None,
    output_dir: str | None = None,
    duration: int | None = None,
    resolution: str | None = None,
    **options: Any,
) -> CLIverResponse:
    """Generate a video from ``prompt`` (0.3.0a5's signature).

    Out of scope: raises :class:`~cliver_core.CapabilityNotSupported` ("video generation")
    unless ``binding.provider`` is a 0.3.0a5 ``Provider`` of yours implementing ``video()``.
    """
    provider = media_provider(binding, "video")
    params = {
        **binding.call_defaults(),
        **drop_none(duration=duration, resolution=resolution),
        **options,
    }
    result: CLIverResponse = await provider.video(
        prompt, binding.model, media=media, output_dir=output_dir, **params
    )
    return result
