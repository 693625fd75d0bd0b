"""Converter: the interface each format implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from agent_adapter._messages import Message

__all__ = ["Converter", "Pinned"]

T = TypeVar("T")
Pinned = Callable[[Any], bool]


class Converter(ABC, Generic[T]):
    """Turns one format's native messages into :class:`Message` s and back.

    Subclasses set ``name`` and implement ``kind`` (detection of one item), ``load`` (one
    native to its messages), ``rebuild`` (a native some of whose messages were changed or
    dropped) and ``dump`` (a native for a message a step added, e.g. a summary).

    **Groups.** Most formats map each native to its own run of messages. A converter whose
    format spreads one message over several natives (a Responses assistant message with text
    and calls: a ``message`` item and one ``function_call`` item per call) reports them from
    :meth:`load_grouped`: the first native (the *leader*) has the message's range, each other
    one (a *member*) an empty range and an entry ``member -> leader``. :class:`Conversion`
    keeps a group together: all its natives unchanged, none, or what ``rebuild(leader, ...)``
    returns in place of all of them.
    """

    name: ClassVar[str]
    #: What the format calls a tool call and a tool result, for error messages that name the
    #: caller's own items (e.g. ``("tool_use", "tool_result")``).
    call_terms: ClassVar[tuple[str, str]] = ("tool_calls", "tool_call_id")
    #: The format may carry Anthropic thinking, whose current turn must keep opening on its
    #: thinking block (see :func:`agent_adapter.context._units.opens_turn`); ``False`` for a
    #: format with no such rule (OpenAI, Gemini), whose reasoning goes with its round.
    turn_thinking: ClassVar[bool] = True

    def native_call_id(self, call_id: str) -> str:
        """How the caller knows the call ``call_id`` (a converter that makes up ids for calls
        without one, as gemini does, names the call another way)."""
        return repr(call_id)

    def call_index(
        self,
        natives: Sequence[T],
        leader: int,
        call_ids: Sequence[str | None],
        *,
        last: bool = False,
    ) -> int:
        """The index of the native that holds a call of ``call_ids`` in the message loaded
        from ``natives[leader]`` (so an error names the caller's own item): the first such
        native, or the last with ``last`` (the repeat of a duplicate id). Default: ``leader``
        (a message is one native). A converter that spreads one message over several natives
        (a group, see :meth:`load_grouped`) names the member holding the call."""
        return leader

    @abstractmethod
    def kind(self, item: Any) -> str | None:
        """``"sure"`` when ``item`` can only be this format, ``"maybe"`` when it could be
        (e.g. a plain ``{"role", "content": str}`` dict), ``None`` when it is not."""

    @abstractmethod
    def load(self, native: T, index: int) -> list[Message]:
        """The messages of one native message (in order; often one).

        Raises:
            ConfigError: ``native`` is not a valid message of the format (naming ``index``).
        """

    @abstractmethod
    def rebuild(
        self, native: T, originals: Sequence[Message], now: Sequence[Message | None]
    ) -> list[T]:
        """Natives for ``native`` whose messages ``originals`` became ``now`` (``None``:
        removed; a new object: changed text). Every field but the changed text is kept.

        For the leader of a group (see :meth:`load_grouped`) the result replaces the whole
        group, members included (members the change leaves as they were should come back
        equal to them; :meth:`Conversion.back` then returns the very same member objects)."""

    @abstractmethod
    def dump(self, message: Message) -> T:
        """A new native for a message that no native produced (a summary, a note)."""

    def dump_all(self, messages: Sequence[Message]) -> list[T]:
        """New natives for a run of messages, in order (default: :meth:`dump` of each).

        A converter overrides it where the natives of a run are not the natives of its
        messages one by one (a message spread over several natives, results sharing one
        turn); :meth:`Conversion.back` dumps every run of added messages with it."""
        return [self.dump(m) for m in messages]

    def bind(self, natives: Sequence[Any]) -> Converter[T]:
        """The converter to use for one conversion of ``natives`` (default: ``self``); a
        converter whose new natives depend on the input's kind returns a bound copy (openai:
        Responses items for a Responses list; gemini: Content objects for Content input)."""
        return self

    def finish(self, natives: list[T], *, new: Callable[[T], bool] | None = None) -> list[T]:
        """Repairs spanning several natives once back() built them (default: none; anthropic
        joins the pieces of a message that back() wrote as several natives). ``new(native)``
        tells a native back() wrote from those it kept from the input (``None``: all are
        new). Returns ``natives`` itself when nothing changes."""
        return natives

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        """Every native loaded: the messages and each native's (start, stop) among them."""
        messages: list[Message] = []
        ranges: list[tuple[int, int]] = []
        for i, native in enumerate(natives):
            start = len(messages)
            messages.extend(self.load(native, i))
            ranges.append((start, len(messages)))
        return messages, ranges

    def load_grouped(
        self, natives: Sequence[Any]
    ) -> tuple[list[Message], list[tuple[int, int]], dict[int, int]]:
        """:meth:`load_all` plus the groups: ``{member index: leader index}`` for every native
        that is part of an earlier native's message (members follow their leader directly and
        have empty ranges). Default: :meth:`load_all` and no groups. A converter that groups
        overrides this (and keeps :meth:`load_all` returning its first two values)."""
        messages, ranges = self.load_all(natives)
        return messages, ranges, {}
