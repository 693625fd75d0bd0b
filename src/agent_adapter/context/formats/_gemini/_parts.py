"""Gemini parts: one part to a message part and back, function responses, Content objects.

See :mod:`agent_adapter.context.formats._gemini._converter` for the mapping (Gemini API reference,
``Part``; google-genai 3.x ``types.Part``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, assert_never

from agent_adapter._errors import MissingDependency
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    OpaquePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.context.formats._carrier import RESERVED_KEY
from agent_adapter.context.formats._codec import parse_json, to_json
from agent_adapter.context.formats._gemini._fields import (
    b64_text,
    fields_of,
    is_model,
    key_of,
    plain,
    sig_bytes,
)
from agent_adapter.context.formats._patch import TextBlocks

# google-genai 3.x ``types.Part`` fields (snake_case); only these go into a dumped part.
PART_KEYS = frozenset(
    {
        "media_resolution",
        "code_execution_result",
        "executable_code",
        "file_data",
        "function_call",
        "function_response",
        "inline_data",
        "text",
        "thought",
        "thought_signature",
        "video_metadata",
        "tool_call",
        "tool_response",
        "part_metadata",
        "audio_transcription",
        "media_processing",
        "speech_metadata",
        "document_metadata",
        "spreadsheet_metadata",
        "audio_metadata",
    }
)
#: Part fields that make a part a call or a result: an opaque part holding one is not
#: written back as a part (it would load as a call or a tool message).
_CALL_KEYS = ("function_call", "function_response")


def json_text(value: Any, where: str) -> str:
    """A Gemini payload (``args``, ``response``) as JSON text (bytes and SDK values as
    ``str``).

    Raises:
        ConfigError: ``value`` is nested too deep (naming ``where``).
    """
    return to_json(plain(value), where, ensure_ascii=False, lenient=True)


# ----------------------------------------------------------------------------- loading


def content_of(parts: list[Part]) -> str | tuple[Part, ...]:
    """Parts as message content: one plain text part is a str, no part is ``""``."""
    if not parts:
        return ""
    if len(parts) == 1 and isinstance(parts[0], TextPart) and not parts[0].extras:
        return parts[0].text
    return tuple(parts)


def part_extras(pf: Mapping[str, Any], skip: Sequence[str]) -> dict[str, Any]:
    """A part's other fields as extras (a signature as base64 text)."""
    out: dict[str, Any] = {}
    for k, v in pf.items():
        if k in skip:
            continue
        out[k] = b64_text(v) if k == "thought_signature" else plain(v)
    return out


def is_text(pf: Mapping[str, Any]) -> bool:
    """A plain text part: not a thought, and not an empty text carrying only a signature (as
    Gemini 3 ends some turns with; that one is kept as an opaque part, never edited)."""
    text = pf.get("text")
    if not isinstance(text, str) or pf.get("thought"):
        return False
    return bool(text) or "thought_signature" not in pf


def media_part(pf: Mapping[str, Any], native: Any) -> Part:
    """An inline_data / file_data part as an image or file part; other parts opaque."""
    for key in ("inline_data", "file_data"):
        if key not in pf:
            continue
        blob = fields_of(pf[key])
        mime = blob.get("mime_type")
        mime = mime if isinstance(mime, str) else None
        extras = part_extras(pf, (key,))
        rest = {k: plain(v) for k, v in blob.items() if k not in ("mime_type", "data", "file_uri")}
        if rest:
            extras["gemini_blob"] = rest
        if key == "inline_data":
            data = blob.get("data")
            data_text = b64_text(data) if data is not None else None
            if mime and mime.startswith("image/"):
                return ImagePart(data=data_text, media_type=mime, extras=extras)
            return FilePart(data=data_text, media_type=mime, extras=extras)
        uri = blob.get("file_uri")
        uri = uri if isinstance(uri, str) else None
        if mime and mime.startswith("image/"):
            return ImagePart(url=uri, media_type=mime, extras=extras)
        return FilePart(url=uri, media_type=mime, extras=extras)
    return OpaquePart("gemini", native)


