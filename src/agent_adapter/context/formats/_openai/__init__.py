"""OpenAI, the ``openai`` format: Chat Completions dicts and Responses API items.

Where its rules live: :mod:`._converter` (the ``openai`` converter, binding to one API by item
shape); Chat Completions in :mod:`._chat` (converter and part mappers) and :mod:`._chat_checks`
(its checker, and the ``openai`` checker that picks an API); Responses in :mod:`._responses`
(converter and groups), :mod:`._items` (reading items), :mod:`._render` (writing them) and
:mod:`._responses_checks` (its checker).
"""

from agent_adapter.context.formats._openai._chat import ChatConverter
from agent_adapter.context.formats._openai._chat_checks import check_openai, check_openai_chat
from agent_adapter.context.formats._openai._converter import OpenAIChatConverter
from agent_adapter.context.formats._openai._responses import ResponsesConverter
from agent_adapter.context.formats._openai._responses_checks import check_responses

__all__ = [
    "ChatConverter",
    "OpenAIChatConverter",
    "ResponsesConverter",
    "check_openai",
    "check_openai_chat",
    "check_responses",
]
