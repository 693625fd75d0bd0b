"""``MediaJob``: the handle 0.3.0a5's ``AgentCore.submit_*()`` methods return.

A :class:`MediaJob` wraps an :class:`asyncio.Task` running one media call in the background.
Media generation and transcription are out of this version's scope, so a ``submit_*()`` call
raises :class:`~cliver_core.CapabilityNotSupported` at once unless the binding's provider is
a 0.3.0a5 :class:`~cliver_core.provider.Provider` of yours implementing that purpose; the
class itself behaves as 0.3.0a5's.
"""

from __future__ import annotations

import asyncio
import time
from typing import Generic, TypeVar
from uuid import uuid4

__all__ = ["MediaJob"]

T = TypeVar("T")


class MediaJob(Generic[T]):
    """A job running on the event loop.

    Args:
        purpose: what it does (``"image"``, ``"tts"``...).
        task: the task running it.

    Attributes:
        id: a fresh hex id.
        purpose: as given.
        created_at: ``time.time()`` at creation.
    """

    def __init__(self, purpose: str, task: asyncio.Task[T]) -> None:
        self.id = uuid4().hex
        self.purpose = purpose
        self.created_at = time.time()
        self._task = task

    @property
    def status(self) -> str:
        """``"running"``, ``"done"``, ``"failed"`` or ``"cancelled"``."""
        if self._task.cancelled():
            return "cancelled"
        if not self._task.done():
            return "running"
        return "failed" if self._task.exception() is not None else "done"

    def done(self) -> bool:
        """True once the job has finished, whatever the outcome."""
        return self._task.done()

    def cancel(self) -> bool:
        """Ask the job to stop; True when the request was accepted."""
        return self._task.cancel()

    async def result(self, timeout: float | None = None) -> T:
        """The job's result, waiting for it.

        Args:
            timeout: seconds to wait at most; when they pass, ``TimeoutError`` is raised and
                the job goes on running (the wait is shielded).
        """
        if timeout is None:
            return await self._task
        return await asyncio.wait_for(asyncio.shield(self._task), timeout)

    def __repr__(self) -> str:
        return f"MediaJob(id={self.id!r}, purpose={self.purpose!r}, status={self.status!r})"
