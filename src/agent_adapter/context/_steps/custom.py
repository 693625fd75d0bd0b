"""MyOwnStep: your function as a step."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._steps._base import BaseCompressionStep, StepContext

__all__ = ["MyOwnStep"]


#: Parameter names that ask for the step's context.
_CONTEXT_NAMES = ("ctx", "context")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_EMPTY = inspect.Parameter.empty


def _is_context_annotation(annotation: Any) -> bool:
    """``StepContext`` (also ``StepContext | None``, or a string annotation naming it)."""
    if annotation is StepContext:
        return True
    if isinstance(annotation, str):
        return re.search(r"\bStepContext\b", annotation) is not None
    return StepContext in typing.get_args(annotation)


def context_slot(fn: Callable[..., Any]) -> tuple[str, str] | None:
    """Where ``fn`` takes the step's context: ``("positional", name)``, ``("keyword", name)``
    or ``None`` (it takes none). See :class:`MyOwnStep` for the rule.

    Raises:
        ConfigError: ``fn`` has a required parameter besides the messages and the context.
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: messages only
        return None
    fillable = [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    rest = fillable[1:]
    slot: inspect.Parameter | None = next(
        (p for p in rest if p.name in _CONTEXT_NAMES or _is_context_annotation(p.annotation)),
        None,
    )
    if slot is None and rest and rest[0].kind in _POSITIONAL and rest[0].default is _EMPTY:
        slot = rest[0]
    required = [p.name for p in rest if p is not slot and p.default is _EMPTY]
    if required:
        raise ConfigError(
            f"MyOwnStep: {getattr(fn, '__name__', 'fn')} has required parameters "
            f"{required} besides the messages and the context; give them defaults"
        )
    if slot is None:
        return None
    positional = slot is rest[0] and slot.kind in _POSITIONAL
    return ("positional" if positional else "keyword", slot.name)


@dataclass(kw_only=True)
class MyOwnStep(BaseCompressionStep):
    """Your function as a step: list[Message] -> list[Message], sync or async.

    The invariant guard still applies to what it returns; with include_system_prompt=True it
    may also shorten the system message's text (never remove it or change anything else).
    A sync function runs in the calling thread (it should be fast; wrap slow work in an async
    function).

    ``fn`` gets the messages as its first argument, and the
    :class:`~agent_adapter.context.StepContext` only in a parameter meant for it: one named
    ``ctx`` or ``context``, or annotated ``StepContext``, wherever it is (passed by keyword
    unless it is the second positional parameter), else a second positional parameter without
    a default (``lambda ms, c: ...``). A parameter with a default is left to its default:
    ``def f(messages, n=4)`` is called ``f(messages)``.

    Raises:
        ConfigError: fn is not callable, or has a required parameter it cannot be given
            (anything besides the messages and the context without a default).
    """

    name: ClassVar[str] = "my_own_step"
    fn: Callable[..., Any] = field(repr=False)
    include_system_prompt: bool = False

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise ConfigError("MyOwnStep.fn must be callable")
        self._context_slot = context_slot(self.fn)

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """What the function returns for a copy of messages.

        Raises:
            ConfigError: the function returned something other than a list of Message.
        """
        slot = self._context_slot
        if slot is None:
            result = self.fn(list(messages))
        elif slot[0] == "positional":
            result = self.fn(list(messages), context)
        else:
            result = self.fn(list(messages), **{slot[1]: context})
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, list) or not all(isinstance(m, Message) for m in result):
            raise ConfigError(
                f"MyOwnStep: {getattr(self.fn, '__name__', 'fn')} returned "
                f"{type(result).__name__}, expected a list of Message"
            )
        return result
