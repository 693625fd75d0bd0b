"""recall_tool: lets the model read back what compression shortened, summarized or removed."""

from __future__ import annotations

from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._run import owner_scope
from agent_adapter._tools import FunctionTool
from agent_adapter.context._stores._base import StoreError, ToolResultStore, check_limit
from agent_adapter.context._stores._keys import store_id_key
from agent_adapter.context._stores._span import RECALL_TOOL_NAME, read_saved

__all__ = ["RECALL_TOOL_NAME", "recall_tool"]

_UNREACHABLE = "{tool} could not read the saved context just now; try again later."
_UNREADABLE = (
    "{tool}: the saved text with id {id!r} cannot be read: it is a saved span whose seal "
    "this store's id key does not make (the store lost or replaced the key it was saved "
    "under)."
)


def recall_tool(store: ToolResultStore, *, max_chars: int | None = None) -> FunctionTool:
    """The recall_context(id) tool: the full text of a result saved in store by this run.

    It reads only results saved under the calling context's owner scope (see owner_scope).
    An unknown id, an expired one and one saved under another owner all give the very same
    short text (not an error), so the model can go on without it and learns nothing about
    other owners; a store that cannot be reached gives another short text (try later), and
    neither names the store's error. Like any tool's result, the returned text goes to the
    model only: nothing here logs it.

    A tool result that ``ShrinkToolResults`` shortened (or a text ``SummarizeLongMessage``
    summarized) comes back as it was; a span that ``RemoveOldMessages``, ``Summarize`` or
    ``KeepMostRelevant`` took out comes back as a transcript: one block a message, its role
    (``user:``, ``assistant:``, ``tool result (name):``), its text and each tool call with its
    arguments (``-> read_file({"path": "a.py"})``). A span is never returned as its raw
    record: one whose seal the store's current id key does not make (the store lost its key
    since, e.g. a Redis that evicted it) gives a short text saying it cannot be read. With
    ``max_chars``, one call returns at most that many characters (cut at a line break when
    one is near) from ``offset`` (the tool's second argument, default 0), and a last line
    gives the offset to read on from.

    Args:
        store: where the texts were saved (the steps' ``save_to``).
        max_chars: the most characters one call returns (``None``: the whole text).

    Raises:
        ConfigError: store is not a ToolResultStore, or max_chars is not an int >= 1.
    """
    if not isinstance(store, ToolResultStore):
        raise ConfigError(f"recall_tool: {type(store).__name__} is not a ToolResultStore")
    check_limit("recall_tool.max_chars", max_chars, allow_none=True)

    async def recall(args: dict[str, Any], ctx: Any = None) -> str:
        id_ = args.get("id") if isinstance(args, dict) else None
        if not isinstance(id_, str) or not id_:
            return "recall_context needs an 'id' string."
        offset = args.get("offset", 0) if isinstance(args, dict) else 0
        if offset is None:
            offset = 0
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            return "recall_context: 'offset' must be an integer >= 0."
        try:
            text = await store.load(owner_scope(ctx), id_)
            key = await store_id_key(store) if text is not None else b""
        except StoreError:
            return _UNREACHABLE.format(tool=RECALL_TOOL_NAME)
        if text is None:
            return f"No saved result with id {id_!r} (expired or unknown)."
        saved = read_saved(key, text)
        if saved.unreadable:
            return _UNREADABLE.format(tool=RECALL_TOOL_NAME, id=id_)
        return _window(saved.transcript, id_, offset, max_chars)

    return FunctionTool(
        name=RECALL_TOOL_NAME,
        description=(
            "Read the full text of earlier context that was shortened, summarized or removed "
            "to save room: a tool result, or the messages a removal note or summary stands "
            "for. Pass the id it gives; pass offset to read on from where a reply stopped."
        ),
        parameters={
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "the saved text's id"},
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "the character to start from (default 0)",
                },
            },
            "required": ["id"],
        },
        fn=recall,
    )


def _window(text: str, id_: str, offset: int, max_chars: int | None) -> str:
    """``text`` from ``offset``, at most ``max_chars`` characters, with a last line naming
    the offset to read on from when more is left (the whole text when it fits)."""
    if offset == 0 and (max_chars is None or len(text) <= max_chars):
        return text
    if offset >= len(text):
        return (
            f"[{RECALL_TOOL_NAME}: the saved text has {len(text)} characters, none after {offset}]"
        )
    end = len(text) if max_chars is None else min(len(text), offset + max_chars)
    if end < len(text):
        cut = text.rfind("\n", offset + (end - offset) // 2, end)
        if cut > offset:
            end = cut + 1
    piece = text[offset:end]
    head = f"[characters {offset} to {end} of {len(text)}]\n" if offset else ""
    if end >= len(text):
        return head + piece
    return (
        f"{head}{piece}\n[... {len(text) - end} more characters: call "
        f"{RECALL_TOOL_NAME}(id={id_!r}, offset={end})]"
    )
