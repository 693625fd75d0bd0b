"""The secret key a store's ids (and its saved spans' seals) are made with, and the sync face.

A store may keep its own key (``id_key()`` / ``id_key_sync()``: SQLite and Redis keep it in
the store, so every worker shares it); a store without one is keyed with a secret of this
process. Under :func:`compress_for_sync` (which marks its task with :func:`use_sync_face`)
the stores' sync methods run instead of the async ones: that call's event loop is its own,
and an async client that belongs to another loop could not serve it.
"""

from __future__ import annotations

import contextvars
from typing import Any

from agent_adapter.context._stores._base import check_id_key, new_id_key

__all__ = ["store_id_key", "sync_face", "use_sync_face"]

#: The id key of a store that keeps none (no ``id_key``): this process's own secret.
_PROCESS_ID_KEY = new_id_key()
_SYNC_FACE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "agent_adapter_store_sync_face", default=False
)


def use_sync_face() -> None:
    """Mark the running task: its compressions write through the stores' sync methods."""
    _SYNC_FACE.set(True)


def sync_face() -> bool:
    """True when the running task uses the stores' sync methods (see :func:`use_sync_face`)."""
    return _SYNC_FACE.get()


async def store_id_key(store: Any) -> bytes:
    """The store's secret id key (``id_key`` / ``id_key_sync``), else this process's.

    Raises:
        StoreError: the store could not give its key, or it is not 16 to 64 bytes.
    """
    sync = getattr(store, "id_key_sync", None)
    if _SYNC_FACE.get() and callable(sync):
        return check_id_key(sync(), type(store).__name__)
    get = getattr(store, "id_key", None)
    if callable(get):
        return check_id_key(await get(), type(store).__name__)
    return _PROCESS_ID_KEY
