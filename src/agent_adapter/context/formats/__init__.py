"""Compress any framework's message list: convert it to Message, compress, convert back.

The converters, :func:`convert` and :func:`check` need no engine: the formats import neither
the engine nor the steps. :func:`compress_for` and :func:`compress_for_sync` (which join the
formats to the engine) are also exported here, loaded on first use.

One folder a provider holds its converter, part mappers and checker (``_openai/``,
``_anthropic/``, ``_gemini/``, ``_langchain/``); what they share stays here (``_base``,
``_carrier``, ``_codec``, ``_patch``, ``_violations``), with what joins them
(``_registry``, ``_conversion``, ``_memo``, ``_check``).
"""

import typing as _typing

from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._base import Converter, Pinned
from agent_adapter.context.formats._check import check
from agent_adapter.context.formats._conversion import Conversion
from agent_adapter.context.formats._registry import (
    FORMATS,
    FormatName,
    convert,
    detect_format,
    register_format,
    registered_names,
)
from agent_adapter.context.formats._violations import Violation, strip_reserved

__all__ = [
    "FORMATS",
    "AnthropicConverter",
    "Conversion",
    "Converter",
    "FormatName",
    "Pinned",
    "Violation",
    "check",
    "compress_for",
    "compress_for_sync",
    "convert",
    "detect_format",
    "register_format",
    "registered_names",
    "strip_reserved",
]

if _typing.TYPE_CHECKING:
    from agent_adapter.context._compress_for import compress_for, compress_for_sync


_LAZY = ("compress_for", "compress_for_sync")


def __getattr__(name: str) -> _typing.Any:
    # lazy: _compress_for (over the engine) imports the formats, so importing it here is a cycle
    if name in _LAZY:
        import agent_adapter.context._compress_for as _compress_for

        return getattr(_compress_for, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
