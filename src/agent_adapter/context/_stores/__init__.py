"""Stores for what compression shortened, summarized or removed, and the tools that read
and search it.

Each store's module loads on first use (the Redis one only when asked for)."""

import typing as _typing

from agent_adapter._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from agent_adapter.context._stores._base import StoreEntry, StoreError, ToolResultStore
    from agent_adapter.context._stores.memory import MemoryStore
    from agent_adapter.context._stores.recall import recall_tool
    from agent_adapter.context._stores.redis import RedisStore
    from agent_adapter.context._stores.search import SavedPassage, search_saved, search_tool
    from agent_adapter.context._stores.sqlite import SQLiteStore

__all__ = [
    "MemoryStore",
    "RedisStore",
    "SQLiteStore",
    "SavedPassage",
    "StoreEntry",
    "StoreError",
    "ToolResultStore",
    "recall_tool",
    "search_saved",
    "search_tool",
]

__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "MemoryStore": "agent_adapter.context._stores.memory",
        "RedisStore": "agent_adapter.context._stores.redis",
        "SQLiteStore": "agent_adapter.context._stores.sqlite",
        "SavedPassage": "agent_adapter.context._stores.search",
        "StoreEntry": "agent_adapter.context._stores._base",
        "StoreError": "agent_adapter.context._stores._base",
        "ToolResultStore": "agent_adapter.context._stores._base",
        "recall_tool": "agent_adapter.context._stores.recall",
        "search_saved": "agent_adapter.context._stores.search",
        "search_tool": "agent_adapter.context._stores.search",
    },
)
