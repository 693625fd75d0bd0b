"""The store protocol for full tool results that ShrinkToolResults shortened, and its parts."""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from agent_adapter._errors import AgentAdapterError, ConfigError

__all__ = [
    "DEFAULT_MAX_TEXT_CHARS",
    "DEFAULT_MAX_TOTAL_CHARS",
    "ID_KEY_BYTES",
    "SaveOne",
    "StoreEntry",
    "StoreError",
    "ToolResultStore",
    "check_entries",
    "check_id_key",
    "check_limit",
    "check_save_to",
    "check_seconds",
    "decode_text",
    "derive_id",
    "encode_text",
    "new_id",
    "new_id_key",
]

#: The longest text a store keeps by default (1 M characters, about 250k tokens: more than
#: any context window could take back in one recall).
DEFAULT_MAX_TEXT_CHARS = 1_000_000

#: The most characters a bounded store keeps over all its texts by default (100 M): a
#: ``MemoryStore``'s and the embedded default ``SQLiteStore``'s ``max_total_chars``.
DEFAULT_MAX_TOTAL_CHARS = 100_000_000

#: The bytes of a store's id key (see :func:`derive_id`).
ID_KEY_BYTES = 32


def new_id() -> str:
    """A fresh id: 128 random bits from :mod:`secrets`, as 32 lowercase hex digits."""
    return secrets.token_hex(16)


def new_id_key() -> bytes:
    """A fresh secret id key: 256 random bits from :mod:`secrets`."""
    return secrets.token_bytes(ID_KEY_BYTES)


class StoreError(AgentAdapterError):
    """A store could not save or read (unreachable, locked, closed); the backend's error is
    the ``__cause__``. The message never holds a saved text."""


def check_id_key(value: object, where: str) -> bytes:
    """``value`` as an id key: 16 to 64 bytes (64: BLAKE2b's most).

    Raises:
        StoreError: it is not (the store holds something else under its key's name).
    """
    if isinstance(value, bytearray | memoryview):
        value = bytes(value)
    if not isinstance(value, bytes) or not 16 <= len(value) <= 64:
        raise StoreError(f"{where}: the stored id key is not 16 to 64 bytes")
    return value


def derive_id(key: bytes, scope: str, call_id: str, text: str) -> str:
    """The id of ``text`` saved under ``scope`` for the tool call ``call_id``: a BLAKE2b MAC
    keyed with a store's secret ``key``, 128 bits as 32 lowercase hex digits.

    The same (key, scope, call id, text) always gives the same id, so a compression gives the
    same output for the same input (in every process that shares the store, and so its key);
    without the key an id can be neither guessed nor told apart from a random one. Each field
    goes in with its length, so no two field tuples give the same input.
    """
    mac = hashlib.blake2b(key=key, digest_size=16, person=b"aa.tool-result")
    for part in (scope, call_id, text):
        data = encode_text(part)
        mac.update(len(data).to_bytes(8, "big"))
        mac.update(data)
    return mac.hexdigest()


@dataclass(frozen=True, slots=True)
class StoreEntry:
    """One full text to save: under ``scope`` as ``id``, for ``ttl_seconds`` (``None``: no
    expiry). The text is left out of ``repr``, so entries never put it into logs."""

    scope: str
    id: str
    text: str = field(repr=False)
    ttl_seconds: float | None = None


@runtime_checkable
class ToolResultStore(Protocol):
    """Keeps full texts by (owner scope, id) for a while; async, with a sync face.

    ``save_many`` writes all its entries or none (one transaction); ``load`` returns the
    text, or ``None`` alike for an unknown id, an expired one and one saved under another
    scope. The ``_sync`` methods do the same for sync code: :func:`compress_for_sync` uses
    them, so a store whose async client belongs to one event loop still serves it. A store
    may set ``max_text_chars``: longer texts are not saved (the shortened result then offers
    no recall). Failures raise :class:`StoreError`.

    A store may also offer ``id_key()`` / ``id_key_sync()``: its secret key for
    :func:`derive_id`, the same for every client of the store (SQLite and Redis keep it in the
    store itself), so that all workers give one input the same ids. Without them the ids are
    keyed with a secret of this process.

    A store may also offer ``load_all(scope)`` / ``load_all_sync(scope)``: every text
    saved under ``scope`` that has not expired, as ``(id, text)`` pairs; the
    ``search_context`` tool (:func:`~agent_adapter.context.search_tool`) reads with it.

    ``MemoryStore`` (one process), ``SQLiteStore`` (one file, the embedded default) and
    ``RedisStore`` (shared by workers) implement it.
    """

    async def save_many(self, entries: Sequence[StoreEntry]) -> None:
        """Save every entry, or none of them."""
        ...

    async def load(self, scope: str, id: str) -> str | None:
        """The text saved under ``scope`` as ``id``, or ``None``."""
        ...

    def save_many_sync(self, entries: Sequence[StoreEntry]) -> None:
        """``save_many`` for sync code."""
        ...

    def load_sync(self, scope: str, id: str) -> str | None:
        """``load`` for sync code."""
        ...


