"""Stores for full tool results, and the recall tool that reads them back."""

from agent_adapter.context._stores._base import StoreEntry, StoreError, ToolResultStore
from agent_adapter.context._stores.memory import MemoryStore
from agent_adapter.context._stores.recall import recall_tool
from agent_adapter.context._stores.redis import RedisStore
from agent_adapter.context._stores.sqlite import SQLiteStore

__all__ = [
    "MemoryStore",
    "RedisStore",
    "SQLiteStore",
    "StoreEntry",
    "StoreError",
    "ToolResultStore",
    "recall_tool",
]
