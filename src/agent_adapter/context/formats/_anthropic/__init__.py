"""Anthropic, the ``anthropic`` format: Messages API dicts.

Where its rules live: :mod:`._converter` (converter and block mappers), :mod:`._merge`
(adjacent same-role messages merged for strict alternation, and split back), :mod:`._checks`
(its checker) and :mod:`._thinking` (thinking that must go back as it came, compared before and
after; Responses ``reasoning`` items too).
"""

from agent_adapter.context.formats._anthropic._checks import check_anthropic
from agent_adapter.context.formats._anthropic._converter import AnthropicConverter
from agent_adapter.context.formats._anthropic._thinking import check_thinking_unchanged

__all__ = ["AnthropicConverter", "check_anthropic", "check_thinking_unchanged"]
