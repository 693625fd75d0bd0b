"""OpenAI, the ``openai`` format: Chat Completions dicts and Responses API items.

Where its rules live: :mod:`._converter` (the ``openai`` converter, binding to one API by item
shape); Chat Completions in :mod:`._chat` (converter and part mappers); Responses in
:mod:`._responses` (converter and groups), :mod:`._items` (reading items) and :mod:`._render`
(writing them); :mod:`._checks` the checkers of both APIs, and the ``openai`` checker that
picks one.
"""

from agent_adapter.context.formats._openai._chat import ChatConverter
from agent_adapter.context.formats._openai._checks import (
    check_openai,
    check_openai_chat,
    check_responses,
)
from agent_adapter.context.formats._openai._converter import OpenAIChatConverter
from agent_adapter.context.formats._openai._responses import ResponsesConverter

__all__ = [
    "ChatConverter",
    "OpenAIChatConverter",
    "ResponsesConverter",
    "check_openai",
    "check_openai_chat",
    "check_responses",
]
