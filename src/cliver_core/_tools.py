"""Tools: ``CLIverTool``, the ``@tool`` decorator, and how a call's result becomes text.

The JSON schema of a decorated function comes from :meth:`agent_adapter.FunctionTool.from_function`
(type hints through pydantic, Google-style ``Args:`` descriptions), and its arguments are
validated and coerced by :func:`pydantic.validate_call` (``"100"`` for an ``int`` works, a
missing argument is an error result). A tool returns a ``str``, a 0.3.0a5-style
``list[dict]`` (``[{"text": ...}]``, ``[{"error": ...}]``) or anything JSON-serializable.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict

from agent_adapter import ConfigError, FunctionTool

__all__ = ["CLIverTool", "ToolRegistry", "format_result", "tool", "tool_list"]


class CLIverTool(BaseModel):
    """A tool: what the model sees and how to run it.

    Attributes:
        name: the tool name (``[a-zA-Z0-9_-]{1,64}``).
        description: one line for the model.
        long_description: the full docstring, for people.
        parameters: the JSON schema of the arguments object.
        execute: a sync callable taking the arguments as keywords (run in a worker thread).
        aexecute: an async callable taking the arguments as keywords (awaited on the loop);
            used instead of ``execute`` when set.
        safety: ``"safe"`` tools run without asking ``permission_callback``; any other value
            (the default ``"mutating"``) asks first.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str
    long_description: str | None = None
    parameters: dict[str, Any]
    execute: Callable[..., Any]
    aexecute: Callable[..., Awaitable[Any]] | None = None
    safety: str = "mutating"

    def to_openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI Chat Completions ``tools`` entry."""
        return self.function_tool().openai_schema()

    def to_anthropic_schema(self) -> dict[str, Any]:
        """The tool as an Anthropic Messages ``tools`` entry."""
        return self.function_tool().anthropic_schema()

    def function_tool(self) -> FunctionTool:
        """The tool as the providers see it (the loop runs it itself)."""

        async def call(args: dict[str, Any], ctx: Any = None) -> str:
            return format_result(await run_tool(self, args))[0]

        return FunctionTool(self.name, self.description, self.parameters, call)


async def run_tool(tool: CLIverTool, args: dict[str, Any]) -> Any:
    """Run ``tool`` with ``args``: ``aexecute`` awaited, else ``execute`` in a thread."""
    if tool.aexecute is not None:
        return await tool.aexecute(**args)
    return await asyncio.to_thread(tool.execute, **args)


def tool(
    *,
    name: str | None = None,
    description: str = "",
    safety: str = "mutating",
) -> Callable[[Callable[..., Any]], CLIverTool]:
    """Turn a sync or async function into a :class:`CLIverTool`.

    Example:
        >>> @tool(description="Add two numbers.")
        ... def add(a: int, b: int = 1) -> str:
        ...     return str(a + b)
        >>> add.name, add.parameters["required"], add.execute(a="2")
        ('add', ['a'], '3')

    Args:
        name: the tool name (default: the function's).
        description: the line the model sees (default: the docstring's summary).
        safety: ``"safe"`` skips the permission callback.

    Raises:
        ConfigError: the name is not ``[a-zA-Z0-9_-]{1,64}`` or a parameter has no schema.
    """

    def decorator(fn: Callable[..., Any]) -> CLIverTool:
        schema = FunctionTool.from_function(fn, name=name, description=description or None)
        checked = pydantic.validate_call(fn)
        if inspect.iscoroutinefunction(fn):

            def run_sync(**kwargs: Any) -> Any:
                return asyncio.run(checked(**kwargs))

            return CLIverTool(
                name=schema.name,
                description=schema.description,
                long_description=inspect.getdoc(fn),
                parameters=schema.parameters,
                execute=run_sync,
                aexecute=checked,
                safety=safety,
            )
        return CLIverTool(
            name=schema.name,
            description=schema.description,
            long_description=inspect.getdoc(fn),
            parameters=schema.parameters,
            execute=checked,
            safety=safety,
        )

    return decorator


def _from_function_tool(ft: FunctionTool) -> CLIverTool:
    async def call(**kwargs: Any) -> str:
        return await ft(kwargs)

    def call_sync(**kwargs: Any) -> str:
        return asyncio.run(ft(kwargs))

    return CLIverTool(
        name=ft.name,
        description=ft.description,
        parameters=ft.parameters,
        execute=call_sync,
        aexecute=call,
    )


def tool_list(tools: Sequence[Any] | None, where: str) -> list[CLIverTool]:
    """``tools`` as CLIverTools: CLIverTool as is, a FunctionTool or a plain function
    wrapped.

    Raises:
        ConfigError: an item is none of those (naming ``where[i]``).
    """
    out: list[CLIverTool] = []
    for i, item in enumerate(tools or ()):
        if isinstance(item, CLIverTool):
            out.append(item)
        elif isinstance(item, FunctionTool):
            out.append(_from_function_tool(item))
        elif callable(item):
            out.append(tool()(item))
        else:
            raise ConfigError(f"{where}[{i}] is {type(item).__name__}, not a tool")
    return out


class ToolRegistry:
    """The builtin tools of an agent, by name (the last one of a name wins)."""

    def __init__(self, tools: Sequence[CLIverTool] | None = None) -> None:
        self._by_name: dict[str, CLIverTool] = {t.name: t for t in tools or ()}

    def register(self, tool: CLIverTool) -> None:
        """Add or replace ``tool``."""
        self._by_name[tool.name] = tool

    @property
    def all_tools(self) -> list[CLIverTool]:
        """The tools, sorted by name."""
        return sorted(self._by_name.values(), key=lambda t: t.name)

    def get(self, name: str) -> CLIverTool | None:
        """The tool called ``name``."""
        return self._by_name.get(name)


def format_result(result: Any) -> tuple[str, bool]:
    """A tool's return value as the result text, and whether it is an error.

    ``[{"error": e}]`` is ``"Error: e"``; ``[{"text": t}]`` is ``t``; a ``str`` is itself;
    anything else is JSON (as 0.3.0a5 does).
    """
    if isinstance(result, str):
        return result, False
    if result is None or result == []:
        return "(no output)", False
    if isinstance(result, list) and len(result) == 1 and isinstance(result[0], dict):
        only = result[0]
        if "error" in only:
            return f"Error: {only['error']}", True
        if "text" in only:
            return str(only["text"]), False
        if "tool_result" in only:
            return str(only["tool_result"]), False
    if isinstance(result, list) and any(isinstance(r, dict) and "error" in r for r in result):
        return json.dumps(result, ensure_ascii=False, default=str), True
    return json.dumps(result, ensure_ascii=False, default=str), False
