"""Tool names on the wire: a name a provider would reject goes out as a valid one, and the
model's calls come back under the name the caller declared.

OpenAI's and Anthropic's function names must match ``^[a-zA-Z0-9_-]{1,64}$`` (Anthropic
allows 128; the shorter limit serves both). 0.3.0a5 sanitizes names for Anthropic only
(``docs.search`` is sent as ``docs_search`` and its calls are mapped back); this does it
for every protocol, with 0.3.0a5's rule: each character outside the set becomes ``_``,
the name is cut to the limit, and a clash gets ``_1``, ``_2``... Messages keep the
declared names (dispatch, events and the history use them); only the request is renamed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from agent_adapter import FunctionTool, Message

__all__ = ["WireNames"]

_VALID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_LIMIT = 64


@dataclasses.dataclass(frozen=True)
class WireNames:
    """The renames of one run's tools (declared name <-> wire name)."""

    forward: dict[str, str]
    reverse: dict[str, str]

    @classmethod
    def of(cls, names: Sequence[str]) -> WireNames | None:
        """The renames for ``names``; ``None`` when every name is valid as it is."""
        if all(_VALID.fullmatch(n) for n in names):
            return None
        seen = {n for n in names if _VALID.fullmatch(n)}
        forward: dict[str, str] = {}
        for name in names:
            if _VALID.fullmatch(name):
                continue
            base = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:_LIMIT] or "tool"
            wire, n = base, 1
            while wire in seen:
                suffix = f"_{n}"
                wire, n = base[: _LIMIT - len(suffix)] + suffix, n + 1
            forward[name] = wire
            seen.add(wire)
        return cls(forward, {w: n for n, w in forward.items()})

    def tool(self, ft: FunctionTool) -> FunctionTool:
        """``ft`` under its wire name."""
        wire = self.forward.get(ft.name)
        return ft if wire is None else dataclasses.replace(ft, name=wire)

    def _calls(self, message: Message, names: dict[str, str]) -> Message:
        if not any(c.name in names for c in message.tool_calls):
            return message
        calls = tuple(
            dataclasses.replace(c, name=names[c.name]) if c.name in names else c
            for c in message.tool_calls
        )
        return dataclasses.replace(message, tool_calls=calls)

    def to_wire(self, messages: Sequence[Message]) -> list[Message]:
        """``messages`` with each call under its wire name."""
        return [self._calls(m, self.forward) if m.tool_calls else m for m in messages]

    def restore(self, message: Message) -> Message:
        """A reply with each call under its declared name."""
        return self._calls(message, self.reverse) if message.tool_calls else message
