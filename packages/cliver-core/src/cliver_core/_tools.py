"""Tools: ``CLIverTool``, the ``@tool`` decorator, the registry, and result formatting.

``@tool`` builds what 0.3.0a5's builds: its JSON schema (``string`` / ``integer`` /
``number`` / ``boolean`` / ``array`` / ``object`` from the type hints, ``{"type": "string"}``
for what it does not know, every signature parameter walked) and its argument coercion
(``"100"`` for an ``int``), so the model sees the same tools after an upgrade.

``@tool(typed=True)`` opts in to this project's richer tools: the schema from
:meth:`agent_adapter.FunctionTool.from_function` (type hints through pydantic, Google-style
``Args:`` descriptions, defaults, nested models, ``additionalProperties: false``) and the
arguments validated and coerced by a pydantic model of the signature (a JSON object for a
pydantic model becomes the model). Where that cannot work (a type pydantic has no schema for,
``*args`` / ``**kwargs``, a positional-only or ``ctx`` parameter, unresolvable forward
references) it falls back to 0.3.0a5's schema and coercion, and arguments its model rejects
are passed on with 0.3.0a5's coercion, so a call fails only where it failed on 0.3.0a5.
A plain function given as a tool (``AgentCore(builtin_tools=[fn])``, not a 0.3.0a5 form)
is built typed. A tool returns a ``str``, a 0.3.0a5-style ``list[dict]``
(``[{"text": ...}]``, ``[{"error": ...}]``) or anything JSON-serializable, formatted as
0.3.0a5 formats it (:func:`format_result`: a plain ``str`` JSON-quoted); the ``str`` of a
typed tool, a plain function or a FunctionTool (none a 0.3.0a5 form) is sent as is.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pydantic
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from agent_adapter import ConfigError, FunctionTool
from agent_adapter._sync import run_sync

__all__ = ["CLIverTool", "ToolRegistry", "format_result", "tool", "tool_list"]

logger = logging.getLogger("cliver_core.tool")

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")

#: The context an agent_adapter FunctionTool is called with while a run executes it (set
#: by the run around each call, see ``run_call``): its owner is the run's compactor's, so
#: ``search_context`` and ``recall_context`` read what the run's ``PolicyCompactor`` saved.
TOOL_CTX: contextvars.ContextVar[Any] = contextvars.ContextVar("cliver_tool_ctx", default=None)


class CLIverTool(BaseModel):
    """A tool: what the model sees and how to run it (0.3.0a5's fields, plus ``aexecute``).

    Attributes:
        name: the tool name (providers accept ``[a-zA-Z0-9_-]{1,64}``).
        description: one line for the model.
        long_description: the full docstring, for people.
        parameters: the JSON schema of the arguments object.
        execute: a sync callable taking the arguments as keywords (run in a worker thread).
        aexecute: an async callable taking the arguments as keywords (awaited on the loop);
            used instead of ``execute`` when set.
        safety: ``"safe"`` tools run without asking the permission callback; any other
            value (the default ``"mutating"``) asks first.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str
    long_description: str | None = None
    parameters: dict[str, Any]
    execute: Callable[..., Any]
    #: never serialized (``model_dump`` gives 0.3.0a5's fields: a tool dumps to JSON)
    aexecute: Callable[..., Awaitable[Any]] | None = Field(default=None, exclude=True)
    safety: str = "mutating"
    #: set on a typed tool and a wrapped FunctionTool (not 0.3.0a5 forms): a ``str`` it
    #: returns is the result text itself, not JSON-quoted (see :func:`run_tool`)
    _returns_text: bool = PrivateAttr(default=False)

    def to_openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI Chat Completions ``tools`` entry (as 0.3.0a5)."""
        return self.function_tool().openai_schema()

    def to_anthropic_schema(self) -> dict[str, Any]:
        """The tool as an Anthropic Messages ``tools`` entry (as 0.3.0a5)."""
        return self.function_tool().anthropic_schema()

    def function_tool(self) -> FunctionTool:
        """The tool as the providers see it (the loop runs it itself)."""

        async def call(args: dict[str, Any], ctx: Any = None) -> str:
            return format_result(await run_tool(self, args))[0]

        return FunctionTool(self.name, self.description, self.parameters, call)


async def run_tool(tool: CLIverTool, args: dict[str, Any]) -> Any:
    """Run ``tool`` with ``args``: ``aexecute`` awaited, else ``execute`` in a thread.

    Both see the caller's context variables (the ambient
    :class:`~cliver_core.policy.ExecutionPolicy` among them).

    Args:
        tool: the tool.
        args: the model's arguments, passed as keywords.

    Returns:
        What the tool returned (see :func:`format_result`); the non-empty ``str`` of a
        typed tool or a wrapped FunctionTool as ``[{"text": t}]``, so it is sent as is.
    """
    if tool.aexecute is not None:
        result = await tool.aexecute(**args)
    else:
        result = await asyncio.to_thread(tool.execute, **args)
    if tool._returns_text and isinstance(result, str) and result:
        return [{"text": result}]
    return result


# -- 0.3.0a5's schema and coercion (the fallback) -----------------------------------------


def _python_type_to_json_schema(annotation: Any) -> dict[str, Any]:
    """0.3.0a5's JSON schema of one annotation: the basic types, ``X | None``, ``list[X]``,
    ``dict[K, V]``; anything else (a string annotation included) is ``{"type": "string"}``.

    ``typing.Optional[X]`` is not unwrapped (0.3.0a5 only recognizes ``types.UnionType``).
    """
    origin = get_origin(annotation)
    args = get_args(annotation)
    if getattr(origin, "__name__", None) == "UnionType":
        members = [a for a in args if a is not type(None)]
        return _python_type_to_json_schema(members[0]) if len(members) == 1 else {"type": "string"}
    simple: dict[Any, dict[str, Any]] = {
        str: {"type": "string"},
        int: {"type": "integer"},
        float: {"type": "number"},
        bool: {"type": "boolean"},
        Path: {"type": "string", "format": "path"},
    }
    for kind, schema in simple.items():
        if annotation is kind:
            return dict(schema)
    if origin is list:
        return {"type": "array", "items": _python_type_to_json_schema(args[0]) if args else {}}
    if origin is dict:
        return {"type": "object"}
    return {"type": "string"}


def _is_optional(annotation: Any) -> bool:
    """0.3.0a5's test for an optional annotation: ``X | None`` (not ``typing.Optional``)."""
    origin = get_origin(annotation)
    return getattr(origin, "__name__", None) == "UnionType" and type(None) in get_args(annotation)


