"""Compaction states in a shared store: their process-independent form, and where it lives.

A state shared by several workers (:class:`~agent_adapter.context.CompactionStates` with
``store=``) cannot hold the caller's objects, so it is kept as plain data:

* ``original`` (the history that was compressed) as one **content digest** per native
  (:func:`native_digest`): BLAKE2b-128 of a canonical, type-tagged serialization of the
  native's content: a dict as it is (keys sorted, since ``==`` ignores their order), a
  pydantic object (LangChain messages, ``google.genai`` ``Content``, ...) as its class and
  ``model_dump(mode="json")``, an :class:`~agent_adapter.Message` as its fields through the
  part codec of :mod:`~agent_adapter.context.formats._carrier` (``origin``, which is never
  compared, left out). The serialization tells ``1``, ``1.0`` and ``True`` apart, and a list
  from a tuple, so equal digests mean equal content (for a pydantic object: an equal JSON
  dump, what its SDK sends); it is stricter than ``==``, and a difference it sees where
  ``==`` would not only costs a fresh compression. A value of any other type (a set, an
  object that is not pydantic) has no digest.
* ``sent``: the caller's natives by their index in ``original`` (the caller's own objects
  are used again), and each native the library wrote (a note, a summary, a shortened result)
  packed exactly (:func:`encode_native`): a dict as JSON with tagged bytes, tuples, non-finite
  floats and ``$`` keys, so key order and types come back as they were; a pydantic object as
  its class and ``model_dump_json(by_alias=True)``, rebuilt with ``model_validate_json`` (only
  from a class already imported in the process, never importing a module); a ``Message``
  through the part codec. Each is rebuilt once when written and must give the same digest,
  else the state is not shareable.

Nothing in a state depends on the process (no address, no random id, no ``origin``), so
two workers that compress the same history write the same bytes. The state's *version* is
the digest of those bytes.

The two backends keep one value per conversation key, apart from the tool results: SQLite in
the table ``compaction_states`` of the store's file (an ``expires_at`` column, expired rows
purged on writes), Redis as ``<prefix>compaction_state:<sha256(key)>`` with native expiry
(``PX``), the version as the value's first 32 bytes (read alone with ``GETRANGE``). Both use
the store's own connections (its pool, timeouts and URL).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, Protocol

import pydantic

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ToolCall
from agent_adapter.context._stores._base import encode_text
from agent_adapter.context._stores.redis import RedisStore
from agent_adapter.context._stores.sqlite import SQLiteStore
from agent_adapter.context.formats._carrier import decode_part, encode_part

__all__ = [
    "LoadedState",
    "StateBackend",
    "Unshareable",
    "backend_for",
    "decode_native",
    "dump_state",
    "encode_native",
    "load_state",
    "native_digest",
    "state_version",
]

#: The layout of a stored state; a state of another layout is not read (a fresh compression).
_LAYOUT = 1
#: The deepest nesting a shared native may have (deeper: the state stays local).
_MAX_DEPTH = 256
_VERSION_CHARS = 32


class Unshareable(Exception):
    """A native (or a state) that has no process-independent form."""


def _dumps(value: Any) -> str:
    """Compact JSON text (no NaN: :func:`_pack` tags non-finite floats)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# --------------------------------------------------------------------------------------------
# digests


def _canon(value: Any, out: list[str], depth: int) -> None:
    """Append the canonical, type-tagged form of ``value`` to ``out``.

    Raises:
        Unshareable: a type with no canonical form, a non-str key, or too deep.
    """
    if depth > _MAX_DEPTH:
        raise Unshareable("nested too deep")
    kind = type(value)
    if value is None:
        out.append("n")
    elif kind is bool:
        out.append("T" if value else "F")
    elif kind is int:
        out.append(f"i{value};")
    elif kind is float:
        out.append(f"f{value!r};")
    elif kind is str:
        out.append(f"s{len(value)}:")
        out.append(value)
    elif kind is bytes:
        out.append(f"b{len(value)}:{base64.b64encode(value).decode('ascii')}")
    elif kind is list or kind is tuple:
        out.append("[" if kind is list else "(")
        for item in value:
            _canon(item, out, depth + 1)
        out.append("]")
    elif isinstance(value, Mapping):
        keys = list(value)
        if any(type(k) is not str for k in keys):
            raise Unshareable("a key that is not a str")
        out.append("{")
        for k in sorted(keys):
            out.append(f"{len(k)}:")
            out.append(k)
            _canon(value[k], out, depth + 1)
        out.append("}")
    else:
        raise Unshareable(f"a {kind.__name__} value")


