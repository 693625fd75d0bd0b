"""The format registry: convert, detect_format, register_format."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any, Literal, TypeAlias

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._base import Converter, Pinned
from agent_adapter.context.formats._conversion import Conversion
from agent_adapter.context.formats._gemini import GeminiConverter
from agent_adapter.context.formats._langchain import LangChainConverter
from agent_adapter.context.formats._memo import Snap, scan
from agent_adapter.context.formats._openai import OpenAIChatConverter

__all__ = [
    "FORMATS",
    "FormatName",
    "convert",
    "detect_format",
    "register_format",
    "registered_names",
]

FormatName: TypeAlias = Literal[
    "auto", "agent_adapter", "langchain", "openai", "anthropic", "gemini"
]

_CONVERTERS: dict[str, Converter[Any]] = {
    "langchain": LangChainConverter(),
    "openai": OpenAIChatConverter(),
    "anthropic": AnthropicConverter(),
    "gemini": GeminiConverter(),
}
_BUILT_IN = frozenset({"auto", "agent_adapter", *_CONVERTERS})
FORMATS: tuple[str, ...] = ("agent_adapter", *_CONVERTERS)
_REGISTERED: dict[str, tuple[Converter[Any], Callable[[Sequence[Any]], bool] | None]] = {}


def register_format(
    name: str,
    converter: Converter[Any],
    *,
    detect: Callable[[Sequence[Any]], bool] | None = None,
) -> None:
    """Make format=name use converter; with detect, "auto" finds it too.

    Integrations call this when they are imported, so context never imports a framework.
    Registering the same converter class again (a module reload: the same module and
    qualified class name) replaces it.

    Raises:
        ConfigError: the name is empty or built in, the converter is not a Converter, detect
            is not callable, or another converter already has the name.
    """
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("register_format: name must be a non-empty str")
    if name in _BUILT_IN:
        raise ConfigError(f"register_format: {name!r} is a built-in format")
    if not isinstance(converter, Converter):
        raise ConfigError(f"register_format: {type(converter).__name__} is not a Converter")
    if detect is not None and not callable(detect):
        raise ConfigError("register_format: detect must be callable")
    old = _REGISTERED.get(name)
    if old is not None and _class_name(old[0]) != _class_name(converter):
        raise ConfigError(
            f"register_format: {name!r} is already registered to {'.'.join(_class_name(old[0]))}"
        )
    _REGISTERED[name] = (converter, detect)


def _class_name(converter: Converter[Any]) -> tuple[str, str]:
    """A converter's class as (module, qualified name): what stays the same across a reload
    of the module defining it, and differs between two classes that share a name."""
    cls = type(converter)
    return cls.__module__, cls.__qualname__


def registered_names() -> list[str]:
    """Names of the registered formats, in registration order."""
    return list(_REGISTERED)


def check_format_name(name: str, who: str = "") -> None:
    """``name`` is a known format (built in or registered).

    Raises:
        ConfigError: it is not (``who``: the caller the name was given to, for the message).
    """
    if name not in FORMATS and name not in _REGISTERED:
        prefix = f"{who}: " if who else ""
        raise ConfigError(f"{prefix}unknown format {name!r}; known: {[*FORMATS, *_REGISTERED]}")


def detect_format(messages: Sequence[Any]) -> str:
    """The format of a message list; plain {"role", "content": str} dicts count as openai.

    A list that extends one detected before (the same items, unchanged at their top level:
    see :mod:`~agent_adapter.context.formats._memo`) is decided from the remembered items'
    formats and the new items only, so an agent's grown conversation costs its new items.

    Raises:
        ConfigError: the list is empty (it has no format: name one), the items mix formats
            or are not messages of any known format.
    """
    return _detect(messages, None)


def _detect(messages: Sequence[Any], snap: Snap | None) -> str:
    """:func:`detect_format`, with the list's :func:`~._memo.snapshot` when the caller has
    it (compress_for makes one for detection and loading)."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ConfigError(f"messages must be a list, got {type(messages).__name__}")
    if not messages:
        raise ConfigError("an empty message list has no format to detect; pass format= explicitly")
    for name, (_, detect) in _REGISTERED.items():
        if detect is None:
            continue
        try:
            found = detect(messages)
        except Exception as exc:  # an integration's bug must not break every other format
            raise ConfigError(
                f"the detect function registered for format {name!r} raised "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if found:
            return name
    if all(map(isinstance, messages, repeat(Message))):
        return "agent_adapter"
    kinds = scan(messages, _sure_kinds, snap)
    sure = {k for k in kinds if not k.startswith(_NOT)}
    if "agent_adapter" in sure:  # some items are Messages, not all of them
        i = next(i for i, m in enumerate(messages) if not isinstance(m, Message))
        raise ConfigError(
            f"messages mix formats: agent_adapter Messages and messages[{i}], a "
            f"{type(messages[i]).__name__}; convert the list to one format"
        )
    if len(sure) > 1:
        raise ConfigError(f"messages mix formats: {sorted(sure)}")
    name = sure.pop() if sure else "openai"
    if _NOT + name in kinds:
        raise _not_all(messages, name)
    return name


#: A mark in :func:`_sure_kinds`' result: ``_NOT + name`` when some item is no message of
#: the format ``name`` at all (a plain ``{"role", "content"}`` dict in a Gemini list: only
#: the Gemini items are sure, and the chat message would load as an empty one).
_NOT = "!"


def _sure_kinds(items: Sequence[Any], offset: int) -> set[str]:
    """The built-in formats each of ``items`` is sure to be (``items`` start at ``offset``
    of the caller's list), and ``_NOT + name`` for each format some item is not.

    Raises:
        ConfigError: an item is a message of no known format (naming its index).
    """
    sure: set[str] = set()
    for i, item in enumerate(items, offset):
        if isinstance(item, Message):  # the library's own, in a list that is not all of them
            sure.add("agent_adapter")
            continue
        kinds = {name: conv.kind(item) for name, conv in _CONVERTERS.items()}
        if not any(kinds.values()):
            # an SDK's response object (openai's ChatCompletionMessage, anthropic's Message:
            # pydantic models) appended as it came: say how to make it a message
            hint = (
                "; it is a pydantic model: append item.model_dump(exclude_none=True)"
                if callable(getattr(item, "model_dump", None))
                else ""
            )
            raise ConfigError(
                f"messages[{i}] ({type(item).__name__}) is not a message of any known format "
                f"{FORMATS}{hint}"
            )
        sure.update(
            name if k == "sure" else _NOT + name for name, k in kinds.items() if k != "maybe"
        )
    return sure


def _not_all(messages: Sequence[Any], name: str) -> ConfigError:
    """The error for a list detected as ``name`` holding an item that is no ``name``
    message: it names both formats and both items (the error path: a rescan is fine)."""
    converter = _CONVERTERS[name]
    where = next((i for i, item in enumerate(messages) if converter.kind(item) == "sure"), None)
    for i, item in enumerate(messages):
        if converter.kind(item) is None:
            others = [n for n, c in _CONVERTERS.items() if n != name and c.kind(item)]
            seen = f"messages[{where}] is {name}" if where is not None else f"format {name}"
            return ConfigError(
                f"messages mix formats: {seen}, messages[{i}] is not a {name} message but "
                f"{' or '.join(others)}; convert the list to one format, or pass format= "
                "explicitly"
            )
    return ConfigError(f"messages mix formats: not every item is a {name} message")


def convert(
    messages: Sequence[Any],
    format: FormatName | str | Converter[Any] = "auto",
    *,
    pinned: Pinned | None = None,
) -> Conversion[Any]:
    """A Conversion: .messages to compress, .back(compressed) for the native list.

    pinned(native) marks messages no step may change or remove. ``format`` is a format's
    name, or a :class:`Converter` instance used as it is (e.g.
    ``AnthropicConverter(strict_alternation=True)``), without registering it.

    Raises:
        ConfigError: unknown format, agent_adapter (no conversion needed), or an item that is
            not a message of the format.
        MissingDependency: a framework format needs its library to build new messages.
    """
    if not isinstance(messages, list):
        if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
            raise ConfigError(f"messages must be a list, got {type(messages).__name__}")
        messages = list(messages)
    if pinned is not None and not callable(pinned):
        raise ConfigError("pinned must be callable: pinned(native) -> bool")
    if isinstance(format, Converter):
        return Conversion(messages, format, pinned)
    name = detect_format(messages) if format == "auto" else format
    if name == "agent_adapter":
        raise ConfigError(
            "format 'agent_adapter': these are already Message objects; no conversion needed "
            "(pass them to compress() directly)"
        )
    check_format_name(name)
    converter = _CONVERTERS.get(name) or _REGISTERED[name][0]
    return Conversion(messages, converter, pinned)
