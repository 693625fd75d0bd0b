"""RemoveOldMessages: drop the oldest middle of the conversation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._steps._base import BaseCompressionStep, StepContext

__all__ = ["RemoveOldMessages"]


@dataclass(kw_only=True)
class RemoveOldMessages(BaseCompressionStep):
    """Drop the oldest messages between the first and last ones kept, only as many as needed.

    keep_first and keep_last count non-system messages; a tool round on the edge is kept.

    Args:
        keep_first: the first this many non-system messages stay (the task statement).
        keep_last: the last this many non-system messages stay.

    Raises:
        ConfigError: keep_first or keep_last is not an int >= 0.
    """

    name: ClassVar[str] = "remove_old_messages"
    keep_first: int = 1
    keep_last: int = 4

    def __post_init__(self) -> None:
        for attr in ("keep_first", "keep_last"):
            v = getattr(self, attr)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"RemoveOldMessages.{attr} must be an int >= 0, got {v!r}")

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """messages with the oldest middle units removed until under the target."""
        total = context.tokens(messages)
        non_system = [i for i, m in enumerate(messages) if m.role != "system"]
        first = set(non_system[: self.keep_first])
        last = set(non_system[len(non_system) - self.keep_last :]) if self.keep_last else set()
        drop: set[int] = set()
        for unit in context.units(messages):
            if context.under_target(total):
                break
            span = range(unit.start, unit.stop)
            if unit.protected or any(i in first or i in last for i in span):
                continue
            drop.update(span)
            total -= sum(context.message_tokens(m) for m in unit.messages)
        return [m for i, m in enumerate(messages) if i not in drop]
