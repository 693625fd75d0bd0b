"""Compress any framework's message list: convert it to Message, compress, convert back."""

from agent_adapter.context._compress_for import compress_for, compress_for_sync
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._base import Converter, Pinned
from agent_adapter.context.formats._checks import Violation, check, strip_reserved
from agent_adapter.context.formats._conversion import Conversion
from agent_adapter.context.formats._registry import (
    FORMATS,
    FormatName,
    convert,
    detect_format,
    register_format,
    registered_names,
)

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
