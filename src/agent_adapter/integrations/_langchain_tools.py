""":func:`langchain_tool`: an agent_adapter :class:`~agent_adapter.FunctionTool` (such as
``search_tool(store)`` / ``recall_tool(store)``) as a LangChain tool that runs under the
owner the agent's compression saved under: the run's LangGraph thread (see
:func:`~agent_adapter.integrations._core.owner_context`).

Shared by :mod:`~agent_adapter.integrations.langchain` and
:mod:`~agent_adapter.integrations.langgraph` (it needs langchain-core only).
"""

from __future__ import annotations

from typing import Any

from agent_adapter._errors import MissingDependency
from agent_adapter._sync import run_sync
from agent_adapter._tools import FunctionTool
from agent_adapter.integrations._core import function_tool, langgraph_thread, owner_context

try:
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import StructuredTool
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise MissingDependency("langchain-core", "langgraph", "langchain_tool") from e

__all__ = ["langchain_tool"]


def langchain_tool(tool: FunctionTool) -> StructuredTool:
    """``tool`` as a LangChain ``StructuredTool`` for ``create_agent`` / ``create_react_agent``.

    The tool is called with the context whose owner is the run's conversation key, the one
    :class:`~agent_adapter.integrations.langchain.CompressionMiddleware` and
    :func:`~agent_adapter.integrations.langgraph.compression_hook` save under:
    ``config["configurable"]["thread_id"]`` (with the subgraph's path inside another graph).
    So ``search_tool(store)`` and ``recall_tool(store)`` read only their own thread's dropped
    history; another thread's saves answer as nothing saved. Without a thread id the tool
    runs without a context (the ``"default"`` owner, as the compression does then). The
    model's arguments are passed as they come (``tool.parameters`` is the schema it sees);
    ``invoke`` and ``ainvoke`` both work.

    Args:
        tool: the agent_adapter tool.

    Returns:
        A ``StructuredTool`` of the same name, description and JSON schema.

    Raises:
        ConfigError: ``tool`` is not a FunctionTool.

    Example::

        from langchain.agents import create_agent
        from agent_adapter.context import recall_tool, search_tool
        from agent_adapter.integrations.langchain import CompressionMiddleware, langchain_tool

        tools = [langchain_tool(search_tool(store)), langchain_tool(recall_tool(store))]
        agent = create_agent(model, tools, middleware=[CompressionMiddleware(policy)])
        agent.invoke({"messages": [...]}, {"configurable": {"thread_id": "chat-7"}})
    """
    tool = function_tool(tool, "langchain_tool")

    # StructuredTool passes the run's config to the parameter annotated RunnableConfig
    async def call(config: RunnableConfig, **kwargs: Any) -> str:
        return await tool(kwargs, owner_context(langgraph_thread(config)))

    def call_sync(config: RunnableConfig, **kwargs: Any) -> str:
        return run_sync(lambda: call(config, **kwargs))

    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.parameters,
        func=call_sync,
        coroutine=call,
    )
