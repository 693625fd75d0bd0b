"""recall_tool: lets the model read back a tool result that compression shortened."""

from __future__ import annotations

from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._run import owner_scope
from agent_adapter._tools import FunctionTool
from agent_adapter.context._stores._base import ToolResultStore

__all__ = ["RECALL_TOOL_NAME", "recall_tool"]

RECALL_TOOL_NAME = "recall_context"


def recall_tool(store: ToolResultStore) -> FunctionTool:
    """The recall_context(id) tool: the full text of a result saved in store by this run.

    It reads only results saved under the calling context's owner scope (see owner_scope).
    An unknown or expired id gives a short text saying so (not an error), so the model can
    go on without it.

    Raises:
        ConfigError: store has no async ``save`` / ``load``.
    """
    if not isinstance(store, ToolResultStore):
        raise ConfigError(f"recall_tool: {type(store).__name__} is not a ToolResultStore")

    async def recall(args: dict[str, Any], ctx: Any = None) -> str:
        id_ = args.get("id") if isinstance(args, dict) else None
        if not isinstance(id_, str) or not id_:
            return "recall_context needs an 'id' string."
        text = await store.load(owner_scope(ctx), id_)
        return (
            text if text is not None else f"No saved result with id {id_!r} (expired or unknown)."
        )

    return FunctionTool(
        name=RECALL_TOOL_NAME,
        description=(
            "Read the full text of an earlier tool result that was shortened to save context. "
            "Pass the id given in the shortened result."
        ),
        parameters={
            "type": "object",
            "properties": {"id": {"type": "string", "description": "the saved result's id"}},
            "required": ["id"],
        },
        fn=recall,
    )
