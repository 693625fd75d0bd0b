"""The checker of :class:`~agent_adapter._messages.Message` lists (format ``"agent_adapter"``):
the tool pairing every provider shares, as :mod:`agent_adapter.context._pairing` states it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_adapter._messages import Message
from agent_adapter.context._pairing import Pairing
from agent_adapter.context.formats._checks._common import (
    Violation,
    by_index,
    pairing_violations,
    register_checker,
)

__all__ = ["check_messages"]


def check_messages(messages: Sequence[Any]) -> list[Violation]:
    """Tool pairing of a :class:`~agent_adapter._messages.Message` list.

    The rules of :mod:`agent_adapter.context._pairing` under their own names:
    ``tool_without_call``, ``call_unanswered``, ``calls_pending_at_end`` (the newest call
    turn still waits for results, which :func:`~agent_adapter.context.compress` accepts) and
    ``duplicate_call_id``; ``not_a_message`` for an item that is not a Message.
    """
    out: list[Violation] = []
    pairing = Pairing()
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            out.append(Violation(i, "not_a_message", "not a Message"))
        elif m.role == "tool":
            pairing.result(i, m.tool_call_id)
        else:
            pairing.turn(i, [c.id for c in m.tool_calls])
    pairing.end()
    return by_index(out + pairing_violations(pairing, {}))


register_checker("agent_adapter", check_messages)
