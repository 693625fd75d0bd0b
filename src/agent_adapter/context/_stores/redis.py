"""RedisStore: full tool results in Redis, shared by every worker, with native expiry."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_adapter._errors import ConfigError, MissingDependency
from agent_adapter.context._stores._base import (
    DEFAULT_MAX_TEXT_CHARS,
    SaveOne,
    StoreEntry,
    StoreError,
    check_entries,
    check_id_key,
    check_limit,
    check_seconds,
    decode_text,
    encode_text,
    new_id_key,
)

if TYPE_CHECKING:
    import redis
    import redis.asyncio

__all__ = ["RedisStore"]

_log = logging.getLogger("agent_adapter.stores")

#: Adds a batch's ids to a scope's index (a sorted set scored by expiry, in ms of the
#: server's clock; +inf: none), drops the expired ones, and gives the index the latest
#: expiry of its members (none when one never expires). KEYS[1]: the index; ARGV: id, ttl
#: in ms ("" for none), id, ttl, ...
_INDEX_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 1, #ARGV, 2 do
  local score = '+inf'
  if ARGV[i + 1] ~= '' then score = string.format('%d', now + tonumber(ARGV[i + 1])) end
  redis.call('ZADD', KEYS[1], score, ARGV[i])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if top[2] == nil then return 0 end
if top[2] == 'inf' then redis.call('PERSIST', KEYS[1])
else redis.call('PEXPIREAT', KEYS[1], top[2]) end
return 1
"""


def _redis() -> Any:
    try:
        import redis
        import redis.asyncio
    except ImportError as exc:  # pragma: no cover - the dev extra installs it
        raise MissingDependency("redis", "redis", "RedisStore") from exc
    return redis


