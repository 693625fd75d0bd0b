"""The run context: who is calling (run and thread ids), passed as ``ctx`` through a run."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RunContext", "owner_scope"]


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """Ids of one agent run.

    Attributes:
        run_id: unique per run (a uuid4 hex by default).
        thread_id: the conversation the run belongs to, when there is one; results saved by
            ``ShrinkToolResults`` are scoped to it so later runs of the thread can recall them.
        metadata: free-form tags for logs.
    """

    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    thread_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def owner_scope(ctx: Any) -> str:
    """The scope saved data belongs to: ``thread:<id>``, else ``run:<id>``, else ``"default"``.

    Works on any object with ``thread_id`` / ``run_id`` attributes (or a mapping with those
    keys), so framework contexts can be passed as they are.
    """
    if ctx is None:
        return "default"

    def get(key: str) -> Any:
        return ctx.get(key) if isinstance(ctx, dict) else getattr(ctx, key, None)

    thread = get("thread_id")
    if thread:
        return f"thread:{thread}"
    run = get("run_id")
    return f"run:{run}" if run else "default"