def load_part(native: Any) -> Part:
    """The message part of one Gemini part that is no call or result."""
    pf = fields_of(native)
    if is_text(pf):
        return TextPart(pf["text"], part_extras(pf, ("text",)))
    if pf.get("thought") and isinstance(pf.get("text"), str):
        sig = pf.get("thought_signature")
        return ThinkingPart(
            pf["text"],
            b64_text(sig) if sig is not None else None,
            extras=part_extras(pf, ("text", "thought", "thought_signature")),
        )
    return media_part(pf, native)


def response_text(response: Any, where: str) -> tuple[str, dict[str, Any]]:
    """A function response as text, and what extras say how it was shaped.

    Raises:
        ConfigError: the response is nested too deep (naming ``where``).
    """
    if response is None:
        return "", {"gemini_response": "none"}
    if isinstance(response, Mapping) and len(response) == 1:
        ((key, value),) = response.items()
        if isinstance(value, str):
            if key == "output":
                return value, {}
            if key == "error":
                return value, {"is_error": True}
            return value, {"gemini_response_key": key}
    return json_text(response, where), {"gemini_response": "json"}


def new_response(old: Any, text: str) -> dict[str, Any]:
    """The response for ``text`` in the shape of the response ``old``."""
    if isinstance(old, Mapping) and len(old) == 1:
        ((key, value),) = old.items()
        if isinstance(value, str):
            return {key: text}
    if old is not None:
        parsed = parse_json(text)
        if isinstance(parsed, dict):
            return parsed
    return {"output": text}


class Calls:
    """The calls of the latest model turn, for matching its function responses (see
    :mod:`agent_adapter.context.formats._gemini._converter`): every real id, and the calls not
    answered yet as (id, name, made up). Made-up ids are those of calls without one
    (``extras["gemini_no_id"]``)."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.pending: list[tuple[str, str, bool]] = []

    def turn(self, calls: Sequence[ToolCall]) -> None:
        """A model turn making ``calls`` (often none) starts a round."""
        self.ids = {c.id for c in calls if not c.extras.get("gemini_no_id")}
        self.pending = [(c.id, c.name, bool(c.extras.get("gemini_no_id"))) for c in calls]

    def answer(self, response_id: str | None, name: str | None) -> str | None:
        """The id of the call a response answers, ``None`` when it answers none: the call
        with the response's id, else the first unanswered call without id of its name."""
        if response_id is not None and response_id in self.ids:
            self.pending = [c for c in self.pending if c[0] != response_id]
            return response_id
        for i, (cid, cname, made_up) in enumerate(self.pending):
            if made_up and cname == name:
                del self.pending[i]
                return cid
        return None


# ----------------------------------------------------------------------------- dumping


def known_fields(extras: Mapping[str, Any]) -> dict[str, Any]:
    """The extras that are Part fields (never a call or a result: see ``_CALL_KEYS``)."""
    return {k: v for k, v in extras.items() if k in PART_KEYS and k not in _CALL_KEYS}


def _dump_media(part: ImagePart | FilePart) -> dict[str, Any] | None:
    url, data, mime = part.url, part.data, part.media_type
    if url and url.startswith("data:") and ";base64," in url and data is None:
        head, _, data = url.partition(";base64,")
        mime, url = mime or head[5:] or None, None
    blob: dict[str, Any] = {}
    if data is not None:
        blob = {"mime_type": mime or "application/octet-stream", "data": data}
        key = "inline_data"
    elif url is not None:
        blob = {"file_uri": url}
        if mime:
            blob["mime_type"] = mime
        key = "file_data"
    else:
        return None
    more = part.extras.get("gemini_blob")
    if isinstance(more, Mapping):
        blob.update({k: v for k, v in more.items() if k not in blob})
    return {key: blob, **known_fields(part.extras)}


def _dump_opaque(part: OpaquePart) -> dict[str, Any] | None:
    if part.provider != "gemini":
        return None
    data = part.data
    out: dict[str, Any] | None = None
    if isinstance(data, Mapping):
        out = dict(data)
    elif is_model(data):
        out = data.model_dump(exclude_none=True, mode="json")
    if out is None or any(k in fields_of(out) for k in _CALL_KEYS):
        return None
    return out


