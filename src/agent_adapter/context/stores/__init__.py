"""Stores for full tool results, and the recall tool that reads them back."""

from agent_adapter.context.stores._base import ToolResultStore
from agent_adapter.context.stores.memory import MemoryStore
from agent_adapter.context.stores.recall import recall_tool

__all__ = ["MemoryStore", "ToolResultStore", "recall_tool"]
