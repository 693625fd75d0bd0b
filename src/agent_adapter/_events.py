"""Events: what happens during a run (model calls, retries, compressions, tool calls).

Handlers subscribe on a :class:`~agent_adapter.RunContext` and receive each :class:`Event`.
A sync handler is called in place, an async one awaited, in subscription order. A handler's
exception is logged (logger ``agent_adapter.events``) and never breaks the run: observability
must not change what the agent does.

Event names the library emits, with their ``data`` keys:

* ``model.request``: provider, model, stage, messages (count)
* ``model.response``: provider, model, stage, usage, cost_usd, seconds, finish_reason
* ``model.error``: provider, model, stage, error (class name), seconds
* ``model.retry``: provider, model, stage, reason (``"context_overflow"``)
* ``compression``: provider, model, stage, report (a ``CompressionReport``)
* ``rerank``: provider, model, stage, texts, usage, cost_usd, seconds
* ``tool.call`` / ``tool.result``: name, call_id; the result adds ok, seconds
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias

from agent_adapter._errors import ConfigError

__all__ = ["Event", "EventBus", "EventHandler"]

_log = logging.getLogger("agent_adapter.events")


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened.

    Attributes:
        name: what, dotted (``"model.response"``).
        data: its details (read-only).
        run_id: the run it belongs to.
        time: ``time.time()`` when emitted.
    """

    name: str
    data: Mapping[str, Any] = field(default_factory=dict)
    run_id: str = ""
    time: float = field(default_factory=time.time)


EventHandler: TypeAlias = Callable[[Event], Awaitable[None] | None]


class EventBus:
    """Subscribers and the emit that calls them."""

    __slots__ = ("_handlers", "_lock")

    def __init__(self) -> None:
        self._handlers: list[tuple[EventHandler, frozenset[str] | None]] = []
        self._lock = threading.Lock()

    def subscribe(
        self, handler: EventHandler, *, names: frozenset[str] | set[str] | None = None
    ) -> Callable[[], None]:
        """Call ``handler(event)`` for every event (or those in ``names``).

        Returns:
            A function that unsubscribes it.

        Raises:
            ConfigError: handler is not callable.
        """
        if not callable(handler):
            raise ConfigError("subscribe: handler must be callable: handler(event)")
        entry = (handler, frozenset(names) if names is not None else None)
        with self._lock:
            self._handlers.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._handlers:
                    self._handlers.remove(entry)

        return unsubscribe

    def __bool__(self) -> bool:
        return bool(self._handlers)

    async def emit(self, name: str, data: Mapping[str, Any], run_id: str = "") -> None:
        """Deliver an event to the handlers (nothing is built when there are none)."""
        if not self._handlers:
            return
        event = Event(name, MappingProxyType(dict(data)), run_id)
        for handler, names in list(self._handlers):
            if names is not None and name not in names:
                continue
            try:
                result = handler(event)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                _log.exception("event handler %r failed on %s", handler, name)
