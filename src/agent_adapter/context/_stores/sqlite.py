"""SQLiteStore: full tool results in one SQLite file (WAL), with an expiry column and an
optional bound on the characters kept."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn

from agent_adapter._errors import ConfigError
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

__all__ = ["SQLiteStore"]

#: A file's identity: ``(st_dev, st_ino)``.
_FileId = tuple[int, int]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tool_results ("
    " scope TEXT NOT NULL, id TEXT NOT NULL, text BLOB NOT NULL, expires_at REAL,"
    " PRIMARY KEY (scope, id)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS tool_results_expiry ON tool_results (expires_at)"
    " WHERE expires_at IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS store_meta (name TEXT PRIMARY KEY, value BLOB NOT NULL)"
    " WITHOUT ROWID",
)
#: Columns added to ``tool_results`` after its first release (a file made before gets them
#: on first open; rows written without them hold ``NULL``, see :class:`SQLiteStore`): the
#: text's length in characters and when it was saved (Unix time).
_ADDED_COLUMNS = (("chars", "INTEGER"), ("saved_at", "REAL"))
#: Orders the rows oldest save first and covers ``sum(chars)`` (an entry of a WITHOUT ROWID
#: table's index also holds the primary key), so the bound reads no text.
_AGE_INDEX = "CREATE INDEX IF NOT EXISTS tool_results_age ON tool_results (saved_at, chars)"
_DELETE_EXPIRED = "DELETE FROM tool_results WHERE expires_at IS NOT NULL AND expires_at <= ?"
_GET_KEY = "SELECT value FROM store_meta WHERE name = 'id_key'"


class SQLiteStore(SaveOne):
    """A :class:`ToolResultStore` in one SQLite file: the embedded default, shared by the
    threads and processes of one machine, no server to run.

    The file is in WAL mode (readers never wait for the writer); each row has an
    ``expires_at`` column (Unix time, ``NULL``: no expiry) that reads respect, and expired
    rows are deleted by :meth:`purge`, which a save also runs at most every
    ``purge_every_seconds``. A batch of saves is one transaction. Connections come from a
    pool of at most ``max_connections``; past it a call waits up to ``timeout_s`` (as does
    a writer for the file's lock), then raises :class:`StoreError`. The async methods run
    the same work in a worker thread. Texts are bytes in the file (UTF-8, lone surrogates
    kept); the file is created on first use, its folder must exist. The file also holds the
    secret key of the ids (table ``store_meta``, made on first use), so every worker on the
    file gives the same input the same ids. Scopes and ids may hold any ``str`` (one with a
    lone surrogate is kept as a BLOB of its ``surrogatepass`` UTF-8, which no other ``str``
    gives).

    Each call checks (one ``stat``) that the file at ``path`` is still the one its connection
    has open: a file deleted (or replaced) while the store runs would otherwise take later
    saves into an unlinked file that no other process can read. A call that finds it so
    raises :class:`StoreError` (as does a save that finds it so once written) and closes the
    connections to the old file; the next call opens the file at ``path`` anew (a new file
    holds a new id key, so the ids change once). The ``-wal``, ``-shm`` and ``-journal``
    files a deleted database leaves at ``path`` are removed before a new one is made there
    (SQLite would read them as the new file's), under a lock on the folder that the stores
    opening a file in it share (POSIX ``flock``).

    Bounded when ``max_total_chars`` is given (``None``, the default: no bound but expiry
    and ``max_text_chars``), with the same meaning as :class:`MemoryStore`'s: past that many
    characters over all texts, the oldest saves go first (a re-save counts as new; a recall
    of one then answers "not found", as for an expired id), expired rows before any. Oldest
    save rather than soonest expiry, as in MemoryStore: with one ``save_for_seconds`` they
    are the same rows, and a row saved with no expiry would otherwise never go. Each row
    keeps its length in characters and its save time (columns ``chars`` and ``saved_at``,
    indexed together), so the bound costs one index scan and reads no text (about 2.5 ms a
    save on a full file of 20,000 texts). Every save counts the file's total after writing,
    in its own transaction, and deletes down to the bound when over it; so does
    :meth:`purge` (which a save also runs every ``purge_every_seconds``). With several
    processes on the file the count is exact (their write transactions take turns), and
    each store enforces its own bound when it writes or purges: stores on one file with
    different bounds keep it under the smallest only while that store writes. A save never
    evicts what it writes: a batch alone over the bound fails (``StoreError``; nothing is
    written), and ``max_text_chars`` is at most the bound. Rows written by an older release
    (no ``chars``, no ``saved_at``) count as their UTF-8 bytes (at least their characters)
    from the next :meth:`purge` and go first. Deleted rows free pages that later saves reuse;
    the file does not shrink (no ``VACUUM``), so it stays about the size of the bound.

    Args:
        path: the database file.
        max_text_chars: longer texts are not saved (the shortened result offers no recall).
        max_total_chars: the most characters kept over all texts (``None``: no bound).
        max_connections: the most connections open at once.
        timeout_s: how long a call waits for a connection or the write lock.
        purge_every_seconds: how often a save also deletes expired rows (and, with a bound,
            counts the rows an older release wrote).

    Raises:
        ConfigError: a bad path or setting.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_text_chars: int = DEFAULT_MAX_TEXT_CHARS,
        max_total_chars: int | None = None,
        max_connections: int = 4,
        timeout_s: float = 10.0,
        purge_every_seconds: float = 60.0,
    ) -> None:
        where = os.fspath(path) if isinstance(path, str | os.PathLike) else None
        if not isinstance(where, str) or not where:
            raise ConfigError(f"SQLiteStore.path must be a file path, got {path!r}")
        if "\x00" in where:
            raise ConfigError("SQLiteStore.path must not hold a NUL character")
        check_limit("SQLiteStore.max_text_chars", max_text_chars)
        check_limit("SQLiteStore.max_total_chars", max_total_chars, allow_none=True)
        check_limit("SQLiteStore.max_connections", max_connections)
        self.path = where
        self.max_total_chars = max_total_chars
        self.max_text_chars = (
            max_text_chars if max_total_chars is None else min(max_text_chars, max_total_chars)
        )
        self.timeout_s = check_seconds("SQLiteStore.timeout_s", timeout_s)
        self.purge_every_seconds = check_seconds(
            "SQLiteStore.purge_every_seconds", purge_every_seconds
        )
        self._slots = threading.BoundedSemaphore(max_connections)
        self._idle: list[tuple[sqlite3.Connection, _FileId | None]] = []
        self._lock = threading.Lock()
        self._setup_lock = threading.Lock()
        self._file: _FileId | None = None  # the file set up (the pooled connections' file)
        self._closed = False
        self._purged = 0.0
        self._saved_at = 0.0  # the last save's time (see save_many_sync)
        self._id_key: tuple[bytes, _FileId | None] | None = None  # and the file that holds it

    async def id_key(self) -> bytes:
        """The secret key of the ids, kept in the file (made on first use).

        Raises:
            StoreError: the file cannot be read or written, or was deleted or replaced while
                open.
        """
        held = self._id_key
        if held is not None and held[1] == _file_id(self.path):
            return held[0]
        return await asyncio.to_thread(self.id_key_sync)

    def config_identity(self) -> str:
        """What names this store in every process (a step's config, a policy's key): its
        file."""
        return f"SQLiteStore({os.path.realpath(self.path)!r})"

    def id_key_sync(self) -> bytes:
        """``id_key`` for sync code."""
        held = self._id_key
        if held is not None and held[1] == _file_id(self.path):
            return held[0]
        with self._checkout() as (conn, file):
            row = conn.execute(_GET_KEY).fetchone()
            if row is None:  # the first use of the file: one writer's key wins
                conn.execute(
                    "INSERT OR IGNORE INTO store_meta (name, value) VALUES ('id_key', ?)",
                    (new_id_key(),),
                )
                row = conn.execute(_GET_KEY).fetchone()
        key = check_id_key(None if row is None else row[0], f"SQLiteStore ({self.path})")
        self._id_key = (key, file)
        return key

    async def save_many(self, entries: Sequence[StoreEntry]) -> None:
        """Save every entry in one transaction, or none of them.

        Raises:
            ConfigError: a bad entry (naming its index and field).
            StoreError: the file cannot be opened or written.
        """
        await asyncio.to_thread(self.save_many_sync, entries)

    async def load(self, scope: str, id: str) -> str | None:
        """The text saved under ``scope`` as ``id``, or ``None`` (unknown, expired or
        another scope's).

        Raises:
            StoreError: the file cannot be read.
        """
        return await asyncio.to_thread(self.load_sync, scope, id)

    def save_many_sync(self, entries: Sequence[StoreEntry]) -> None:
        """``save_many`` for sync code.

        Raises:
            ConfigError: a bad entry (naming its index and field).
            StoreError: the file cannot be opened or written, or the entries alone are over
                ``max_total_chars`` (nothing is written: a save may only evict older saves).
        """
        checked = check_entries(entries, self.max_text_chars)
        if not checked:
            return
        now = time.time()
        rows = {
            (_bound(e.scope), _bound(e.id)): (
                encode_text(e.text),
                None if e.ttl_seconds is None else now + e.ttl_seconds,
                len(e.text),
            )
            for e in checked
        }  # the last entry of a key wins, as INSERT OR REPLACE in turn would
        bound = self.max_total_chars
        if bound is not None and sum(r[2] for r in rows.values()) > bound:
            raise StoreError(
                f"SQLiteStore ({self.path}): {len(rows)} texts of "
                f"{sum(r[2] for r in rows.values()):,} characters in one save are more than "
                f"it keeps (max_total_chars={bound:,}); nothing was written"
            )
        with self._checkout() as (conn, file):
            conn.execute("BEGIN IMMEDIATE")
            try:
                # this store's saves in order even on a coarse clock (the bound's order)
                saved_at = self._saved_at = max(now, self._saved_at + 1e-6)
                conn.executemany(
                    "INSERT OR REPLACE INTO tool_results"
                    " (scope, id, text, expires_at, chars, saved_at) VALUES (?, ?, ?, ?, ?, ?)",
                    [(*key, *row, saved_at) for key, row in rows.items()],
                )
                due = now - self._purged >= self.purge_every_seconds
                if due:
                    self._purged = now
                self._tidy(conn, now, keep=rows.keys(), full=due)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            if _file_id(self.path) != file:  # deleted while it wrote
                self._lost(file, "this save went into it")

    def load_sync(self, scope: str, id: str) -> str | None:
        """``load`` for sync code."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT text FROM tool_results WHERE scope = ? AND id = ?"
                " AND (expires_at IS NULL OR expires_at > ?)",
                (_bound(scope), _bound(id), time.time()),
            ).fetchone()
        return None if row is None else decode_text(row[0])

    async def load_all(self, scope: str) -> list[tuple[str, str]]:
        """Every ``(id, text)`` saved under ``scope`` that has not expired.

        Raises:
            StoreError: the file cannot be read.
        """
        return await asyncio.to_thread(self.load_all_sync, scope)

    def load_all_sync(self, scope: str) -> list[tuple[str, str]]:
        """``load_all`` for sync code."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT id, text FROM tool_results WHERE scope = ?"
                " AND (expires_at IS NULL OR expires_at > ?)",
                (_bound(scope), time.time()),
            ).fetchall()
        return [(_unbound(id_), decode_text(text)) for id_, text in rows]

    def purge(self) -> int:
        """Delete the expired rows now, and with ``max_total_chars`` the oldest saves past
        it; how many rows went.

        Raises:
            StoreError: the file cannot be written.
        """
        with self._connection() as conn:
            now = time.time()
            self._purged = now
            conn.execute("BEGIN IMMEDIATE")
            try:
                gone = self._tidy(conn, now, keep=(), full=True)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return gone

    def total_chars(self) -> int:
        """The characters the file holds over all texts (expired ones not yet purged
        included; a row an older release wrote counts as its UTF-8 bytes).

        Raises:
            StoreError: the file cannot be read.
        """
        with self._connection() as conn:
            return int(
                conn.execute(
                    "SELECT coalesce(sum(coalesce(chars, length(text))), 0) FROM tool_results"
                ).fetchone()[0]
            )

    def _tidy(
        self, conn: sqlite3.Connection, now: float, *, keep: Collection[object], full: bool
    ) -> int:
        """In a write transaction: with ``full``, delete the expired rows (and with a bound,
        give rows an older release wrote their length); then, past ``max_total_chars``, the
        expired rows and the oldest saves but those in ``keep`` (this save's keys); how many
        rows went."""
        gone = conn.execute(_DELETE_EXPIRED, (now,)).rowcount if full else 0
        bound = self.max_total_chars
        if bound is None:
            return gone
        if full:  # rows an older release wrote: their bytes, at least their characters
            conn.execute("UPDATE tool_results SET chars = length(text) WHERE chars IS NULL")
        total = _sum_chars(conn)
        if total > bound and not full:
            expired = conn.execute(_DELETE_EXPIRED, (now,)).rowcount
            if expired:
                gone += expired
                total = _sum_chars(conn)
        if total <= bound:
            return gone
        evict: list[tuple[object, object]] = []
        freed = 0
        cur = conn.execute(
            "SELECT scope, id, coalesce(chars, length(text)) FROM tool_results"
            " ORDER BY saved_at"  # NULL (an older release's row) first
        )
        try:
            for scope, id_, chars in cur:
                if (scope, id_) in keep:
                    continue
                evict.append((scope, id_))
                freed += chars
                if total - freed <= bound:
                    break
        finally:
            cur.close()
        conn.executemany("DELETE FROM tool_results WHERE scope = ? AND id = ?", evict)
        return gone + len(evict)

    def __len__(self) -> int:
        """How many rows the file holds (expired ones not yet purged included)."""
        with self._connection() as conn:
            return int(conn.execute("SELECT count(*) FROM tool_results").fetchone()[0])

    def close(self) -> None:
        """Close the idle connections; later calls raise :class:`StoreError`."""
        self._closed = True
        with self._lock:
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A pooled connection for one call (see :meth:`_checkout`)."""
        with self._checkout() as (conn, _):
            yield conn

    @contextmanager
    def _checkout(self) -> Iterator[tuple[sqlite3.Connection, _FileId | None]]:
        """A pooled connection for one call and the file it has open; sqlite3 errors become
        :class:`StoreError`, as does a pooled connection whose file is no longer the one at
        ``path`` (see :meth:`_lost`)."""
        if self._closed:
            raise StoreError("SQLiteStore is closed")
        if not self._slots.acquire(timeout=self.timeout_s):
            raise StoreError(f"SQLiteStore: no free connection within {self.timeout_s} s")
        conn: sqlite3.Connection | None = None
        file: _FileId | None = None
        try:
            with self._lock:
                conn, file = self._idle.pop() if self._idle else (None, None)
            if conn is not None and _file_id(self.path) != file:
                self._lost(file, "nothing was written")
            if conn is None:
                conn, file = self._connect()
            yield conn, file
        except sqlite3.Error as exc:
            # sqlite3's messages name the failure, never the bound values (no saved text)
            raise StoreError(f"SQLiteStore ({self.path}): {type(exc).__name__}: {exc}") from exc
        finally:
            if conn is not None:
                if self._closed or conn.in_transaction or file != self._file:
                    conn.close()
                else:
                    with self._lock:
                        self._idle.append((conn, file))
            self._slots.release()

    def _lost(self, file: _FileId | None, what: str) -> NoReturn:
        """The file ``file`` is no longer the one at ``path`` (deleted, renamed or replaced
        while open): close the idle connections to it and raise.

        Raises:
            StoreError: always, saying so (``what``: what became of this call's save).
        """
        with self._lock:
            stale = [c for c, f in self._idle if f == file]
            self._idle = [(c, f) for c, f in self._idle if f != file]
            if self._file == file:
                self._file = None
            if self._id_key is not None and self._id_key[1] == file:
                self._id_key = None  # a new file may get the old one's inode number
        for conn in stale:
            conn.close()
        raise StoreError(
            f"SQLiteStore ({self.path}): the database file was deleted or replaced while this "
            f"store had it open ({what}): what was saved in it is out of reach of every other "
            "process; the next call opens the file at this path anew"
        )

    def _connect(self) -> tuple[sqlite3.Connection, _FileId]:
        with _folder_lock(self.path):  # no other store makes the file while orphans go
            _drop_orphans(self.path)
            conn = sqlite3.connect(
                self.path, timeout=self.timeout_s, isolation_level=None, check_same_thread=False
            )
            try:
                file = _file_id(self.path)  # the file connect opened (it makes a missing one)
            except BaseException:
                conn.close()
                raise
        try:
            if file is None:
                raise StoreError(
                    f"SQLiteStore ({self.path}): the database file was deleted as it was opened"
                )
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000)}")
            conn.execute("PRAGMA synchronous = NORMAL")
            if file != self._file:
                with self._setup_lock:  # one thread sets the file up; the others wait
                    if file != self._file:
                        self._set_up(conn)
                        self._file = file
        except BaseException:
            conn.close()
            raise
        return conn, file

    def _set_up(self, conn: sqlite3.Connection) -> None:
        """WAL mode and the table, retried until ``timeout_s``: switching the journal mode
        does not wait on the busy handler, so a write transaction open elsewhere (another
        process's store) makes it fail at once with "database is locked"."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("BEGIN IMMEDIATE")  # one store adds the columns
                try:
                    for sql in _SCHEMA:
                        conn.execute(sql)
                    have = {r[1] for r in conn.execute("PRAGMA table_info(tool_results)")}
                    for name, kind in _ADDED_COLUMNS:
                        if name not in have:
                            conn.execute(f"ALTER TABLE tool_results ADD COLUMN {name} {kind}")
                    conn.execute(_AGE_INDEX)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                return
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)


def _sum_chars(conn: sqlite3.Connection) -> int:
    """The characters of the rows that know theirs (the age index alone: no text read)."""
    return int(conn.execute("SELECT coalesce(sum(chars), 0) FROM tool_results").fetchone()[0])


def _file_id(path: str) -> _FileId | None:
    """The identity of the file at ``path``; ``None`` when there is none.

    Raises:
        StoreError: it cannot be looked up (a folder not readable).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"SQLiteStore ({path}): {type(exc).__name__}: {exc}") from exc
    return st.st_dev, st.st_ino


#: The files SQLite keeps next to a database: a deleted database's are orphans.
_SIDE_FILES = ("-wal", "-shm", "-journal")


@contextmanager
def _folder_lock(path: str) -> Iterator[None]:
    """An exclusive lock (POSIX ``flock``) on ``path``'s folder, between the stores opening
    a file in it; no lock where there is no ``flock`` or the folder cannot be opened (the
    connect then reports what is wrong)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _drop_orphans(path: str) -> None:
    """Remove the side files a deleted database left at ``path`` (none while it is there).

    Raises:
        StoreError: one cannot be removed.
    """
    if os.path.lexists(path):
        return
    for suffix in _SIDE_FILES:
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(
                f"SQLiteStore ({path}): the database file is gone but its {suffix} file "
                f"cannot be removed ({type(exc).__name__}: {exc}); a new file there would "
                "read it as its own"
            ) from exc


def _bound(value: str) -> str | bytes:
    """``value`` as bound to a statement: the ``str``, or for one that UTF-8 cannot hold (a
    lone surrogate) its ``surrogatepass`` bytes (a BLOB, never equal to any TEXT)."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return encode_text(value)
    return value


def _unbound(value: str | bytes) -> str:
    """The inverse of :func:`_bound`."""
    return value if isinstance(value, str) else decode_text(value)
