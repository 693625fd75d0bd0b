"""Function tools: a name, a JSON-schema for the arguments, and an async function.

:meth:`FunctionTool.from_function` builds one from a plain Python function, as pydantic-ai's
``Tool`` and the OpenAI Agents SDK's ``function_tool`` do: the JSON schema comes from the type
hints (through a pydantic model built from the signature), the descriptions from the Google-
style docstring (the summary for the tool, ``Args:`` entries for the parameters).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, get_type_hints

from agent_adapter._errors import ConfigError, ToolUsageError
from agent_adapter._optional import lazy_module

if TYPE_CHECKING:
    import pydantic
    import pydantic_core
else:  # imported by the first tool built from a function or result serialised
    pydantic = lazy_module("pydantic")
    pydantic_core = lazy_module("pydantic_core")

__all__ = ["FunctionTool"]

#: Parameters with this name receive the run context instead of a model-given argument.
CTX_PARAMETER = "ctx"
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # OpenAI's and Anthropic's tool-name rule
_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Example|Examples|Note|Notes):\s*$"
)
_ARG = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _docstring(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """(summary, {parameter: description}) from a Google-style docstring."""
    doc = inspect.getdoc(fn) or ""
    summary: list[str] = []
    params: dict[str, str] = {}
    section = ""
    current = ""
    indent = None
    for line in doc.splitlines():
        head = _SECTION.match(line)
        if head:
            section, current, indent = head.group(1), "", None
            continue
        if not section:
            summary.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not line.strip():
            continue
        level = len(line) - len(line.lstrip())
        arg = _ARG.match(line)
        if arg and (indent is None or level <= indent):
            indent = level
            current = arg.group(1).lstrip("*")
            params[current] = arg.group(2).strip()
        elif current:
            params[current] = f"{params[current]} {line.strip()}".strip()
    text = "\n".join(summary).strip()
    return text, params


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return pydantic_core.to_json(value, fallback=str).decode()


@dataclass(frozen=True)
class FunctionTool:
    """A tool the model can call.

    Attributes:
        name: the tool name the model sees.
        description: what it does, for the model.
        parameters: JSON schema of the arguments object.
        fn: ``async fn(args: dict, ctx) -> str``, the result text.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[[dict[str, Any], Any], Awaitable[str]] = field(repr=False)

    async def __call__(self, args: dict[str, Any], ctx: Any = None) -> str:
        """Run the tool with ``args`` under ``ctx``."""
        return await self.fn(args, ctx)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> FunctionTool:
        """A tool from a plain function, sync or async.

        The arguments' JSON schema comes from the type hints and defaults (a pydantic model
        built from the signature: ``int``, ``list[str]``, ``Literal``, pydantic models,
        ``Annotated[..., Field(description=...)]`` all work); the tool's description is the
        docstring's summary and each parameter's is its ``Args:`` entry. A parameter named
        ``ctx`` gets the run context and is not shown to the model. The model's arguments are
        validated (and coerced) by that model before the call; a sync function runs in a
        worker thread. A result that is not a ``str`` is sent as JSON.

        Args:
            fn: the function.
            name: the tool name (default: the function's name).
            description: the tool description (default: the docstring's summary).

        Raises:
            ToolUsageError: fn is not callable.
            ConfigError: the name is not ``[a-zA-Z0-9_-]{1,64}``, or a parameter is
                positional-only or variadic, or its type has no JSON schema.

        Example:
            >>> def add(a: int, b: int = 1) -> int:
            ...     '''Add two numbers.
            ...
            ...     Args:
            ...         a: the first.
            ...         b: the second.
            ...     '''
            ...     return a + b
            >>> tool = FunctionTool.from_function(add)
            >>> tool.description, tool.parameters["required"]
            ('Add two numbers.', ['a'])
        """
        if not callable(fn):
            raise ToolUsageError(f"from_function: fn must be callable, got {type(fn).__name__}")
        tool_name = name if name is not None else getattr(fn, "__name__", "")
        if not isinstance(tool_name, str) or not _NAME.match(tool_name):
            raise ConfigError(
                f"from_function: the tool name must match [a-zA-Z0-9_-]{{1,64}}, got {tool_name!r}"
            )
        summary, docs = _docstring(fn)
        signature = inspect.signature(fn)
        try:
            hints = get_type_hints(fn, include_extras=True)
        except Exception as exc:  # unresolvable forward references
            raise ConfigError(
                f"from_function: cannot read the type hints of {tool_name}: {exc}"
            ) from exc
        fields: dict[str, Any] = {}
        wants_ctx = False
        for pname, param in signature.parameters.items():
            if pname == CTX_PARAMETER:
                wants_ctx = True
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
                raise ConfigError(
                    f"from_function: {tool_name}({pname}) must be a named parameter "
                    "(no *args, **kwargs or positional-only ones)"
                )
            annotation = hints.get(pname, Any)
            default = ... if param.default is param.empty else param.default
            doc = docs.get(pname)
            fields[pname] = (
                annotation,
                pydantic.Field(default, description=doc) if doc else pydantic.Field(default),
            )
        try:
            model = pydantic.create_model(
                f"{tool_name}_arguments", __config__=pydantic.ConfigDict(extra="forbid"), **fields
            )
            schema = model.model_json_schema()
        except Exception as exc:
            raise ConfigError(
                f"from_function: no JSON schema for the arguments of {tool_name}: {exc}"
            ) from exc
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        is_async = inspect.iscoroutinefunction(fn)

        async def call(args: dict[str, Any], ctx: Any = None) -> str:
            try:
                parsed = model.model_validate(args if args is not None else {})
            except pydantic.ValidationError as exc:
                raise ToolUsageError(f"{tool_name}: invalid arguments: {exc}") from exc
            kwargs = {k: getattr(parsed, k) for k in fields}
            if wants_ctx:
                kwargs[CTX_PARAMETER] = ctx
            if is_async:
                result = await fn(**kwargs)
            else:
                context = contextvars.copy_context()
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(
                    None, functools.partial(context.run, fn, **kwargs)
                )
                if inspect.isawaitable(result):
                    result = await result
            return _result_text(result)

        return cls(
            name=tool_name,
            description=description if description is not None else summary,
            parameters=schema,
            fn=call,
        )

    def openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI Chat Completions ``tools`` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def anthropic_schema(self) -> dict[str, Any]:
        """The tool as an Anthropic Messages ``tools`` entry."""
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}
