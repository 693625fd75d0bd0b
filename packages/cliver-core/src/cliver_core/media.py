"""Media items of a conversation: :class:`MediaContent` and the helpers around it (0.3.0a5).

A :class:`MediaContent` is an image, audio clip, video or file, held as base64 data or a URL.
Images go into a chat's user message as OpenAI-style ``image_url`` content blocks (a data
URL), which the loop carries to every provider as an image part
(:func:`add_media_content_to_message_parts`); audio and video become text placeholders, as in
0.3.0a5.

Names, behaviour and strings follow 0.3.0a5. What this version does not do with media:
generate it (images, video, speech) or transcribe it; those capabilities raise
:class:`~cliver_core.CapabilityNotSupported` (see :mod:`cliver_core.capabilities`).
"""

from __future__ import annotations

import base64
import logging
import mimetypes
import urllib.error
import urllib.request
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlsplit

from cliver_core.util import url_request

__all__ = [
    "MediaContent",
    "MediaType",
    "add_media_content_to_message_parts",
    "extension_from_mime",
    "get_file_extension",
    "load_media_file",
    "load_media_files",
    "media_type_from_mime",
    "resolve_media_mime",
    "sniff_image_mime",
]

logger = logging.getLogger(__name__)


class MediaType(Enum):
    """The kind of a media item."""

    IMAGE = "image"
    AUDIO = "audio"
    VIDEO = "video"
    TEXT = "text"
    FILE = "file"


#: MIME type → file extension (with its dot); other types are ``.bin``.
_EXTENSIONS = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "audio/wav": ".wav",
    "audio/mp3": ".mp3",
    "audio/mpeg": ".mp3",
    "video/mp4": ".mp4",
    "video/quicktime": ".mov",
    "video/x-msvideo": ".avi",
    "model/gltf+json": ".gltf",
    "model/gltf-binary": ".glb",
}
_KINDS = {
    "image": MediaType.IMAGE,
    "audio": MediaType.AUDIO,
    "video": MediaType.VIDEO,
    "text": MediaType.TEXT,
}
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _download(url: str) -> bytes:
    request = url_request(url, timeout=120)
    with urllib.request.urlopen(request, timeout=120) as response:
        body: bytes = response.read()
        return body


def get_file_extension(mime_type: str) -> str:
    """The file extension of ``mime_type``, with its dot (``".jpg"``; ``".bin"`` when
    unknown)."""
    return _EXTENSIONS.get(mime_type, ".bin")


def sniff_image_mime(payload: bytes) -> str | None:
    """The MIME type of an image from its first bytes (PNG, JPEG, GIF, WebP), or ``None``."""
    if payload[:4] == b"RIFF" and payload[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _MAGIC if payload.startswith(magic)), None)


def resolve_media_mime(
    default: str, *, url: str | None = None, payload: bytes | None = None
) -> str:
    """The real MIME type of a generated item: the payload's magic bytes, else the type the
    URL's path names (image, audio or video), else ``default``."""
    if payload:
        sniffed = sniff_image_mime(payload)
        if sniffed:
            return sniffed
    if url:
        named, _ = mimetypes.guess_type(urlsplit(url).path)
        if named and named.split("/", 1)[0] in ("image", "audio", "video"):
            return named
    return default


def media_type_from_mime(mime_type: str) -> MediaType:
    """The kind of ``mime_type`` by its top-level type (``FILE`` for the rest)."""
    top = mime_type.split(";", 1)[0].strip().lower().split("/", 1)[0]
    return _KINDS.get(top, MediaType.FILE)


def extension_from_mime(mime_type: str) -> str:
    """The extension of ``mime_type`` without its dot: the table's, else the subtype
    (``model/gltf+json`` → ``gltf``), ``bin`` for ``octet-stream``, ``binary`` or none."""
    mime = mime_type.split(";", 1)[0].strip().lower()
    known = _EXTENSIONS.get(mime)
    if known:
        return known[1:]
    subtype = mime.split("/", 1)[-1].split("+", 1)[0].strip()
    return "bin" if subtype in ("", "octet-stream", "binary") else subtype