def check_entries(entries: Sequence[StoreEntry], max_text_chars: int | None) -> list[StoreEntry]:
    """``entries`` as a list, each checked; the error names the index and field (never the
    text).

    Raises:
        ConfigError: not a StoreEntry, a field of the wrong type, a ttl that is not a
            positive finite number or ``None``, or a text over ``max_text_chars``.
    """
    out = list(entries)
    for i, e in enumerate(out):
        if not isinstance(e, StoreEntry):
            raise ConfigError(f"entries[{i}] must be a StoreEntry, got {type(e).__name__}")
        for name in ("scope", "id", "text"):
            if not isinstance(getattr(e, name), str):
                raise ConfigError(f"entries[{i}].{name} must be a str")
        if not e.id:
            raise ConfigError(f"entries[{i}].id must not be empty")
        ttl = e.ttl_seconds
        if ttl is not None and (
            isinstance(ttl, bool)
            or not isinstance(ttl, int | float)
            or not math.isfinite(ttl)
            or ttl <= 0
        ):
            raise ConfigError(f"entries[{i}].ttl_seconds must be > 0 or None, got {ttl!r}")
        if max_text_chars is not None and len(e.text) > max_text_chars:
            raise ConfigError(
                f"entries[{i}].text has {len(e.text)} characters, over max_text_chars "
                f"{max_text_chars}"
            )
    return out


def check_limit(name: str, value: object, *, allow_none: bool = False) -> None:
    """A size setting is an int >= 1 (or ``None`` when allowed).

    Raises:
        ConfigError: it is not.
    """
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be an int >= 1, got {value!r}")


def check_seconds(name: str, value: object) -> float:
    """A time setting is a positive finite number.

    Raises:
        ConfigError: it is not.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigError(f"{name} must be a number > 0, got {value!r}")
    return float(value)


def check_save_to(owner: str, save_to: object, save_for_seconds: object) -> None:
    """A step's ``save_to`` is ``None`` or a :class:`ToolResultStore`, and its
    ``save_for_seconds`` a finite number > 0 or ``None``.

    Raises:
        ConfigError: it is not (the message names ``owner``'s field).
    """
    if save_to is not None and not isinstance(save_to, ToolResultStore):
        raise ConfigError(f"{owner}.save_to must be a ToolResultStore")
    s = save_for_seconds
    if s is not None and (
        isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s) or s <= 0
    ):
        raise ConfigError(
            f"{owner}.save_for_seconds must be a finite number > 0 or None, got {s!r}"
        )


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of ``text``; lone surrogates (from bad JSON) survive the round trip."""
    return text.encode("utf-8", "surrogatepass")


def decode_text(data: bytes) -> str:
    """The inverse of :func:`encode_text`."""
    return data.decode("utf-8", "surrogatepass")


class SaveOne:
    """``save`` and ``save_sync`` (one text, a fresh id) for stores built on ``save_many``."""

    async def save_many(self, entries: Sequence[StoreEntry]) -> None:  # pragma: no cover
        raise NotImplementedError

    def save_many_sync(self, entries: Sequence[StoreEntry]) -> None:  # pragma: no cover
        raise NotImplementedError

    async def save(self, scope: str, text: str, *, ttl_seconds: float | None) -> str:
        """Save ``text`` under ``scope`` for ``ttl_seconds`` (``None``: no expiry); its id.

        Raises:
            ConfigError: a bad argument, or a text over the store's ``max_text_chars``.
            StoreError: the store failed.
        """
        entry = StoreEntry(scope, new_id(), text, ttl_seconds)
        await self.save_many([entry])
        return entry.id

    def save_sync(self, scope: str, text: str, *, ttl_seconds: float | None) -> str:
        """``save`` for sync code."""
        entry = StoreEntry(scope, new_id(), text, ttl_seconds)
        self.save_many_sync([entry])
        return entry.id
