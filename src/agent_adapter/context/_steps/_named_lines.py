"""The lines of a file read that a conversation's errors and diffs name (issue 34, item 1)."""

from __future__ import annotations

from agent_adapter._messages import Message
from agent_adapter.context._shapes import line_refs
from agent_adapter.context._shapes._refs import lines_of
from agent_adapter.context._steps._extractive import file_access

__all__ = ["NamedLines"]


class NamedLines:
    """The lines of a file read that the conversation names elsewhere: a result whose tool
    call reads one file (:func:`~agent_adapter.context._steps._extractive.file_access`:
    a read tool's path argument, ``cat``, ``nl -ba``, ``sed -n``, SWE-agent's ``open``) keeps
    the line numbers that the tracebacks, test failures, linter findings and diff hunks of
    every message of the list name in that file (see
    :func:`~agent_adapter.context._shapes._refs.line_refs`), found once per call and only
    when a read is cut. Known by the tool call's id and arguments, never by the text."""

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.calls = {c.id: c for m in messages if m.role == "assistant" for c in m.tool_calls}
        self.refs: dict[str, frozenset[int]] | None = None

    def of(self, m: Message) -> frozenset[int]:
        """The line numbers named in the file tool result ``m`` reads (none: not a read)."""
        call = self.calls.get(m.tool_call_id or "")
        access = file_access(call) if call is not None else None
        if access is None or access[0] != "read":
            return frozenset()
        if self.refs is None:
            self.refs = line_refs(x.text for x in self.messages)
        return lines_of(self.refs, access[1])