def _message_fields(message: Message) -> dict[str, Any]:
    """A message's compared fields, parts and calls as plain data (``origin`` left out)."""
    out: dict[str, Any] = {}
    for f in fields(message):
        if not f.compare:
            continue
        value = getattr(message, f.name)
        if f.name == "content" and not isinstance(value, str):
            value = [encode_part(p) for p in value]
        elif f.name == "tool_calls":
            value = [{g.name: getattr(c, g.name) for g in fields(c)} for c in value]
        out[f.name] = value
    return out


def _message_from(data: Any) -> Message:
    """The message :func:`_message_fields` gave ``data`` for."""
    if not isinstance(data, dict):
        raise ValueError("a stored message is not a dict")
    content = data.get("content", "")
    if not isinstance(content, str):
        content = tuple(decode_part(p) for p in content)
    calls = tuple(ToolCall(**c) for c in data.get("tool_calls", ()))
    return Message(**{**data, "content": content, "tool_calls": calls})


def native_digest(native: Any) -> str | None:
    """The content digest of one native (32 hex digits), the same in every process; ``None``
    when it has none (see the module doc)."""
    out: list[str] = []
    try:
        if isinstance(native, Message):
            out.append("M")
            _canon(_message_fields(native), out, 0)
        elif isinstance(native, pydantic.BaseModel):
            cls = type(native)
            out.append(f"P{cls.__module__}:{cls.__qualname__}\x00")
            _canon(native.model_dump(mode="json"), out, 0)
        else:
            out.append("J")
            _canon(native, out, 0)
        data = "".join(out).encode("utf-8", "surrogatepass")
    except Exception:  # no canonical form (or a model_dump that raised): no digest
        return None
    return hashlib.blake2b(data, digest_size=16, person=b"aa.state").hexdigest()


# --------------------------------------------------------------------------------------------
# exact packing of the natives the library wrote