class RedisStore(SaveOne):
    """A :class:`ToolResultStore` in Redis (redis-py): one store for every worker and
    process serving a conversation.

    Each text is one key, ``<prefix><sha256(scope)[:32]>:<id>``, set with Redis's own
    expiry (``PX``; no expiry for ``ttl_seconds=None``), so Redis drops expired texts
    itself; a batch of saves is one ``MULTI``/``EXEC`` transaction. The same transaction
    adds the ids to the scope's index, ``<prefix>index:<sha256(scope)[:32]>`` (a sorted set
    scored by expiry, which lives as long as its longest-lived text), so :meth:`load_all`
    finds what a scope saved without scanning the server. A read under another
    scope looks up another key, so it finds nothing, exactly as for an unknown or expired id.
    The secret key of the ids is one more key, ``<prefix>id_key`` (no expiry), set by the first
    worker that needs it (``SET NX``), so every worker gives the same input the same ids.
    Every :meth:`id_key` call reads it again (one round trip; a compression asks once), and a
    worker that finds it gone (evicted under ``allkeys-lru``, a restart without persistence)
    puts back the key it knows; one that finds another key there (another worker made a new
    one first) takes that one and logs a warning (logger ``agent_adapter.stores``), so the
    workers agree again from their next compression. A span saved under a key no worker
    keeps any more is then read back as unreadable, never as its raw record. Scopes and ids
    may hold any ``str`` (lone surrogates too: they are sent as ``surrogatepass`` UTF-8).
    It has no ``max_total_chars`` (MemoryStore's and SQLiteStore's bound): the server
    bounds its memory itself, for every client at once (``maxmemory`` with an eviction
    policy such as ``volatile-ttl``, which drops the keys with an expiry set, shortest time
    to live first; see https://redis.io/docs/latest/develop/reference/eviction/).

    The async methods use ``redis.asyncio`` with a ``BlockingConnectionPool`` of at most
    ``max_connections``: past that a call waits (up to ``pool_timeout_s``) for a free
    connection instead of failing. Its connections belong to the event loop of the first
    async call; a call from another loop (e.g. ``compress_for_sync``'s own) uses the sync
    face in a worker thread. The sync methods use ``redis.Redis`` with a blocking pool of the
    same size. Close with :meth:`aclose` (async side, on its loop) and :meth:`close`.

    Args:
        url: a Redis URL, e.g. ``"redis://127.0.0.1:6379/0"`` (``rediss://`` for TLS).
        prefix: the start of every key this store writes.
        max_text_chars: longer texts are not saved (the shortened result offers no recall).
        max_connections: the pool size of each side (async and sync).
        timeout_s: connect and socket timeout of each command. On a busy event loop a reply
            also waits for the loop: give many concurrent compressions on one loop more.
        pool_timeout_s: how long a call waits for a free connection.

    Raises:
        ConfigError: a bad URL or setting.
        MissingDependency: redis-py is not installed (``pip install "agent-adapter[redis]"``).
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "agent_adapter:tool_result:",
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
        max_connections: int = 16,
        timeout_s: float = 5.0,
        pool_timeout_s: float = 30.0,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError("RedisStore.url must be a redis://, rediss:// or unix:// URL")
        if not isinstance(prefix, str):
            raise ConfigError("RedisStore.prefix must be a str")
        check_limit("RedisStore.max_text_chars", max_text_chars)
        check_limit("RedisStore.max_connections", max_connections)
        self._lib = _redis()
        self.url = url
        self.prefix = prefix
        self.max_text_chars = max_text_chars
        self.max_connections = max_connections
        self.timeout_s = check_seconds("RedisStore.timeout_s", timeout_s)
        self.pool_timeout_s = check_seconds("RedisStore.pool_timeout_s", pool_timeout_s)
        self._aclient: redis.asyncio.Redis | None = None
        self._aloop: asyncio.AbstractEventLoop | None = None
        self._client: redis.Redis | None = None
        self._lock = threading.Lock()
        self._id_key: bytes | None = None

    def __repr__(self) -> str:
        # the URL may hold a password: show only where it points
        where = self.url.split("@")[-1].split("://")[-1]
        return f"RedisStore({where!r}, prefix={self.prefix!r})"

    def config_identity(self) -> str:
        """What names this store in every process (a step's config, a policy's key): its
        server and prefix, never the password."""
        return repr(self)

    def key(self, scope: str, id: str) -> str:
        """The Redis key of ``id`` under ``scope``."""
        return f"{self.prefix}{_digest(scope)}:{id}"

    def index_key(self, scope: str) -> str:
        """The Redis key of ``scope``'s index (the ids saved under it)."""
        return f"{self.prefix}index:{_digest(scope)}"

    async def id_key(self) -> bytes:
        """The secret key of the ids, kept in Redis: read on every call, set by the first
        worker that needs it, put back by a worker that knew it when Redis lost it (see the
        class doc).

        Raises:
            StoreError: Redis is unreachable or failed, or holds no valid key under its name.
        """
        client = self._async_client()
        if client is None:
            return await asyncio.to_thread(self.id_key_sync)
        mine = self._id_key or new_id_key()
        try:
            async with client.pipeline(transaction=True) as pipe:
                pipe.set(self._id_key_name, mine, nx=True)
                pipe.get(self._id_key_name)
                _, value = await pipe.execute()
        except self._lib.RedisError as exc:
            raise self._error(exc) from exc
        return self._adopt(mine, value)

    def id_key_sync(self) -> bytes:
        """``id_key`` for sync code."""
        mine = self._id_key or new_id_key()
        try:
            with self._sync_client().pipeline(transaction=True) as pipe:
                pipe.set(self._id_key_name, mine, nx=True)
                pipe.get(self._id_key_name)
                _, value = pipe.execute()
        except self._lib.RedisError as exc:
            raise self._error(exc) from exc
        return self._adopt(mine, value)

    @property
    def _id_key_name(self) -> str:
        return f"{self.prefix}id_key"

    def _adopt(self, mine: bytes, value: object) -> bytes:
        """The key Redis holds (``value``), now this worker's; a warning when it is not the
        one this worker knew (``mine``)."""
        key = check_id_key(value, repr(self))
        if self._id_key is not None and key != mine:
            _log.warning(
                "%r: the id key in Redis is not the one this worker used (Redis lost it and "
                "another worker set a new one); taking the new one: ids change once, and "
                "spans saved under the old key can no longer be read back",
                self,
            )
        self._id_key = key
        return key

    async def save_many(self, entries: Sequence[StoreEntry]) -> None:
        """Save every entry in one ``MULTI``/``EXEC``, or none of them.

        Raises:
            ConfigError: a bad entry (naming its index and field).
            StoreError: Redis is unreachable or failed.
        """
        checked = check_entries(entries, self.max_text_chars)
        if not checked:
            return
        client = self._async_client()
        if client is None:
            await asyncio.to_thread(self._save_checked, checked)
            return
        try:
            async with client.pipeline(transaction=True) as pipe:
                self._queue(pipe, checked)
                await pipe.execute()
        except self._lib.RedisError as exc:
            raise self._error(exc) from exc

    async def load(self, scope: str, id: str) -> str | None:
        """The text saved under ``scope`` as ``id``, or ``None`` (unknown, expired or
        another scope's).

        Raises:
            StoreError: Redis is unreachable or failed.
        """
        client = self._async_client()
        if client is None:
            return await asyncio.to_thread(self.load_sync, scope, id)
        try:
            data = await client.get(self.key(scope, id))
        except self._lib.RedisError as exc:
            raise self._error(exc) from exc
        return _text(data)

    def save_many_sync(self, entries: Sequence[StoreEntry]) -> None:
        """``save_many`` for sync code."""
        self._save_checked(check_entries(entries, self.max_text_chars))

    def load_sync(self, scope: str, id: str) -> str | None:
        """``load`` for sync code."""
        try:
            data = self._sync_client().get(self.key(scope, id))
        except self._lib.RedisError as exc:
            raise self._error(exc) from exc
        return _text(data)

    async def load_all(self, scope: str) -> list[tuple[str, str]]:
        """Every ``(id, text)`` saved under ``scope`` that has not expired.

        Raises:
            StoreError: Redis is unreachable or failed.
        """
        client = self._async_client()
        if client is None:
            return await asyncio.to_thread(self.load_all_sync, scope)
        try:
            ids = _ids(await client.zrange(self.index_key(scope), 0, -1))
            values = await client.mget([self.key(scope, i) for i in ids]) if ids else []
        except self._lib.RedisError as exc:
            raise self._error(exc) from exc
        return _pairs(ids, values)

    def load_all_sync(self, scope: str) -> list[tuple[str, str]]:
        """``load_all`` for sync code."""
        client = self._sync_client()
        try:
            ids = _ids(client.zrange(self.index_key(scope), 0, -1))
            values = client.mget([self.key(scope, i) for i in ids]) if ids else []
        except self._lib.RedisError as exc:
            raise self._error(exc) from exc
        return _pairs(ids, values)

    async def aclose(self) -> None:
        """Close the async pool (call it on the loop that used it) and the sync one."""
        client, self._aclient, self._aloop = self._aclient, None, None
        if client is not None:
            await client.aclose()
        self.close()

    def close(self) -> None:
        """Close the sync pool (the async one needs :meth:`aclose`)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _save_checked(self, checked: list[StoreEntry]) -> None:
        if not checked:
            return
        try:
            with self._sync_client().pipeline(transaction=True) as pipe:
                self._queue(pipe, checked)
                pipe.execute()
        except self._lib.RedisError as exc:
            raise self._error(exc) from exc

    def _queue(self, pipe: Any, checked: list[StoreEntry]) -> None:
        """Queue the saves of ``checked`` and their index updates on ``pipe``."""
        by_scope: dict[str, list[str]] = {}
        for e in checked:
            px = _px(e)
            pipe.set(self.key(e.scope, e.id), encode_text(e.text), px=px)
            by_scope.setdefault(e.scope, []).extend((e.id, "" if px is None else str(px)))
        for scope, args in by_scope.items():
            pipe.eval(_INDEX_SCRIPT, 1, self.index_key(scope), *args)

    def _async_client(self) -> redis.asyncio.Redis | None:
        """The async client of the running loop, made on first use; ``None`` when it
        belongs to another loop (the caller then uses the sync face in a thread)."""
        loop = asyncio.get_running_loop()
        if self._aclient is None:
            pool = self._lib.asyncio.BlockingConnectionPool.from_url(
                self.url,
                max_connections=self.max_connections,
                timeout=self.pool_timeout_s,
                socket_timeout=self.timeout_s,
                socket_connect_timeout=self.timeout_s,
                encoding_errors="surrogatepass",
            )
            self._aclient = self._lib.asyncio.Redis.from_pool(pool)
            self._aloop = loop
        return self._aclient if self._aloop is loop else None

    def _sync_client(self) -> redis.Redis:
        with self._lock:
            return self._client or self._new_sync_client()

    def _new_sync_client(self) -> redis.Redis:
        pool = self._lib.BlockingConnectionPool.from_url(
            self.url,
            max_connections=self.max_connections,
            timeout=self.pool_timeout_s,
            socket_timeout=self.timeout_s,
            socket_connect_timeout=self.timeout_s,
            encoding_errors="surrogatepass",
        )
        client: redis.Redis = self._lib.Redis.from_pool(pool)
        self._client = client
        return client

    def _error(self, exc: BaseException) -> StoreError:
        # redis-py's messages name the server and the failure, never the values sent
        return StoreError(f"{self!r}: {type(exc).__name__}: {exc}")


def _digest(scope: str) -> str:
    return hashlib.sha256(scope.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _ids(reply: Any) -> list[str]:
    """The ids of a ``ZRANGE`` reply."""
    return [t for i in reply if (t := _text(i))]


def _pairs(ids: list[str], values: Sequence[Any]) -> list[tuple[str, str]]:
    """The ``(id, text)`` of each id whose text is still there (an expired one is not)."""
    return [(i, t) for i, v in zip(ids, values, strict=True) if (t := _text(v)) is not None]


def _px(entry: StoreEntry) -> int | None:
    """The entry's expiry in milliseconds for ``SET ... PX`` (at least 1), or ``None``."""
    ttl = entry.ttl_seconds
    return None if ttl is None else max(1, math.ceil(ttl * 1000))


def _text(data: bytes | str | None) -> str | None:
    """A reply's value as text (replies are bytes: the client does not decode them)."""
    if data is None or isinstance(data, str):
        return data
    return decode_text(data)
