"""run_sync: a coroutine run to its end from sync code, whether or not a loop is running.

One mechanism for every sync face of the library (``compress_for_sync``, the LangChain and
cliver tools' sync paths, the HTML report): ``asyncio.run`` raises inside a running event
loop (a notebook, an async framework calling sync code), this runs the coroutine in a worker
thread with its own loop instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync", "run_to_end"]

_T = TypeVar("_T")


def run_sync(main: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """``main()`` run to its end from sync code: with ``asyncio`` when no event loop runs in
    this thread, else in a worker thread with its own loop (so it never deadlocks), the
    caller's context variables (tracing, ids) copied to it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_to_end(main())
    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, run_to_end, main()).result()


def run_to_end(coro: Coroutine[Any, Any, _T]) -> _T:
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
