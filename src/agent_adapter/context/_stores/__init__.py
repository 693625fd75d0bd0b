"""Stores for what compression shortened, summarized or removed, and the tools that read
and search it."""

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
