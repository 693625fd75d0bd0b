"""agent_adapter: context window management for LLM agents.

The message model (:class:`Message` and its parts), the error classes, the run context, and
:mod:`agent_adapter.context`, the compression toolkit.
"""

from agent_adapter._errors import (
    AgentAdapterError,
    ConfigError,
    MissingDependency,
    ModelContextOverflow,
    ModelError,
    ModelOutputInvalid,
    ModelTimeout,
    ToolUsageError,
)
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter._run import RunContext, owner_scope
from agent_adapter._tools import FunctionTool

__version__ = "0.1.0"

__all__ = [
    "AgentAdapterError",
    "ConfigError",
    "FilePart",
    "FunctionTool",
    "ImagePart",
    "Message",
    "MissingDependency",
    "ModelContextOverflow",
    "ModelError",
    "ModelOutputInvalid",
    "ModelTimeout",
    "OpaquePart",
    "Part",
    "Role",
    "RunContext",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "ToolUsageError",
    "owner_scope",
]
