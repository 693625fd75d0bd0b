"""The run context: who is calling (run and thread ids), its events, ledger and prices.

``ctx`` travels through a run (requests, steps, tools). Every port writes to it with
:func:`record_call` and :func:`emit_event`, which also accept ``None`` (nothing is recorded)
and foreign context objects (only what they have is used), so framework contexts can be passed
as they are.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_adapter._events import EventBus, EventHandler
from agent_adapter._ledger import Ledger, LedgerEntry
from agent_adapter._model import Usage
from agent_adapter._prices import PriceTable

__all__ = ["RunContext", "emit_event", "owner_scope", "price_table", "record_call"]

_DEFAULT_PRICES = PriceTable()


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """Ids of one agent run, and what it records.

    Attributes:
        run_id: unique per run (a uuid4 hex by default).
        thread_id: the conversation the run belongs to, when there is one; results saved by
            ``ShrinkToolResults`` are scoped to it so later runs of the thread can recall them.
        metadata: free-form tags for logs.
        ledger: one entry per completed model call (see :class:`~agent_adapter.Ledger`).
        events: the subscribers of this run's events (see :meth:`subscribe`).
        prices: the price table the ledger's costs come from: a copy of the defaults unless
            given, so ``ctx.prices.set(...)`` changes this run's prices only.

    Example:
        >>> ctx = RunContext(thread_id="t1")
        >>> seen = []
        >>> unsubscribe = ctx.subscribe(seen.append)
        >>> len(ctx.ledger), ctx.ledger.cost_usd
        (0, 0)
    """

    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    thread_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    ledger: Ledger = field(default_factory=Ledger, compare=False, repr=False)
    events: EventBus = field(default_factory=EventBus, compare=False, repr=False)
    prices: PriceTable = field(default_factory=PriceTable, compare=False, repr=False)

    def subscribe(
        self, handler: EventHandler, *, names: frozenset[str] | set[str] | None = None
    ) -> Callable[[], None]:
        """Call ``handler(event)`` (sync or async) for this run's events, or those in names.

        Returns:
            A function that unsubscribes it.

        Raises:
            ConfigError: handler is not callable.
        """
        return self.events.subscribe(handler, names=names)

    async def emit(self, name: str, /, **data: Any) -> None:
        """Send an event named ``name`` with ``data`` to the subscribers."""
        await self.events.emit(name, data, self.run_id)


def owner_scope(ctx: Any) -> str:
    """The scope saved data belongs to: ``thread:<id>``, else ``run:<id>``, else ``"default"``.

    Works on any object with ``thread_id`` / ``run_id`` attributes (or a mapping with those
    keys), so framework contexts can be passed as they are.
    """
    if ctx is None:
        return "default"

    def get(key: str) -> Any:
        return ctx.get(key) if isinstance(ctx, dict) else getattr(ctx, key, None)

    thread = get("thread_id")
    if thread:
        return f"thread:{thread}"
    run = get("run_id")
    return f"run:{run}" if run else "default"


def price_table(ctx: Any) -> PriceTable:
    """The price table of ``ctx``, else the defaults."""
    prices = getattr(ctx, "prices", None) if ctx is not None else None
    return prices if isinstance(prices, PriceTable) else _DEFAULT_PRICES


async def emit_event(ctx: Any, name: str, /, **data: Any) -> None:
    """``ctx.emit(name, **data)`` when ctx has an event bus; nothing otherwise."""
    bus = getattr(ctx, "events", None) if ctx is not None else None
    if isinstance(bus, EventBus) and bus:
        run_id = getattr(ctx, "run_id", "")
        await bus.emit(name, data, run_id if isinstance(run_id, str) else "")


def record_call(
    ctx: Any,
    *,
    provider: str,
    model: str,
    stage: str,
    usage: Usage,
    seconds: float,
    cost_usd: float | None = None,
) -> float | None:
    """Price one completed call with ctx's table and add its ledger entry (when ctx has one).

    Args:
        cost_usd: the cost the provider reported itself, used when the table has no price.

    Returns:
        The call's cost in USD, ``None`` when neither the table nor the provider priced it.
    """
    cost = price_table(ctx).cost(provider, model, usage)
    if cost is None:
        cost = cost_usd
    ledger = getattr(ctx, "ledger", None) if ctx is not None else None
    if isinstance(ledger, Ledger):
        run_id = getattr(ctx, "run_id", "")
        ledger.add(
            LedgerEntry(
                provider=provider,
                model=model,
                stage=stage,
                usage=usage,
                cost_usd=cost,
                seconds=seconds,
                run_id=run_id if isinstance(run_id, str) else "",
            )
        )
    return cost
