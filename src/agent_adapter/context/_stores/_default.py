"""The embedded store a :class:`~agent_adapter.context.Compactor` holds by default.

Recall on by default where it can be (issue 34, item 3): a conversation object saves every
text its compactions shorten or remove, so each marker and note can say how to read it back
(``recall_context(id=...)``), with nothing to set up. Pure ``compress_for`` stays storeless
(it is a function of its arguments and writes nowhere).

Where: one SQLite file a user, ``recall.sqlite3`` in ``$AGENT_ADAPTER_RECALL_DIR`` when that
is set (the one place then: when it cannot be made, there is no default store), else in
``$XDG_CACHE_HOME/agent-adapter`` (else ``~/.cache/agent-adapter``), or, when that folder
cannot be made, in ``<temp dir>/agent-adapter-<uid>``; the folder is made private (mode
0700). ``AGENT_ADAPTER_RECALL_DIR`` moves this file alone (the test suite points it at a
temporary folder of each process, leaving the user's cache untouched) where
``XDG_CACHE_HOME`` would move every program's cache. One
:class:`~agent_adapter.context.SQLiteStore` a process serves every Compactor that takes the
default (its pool of connections is shared); the processes of a user share the file (WAL).

Bounded and expiring: at most :data:`MAX_TOTAL_CHARS` characters over all texts (100 M,
about 100 MB of the mostly ASCII text of tool outputs, plus SQLite's overhead), the oldest
saves going first past it (see ``SQLiteStore``'s ``max_total_chars``: enforced by whichever
process saves or purges); a text over the store's ``max_text_chars`` is not saved (its
marker then offers no recall); and every text expires after the saving step's
``save_for_seconds`` (24 hours by default), expired rows deleted by the store's periodic
purge. When no folder can be made at all, the default is no store (the Compactor then works
as without one).
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

from agent_adapter.context._stores._base import DEFAULT_MAX_TOTAL_CHARS
from agent_adapter.context._stores.sqlite import SQLiteStore

__all__ = ["FILE_NAME", "FOLDER_ENV", "MAX_TOTAL_CHARS", "default_store", "default_store_path"]

#: The database file's name in its folder.
FILE_NAME = "recall.sqlite3"

#: The environment variable that names the file's folder (this one place when set).
FOLDER_ENV = "AGENT_ADAPTER_RECALL_DIR"

#: The default store's bound on the characters over all its texts (``max_total_chars``),
#: as a :class:`~agent_adapter.context.MemoryStore`'s by default.
MAX_TOTAL_CHARS = DEFAULT_MAX_TOTAL_CHARS

_LOCK = threading.Lock()
_STORE: list[SQLiteStore | None] = []  # made once a process (empty: not yet)


def _folders() -> list[Path]:
    """Where the file may live, in order of preference."""
    chosen = os.environ.get(FOLDER_ENV)
    if chosen:
        return [Path(chosen)]
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache) if cache else Path.home() / ".cache"
    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    return [base / "agent-adapter", Path(tempfile.gettempdir()) / f"agent-adapter-{uid}"]


def default_store_path() -> Path | None:
    """The default store's file (its folder made, private), or ``None`` when no folder
    can be made."""
    for folder in _folders():
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(folder, 0o700)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder / FILE_NAME
    return None


def default_store() -> SQLiteStore | None:
    """The process's embedded store (made on first call), or ``None`` when it cannot be."""
    with _LOCK:
        if not _STORE:
            path = default_store_path()
            _STORE.append(
                None if path is None else SQLiteStore(path, max_total_chars=MAX_TOTAL_CHARS)
            )
        return _STORE[0]
