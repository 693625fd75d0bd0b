"""Stores for full tool results, and the recall tool that reads them back."""

from agent_adapter.context._stores._base import ToolResultStore
from agent_adapter.context._stores.memory import MemoryStore
from agent_adapter.context._stores.recall import recall_tool

__all__ = ["MemoryStore", "ToolResultStore", "recall_tool"]
