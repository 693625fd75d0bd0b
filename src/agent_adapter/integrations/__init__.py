"""Framework integrations: one :class:`~agent_adapter.context.CompressionPolicy` inside each
framework's own hook, so its history is compressed before every model call.

Each framework has its module and extra; importing this package imports none of them (the names
below load their module on first use):

===========================  ==========================================  ====================
Framework                    Hook                                        Extra
===========================  ==========================================  ====================
LangChain v1 ``create_agent``  :class:`~.langchain.CompressionMiddleware`  ``langchain-agents``
LangGraph prebuilt agents    :func:`~.langgraph.compression_hook`        ``langgraph``
OpenAI Agents SDK            :func:`~.openai_agents.compression_filter`  ``openai-agents``
pydantic-ai                  :func:`~.pydantic_ai.compression_capability` ``pydantic-ai``
Google ADK                   :func:`~.google_adk.compression_callback`   ``google-adk``
===========================  ==========================================  ====================

A step's ``save_to=`` saves are owned by the framework's conversation id (LangGraph's thread,
pydantic-ai's ``conversation_id``, the Agents SDK session, ADK's session; see
:func:`~agent_adapter.integrations._core.owner_context`). :func:`~._langchain_tools.langchain_tool`,
:func:`~.pydantic_ai.pydantic_ai_tool`, :func:`~.openai_agents.agents_tool` and
:func:`~.google_adk.adk_tool` register ``search_tool(store)`` /
``recall_tool(store)`` so that each call reads only its own conversation's saves.

With ``opentelemetry-api`` installed (extra ``otel``) every compression emits a span with the
report's counts (see :mod:`agent_adapter.integrations._telemetry`).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "CompressionMiddleware",
    "adk_tool",
    "agents_tool",
    "compression_callback",
    "compression_capability",
    "compression_filter",
    "compression_hook",
    "compression_processor",
    "langchain_tool",
    "pydantic_ai_tool",
]

_HOMES = {
    "CompressionMiddleware": "langchain",
    "compression_hook": "langgraph",
    "compression_filter": "openai_agents",
    "compression_capability": "pydantic_ai",
    "compression_processor": "pydantic_ai",
    "compression_callback": "google_adk",
    "adk_tool": "google_adk",
    "agents_tool": "openai_agents",
    "langchain_tool": "_langchain_tools",
    "pydantic_ai_tool": "pydantic_ai",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
