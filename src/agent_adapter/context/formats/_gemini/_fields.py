"""Reading Gemini natives: dicts in snake_case or camelCase, and google-genai objects alike.

Dicts may use the SDK's snake_case keys (as ``Content.model_dump()`` gives them, ``None``
values included) or the REST API's camelCase keys (``functionCall``, ``inlineData``,
``thoughtSignature``); objects are read by attribute. Nothing here imports google.genai.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Mapping
from typing import Any

from agent_adapter.context.formats._carrier import RESERVED_KEY

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


@functools.lru_cache(maxsize=512)
def snake(key: str) -> str:
    """``key`` in snake_case (``functionCall`` -> ``function_call``)."""
    return key if key.islower() else _CAMEL.sub("_", key).lower()


def is_model(value: Any) -> bool:
    """True for a pydantic object (a google-genai ``Content``, ``Part``...)."""
    return not isinstance(value, Mapping) and hasattr(type(value), "model_fields")


def fields_of(value: Any) -> dict[str, Any]:
    """The non-None fields of a dict (keys in snake_case, the carrier left out) or a pydantic
    object."""
    if isinstance(value, dict | Mapping):
        return {
            snake(k): v
            for k, v in value.items()
            if v is not None and isinstance(k, str) and k != RESERVED_KEY
        }
    if is_model(value):
        attrs = getattr(value, "__dict__", None)
        if isinstance(attrs, dict):  # pydantic v2 keeps field values here
            return {k: v for k, v in attrs.items() if v is not None}
        return {
            k: v for k in type(value).model_fields if (v := getattr(value, k, None)) is not None
        }
    return {}


def key_of(native: Any, name: str) -> str:
    """The key ``native`` spells the snake_case field ``name`` with (camelCase in a camelCase
    dict); ``name`` itself for objects and absent keys. Errors name fields so."""
    if isinstance(native, Mapping):
        for k in native:
            if isinstance(k, str) and snake(k) == name:
                return k
    return name


def plain(value: Any) -> Any:
    """A pydantic value as plain data (dicts, lists); others as they are."""
    if is_model(value):
        return value.model_dump(exclude_none=True)
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def b64_text(value: Any) -> str:
    """A signature or data as text: bytes base64-encoded, text as it is."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def sig_bytes(text: str) -> bytes | None:
    """Base64 ``text`` (standard or URL-safe) as bytes, if it encodes them canonically."""
    for decode, encode in (
        (base64.b64decode, base64.b64encode),
        (base64.urlsafe_b64decode, base64.urlsafe_b64encode),
    ):
        try:
            raw = decode(text.encode("ascii"))
        except (binascii.Error, ValueError, UnicodeEncodeError):
            continue
        if encode(raw).decode("ascii") == text:
            return raw
    return None
