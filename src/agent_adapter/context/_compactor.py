"""Compactor: one conversation's compaction, an object the caller holds.

``compress_for`` is a function of its arguments: the same list and policy give the same
request, whatever ran before. An agent loop wants more: *compact once, then append*. After a
compaction, later calls whose history extends the one compressed are sent as the request sent
then plus the new messages, unchanged, until that is over the threshold, so the provider's
prompt cache keeps hitting (see :mod:`~agent_adapter.context._state`). That memory belongs to
the conversation, so it lives in an object the caller makes for it and holds:

.. code-block:: python

    compactor = Compactor(policy)                  # one per conversation
    for turn in agent_loop:
        request, report = compactor.compress_sync(history)
        reply = client.chat.completions.create(model=..., messages=request)

The state is bounded (a few branches of this conversation, see
:class:`~agent_adapter.context.CompactionStates`) and, with ``states=CompactionStates(
store=RedisStore(url))`` and a ``conversation`` id, shared by every worker serving the
conversation. ``CompressingModel``, the integrations and ``cliver_core``'s policy compactor
keep their conversations' states the same way, in a :class:`CompactionStates` of their own.

Recall is on by default (issue 34, item 3): the object holds an embedded store (see
:mod:`~agent_adapter.context._stores._default`) and gives it to every step of its policy
that can save and was given no store, so what its compactions shorten or remove (old tool
results, long texts, dropped runs) can be read back with
``recall_tool(compactor.save_to)``, and each marker and note says how
(``recall_context(id=...)``). ``save_to=None`` turns it off; pure ``compress_for`` stays
storeless. The embedded store is bounded (100 M characters over all texts, the oldest saves
going first past it) and expiring (each text after its step's ``save_for_seconds``, 24 hours
by default); ``$AGENT_ADAPTER_RECALL_DIR`` moves its file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Literal

from agent_adapter._errors import ConfigError
from agent_adapter._sync import run_sync
from agent_adapter.context._compress_for import stateful_compress
from agent_adapter.context._policy import CompressionPolicy, check_window
from agent_adapter.context._report import CompressionReport
from agent_adapter.context._state import CompactionStates
from agent_adapter.context._stores._base import ToolResultStore
from agent_adapter.context._stores._commit import use_sync_face
from agent_adapter.context._stores._default import default_store
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._registry import check_format_name

__all__ = ["Compactor"]

#: The branches a Compactor's own states keep (a conversation rewound or edited a few times).
_OWN_BRANCHES = 4


class Compactor:
    """One conversation's compaction: compact once, then append.

    Holds the policy, the conversation's key and where its state lives. Each
    :meth:`compress` gets the conversation's whole history (what the agent would send) and
    returns the request to send: at or under the threshold the history as it is; over it a
    compaction; after one, the request sent then plus the new messages, unchanged, until that
    is over the threshold again (then that request is compacted, not the full history). A
    history that does not extend what was compressed (edited, rewound, another conversation)
    is compressed fresh; nothing is ever guessed from a text's opening words.

    **A loop that never spins.** A compaction goes down to the target, or at least
    ``threshold - target`` (the gap) below the request when what no step may touch is over
    the target; when it stops over the target all the same, the next calls send the
    request as it is (``report.skipped == "held"``) until it has grown by the gap,
    or is over the window (``model_max_tokens``, the policy's or this object's): never a
    compaction on every call that frees a few tokens. The judgement is by what the request
    shrank, as the report counts it.

    **Prepared in the background.** When a step of the policy writes with a model,
    :meth:`compress` (not :meth:`compress_sync`, whose loop ends with the call) starts the
    next compaction at ``states.prepare_at`` (0.8) of the threshold, on the request of that
    call, and the call that crosses the threshold swaps the prepared compaction in for
    exactly that request's prefix (see :mod:`agent_adapter.context._background`).

    Where the spec of ``compress_for`` is silent, this follows LangChain's
    ``SummarizationMiddleware`` and Claude Code's auto-compaction: the caller keeps its own
    full history and sends it each turn; the object remembers what it sent.

    Args:
        policy: when and how far to compress.
        conversation: the conversation's id (a session, thread or chat id), needed to share
            its state between workers through a store; ``None``: the run context's thread
            id, else the opening of the history (the object's own states tell its
            conversations apart by what they remember, see
            :class:`~agent_adapter.context.CompactionStates`).
        states: where the state lives: ``None`` for a small in-memory
            :class:`~agent_adapter.context.CompactionStates` of this object's own, or yours
            (``CompactionStates(store=RedisStore(url))`` to share it between workers).
        format: the history's format (``"auto"`` detects it), as in ``compress_for``.
        pinned: ``pinned(native)`` marks natives no step may change or remove.
        model_max_tokens: the context window, for a policy in percents and as the limit a
            held request never passes.
        save_to: where what the compactions shorten or remove is saved for recall:
            ``"default"`` the embedded SQLite store (one file a user in the user's cache
            folder or ``$AGENT_ADAPTER_RECALL_DIR``, at most 100 M characters over all
            texts, the oldest saves going first, each expiring, see
            :mod:`~agent_adapter.context._stores._default`; ``None`` when no folder can be
            made), a ``ToolResultStore`` of yours (``RedisStore`` to share it
            between workers), or ``None``: nothing saved. The store goes to every step of
            the policy (and a step ``if_still_too_long``) that has a ``save_to`` and was
            given none (``ShrinkToolResults``, ``CutLongMessages``, ``RemoveOldMessages``,
            ``Summarize``, ``SummarizeLongMessage``, ``KeepMostRelevant``); a step given its
            own store keeps it. A step's ``save_to=None`` counts as not given: to keep a
            step from saving, give the Compactor ``save_to=None``.

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, ``conversation`` not a
            non-empty str, ``states`` not a CompactionStates, ``pinned`` not callable, or
            ``save_to`` not ``"default"``, ``None`` or a ToolResultStore.

    Example:
        >>> from agent_adapter.context import Compactor, CompressionPolicy
        >>> compactor = Compactor(CompressionPolicy(threshold_tokens=8000, target_tokens=6000))
        >>> history = [{"role": "user", "content": "hi"}]
        >>> request, report = compactor.compress_sync(history)
        >>> request is history, report.skipped
        (True, 'under_threshold')
    """

    def __init__(
        self,
        policy: CompressionPolicy,
        *,
        conversation: str | None = None,
        states: CompactionStates | None = None,
        format: str | Converter[Any] = "auto",
        pinned: Callable[[Any], bool] | None = None,
        model_max_tokens: int | None = None,
        save_to: ToolResultStore | Literal["default"] | None = "default",
    ) -> None:
        if not isinstance(policy, CompressionPolicy):
            raise ConfigError(
                f"Compactor: policy must be a CompressionPolicy, got {type(policy).__name__}"
            )
        if conversation is not None and (not isinstance(conversation, str) or not conversation):
            raise ConfigError(
                f"Compactor: conversation must be a non-empty str, got {conversation!r}"
            )
        if states is not None and not isinstance(states, CompactionStates):
            raise ConfigError(
                f"Compactor: states must be a CompactionStates, got {type(states).__name__}"
            )
        if pinned is not None and not callable(pinned):
            raise ConfigError("Compactor: pinned must be callable: pinned(native) -> bool")
        check_window(model_max_tokens, "Compactor")
        if isinstance(format, str) and format != "auto":
            check_format_name(format, "Compactor")
        elif not isinstance(format, str | Converter):
            raise ConfigError(
                f"Compactor: format must be a format's name or a Converter, got {format!r}"
            )
        if (
            save_to != "default"
            and save_to is not None
            and not isinstance(save_to, ToolResultStore)
        ):
            raise ConfigError(
                "Compactor: save_to must be 'default', None or a ToolResultStore, got "
                f"{type(save_to).__name__}"
            )
        policy.limits(model_max_tokens)  # a percent policy without a window fails here
        self.policy = policy
        self.save_to: ToolResultStore | None = default_store() if save_to == "default" else save_to
        self._saving: tuple[CompressionPolicy, ToolResultStore | None, CompressionPolicy] | None
        self._saving = None
        self.conversation = conversation
        self.states = (
            states
            if states is not None
            else CompactionStates(max_conversations=_OWN_BRANCHES, branches=_OWN_BRANCHES)
        )
        self.format = format
        self.pinned = pinned
        self.model_max_tokens = model_max_tokens

    def __repr__(self) -> str:
        return f"Compactor(conversation={self.conversation!r})"

    def _policy(self) -> CompressionPolicy:
        """The policy the compactions run: ``policy`` with the store given to its steps
        (made once for the policy and store the object holds)."""
        held = self._saving
        if held is not None and held[0] is self.policy and held[1] is self.save_to:
            return held[2]
        policy = with_store(self.policy, self.save_to)
        self._saving = (self.policy, self.save_to, policy)
        return policy

    async def compress(
        self, messages: Sequence[Any], *, ctx: Any = None
    ) -> tuple[list[Any], CompressionReport]:
        """The request to send for the conversation's history ``messages``, and a report.

        Messages kept as they were come back as the same objects; the caller's list is never
        mutated; at or under the threshold (or held) the caller's own list object comes back.

        Args:
            messages: the whole history, oldest first, in the object's format.
            ctx: the run context (owner of saved tool results, events; its ``thread_id`` is
                the conversation when none was given).

        Raises:
            ConfigError: as ``compress_for``.
            MissingDependency: as ``compress_for``.
        """
        return await self._compress(messages, ctx, background=True)

    async def _compress(
        self, messages: Sequence[Any], ctx: Any, *, background: bool
    ) -> tuple[list[Any], CompressionReport]:
        return await stateful_compress(
            messages,
            self._policy(),
            format=self.format,
            pinned=self.pinned,
            model_max_tokens=self.model_max_tokens,
            ctx=ctx,
            conversation=self.conversation,
            states=self.states,
            background=background,
        )

    def compress_sync(
        self, messages: Sequence[Any], *, ctx: Any = None
    ) -> tuple[list[Any], CompressionReport]:
        """:meth:`compress` for sync code (as ``compress_for_sync``: never deadlocks inside
        a running event loop)."""

        async def main() -> tuple[list[Any], CompressionReport]:
            use_sync_face()  # this task's own loop: stores write through their sync methods
            # no background compaction: this loop ends with the call
            return await self._compress(messages, ctx, background=False)

        return run_sync(main)


def _given(step: Any, store: ToolResultStore) -> Any:
    """``step`` with ``store`` as its ``save_to`` when it is a dataclass step with that
    field and none given; else ``step`` itself."""
    if (
        not dataclasses.is_dataclass(step)
        or isinstance(step, type)
        or "save_to" not in {f.name for f in dataclasses.fields(step)}
        or getattr(step, "save_to", None) is not None
    ):
        return step
    return dataclasses.replace(step, save_to=store)


def with_store(policy: CompressionPolicy, store: ToolResultStore | None) -> CompressionPolicy:
    """``policy`` with ``store`` given to each of its steps (its defaults included) and its
    last-resort step that can save and has no store (see :class:`Compactor`'s
    ``save_to``); ``policy`` itself when there is no store or no step takes it."""
    if store is None:
        return policy
    steps = policy.resolved_steps()
    given = [_given(step, store) for step in steps]
    last = policy.if_still_too_long
    last_given = last if isinstance(last, str) else _given(last, store)
    if all(a is b for a, b in zip(steps, given, strict=True)) and last_given is last:
        return policy
    return dataclasses.replace(policy, steps=given, if_still_too_long=last_given)
