"""The cyclic garbage collector paused while one long list is compressed.

A compression of a long list allocates a container object or more a message (its
:class:`~agent_adapter._messages.Message`, units, memo entries) and frees most of them
by reference counting; none of it is cyclic garbage. The collector does not know that:
it runs a young collection every 700 container allocations and full ones as the heap grows,
each walking every live object the call made: a third of the CPU time of one compression of
100,000 messages. :func:`paused` disables it for the duration of one call on a list of at
least :data:`PAUSE_FROM` messages (as libraries do during bulk loads), and restores the
caller's setting when the outermost such call ends (a counter shared by threads: the
collector is enabled again only if it was enabled when the first of overlapping calls
started). Cyclic garbage made meanwhile (by other tasks of the event loop while a step
awaits a model, say) is collected once the collector runs again.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Sized
from contextlib import contextmanager

__all__ = ["PAUSE_FROM", "paused"]

#: Lists shorter than this are compressed with the collector as the caller set it.
PAUSE_FROM = 2_000

_lock = threading.Lock()
_depth = 0
_restore = False


@contextmanager
def paused(messages: object) -> Iterator[None]:
    """The collector disabled within the block when ``messages`` holds at least
    :data:`PAUSE_FROM` items (see the module docstring); else nothing changes."""
    global _depth, _restore
    if not isinstance(messages, Sized) or len(messages) < PAUSE_FROM:
        yield
        return
    with _lock:
        if _depth == 0:
            _restore = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _restore:
                gc.enable()
