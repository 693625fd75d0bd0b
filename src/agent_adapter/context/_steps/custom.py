"""MyOwnStep: your function as a step."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._steps._base import BaseCompressionStep, StepContext

__all__ = ["MyOwnStep"]


@dataclass(kw_only=True)
class MyOwnStep(BaseCompressionStep):
    """Your function as a step: list[Message] -> list[Message], sync or async.

    The invariant guard still applies to what it returns; with include_system_prompt=True it
    may also shorten the system message's text (never remove it or change anything else).
    A sync function runs in the calling thread (it should be fast; wrap slow work in an async
    function). ``fn`` may take ``(messages)`` or ``(messages, context)``.

    Raises:
        ConfigError: fn is not callable.
    """

    name: ClassVar[str] = "my_own_step"
    fn: Callable[..., Any] = field(repr=False)
    include_system_prompt: bool = False

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise ConfigError("MyOwnStep.fn must be callable")
        try:
            params = inspect.signature(self.fn).parameters
            self._takes_context = len(params) >= 2
        except (TypeError, ValueError):
            self._takes_context = False

    async def apply(self, messages: list[Message], context: StepContext) -> list[Message]:
        """What the function returns for a copy of messages.

        Raises:
            ConfigError: the function returned something other than a list of Message.
        """
        args = (list(messages), context) if self._takes_context else (list(messages),)
        result = self.fn(*args)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, list) or not all(isinstance(m, Message) for m in result):
            raise ConfigError(
                f"MyOwnStep: {getattr(self.fn, '__name__', 'fn')} returned "
                f"{type(result).__name__}, expected a list of Message"
            )
        return result
