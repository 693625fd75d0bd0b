"""OpenAI Agents SDK: :class:`CompressingSession`, a ``Session`` whose stored items stay bounded.

The SDK's ``Runner`` reads a session's whole history (``get_items``) at the start of every run
and appends each turn's items to it (``add_items``), so a long-lived session grows without
bound: every run sends, stores and reloads more. The SDK's own answer,
``OpenAIResponsesCompactionSession``, wraps a session and, after a turn, replaces the stored
history with what OpenAI's ``responses.compact`` endpoint returns (OpenAI models only, one
model call per compaction). This wrapper does the same with the library: after an
``add_items`` that takes the stored history over the policy's threshold, the history is
compressed with :func:`~agent_adapter.context.compress_for` (format ``"openai"``, Responses
items: tool rounds whole, reasoning items with their calls, the newest turn protected) down
to the target, and the wrapped session's items are replaced by the result. No model is
called unless a step of the policy calls one (a summary step with its summarizer).

Design choices:

* **Replace after the turn, as the SDK's session does** (its "legacy whole-history
  replacement" for stores without atomic suffix replacement): ``clear_session`` then
  ``add_items`` of the compressed list on the wrapped session, under a lock that every
  mutation of the wrapper takes. A replacement that fails puts the previous items back (and
  raises): history is never left half-written by this wrapper.
* **The stored history is the compressed one**: a later run loads it as its history (what
  the ``Runner`` sends is that plus the new input, under the threshold); what a step dropped
  is searchable through its ``save_to=`` store, owned by ``thread:<session_id>`` (the owner
  :func:`compression_filter` with ``session=`` gives a run's tools).
* ``get_items`` / ``pop_item`` / ``clear_session`` are the wrapped session's.

Example::

    from agents import Agent, Runner, SQLiteSession
    from agent_adapter.context import CompressionPolicy, CompressionReport
    from agent_adapter.integrations.openai_agents import CompressingSession

    policy = CompressionPolicy(threshold_tokens=60_000, target_tokens=40_000)
    session = CompressingSession(SQLiteSession("user-42", "chats.db"), policy)
    await Runner.run(agent, "Fix the failing test", session=session)
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter.context import CompressionPolicy, CompressionReport
from agent_adapter.integrations._core import Compressor, OnReport

__all__ = ["CompressingSession"]


class CompressingSession:
    """A ``Session`` (the SDK's protocol) over another one, whose stored items are compressed
    to the policy's target whenever they go over its threshold.

    Args:
        session: the session that stores the items (``SQLiteSession``, a Redis or
            SQLAlchemy session, ...). Not an ``OpenAIConversationsSession``: the server
            holds that history.
        policy: when and how far to compress the stored items.
        model_max_tokens: the model's context window, for a policy in percents.
        on_report: called with the report of each compression of the stored items (only
            when they were over the threshold).

    Raises:
        ConfigError: ``session`` lacks the Session methods or is server-managed; ``policy``
            is not a CompressionPolicy, or in percents with no window.

    Attributes:
        session_id: the wrapped session's id.
        underlying_session: the wrapped session.
    """

    def __init__(
        self,
        session: Any,
        policy: CompressionPolicy,
        *,
        model_max_tokens: int | None = None,
        on_report: OnReport | None = None,
    ) -> None:
        methods = ("get_items", "add_items", "pop_item", "clear_session")
        if not all(callable(getattr(session, name, None)) for name in methods):
            raise ConfigError(
                "CompressingSession: session must be an agents Session (get_items, add_items, "
                f"pop_item, clear_session), got {type(session).__name__}"
            )
        if type(session).__name__ == "OpenAIConversationsSession":
            raise ConfigError(
                "CompressingSession cannot wrap OpenAIConversationsSession: the server "
                "manages that history (its conversation's own compaction applies)"
            )
        session_id = getattr(session, "session_id", None)
        if not isinstance(session_id, str) or not session_id:
            raise ConfigError("CompressingSession: the session has no session_id")
        self.underlying_session = session
        self.session_id = session_id
        self._on_report = on_report
        self._last: CompressionReport | None = None
        # no compaction state: the stored list itself is what the next run loads
        self._compressor = Compressor(
            policy, "openai", "openai-agents session", model_max_tokens=model_max_tokens,
            on_report=self._note, states=False,
        )  # fmt: skip
        self._lock = asyncio.Lock()

    def _note(self, report: CompressionReport) -> None:
        self._last = report

    @property
    def session_settings(self) -> Any:
        """The wrapped session's settings (its retrieval ``limit``)."""
        return getattr(self.underlying_session, "session_settings", None)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The stored items (the newest ``limit`` when given)."""
        items: list[Any] = await self.underlying_session.get_items(limit=limit)
        return items

    async def add_items(self, items: list[Any]) -> None:
        """Store ``items``; then, when the stored history is over the threshold, replace it
        with its compression (see the module docstring)."""
        async with self._lock:
            await self.underlying_session.add_items(items)
            await self._compress_stored()

    async def _compress_stored(self) -> None:
        stored: list[Any] = await self.underlying_session.get_items()
        if not stored:
            return
        result = await self._compressor.run(stored, conversation=self.session_id)
        if result is stored:
            return
        await self.underlying_session.clear_session()
        try:
            await self.underlying_session.add_items(list(result))
        except BaseException:
            await self.underlying_session.clear_session()
            await self.underlying_session.add_items(stored)
            raise
        if self._on_report is not None and self._last is not None:
            self._on_report(self._last)

    async def pop_item(self) -> Any:
        """Remove and return the newest stored item (``None`` when there is none)."""
        async with self._lock:
            return await self.underlying_session.pop_item()

    async def clear_session(self) -> None:
        """Remove every stored item."""
        async with self._lock:
            await self.underlying_session.clear_session()