def _legacy_parameters(fn: Callable[..., Any]) -> dict[str, Any]:
    """0.3.0a5's schema of ``fn``'s arguments.

    Every signature parameter is a property (``*args`` and ``**kwargs`` too, by name); an
    unannotated one is a required string; an annotated one is required unless it has a
    default or is ``X | None``. One difference: a postponed annotation (``from __future__
    import annotations``) is resolved first where it can be, so ``n: int`` is an integer
    (0.3.0a5 reads the string ``"int"`` and makes every such parameter a string, without
    coercion).
    """
    try:
        hints = get_type_hints(fn)
    except Exception:  # unresolvable forward references: the annotations as written
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in inspect.signature(fn).parameters.items():
        if param.annotation is inspect.Parameter.empty:
            properties[pname] = {"type": "string"}
            required.append(pname)
            continue
        annotation = hints.get(pname, param.annotation)
        properties[pname] = _python_type_to_json_schema(annotation)
        if param.default is inspect.Parameter.empty and not _is_optional(annotation):
            required.append(pname)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return parameters


def _coerce_args(parameters: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """0.3.0a5's argument coercion by the schema's types.

    ``"integer"`` properties go through ``int()``, ``"number"`` through ``float()``,
    ``"boolean"`` ones are true for ``"true"``, ``"1"``, ``"yes"`` (any case); a value that
    does not convert, and every other property, is passed as given.
    """
    properties = parameters.get("properties", {})
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        kind = properties.get(key, {}).get("type", "string")
        try:
            if kind == "integer" and not isinstance(value, int):
                value = int(value)
            elif kind == "number" and not isinstance(value, int | float):
                value = float(value)
            elif kind == "boolean" and not isinstance(value, bool):
                value = str(value).lower() in ("true", "1", "yes")
        except (TypeError, ValueError):
            pass
        out[key] = value
    return out


def _first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped (0.3.0a5's default description)."""
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


# -- our schema and validation ------------------------------------------------------------


def _pydantic_arguments(
    fn: Callable[..., Any],
) -> tuple[dict[str, Any], type[BaseModel]] | None:
    """Our schema of ``fn``'s arguments and the model validating them, or None when either
    cannot be built or the schema would not show every parameter."""
    try:
        schema = FunctionTool.from_function(fn, name="tool").parameters
        names = list(inspect.signature(fn).parameters)
        if sorted(schema.get("properties", {})) != sorted(names):
            return None  # e.g. a ``ctx`` parameter, which from_function hides
        hints = get_type_hints(fn, include_extras=True)
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(fn).parameters.items():
            default = ... if param.default is param.empty else param.default
            fields[pname] = (hints.get(pname, Any), default)
        model = pydantic.create_model("arguments", __config__=ConfigDict(extra="forbid"), **fields)
    except Exception as exc:  # no schema or no validator: 0.3.0a5's way
        logger.debug("tool %s: 0.3.0a5's schema and coercion (%s)", _fn_name(fn), exc)
        return None
    return schema, model


def _fn_name(fn: Callable[..., Any]) -> str:
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def _arguments_for(
    model: type[BaseModel] | None, legacy: dict[str, Any]
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The function turning the model's arguments into ``fn``'s keywords."""

    def arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
        if model is not None:
            try:
                parsed = model.model_validate(kwargs)
            except pydantic.ValidationError:
                pass  # 0.3.0a5 would call fn anyway: so do we
            else:
                return {key: getattr(parsed, key) for key in kwargs}
        return _coerce_args(legacy, kwargs)

    return arguments


def _build(
    fn: Callable[..., Any],
    *,
    name: str | None,
    description: str,
    safety: str,
    parameters: dict[str, Any] | None = None,
    legacy_only: bool = False,
) -> CLIverTool:
    legacy = parameters if parameters is not None else _legacy_parameters(fn)
    ours = None if legacy_only else _pydantic_arguments(fn)
    schema, model = ours if ours is not None else (legacy, None)
    arguments = _arguments_for(model, legacy)
    tool_name = name or _fn_name(fn)
    if not _NAME.fullmatch(tool_name):
        logger.warning(
            "tool name %r is not [a-zA-Z0-9_-]{1,64}: the model sees it with '_' for the "
            "other characters (its calls come back under this name)",
            tool_name,
        )
    doc = inspect.getdoc(fn)
    aexecute: Callable[..., Awaitable[Any]] | None = None
    if inspect.iscoroutinefunction(fn):

        async def run_async(**kwargs: Any) -> Any:
            return await fn(**arguments(kwargs))

        def execute(**kwargs: Any) -> Any:
            return run_sync(lambda: run_async(**kwargs))

        aexecute = run_async
    else:

        def execute(**kwargs: Any) -> Any:
            return fn(**arguments(kwargs))

    built = CLIverTool(
        name=tool_name,
        description=description or _first_line(doc or ""),
        long_description=doc,
        parameters=schema,
        execute=execute,
        aexecute=aexecute,
        safety=safety,
    )
    # a typed tool is not a 0.3.0a5 form: its str is the result text, sent as is
    built._returns_text = not legacy_only
    return built


def tool(
    *,
    name: str | None = None,
    description: str = "",
    safety: str = "mutating",
    typed: bool = False,
) -> Callable[[Callable[..., Any]], CLIverTool]:
    """Turn a sync or async function into a :class:`CLIverTool` (0.3.0a5's signature, plus
    ``typed``).

    The schema and argument coercion are 0.3.0a5's; with ``typed=True`` pydantic's (see the
    module docstring). This never raises where 0.3.0a5 does not. As in 0.3.0a5 the
    description defaults to the docstring's first line, the docstring is
    ``long_description``, and ``execute`` is synchronous (an async function runs under
    :func:`asyncio.run`, or in a worker thread with its own loop when the calling thread
    already runs one; ``aexecute`` awaits it on the caller's loop).

    Example:
        >>> @tool(description="Add two numbers.")
        ... def add(a: int, b: int = 1) -> str:
        ...     return str(a + b)
        >>> add.name, add.parameters["required"], add.execute(a="2")
        ('add', ['a'], '3')

    Args:
        name: the tool name (default: the function's).
        description: the line the model sees (default: the docstring's first line).
        safety: ``"safe"`` skips the permission callback.
        typed: the schema and validation from the type hints through pydantic.
    """

    def decorator(fn: Callable[..., Any]) -> CLIverTool:
        return _build(fn, name=name, description=description, safety=safety, legacy_only=not typed)

    return decorator


def compat_tool(
    *,
    name: str,
    description: str,
    safety: str = "mutating",
    parameters: dict[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], CLIverTool]:
    """``@tool`` as 0.3.0a5 builds it: 0.3.0a5's schema (or ``parameters`` as given) and
    0.3.0a5's argument coercion; used by the builtin tools, whose schemas are 0.3.0a5's."""

    def decorator(fn: Callable[..., Any]) -> CLIverTool:
        return _build(
            fn,
            name=name,
            description=description,
            safety=safety,
            parameters=parameters,
            legacy_only=True,
        )

    return decorator


def _from_function_tool(ft: FunctionTool) -> CLIverTool:
    """``ft`` as a CLIverTool whose ``execute`` returns ``ft``'s text. A FunctionTool's text
    is the result as the model reads it, so :func:`run_tool` hands it on as
    ``[{"text": t}]`` (sent as is, where a plain ``str`` a ``@tool`` returns is JSON-quoted
    as in 0.3.0a5: see :func:`format_result`)."""

    async def call(**kwargs: Any) -> str:
        return await ft(kwargs, TOOL_CTX.get())

    def call_sync(**kwargs: Any) -> str:
        ctx = TOOL_CTX.get()
        return run_sync(lambda: ft(kwargs, ctx))

    wrapped = CLIverTool(
        name=ft.name,
        description=ft.description,
        parameters=ft.parameters,
        execute=call_sync,
        aexecute=call,
    )
    wrapped._returns_text = True
    return wrapped


def tool_list(tools: Sequence[Any] | None, where: str) -> list[CLIverTool]:
    """``tools`` as CLIverTools: a CLIverTool as is, a FunctionTool or a plain function
    wrapped (a function as by ``tool()``).

    Args:
        tools: the items.
        where: how to name the sequence in an error (``"tools"``).

    Raises:
        ConfigError: an item is none of those, or a function's name is not
            ``[a-zA-Z0-9_-]{1,64}`` (naming ``where[i]``).
    """
    out: list[CLIverTool] = []
    for i, item in enumerate(tools or ()):
        if isinstance(item, CLIverTool):
            out.append(item)
        elif isinstance(item, FunctionTool):
            out.append(_from_function_tool(item))
        elif callable(item):
            fn_name = _fn_name(item)
            if not _NAME.fullmatch(fn_name):
                raise ConfigError(
                    f"{where}[{i}]: the tool name must match [a-zA-Z0-9_-]{{1,64}}, "
                    f"got {fn_name!r} (wrap it with @tool(name=...))"
                )
            out.append(tool(typed=True)(item))
        else:
            raise ConfigError(f"{where}[{i}] is {type(item).__name__}, not a tool")
    return out


class ToolRegistry:
    """The builtin tools of an agent by name; registering is enabling (as 0.3.0a5).

    Args:
        tools: the first tools (a later one of a name replaces an earlier one).
    """

    def __init__(self, tools: Sequence[CLIverTool] | None = None) -> None:
        self._by_name: dict[str, CLIverTool] = {}
        self.register_all(tools or [])

    def register(self, tool: CLIverTool) -> None:
        """Add ``tool``, replacing one of the same name."""
        self._by_name[tool.name] = tool

    def register_all(self, tools: Sequence[CLIverTool]) -> None:
        """Add each of ``tools`` in order (a later one of a name wins)."""
        for item in tools:
            self._by_name[item.name] = item

    @property
    def all_tools(self) -> list[CLIverTool]:
        """The tools, sorted by name."""
        return sorted(self._by_name.values(), key=lambda t: t.name)

    def get(self, name: str) -> CLIverTool | None:
        """The tool called ``name``, or None."""
        return self._by_name.get(name)

    @property
    def tool_names(self) -> list[str]:
        """The tools' names, sorted."""
        return [t.name for t in self.all_tools]


def format_result(result: Any) -> tuple[str, bool]:
    """A tool's return value as the result text, and whether it is an error.

    0.3.0a5's ``AgentCore._format_tool_result`` and ``_is_error``, byte for byte, for every
    type (a drop-in successor; the reference documents no other rule):

    - anything falsy (``None``, ``""``, ``[]``, ``{}``, ``0``, ``False``) is ``"(no output)"``;
    - a one-item list whose item is a dict: ``[{"error": e}]`` is ``"Error: e"`` (an error),
      ``[{"text": t}]`` is ``str(t)``, ``[{"tool_result": r}]`` is ``str(r)``;
    - anything else with a length is its JSON (``ensure_ascii=False``, ``default=str``): a
      plain ``str`` is JSON-quoted (the model receives ``"\\"text\\""``), a ``dict`` of two
      keys or more is its object, ``bytes`` are the quoted ``str()`` of the bytes; it is an
      error when an item it iterates over is a dict holding ``"error"``;
    - a one-key ``dict`` raises ``KeyError(0)`` (0.3.0a5 indexes ``result[0]``) and a
      non-zero number or an object without a length (a pydantic model) raises
      ``TypeError``: the loop reports the exception as the tool's error
      (``"Error: 0"``, ``"Error: object of type 'int' has no len()"``), as 0.3.0a5 does.

    Tools that mean their text as is return ``[{"text": t}]`` (the builtin and skill tools,
    MCP calls, and a wrapped agent_adapter ``FunctionTool``).

    Args:
        result: what the tool returned.

    Returns:
        ``(text, is_error)``.

    Raises:
        KeyError: ``result`` is a one-key dict without the key ``0``.
        TypeError: ``result`` is truthy and has no length.
    """
    if not result:
        return "(no output)", False
    if len(result) == 1 and isinstance(result[0], dict):
        only = result[0]
        if "error" in only:
            return f"Error: {only['error']}", True
        if "text" in only:
            return str(only["text"]), False
        if "tool_result" in only:
            return str(only["tool_result"]), False
    text = json.dumps(result, ensure_ascii=False, default=str)
    return text, any(isinstance(r, dict) and "error" in r for r in result)