def _pack(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data :func:`_unpack` turns back into an equal value of the same
    types (dict key order kept).

    Raises:
        Unshareable: a type JSON cannot carry here, a non-str key, or too deep.
    """
    if depth > _MAX_DEPTH:
        raise Unshareable("nested too deep")
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"$f": repr(value)}
    if kind is bytes:
        return {"$b": base64.b64encode(value).decode("ascii")}
    if kind is list:
        return [_pack(v, depth + 1) for v in value]
    if kind is tuple:
        return {"$t": [_pack(v, depth + 1) for v in value]}
    if isinstance(value, Mapping):
        if any(type(k) is not str for k in value):
            raise Unshareable("a key that is not a str")
        items = {k: _pack(v, depth + 1) for k, v in value.items()}
        if any(k.startswith("$") for k in items):
            return {"$d": [[k, v] for k, v in items.items()]}
        return items
    raise Unshareable(f"a {kind.__name__} value")


def _unpack(value: Any, depth: int = 0) -> Any:
    """The value :func:`_pack` packed.

    Raises:
        ValueError: ``value`` is not a packing.
    """
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deep")
    if isinstance(value, list):
        return [_unpack(v, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((tag, body),) = value.items()
        if tag == "$f":
            return float(body)
        if tag == "$b":
            return base64.b64decode(body, validate=True)
        if tag == "$t":
            return tuple(_unpack(v, depth + 1) for v in body)
        if tag == "$d":
            return {str(k): _unpack(v, depth + 1) for k, v in body}
    if any(k.startswith("$") for k in value):
        raise ValueError("a packed dict holds a '$' key")
    return {k: _unpack(v, depth + 1) for k, v in value.items()}


def _model_class(module: Any, qualname: Any) -> type[pydantic.BaseModel]:
    """The pydantic class ``module:qualname`` of a module already imported (none is
    imported for a stored state).

    Raises:
        ValueError: it is not one.
    """
    found: Any = sys.modules.get(module) if isinstance(module, str) else None
    if found is None or not isinstance(qualname, str):
        raise ValueError(f"no imported module {module!r}")
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if not isinstance(found, type) or not issubclass(found, pydantic.BaseModel):
        raise ValueError(f"{module}:{qualname} is not a pydantic model")
    return found


def decode_native(value: Any) -> Any:
    """The native :func:`encode_native` stored as ``value`` (its JSON data).

    Raises:
        ValueError: ``value`` is not a stored native, or cannot be rebuilt here.
    """
    if not isinstance(value, dict) or len(value) != 1:
        raise ValueError("not a stored native")
    ((tag, body),) = value.items()
    if tag == "j":
        return _unpack(body)
    if tag == "m":
        return _message_from(_unpack(body))
    if tag == "p" and isinstance(body, list) and len(body) == 3 and isinstance(body[2], str):
        return _model_class(body[0], body[1]).model_validate_json(body[2])
    raise ValueError(f"not a stored native: {tag!r}")


def encode_native(native: Any) -> str:
    """One native the library wrote as JSON text that :func:`decode_native` rebuilds with
    the same digest (checked here, once).

    Raises:
        Unshareable: it cannot be (a type with no exact form, or a rebuild that differs).
    """
    digest = native_digest(native)
    if digest is None:
        raise Unshareable(f"a {type(native).__name__} with no digest")
    try:
        if isinstance(native, Message):
            value: Any = {"m": _pack(_message_fields(native))}
        elif isinstance(native, pydantic.BaseModel):
            cls = type(native)
            value = {"p": [cls.__module__, cls.__qualname__, native.model_dump_json(by_alias=True)]}
        else:
            value = {"j": _pack(native)}
        text = _dumps(value)
        same = native_digest(decode_native(json.loads(text))) == digest
    except Unshareable:
        raise
    except Exception as exc:  # a model that does not validate its own dump, and the like
        raise Unshareable(f"a {type(native).__name__} that does not rebuild") from exc
    if not same:
        raise Unshareable(f"a {type(native).__name__} that rebuilds different")
    return text


# --------------------------------------------------------------------------------------------
# a whole state


@dataclass(frozen=True, slots=True)
class LoadedState:
    """A state read back: what :class:`~agent_adapter.context._state.StateEntry` needs, the
    natives rebuilt, and each rebuilt native's JSON (to write it again without packing)."""

    format: str
    digests: tuple[str, ...]
    sent: tuple[Any, ...]
    sent_from: tuple[int, ...]
    tokens: int
    fragments: tuple[str | None, ...]
    hold_until: int = 0


def dump_state(
    key: str,
    format: str,
    tokens: int,
    digests: Sequence[str],
    sent_from: Sequence[int],
    fragments: Sequence[str | None],
    hold_until: int = 0,
) -> bytes:
    """The stored bytes of a state: JSON, the library's natives as their JSON fragments."""
    head = _dumps(
        {
            "layout": _LAYOUT,
            "key": key,
            "format": format,
            "tokens": tokens,
            "hold": hold_until,
            "original": list(digests),
            "sent_from": list(sent_from),
        }
    )
    sent = ",".join("null" if f is None else f for f in fragments)
    return encode_text(f'{head[:-1]},"sent":[{sent}]}}')


def state_version(payload: bytes) -> str:
    """The version of a stored state: the digest of its bytes (32 hex digits)."""
    return hashlib.blake2b(payload, digest_size=16, person=b"aa.state.v").hexdigest()


def load_state(key: str, payload: bytes) -> LoadedState:
    """The state stored as ``payload`` for ``key``.

    Raises:
        ValueError: it is not a state of this layout for ``key`` (or is inconsistent).
    """
    data = json.loads(payload.decode("utf-8", "surrogatepass"))
    if not isinstance(data, dict) or data.get("layout") != _LAYOUT or data.get("key") != key:
        raise ValueError("not a state of this layout for this key")
    fmt, tokens, hold = data.get("format"), data.get("tokens"), data.get("hold", 0)
    digests, sent_from, sent = data.get("original"), data.get("sent_from"), data.get("sent")
    if not isinstance(fmt, str) or type(tokens) is not int or type(hold) is not int:
        raise ValueError("a state without its format or tokens")
    if not (isinstance(digests, list) and all(isinstance(d, str) for d in digests)):
        raise ValueError("a state without its digests")
    n = len(digests)
    if not (isinstance(sent_from, list) and isinstance(sent, list)) or len(sent) != len(sent_from):
        raise ValueError("a state without its request")
    natives: list[Any] = []
    fragments: list[str | None] = []
    for j, value in zip(sent_from, sent, strict=True):
        if type(j) is not int or not -1 <= j < n or (j >= 0) != (value is None):
            raise ValueError("a state whose request does not fit its history")
        natives.append(None if value is None else decode_native(value))
        fragments.append(None if value is None else _dumps(value))
    return LoadedState(
        fmt, tuple(digests), tuple(natives), tuple(sent_from), tokens, tuple(fragments), hold
    )


# --------------------------------------------------------------------------------------------
# backends


class StateBackend(Protocol):
    """One stored state per conversation key, with its version; any call may raise (the
    caller takes a failure for a lost state)."""

    def version(self, key: str) -> str | None:
        """The version of ``key``'s state, or ``None`` (none, or expired)."""
        ...

    def load(self, key: str) -> tuple[str, bytes] | None:
        """``key``'s state as (version, bytes), or ``None``."""
        ...

    def save(self, key: str, version: str, payload: bytes, ttl_seconds: float | None) -> None:
        """Keep ``payload`` as ``key``'s state for ``ttl_seconds`` (``None``: no expiry)."""
        ...

    def delete(self, key: str) -> None:
        """Delete ``key``'s state."""
        ...

    def clear(self) -> None:
        """Delete every state of this store (every owner's)."""
        ...


_SQL_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS compaction_states ("
    " name TEXT PRIMARY KEY, version TEXT NOT NULL, payload BLOB NOT NULL, expires_at REAL)"
    " WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS compaction_states_expiry ON compaction_states (expires_at)"
    " WHERE expires_at IS NOT NULL",
)
_LIVE = "name = ? AND (expires_at IS NULL OR expires_at > ?)"


class _SQLiteStates:
    """States in the table ``compaction_states`` of a :class:`SQLiteStore`'s file."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self._ready = False
        self._lock = threading.Lock()
        self._purged = 0.0

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        with self.store._connection() as conn:
            if not self._ready:
                with self._lock:
                    if not self._ready:
                        for sql in _SQL_SCHEMA:
                            conn.execute(sql)
                        self._ready = True
            yield conn

    def version(self, key: str) -> str | None:
        with self._conn() as conn:
            sql = f"SELECT version FROM compaction_states WHERE {_LIVE}"
            row = conn.execute(sql, (key, time.time())).fetchone()
        return None if row is None else str(row[0])

    def load(self, key: str) -> tuple[str, bytes] | None:
        with self._conn() as conn:
            sql = f"SELECT version, payload FROM compaction_states WHERE {_LIVE}"
            row = conn.execute(sql, (key, time.time())).fetchone()
        return None if row is None else (str(row[0]), bytes(row[1]))

    def save(self, key: str, version: str, payload: bytes, ttl_seconds: float | None) -> None:
        now = time.time()
        expires = None if ttl_seconds is None else now + ttl_seconds
        with self._conn() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO compaction_states (name, version, payload, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (key, version, payload, expires),
            )
            if now - self._purged >= self.store.purge_every_seconds:
                self._purged = now
                conn.execute(
                    "DELETE FROM compaction_states WHERE expires_at IS NOT NULL"
                    " AND expires_at <= ?",
                    (now,),
                )

    def delete(self, key: str) -> None:
        with self._conn() as conn:
            conn.execute("DELETE FROM compaction_states WHERE name = ?", (key,))

    def clear(self) -> None:
        with self._conn() as conn:
            conn.execute("DELETE FROM compaction_states")


def _glob_escaped(text: str) -> str:
    """``text`` matched literally by a Redis ``MATCH`` pattern."""
    return "".join(f"\\{c}" if c in "*?[]\\^-" else c for c in text)


class _RedisStates:
    """States as keys ``<prefix>compaction_state:<sha256(key)>`` of a :class:`RedisStore`."""

    def __init__(self, store: RedisStore) -> None:
        self.store = store
        self.prefix = f"{store.prefix}compaction_state:"

    def name(self, key: str) -> str:
        """The Redis key of conversation ``key``'s state."""
        return self.prefix + hashlib.sha256(encode_text(key)).hexdigest()

    def version(self, key: str) -> str | None:
        data = self.store._sync_client().getrange(self.name(key), 0, _VERSION_CHARS - 1)
        if isinstance(data, str):
            data = data.encode("ascii", "replace")
        return data.decode("ascii") if len(data) == _VERSION_CHARS else None

    def load(self, key: str) -> tuple[str, bytes] | None:
        data = self.store._sync_client().get(self.name(key))
        if not isinstance(data, bytes) or len(data) < _VERSION_CHARS:
            return None
        return data[:_VERSION_CHARS].decode("ascii"), data[_VERSION_CHARS:]

    def save(self, key: str, version: str, payload: bytes, ttl_seconds: float | None) -> None:
        px = None if ttl_seconds is None else max(1, math.ceil(ttl_seconds * 1000))
        self.store._sync_client().set(self.name(key), version.encode("ascii") + payload, px=px)

    def delete(self, key: str) -> None:
        self.store._sync_client().delete(self.name(key))

    def clear(self) -> None:
        client = self.store._sync_client()
        batch: list[Any] = []
        for name in client.scan_iter(match=_glob_escaped(self.prefix) + "*", count=500):
            batch.append(name)
            if len(batch) >= 500:
                client.delete(*batch)
                batch = []
        if batch:
            client.delete(*batch)


def backend_for(store: Any) -> StateBackend:
    """The state backend of a tool-result store that several workers share.

    Raises:
        ConfigError: ``store`` is not a :class:`SQLiteStore` or :class:`RedisStore`.
    """
    if isinstance(store, SQLiteStore):
        return _SQLiteStates(store)
    if isinstance(store, RedisStore):
        return _RedisStates(store)
    raise ConfigError(
        "CompactionStates.store must be a SQLiteStore or a RedisStore (states in memory need "
        f"no store), got {type(store).__name__}"
    )
