"""recall_tool: lets the model read back a tool result that compression shortened."""

from __future__ import annotations

from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._run import owner_scope
from agent_adapter._tools import FunctionTool
from agent_adapter.context._stores._base import StoreError, ToolResultStore

__all__ = ["RECALL_TOOL_NAME", "recall_tool"]

RECALL_TOOL_NAME = "recall_context"


def recall_tool(store: ToolResultStore) -> FunctionTool:
    """The recall_context(id) tool: the full text of a result saved in store by this run.

    It reads only results saved under the calling context's owner scope (see owner_scope).
    An unknown id, an expired one and one saved under another owner all give the very same
    short text (not an error), so the model can go on without it and learns nothing about
    other owners; a store that cannot be reached gives another short text (try later), and
    neither names the store's error. Like any tool's result, the returned text goes to the
    model only: nothing here logs it.

    Raises:
        ConfigError: store is not a ToolResultStore.
    """
    if not isinstance(store, ToolResultStore):
        raise ConfigError(f"recall_tool: {type(store).__name__} is not a ToolResultStore")

    async def recall(args: dict[str, Any], ctx: Any = None) -> str:
        id_ = args.get("id") if isinstance(args, dict) else None
        if not isinstance(id_, str) or not id_:
            return "recall_context needs an 'id' string."
        try:
            text = await store.load(owner_scope(ctx), id_)
        except StoreError:
            return "recall_context could not read the saved results just now; try again later."
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
