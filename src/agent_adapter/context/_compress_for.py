"""compress_for and compress_for_sync: compress() for any message format.

A module of its own so that the engine never imports the formats and the formats never import
the engine: this is the one place where the two meet.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._engine import _compress, _WouldCompress, compress
from agent_adapter.context._pairing import PairingError, describe
from agent_adapter.context._policy import CompressionPolicy
from agent_adapter.context._report import CompressionReport
from agent_adapter.context._stores._commit import use_sync_face
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._conversion import Conversion
from agent_adapter.context.formats._memo import load_messages, snapshot
from agent_adapter.context.formats._registry import _CONVERTERS, _detect, convert

__all__ = ["compress_for", "compress_for_sync"]

_T = TypeVar("_T")


def _in_native_terms(error: PairingError, conversion: Conversion[Any]) -> ConfigError:
    """``error`` (about the converted messages) restated for the caller's own list: the
    native's index, the format's names for calls and results, and the caller's call ids."""
    call, result = conversion.call_terms
    problem = error.problem
    ids = () if problem.rule == "tool_without_call" else problem.call_ids
    last = problem.rule == "duplicate_call_id"

    def at(i: int) -> str:
        return (
            f"messages[{conversion.native_index(i, ids if i == problem.index else (), last=last)}]"
        )

    text = describe(problem, call=call, result=result, name=conversion.native_call_id, at=at)
    return ConfigError(f"{text} (format {conversion.format!r})")


async def compress_for(
    messages: Sequence[Any],
    policy: CompressionPolicy,
    *,
    format: str | Converter[Any] = "auto",
    pinned: Callable[[Any], bool] | None = None,
    model_max_tokens: int | None = None,
    ctx: Any = None,
) -> tuple[list[Any], CompressionReport]:
    """compress() for any message format: the compressed list in that format, and a report.

    Messages kept as they were come back as the same objects; nothing calls the main model.
    Under the threshold the caller's own list object comes back. ``pinned(native)`` marks
    natives no step may change or remove (for ``agent_adapter``, ``pinned(message)``).
    ``format`` is a format's name or a converter instance (see
    :func:`~agent_adapter.context.formats.convert`).

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
        ConfigError: as compress and convert.
        MissingDependency: as convert.
    """
    auto = isinstance(format, str) and format == "auto"
    if auto and isinstance(messages, list | tuple) and not messages:
        return await compress(messages, policy, model_max_tokens=model_max_tokens, ctx=ctx)
    native = (
        isinstance(messages, list | tuple) and messages and not isinstance(messages[0], Message)
    )
    snap = snapshot(messages) if native else None
    name = _detect(messages, snap) if auto else format
    if name == "agent_adapter":
        return await compress(
            messages, policy, pinned=pinned, model_max_tokens=model_max_tokens, ctx=ctx
        )
    converter = name if isinstance(name, Converter) else _CONVERTERS.get(name)
    if converter is not None and (pinned is None or callable(pinned)):
        loaded = load_messages(messages, converter, snap)
        if loaded is not None:  # the steady state: only new natives were loaded
            try:
                _, report = await _compress(
                    loaded, policy, model_max_tokens=model_max_tokens, ctx=ctx, probe=True
                )
            except (_WouldCompress, PairingError):
                pass  # compress (or report the pairing error) on a conversion of its own
            else:
                return messages if isinstance(messages, list) else list(messages), report
    conversion = convert(messages, name, pinned=pinned)
    try:
        result, report = await _compress(
            conversion.messages,
            policy,
            pinned=conversion.is_pinned if pinned is not None else None,
            model_max_tokens=model_max_tokens,
            ctx=ctx,
            insertable=conversion.starts_native,
        )
    except PairingError as exc:
        raise _in_native_terms(exc, conversion) from None
    if result is conversion.messages:
        return messages if isinstance(messages, list) else list(messages), report
    return conversion.back(result), report


def compress_for_sync(
    messages: Sequence[Any],
    policy: CompressionPolicy,
    *,
    format: str | Converter[Any] = "auto",
    pinned: Callable[[Any], bool] | None = None,
    model_max_tokens: int | None = None,
    ctx: Any = None,
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
        )

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_to_end(main())
    context = contextvars.copy_context()  # the caller's context variables (tracing, ids)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, _run_to_end, main()).result()


def _run_to_end(coro: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(coro)`` without its SIGINT handler, whose setup formats the running task
    (a few hundred microseconds a call); leftover tasks, async generators and the default
    executor are shut down the same way."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        try:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()