@dataclass
class MediaContent:
    """One media item.

    Attributes:
        type: its kind.
        data: base64 data, a ``data:`` URL or an ``http(s)`` URL.
        mime_type: e.g. ``"image/png"``.
        filename: its file name, when known.
        source: where it came from (``"local"``, ``"url"``...).
        saved_path: where :meth:`save` wrote it.
    """

    type: MediaType
    data: str
    mime_type: str
    filename: str | None = None
    source: str = "local"
    saved_path: str | None = None

    def is_url(self) -> bool:
        """True when ``data`` is an ``http(s)`` URL rather than base64."""
        return self.data.startswith(("http://", "https://"))

    def to_bytes(self) -> bytes:
        """The raw bytes: downloaded for a URL, decoded for base64 or a data URL."""
        if self.is_url():
            return _download(self.data)
        encoded = self.data.split(",", 1)[1] if self.data.startswith("data:") else self.data
        return base64.b64decode(encoded)

    def save(self, file_path: Path) -> bool:
        """Write the bytes to ``file_path`` and remember it in ``saved_path``.

        Raises:
            Exception: the download, the decoding or the write failed (logged first).
        """
        try:
            payload = self.to_bytes()
            Path(file_path).write_bytes(payload)
        except Exception as e:
            logger.error("Error saving media to %s, exception: %s", file_path, e, exc_info=True)
            raise
        self.saved_path = str(file_path)
        return True

    def get_file_extension(self) -> str:
        """The extension of ``mime_type``, with its dot."""
        return get_file_extension(self.mime_type)


def _read_url(source: str) -> tuple[bytes, str | None, str | None]:
    try:
        with urllib.request.urlopen(url_request(source), timeout=120) as response:
            payload: bytes = response.read()
            disposition = response.headers.get("content-disposition", "") or ""
            content_type = response.headers.get("content-type")
    except (urllib.error.URLError, OSError) as e:
        raise ValueError(f"Failed to download media from URL {source}: {e}") from e
    filename = None
    if "filename=" in disposition:
        filename = disposition.split("filename=")[1].strip('"')
    if not filename:
        path = urlparse(source).path
        filename = path.split("/")[-1] if "/" in path else source.split("/")[-1]
    mime = content_type.split(";")[0] if content_type else mimetypes.guess_type(filename)[0]
    return payload, filename, mime


def load_media_file(source: str) -> MediaContent:
    """A local file or a URL as a base64 :class:`MediaContent`.

    Raises:
        FileNotFoundError: no such local file.
        ValueError: the download failed, or the type is unknown or not image/audio/video.
    """
    parsed = urlparse(source)
    is_url = bool(parsed.scheme and parsed.netloc)
    if is_url:
        payload, filename, mime = _read_url(source)
    else:
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"Media file not found: {source}")
        payload, filename = path.read_bytes(), path.name
        mime = mimetypes.guess_type(source)[0]
    if mime is None:
        raise ValueError(f"Unable to determine media type for source: {source}")
    kind = media_type_from_mime(mime)
    if kind not in (MediaType.IMAGE, MediaType.AUDIO, MediaType.VIDEO):
        raise ValueError(f"Unsupported media type: {mime}")
    return MediaContent(
        type=kind,
        data=base64.b64encode(payload).decode("utf-8"),
        mime_type=mime,
        filename=filename,
        source="url" if is_url else "local",
    )


def load_media_files(file_paths: list[str]) -> list[MediaContent]:
    """:func:`load_media_file` for each path or URL, in order."""
    return [load_media_file(path) for path in file_paths]


def add_media_content_to_message_parts(
    content_parts: list[dict[str, Any]], media_content: list[MediaContent]
) -> None:
    """Append the media to a user message's content blocks, as 0.3.0a5's AgentCore does.

    An image becomes an OpenAI-style ``{"type": "image_url", "image_url": {"url":
    "data:<mime>;base64,<data>"}}`` block (the loop carries it to every provider as an image
    part); audio and video become ``[Audio file: <name>]`` / ``[Video file: <name>]`` text
    blocks; other kinds are left out.
    """
    for media in media_content:
        if media.type == MediaType.IMAGE:
            url = f"data:{media.mime_type};base64,{media.data}"
            content_parts.append({"type": "image_url", "image_url": {"url": url}})
        elif media.type == MediaType.AUDIO:
            content_parts.append({"type": "text", "text": f"[Audio file: {media.filename}]"})
        elif media.type == MediaType.VIDEO:
            content_parts.append({"type": "text", "text": f"[Video file: {media.filename}]"})
