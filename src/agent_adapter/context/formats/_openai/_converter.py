"""OpenAI messages (``openai`` format): Chat Completions dicts and Responses API items.

The two APIs are two converters: :class:`~agent_adapter.context.formats._openai._chat.ChatConverter`
(Chat Completions, see :mod:`agent_adapter.context.formats._openai._chat`) and
:class:`~agent_adapter.context.formats._openai._responses.ResponsesConverter` (Responses items, see
:mod:`agent_adapter.context.formats._openai._responses`). The registered ``openai`` converter,
:class:`OpenAIChatConverter`, only picks one: :meth:`OpenAIChatConverter.bind` gives the
Responses converter for a list holding a Responses item (any dict with a ``type``, or an
"easy input message" with ``input_text`` parts), the Chat one for a list holding a Chat-only
dict (``tool_calls``, ``role: "tool"``, ``text`` / ``image_url`` parts), and itself for a list of
plain ``{"role", "content"}`` dicts valid in both, loaded the same either way. Used unbound, it
sends each native and each new message to the converter of its API.

A list mixing Chat-only dicts with Responses-only items cannot be sent to either API: loading
it raises :class:`~agent_adapter._errors.ConfigError` ("mix").

``dump`` is lossless for a message of any format (``load(dump(m)) == m``) through the reserved
carrier, :data:`RESERVED_KEY`; see :mod:`agent_adapter.context.formats._carrier`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from agent_adapter._messages import Message
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._carrier import split_carrier
from agent_adapter.context.formats._openai._chat import ChatConverter, chat_kind
from agent_adapter.context.formats._openai._items import classify, is_responses_message, kind
from agent_adapter.context.formats._openai._responses import ResponsesConverter

__all__ = ["OpenAIChatConverter"]

_CHAT = ChatConverter()
_RESPONSES = ResponsesConverter()


def _flavour(native: Any) -> str | None:
    return classify(split_carrier(native)[0])


class OpenAIChatConverter(Converter[dict[str, Any]]):
    """The ``openai`` format: binds each list to the Chat Completions or the Responses
    converter (see the module docstring).

    Unbound (a list of plain messages valid in both APIs, or used directly), it loads each
    native with the converter of its API and writes each new message for the API it came
    from: Responses items for messages loaded from Responses items, else Chat dicts.
    """

    name = "openai"
    call_terms: ClassVar[tuple[str, str]] = ChatConverter.call_terms
    turn_thinking: ClassVar[bool] = False  # reasoning items go with their round

    def kind(self, item: Any) -> str | None:
        flavour = classify(item)
        if flavour is None:
            return None
        if flavour == "responses":
            return kind(item)
        return chat_kind(item)

    def bind(self, natives: Sequence[Any]) -> Converter[dict[str, Any]]:
        """The converter for one list: Responses for a list holding a Responses item, Chat
        for one holding a Chat-only dict, else this one (see the module docstring)."""
        flavours = {_flavour(n) for n in natives}
        if "responses" in flavours:
            return _RESPONSES
        if "chat" in flavours:
            return _CHAT
        return self

    def _for(self, native: Any) -> Converter[dict[str, Any]]:
        return _RESPONSES if _flavour(native) == "responses" else _CHAT

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        """Every native loaded, by the converter :meth:`bind` picks for the list.

        Raises:
            ConfigError: Chat-only dicts and Responses-only items in one list, or an item that
                is not a message of either API.
        """
        messages, ranges, _ = self.load_grouped(natives)
        return messages, ranges

    def load_grouped(
        self, natives: Sequence[Any]
    ) -> tuple[list[Message], list[tuple[int, int]], dict[int, int]]:
        """:meth:`load_all` with the groups of a Responses list (see
        :meth:`ResponsesConverter.load_grouped`).

        Raises:
            ConfigError: as :meth:`load_all`.
        """
        bound = self.bind(natives)
        return (_CHAT if bound is self else bound).load_grouped(natives)

    def load(self, native: dict[str, Any], index: int) -> list[Message]:
        """The message of one native, by the converter of its API."""
        return self._for(native).load(native, index)

    def rebuild(
        self,
        native: dict[str, Any],
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> list[dict[str, Any]]:
        """The native rebuilt by the converter of its API."""
        return self._for(native).rebuild(native, originals, now)

    def dump(self, message: Message) -> dict[str, Any]:
        """One native for ``message``: a Responses item for a message loaded from one, else a
        Chat Completions dict (lossless either way)."""
        return (_RESPONSES if is_responses_message(message) else _CHAT).dump(message)

    def dump_all(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Natives for a run of messages, as :meth:`dump` picks their API; each run of
        messages from Responses items is written by :meth:`ResponsesConverter.dump_all`."""
        out: list[dict[str, Any]] = []
        run: list[Message] = []
        for message in [*messages, None]:
            if message is not None and is_responses_message(message):
                run.append(message)
                continue
            if run:
                out.extend(_RESPONSES.dump_all(run))
                run = []
            if message is not None:
                out.append(_CHAT.dump(message))
        return out
