"""Image generation on a binding (0.3.0a5's ``capabilities.generate_image``; out of this
version's scope)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cliver_core._messages import CLIverResponse
from cliver_core.capabilities._base import drop_none, media_provider
from cliver_core.media import MediaContent

if TYPE_CHECKING:
    from cliver_core._bindings import ModelBinding

__all__ = ["generate_image"]


async def generate_image(
    *,
    prompt: str,
    binding: ModelBinding,
    media: list[MediaContent] | None = None,
    output_dir: str | None = None,
    n: int | None = None,
    size: str | None = None,
    style: str | None = None,
    quality: str | None = None,
    **options: Any,
) -> CLIverResponse:
    """Generate images from ``prompt`` (0.3.0a5's signature).

    Out of scope: raises :class:`~cliver_core.CapabilityNotSupported` ("image generation")
    unless ``binding.provider`` is a 0.3.0a5 ``Provider`` of yours implementing ``image()``,
    which is then called as 0.3.0a5 calls it (``n`` / ``size`` / ``style`` / ``quality`` and
    ``options`` over the binding's defaults).
    """
    provider = media_provider(binding, "image")
    params = {
        **binding.call_defaults(),
        **drop_none(n=n, size=size, style=style, quality=quality),
        **options,
    }
    result: CLIverResponse = await provider.image(
        prompt, binding.model, media=media, output_dir=output_dir, **params
    )
    return result
