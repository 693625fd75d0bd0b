"""What the capability calls share: the provider serving a media purpose (or the error
naming it), and :func:`coerce_media` (0.3.0a5's)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cliver_core._provider_port import is_legacy_provider
from cliver_core.media import MediaContent, MediaType, load_media_file
from cliver_core.provider import Provider, unsupported_media
from cliver_core.util import drop_none

if TYPE_CHECKING:
    from cliver_core._bindings import ModelBinding

__all__ = ["coerce_media", "drop_none", "media_provider"]

_METHODS = {"image": "image", "video": "video", "tts": "tts", "audio": "tts", "asr": "asr"}


def media_provider(binding: ModelBinding, purpose: str) -> Any:
    """The provider that serves ``purpose`` for ``binding``: its ``provider=``, when that is
    a 0.3.0a5 ``Provider`` overriding the purpose's method.

    Raises:
        CapabilityNotSupported: anything else (media is out of this version's scope).
    """
    target = binding.provider
    method = _METHODS[purpose]
    if is_legacy_provider(target):
        own = getattr(type(target), method, None)
        if own is not None and own is not getattr(Provider, method, None):
            return target
    raise unsupported_media(purpose, f"ModelBinding {binding.name}")


def coerce_media(source: MediaContent | bytes | str | Path) -> MediaContent:
    """``source`` as a :class:`MediaContent`: unchanged when it is one, raw ``bytes`` as WAV
    audio, a path or URL loaded with :func:`~cliver_core.media.load_media_file`."""
    if isinstance(source, MediaContent):
        return source
    if isinstance(source, bytes | bytearray):
        encoded = base64.b64encode(bytes(source)).decode("utf-8")
        return MediaContent(type=MediaType.AUDIO, data=encoded, mime_type="audio/wav")
    return load_media_file(str(source))
