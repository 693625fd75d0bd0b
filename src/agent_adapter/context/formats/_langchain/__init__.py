"""LangChain, the ``langchain`` format: ``BaseMessage`` lists (LangGraph's too).

Its converter and block mappers are :mod:`._converter`; it has no checker of its own:
:func:`~agent_adapter.context.formats.check` checks its messages' tool pairing.
"""

from agent_adapter.context.formats._langchain._converter import (
    GEMINI_SIGNATURES_KEY,
    LangChainConverter,
)

__all__ = ["GEMINI_SIGNATURES_KEY", "LangChainConverter"]