def dump_part(part: Part) -> dict[str, Any] | None:
    """A part dict for ``part``; ``None`` when it has no Gemini form."""
    match part:
        case TextPart():
            return {"text": part.text, **known_fields(part.extras)}
        case ThinkingPart():
            out: dict[str, Any] = {"text": part.text, "thought": True}
            if part.signature is not None:
                out["thought_signature"] = part.signature
            out.update({k: v for k, v in known_fields(part.extras).items() if k not in out})
            return out
        case ImagePart() | FilePart():
            return _dump_media(part)
        case OpaquePart():
            return _dump_opaque(part)
        case _:
            assert_never(part)


def dump_call(call: ToolCall) -> dict[str, Any]:
    """The ``function_call`` part of a call (``args`` parsed from its arguments)."""
    extras = call.extras
    args = parse_json(call.arguments) if call.arguments else {}
    fc: dict[str, Any] = {}
    if not extras.get("gemini_no_id"):
        fc["id"] = call.id
    fc["name"] = call.name
    fc["args"] = args if isinstance(args, dict) else {}
    for k in ("will_continue", "partial_args"):
        if k in extras:
            fc[k] = extras[k]
    part: dict[str, Any] = {"function_call": fc}
    sig = extras.get("thought_signature")
    if isinstance(sig, str | bytes):
        part["thought_signature"] = b64_text(sig)
    more = extras.get("gemini_part")
    if isinstance(more, Mapping):
        part.update({k: v for k, v in known_fields(more).items() if k not in part})
    return part


# ----------------------------------------------------------------------------- patching text


def _set_text(part: Any, text: str) -> Any:
    if isinstance(part, Mapping):
        return {**part, key_of(part, "text"): text}
    return part.model_copy(update={"text": text})


def text_blocks(native: Any) -> TextBlocks:
    """How the parts of ``native`` (a content dict or object) hold text, for
    :func:`~agent_adapter.context.formats._patch.patch_text_blocks`: plain text parts (see
    :func:`is_text`); a part with other fields (a ``thought_signature``) is keyed and keeps an
    empty text when its text went; new parts are dicts or ``types.Part`` like ``native``."""

    def new(text: str) -> Any:
        if isinstance(native, Mapping):
            return {"text": text}
        return types().Part(text=text)

    return TextBlocks(
        is_text=lambda part: is_text(fields_of(part)),
        text_of=lambda part: str(fields_of(part)["text"]),
        with_text=_set_text,
        new=new,
        keyed=lambda part: len(fields_of(part)) > 1,
        stub="",
    )


def with_parts(native: Any, parts: list[Any]) -> Any:
    """``native`` (a content dict or object) with other parts, never mutated."""
    if isinstance(native, Mapping):
        return {**native, key_of(native, "parts"): parts}
    return native.model_copy(update={"parts": parts})


# ----------------------------------------------------------------------------- Content objects


def types() -> Any:
    """``google.genai.types``.

    Raises:
        MissingDependency: google-genai is not installed.
    """
    try:
        from google.genai import types as genai_types
    except ImportError as exc:  # pragma: no cover - exercised with the import blocked
        raise MissingDependency(
            "google-genai", "gemini", "building google.genai Content objects"
        ) from exc
    return genai_types


def to_object(native: Mapping[str, Any]) -> Any:
    """A ``types.Content`` for a dumped dict (signatures and data decoded from base64)."""
    genai = types()
    parts: list[Any] = []
    for part in native.get("parts", []):
        fixed = _decode_blobs(part)
        if fixed is None:
            continue
        try:
            parts.append(genai.Part.model_validate(fixed))
        except ValueError:
            continue
    return genai.Content(role=native.get("role", "user"), parts=parts)


def _decode_blobs(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """``part`` with base64 text turned into bytes; ``None`` if some is not base64."""
    out = {k: v for k, v in part.items() if k != RESERVED_KEY}
    sig = out.get("thought_signature")
    if isinstance(sig, str):
        raw = sig_bytes(sig)
        if raw is None:
            del out["thought_signature"]
        else:
            out["thought_signature"] = raw
    blob = out.get("inline_data")
    if isinstance(blob, Mapping) and isinstance(blob.get("data"), str):
        raw = sig_bytes(blob["data"])
        if raw is None:
            return None
        out["inline_data"] = {**blob, "data": raw}
    fr = out.get("function_response")
    if isinstance(fr, Mapping) and fr.get("parts"):
        fixed = [_decode_blobs(p) for p in fr["parts"]]
        out["function_response"] = {**fr, "parts": [p for p in fixed if p is not None]}
    return out
