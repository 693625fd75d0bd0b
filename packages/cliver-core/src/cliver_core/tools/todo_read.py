"""``TodoRead``: show the session's plan (0.3.0a5's ``todo_read`` tool)."""

from __future__ import annotations

from cliver_core._tools import compat_tool
from cliver_core.tools.todo_write import format_todo_summary, get_current_todos


@compat_tool(
    name="TodoRead",
    safety="safe",
    description=(
        "Read the current plan/todo list to check progress. "
        "Returns the full todo list with status of each item. "
        "Use this to review your plan before deciding what to do next, "
        "especially after completing a step or when resuming work."
    ),
    parameters={"type": "object", "properties": {}},
)
def todo_read() -> list[dict[str, str]]:
    """Read the current plan/todo list without modifying it.

    Returns the full todo list with status of each item.
    """
    return [{"text": format_todo_summary(get_current_todos())}]
