"""The recall tests' shared case: a fact noted early in a chat, buried under status rounds
that compression drops, and the id/offset a search passage names for recall_context."""

from __future__ import annotations

import re

FACT = "the deploy key lives at vault path secret/deploy/blue-heron"
PASSAGE = re.compile(r"recall_context\(id='([0-9a-f]{32})', offset=(\d+)\)")


def status_rounds(n: int = 40) -> list[tuple[str, str]]:
    """``n`` rounds of a user's status update and the assistant's "ok" (role, text)."""
    out: list[tuple[str, str]] = []
    for i in range(n):
        out += [("user", f"status update {i}: builds green, nothing new " * 6), ("assistant", "ok")]
    return out


def buried(fact: str = FACT) -> list[tuple[str, str]]:
    """A chat (role, text) that notes ``fact`` in its second round, then 40 status rounds."""
    head = [("user", "help me ship v2"), ("assistant", "sure")]
    return [*head, ("user", f"note: {fact}"), ("assistant", "noted"), *status_rounds()]
