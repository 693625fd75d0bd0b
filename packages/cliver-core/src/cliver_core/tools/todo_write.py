"""``TodoWrite``: replace the session's plan (0.3.0a5's ``todo_write`` tool).

The plan is a module-level list (one per process, as in 0.3.0a5); :func:`get_current_todos`
reads it and :func:`format_todo_summary` renders it for ``TodoWrite`` and ``TodoRead``.
"""

from __future__ import annotations

import logging
from typing import Any

from cliver_core._tools import compat_tool
from cliver_core.tools._common import schema

logger = logging.getLogger(__name__)

# the current plan (rebound by each TodoWrite)
_current_todos: list[dict[str, Any]] = []

STATUS_ICONS = {
    "pending": "[ ]",
    "in_progress": "[~]",
    "completed": "[x]",
}


def get_current_todos() -> list[dict[str, Any]]:
    """A copy of the current plan's list (its items are shared)."""
    return list(_current_todos)


def format_todo_summary(todos: list[dict[str, Any]]) -> str:
    """The plan as text: one ``  [x] (id) content`` line an item and a progress line.

    Args:
        todos: items with ``id``, ``content`` and ``status`` (``"pending"``,
            ``"in_progress"`` or ``"completed"``).

    Returns:
        ``"No active plan."`` for an empty list.
    """
    if not todos:
        return "No active plan."
    lines = ["Todo List:"]
    counts = {"pending": 0, "in_progress": 0, "completed": 0}
    for item in todos:
        status = item.get("status", "pending")
        icon = STATUS_ICONS.get(status, "[ ]")
        lines.append(f"  {icon} ({item.get('id', '?')}) {item.get('content', '')}")
        if status in counts:
            counts[status] += 1
    lines.append(
        f"\nProgress: {counts['completed']}/{len(todos)} completed, "
        f"{counts['in_progress']} in progress, {counts['pending']} pending"
    )
    return "\n".join(lines)


@compat_tool(
    name="TodoWrite",
    safety="safe",
    description=(
        "Creates and manages a structured task list for your current session. "
        "This helps track progress, organize complex tasks, and demonstrate thoroughness.\n\n"
        "When to use:\n"
        "1. Complex multi-step tasks requiring 3+ distinct steps\n"
        "2. User explicitly requests a todo list or work breakdown\n"
        "3. User provides multiple tasks to be done\n"
        "4. When starting work on a task - mark it as 'in_progress'\n"
        "5. After completing a task - mark it as 'completed'\n\n"
        "When NOT to use:\n"
        "- Single straightforward tasks\n"
        "- Trivial tasks completable in less than 3 steps\n"
        "- Purely conversational or informational queries\n\n"
        "Each call replaces the entire todo list. Always include all items "
        "(pending, in_progress, completed) in every call. Each item is an object: "
        '{"id": str, "content": str, "status": "pending" | "in_progress" | "completed"}.'
    ),
    parameters=schema({"todos": {"type": "array", "items": {"type": "string"}}}, ["todos"]),
)
def todo_write(todos: list[Any]) -> list[dict[str, str]]:
    """Creates and manages a structured task list for your current session.

    Each call replaces the entire todo list. Always include all items
    (pending, in_progress, completed) in every call.

    Args:
        todos: The complete updated todo list. Each item should be a dict with keys:
            id (str): Unique identifier for the todo item.
            content (str): Description of the task.
            status (str): One of 'pending', 'in_progress', or 'completed'.
    """
    global _current_todos
    _current_todos = [item if isinstance(item, dict) else dict(item) for item in todos]
    return [{"text": format_todo_summary(_current_todos)}]
