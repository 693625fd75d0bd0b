"""Compaction prepared in the background, before the threshold (issue 35).

A model-written summary takes seconds; written when the request crosses the threshold, it
freezes the agent for as long. Claude Code and the Anthropic API prepare it earlier: the
summary request starts before the threshold, the conversation keeps appending, and at the
threshold the summarized prefix is swapped for the result. So does the library, for the
conversations whose state it keeps (``CompressingModel``, ``Compactor.compress``,
``cliver_core``'s policy compactor) when a step of the policy writes with a model
(``Summarize(model=...)``, ``SummarizeLongMessage(model=...)``):

* **Start.** A call whose request reaches ``prepare_at`` (:data:`PREPARE_AT`, 0.8) of the
  threshold, under it, starts the compaction of that request (the *snapshot*, held by
  identity) as a task on the running loop (a request held after a compaction that stopped
  over the target prepares nothing: it compacts at the hold's end as usual): the policy's
  own steps, down to the snapshot's tokens less the gap between threshold and target (what
  a compaction at the threshold frees), so that the snapshot's compaction plus what the
  conversation appends until the threshold lands at the target. One task a conversation
  at most.
* **Swap.** The call that crosses the threshold, when the task is done and its history
  extends the snapshot, sends the prepared compaction followed, unchanged, by exactly what
  was appended after the snapshot (the *tail*): the prepared output replaces exactly the
  snapshot's prefix. It is remembered as a compaction is (compact once, then append).
* **Not ready yet.** Under the window (``model_max_tokens``, when known) the request goes as
  it is (``report.skipped == "preparing"``, prompt cache intact) and a later call swaps; at
  the window, or with no window known, the call waits for the task.
* **Discarded, never sent.** A snapshot the conversation no longer extends (edited,
  rewound, another branch), a task on another event loop, a failed task, a prepared
  compaction that freed nothing, or one whose tail has grown past the bound (the swap would
  leave the request over the threshold) is dropped (its task cancelled when still running)
  and the call compacts as usual. A swap that leaves the request over the target holds the
  next compaction as any compaction does (until the request grows by the gap).
* **Nothing is summarized twice**: a swapped or dropped task is forgotten, and a new one
  starts only from a new snapshot.

State lives in the conversation's :class:`~agent_adapter.context.CompactionStates` (in this
process: a task is no shared state), never in a global. Sync faces (``compress_for_sync``,
``Compactor.compress_sync``) run no background work: their loop ends with the call. Events on
the run context: ``compaction.prepare`` (started), ``compaction.ready`` (the prepared
compaction is done), ``compaction.swap`` (used),
``compaction.discard`` (``reason``: ``"diverged"``, ``"tail"``, ``"failed"``, ``"empty"``,
``"loop"``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter.context._policy import CompressionPolicy
from agent_adapter.context._report import CompressionReport

__all__ = ["PREPARE_AT", "PreparedCompaction", "writes_with_model"]

#: The share of the threshold at which a conversation's compaction starts in the background.
PREPARE_AT = 0.8


def writes_with_model(policy: CompressionPolicy) -> bool:
    """True when a step of ``policy`` (or its last-resort step) calls a model: only then is
    a compaction slow enough to prepare in the background."""
    steps = [*(policy.steps or ()), policy.if_still_too_long]  # the defaults call none
    return any(getattr(step, "model", None) is not None for step in steps)


@dataclass(eq=False)
class PreparedCompaction:
    """A compaction of one conversation's request, running or done in the background.

    Attributes:
        snapshot: the request it compacts, as the objects that were sent (held by identity).
        tokens: the snapshot's tokens (the policy's counter).
        task: the compaction: ``(compacted snapshot, its report)``.
        loop: the event loop the task runs on.
    """

    snapshot: tuple[Any, ...]
    tokens: int
    task: asyncio.Task[tuple[list[Any], CompressionReport]]
    loop: asyncio.AbstractEventLoop

    def extended_by(self, base: Sequence[Any]) -> bool:
        """True when ``base`` starts with the snapshot, object for object."""
        snap = self.snapshot
        return len(base) >= len(snap) and all(a is b for a, b in zip(snap, base, strict=False))

    def on_this_loop(self) -> bool:
        """True when the task's loop is the running one (a sync face's loop is gone)."""
        try:
            return asyncio.get_running_loop() is self.loop and not self.loop.is_closed()
        except RuntimeError:
            return False

    def result(self) -> tuple[list[Any], CompressionReport] | None:
        """The compaction, when the task ended well; ``None`` while it runs or when it
        failed or was cancelled."""
        task = self.task
        if not task.done() or task.cancelled() or task.exception() is not None:
            return None
        return task.result()

    async def wait(self) -> tuple[list[Any], CompressionReport] | None:
        """The compaction once the task ends (``None`` when it failed)."""
        try:
            await asyncio.shield(self.task)
        except asyncio.CancelledError:
            if not self.task.cancelled():
                raise  # the waiting call itself was cancelled
        except Exception:  # a failed compaction is discarded, never sent
            return None
        return self.result()

    def cancel(self) -> None:
        """Stop the task (when it still runs); its result is never used."""
        if not self.task.done():
            self.task.cancel()
