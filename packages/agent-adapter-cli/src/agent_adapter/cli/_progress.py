"""Progress on long work: a rich bar on a terminal, nothing when the output is piped.

Shown only when both stdout and stderr are terminals (``agent-adapter compress DIR | jq``,
``> out.txt`` and ``--json`` stay quiet, as ``pip`` and ``cargo`` do); drawn on stderr and
cleared when done, so what the command prints is unchanged.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent_adapter._messages import Message
from agent_adapter.context import CompressionPolicy
from agent_adapter.context._steps._base import StepContext

#: A single file this big gets a bar over its phases (a directory always gets one).
BIG_FILE_BYTES = 1_000_000

Tick = Callable[[str], None]


def _wanted(quiet: bool) -> bool:
    return not quiet and sys.stdout.isatty() and sys.stderr.isatty()


@contextmanager
def progress(total: int, label: str, *, quiet: bool = False) -> Iterator[Tick]:
    """A bar of ``total`` steps; the callable advances it by one, naming what comes next.

    Args:
        total: how many ticks the work takes.
        label: what the bar says before the first tick.
        quiet: never show it (``--json``).
    """
    if not _wanted(quiet) or total <= 0:
        yield lambda _what: None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    )
    with bar:
        task = bar.add_task(label, total=total)

        def tick(what: str) -> None:
            bar.update(task, advance=1, description=what)

        yield tick


class Observed:
    """A policy step that calls ``on_apply(name, messages)`` and then runs the step it wraps
    (for a step that cannot be observed in place, see :func:`observed`).

    The engine reads a step's ``name`` and ``include_system_prompt`` (both forwarded) and
    calls ``apply``; nothing else changes, so the compression is the one without it.
    """

    def __init__(self, step: Any, on_apply: Callable[[str, list[Message]], None]) -> None:
        self.step = step
        self.name = str(getattr(step, "name", type(step).__name__))
        self.include_system_prompt = bool(getattr(step, "include_system_prompt", False))
        self._on_apply = on_apply

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        self._on_apply(self.name, messages)
        result: list[Message] = await self.step.apply(messages, context)
        return result


def _observed_step(step: Any, on_apply: Callable[[str, list[Message]], None]) -> Any:
    """``step``, observed: a copy of it of a subclass whose ``apply`` calls ``on_apply``
    first, so it stays an instance of its own class (the engine knows its own steps by
    their class: the final under-threshold phase reruns the pipeline's RemoveOldMessages);
    a step whose class cannot be extended so wrapped in :class:`Observed`."""
    cls = type(step)
    name = str(getattr(step, "name", cls.__name__))

    async def apply(self: Any, messages: list[Message], context: StepContext) -> list[Message]:
        on_apply(name, messages)
        result: list[Message] = await cls.apply(self, messages, context)
        return result

    try:
        sub = type(cls.__name__, (cls,), {"apply": apply, "__slots__": ()})
        sub.__qualname__, sub.__module__ = cls.__qualname__, cls.__module__
        out = copy.copy(step)
        out.__class__ = sub
    except TypeError:  # a final class, or one whose instances cannot change class
        return Observed(step, on_apply)
    return out


def observed(
    policy: CompressionPolicy, on_apply: Callable[[str, list[Message]], None]
) -> CompressionPolicy:
    """``policy`` with every step observed (see :func:`_observed_step`)."""
    import dataclasses

    steps = [_observed_step(step, on_apply) for step in policy.resolved_steps()]
    return dataclasses.replace(policy, steps=steps)


def ticking(policy: CompressionPolicy, tick: Tick) -> CompressionPolicy:
    """``policy`` whose steps advance ``tick`` as each one starts."""
    return observed(policy, lambda name, _messages: tick(name))
