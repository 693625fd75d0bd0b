"""``cliver_core.messages``: the message model (0.3.0a5's module)."""

from cliver_core._messages import (
    CLIverMessage,
    CLIverMessageChunk,
    CLIverResponse,
    ToolCall,
    ToolCallChunk,
    UsageInfo,
)

__all__ = [
    "CLIverMessage",
    "CLIverMessageChunk",
    "CLIverResponse",
    "ToolCall",
    "ToolCallChunk",
    "UsageInfo",
]
