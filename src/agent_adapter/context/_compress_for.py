"""compress_for and compress_for_sync: compress() for any message format.

The public entry points. Without ``states`` a call is :mod:`._compress_one`'s (a function of
its arguments); with a :class:`CompactionStates` it is :mod:`._stateful`'s (the conversation's
state found, compact once then append).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from agent_adapter._sync import run_sync
from agent_adapter.context._policy import CompressionPolicy
from agent_adapter.context._report import CompressionReport
from agent_adapter.context._state import (
    CompactionStates,
)
from agent_adapter.context._stateful import stateful_compress
from agent_adapter.context._stores._commit import use_sync_face
from agent_adapter.context.formats._base import Converter

__all__ = ["compress_for", "compress_for_sync"]

_T = TypeVar("_T")


async def compress_for(
    messages: Sequence[Any],
    policy: CompressionPolicy,
    *,
    format: str | Converter[Any] = "auto",
    pinned: Callable[[Any], bool] | None = None,
    model_max_tokens: int | None = None,
    ctx: Any = None,
    conversation: str | None = None,
    states: CompactionStates | Literal[False] | None = None,
) -> tuple[list[Any], CompressionReport]:
    """compress() for any message format: the compressed list in that format, and a report.

    Messages kept as they were come back as the same objects; nothing calls the main model.
    Under the threshold the caller's own list object comes back. ``pinned(native)`` marks
    natives no step may change or remove (for ``agent_adapter``, ``pinned(message)``).
    ``format`` is a format's name or a converter instance (see
    :func:`~agent_adapter.context.formats.convert`).

    **A function of its arguments.** The same list, policy and arguments give the same
    request, whatever ran before in the process: nothing is remembered across calls unless
    you pass where to remember it. For an agent loop, hold a
    :class:`~agent_adapter.context.Compactor` per conversation (compact once, then append:
    later calls are sent as the request sent then plus the new messages, so the provider's
    prompt cache keeps hitting). ``states=`` (a
    :class:`~agent_adapter.context.CompactionStates`) with ``conversation=`` is the same
    memory passed by hand: a history that extends the one compressed before for that
    conversation is sent as the request sent then plus the new messages, unchanged, until
    over the threshold; the report then counts ``prefix_tokens`` (how much of it is the
    previous request's prefix). ``states=None`` or ``False``: no memory. A policy is taken
    as fixed once used with states (a step changed in place afterwards is not seen: pass a
    new policy).

    **Steady state.** An agent sends the same natives again plus a new round. The natives'
    messages are remembered (bounded, by identity and a shallow fingerprint: see
    :mod:`~agent_adapter.context.formats._memo`), so at or under the threshold a grown list
    costs its new natives: nothing else is detected, converted, counted or validated again.
    ``pinned`` is called only when the list is compressed (as compress() calls it). A list
    over the threshold is converted in full, as without the memo. What the memo assumes: the
    last few natives of a list (the newest turn an agent builds in place: tool results
    appended to the last user turn, the assistant turn while it streams) are always read
    again, so any edit to them is seen; older natives are taken as fixed once sent (as the
    provider SDKs take a sent history): a field set anew (``msg["content"] = ...``) is seen,
    an in-place edit inside a nested value of an older native may not be. Replace such a
    native (a new dict or object) instead of editing it.

    Raises:
        ConfigError: as compress and convert; ``states`` is not a CompactionStates or
            ``conversation`` not a non-empty str.
        MissingDependency: as convert.
    """
    return await stateful_compress(
        messages,
        policy,
        format=format,
        pinned=pinned,
        model_max_tokens=model_max_tokens,
        ctx=ctx,
        conversation=conversation,
        states=states,
    )


def compress_for_sync(
    messages: Sequence[Any],
    policy: CompressionPolicy,
    *,
    format: str | Converter[Any] = "auto",
    pinned: Callable[[Any], bool] | None = None,
    model_max_tokens: int | None = None,
    ctx: Any = None,
    conversation: str | None = None,
    states: CompactionStates | Literal[False] | None = None,
) -> tuple[list[Any], CompressionReport]:
    """compress_for for sync code (Flask, Celery, scripts, a sync LangGraph node).

    With no event loop running in this thread it uses ``asyncio.run``; inside a running loop
    (a notebook, an async framework calling sync code) it runs in a worker thread with its
    own loop, so it never deadlocks.

    Raises:
        ConfigError: as compress_for.
        MissingDependency: as compress_for.
    """

    async def main() -> tuple[list[Any], CompressionReport]:
        # a closure without arguments: asyncio formats the task's coroutine (and so its
        # arguments, the whole message list) in debug paths; this keeps that cheap
        use_sync_face()  # this task's own loop: stores write through their sync methods
        return await compress_for(
            messages,
            policy,
            format=format,
            pinned=pinned,
            model_max_tokens=model_max_tokens,
            ctx=ctx,
            conversation=conversation,
            states=states,
        )

    return run_sync(main)
