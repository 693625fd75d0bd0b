"""Shared value codecs: tool payloads as JSON text (with a nesting limit) and ``data:`` URLs.

Every converter turns tool inputs into JSON text on load (Anthropic ``tool_use.input``, Gemini
``function_call.args`` and ``function_response.response``, LangChain ``tool_calls[k].args``,
the payload of a Responses ``computer_call``...) and parses call arguments on dump. Python's
``json`` recurses once per nesting level, so a payload nested ~1,000 levels deep raised
``RecursionError`` from deep inside a converter. :func:`to_json` and :func:`check_json_depth`
reject anything nested deeper than :data:`MAX_DEPTH` first, with a
:class:`~agent_adapter._errors.ConfigError` naming the caller's index and field; the walk is
iterative, so it never recurses itself. :func:`parse_json` is the dump side: a text too deep
(or not JSON) is not parsed, so a converter falls back to its "not JSON" rendering and the
reserved carrier keeps the exact text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from agent_adapter._errors import ConfigError

__all__ = [
    "MAX_DEPTH",
    "check_depth",
    "check_json_depth",
    "data_url",
    "parse_json",
    "split_data_url",
    "to_json",
]

#: The deepest nesting of dicts and lists a tool payload may have. Real payloads stay far
#: below it; it leaves room under Python's default recursion limit (1,000) for ``json``,
#: ``copy.deepcopy`` and pickling (LangGraph checkpoints) of the converted messages.
MAX_DEPTH = 200

_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+);base64,(.*)", re.DOTALL)


def _too_deep(value: Any) -> bool:
    """True when ``value`` nests dicts, lists or tuples deeper than :data:`MAX_DEPTH`."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _deep_error(where: str) -> ConfigError:
    return ConfigError(
        f"{where} is nested more than {MAX_DEPTH} levels deep; flatten the tool payload"
    )


def check_depth(value: Any, where: str) -> None:
    """Raise when ``value`` is nested too deep to convert.

    Args:
        value: plain data (dicts, lists, scalars).
        where: the caller's index and field, e.g. ``"messages[3].content[1].input"``.

    Raises:
        ConfigError: ``value`` nests more than :data:`MAX_DEPTH` dicts or lists.
    """
    if _too_deep(value):
        raise _deep_error(where)


def _json_too_deep(text: str) -> bool:
    """True when JSON ``text`` opens more than :data:`MAX_DEPTH` brackets at once (strings
    skipped); text that is not JSON is judged by its brackets all the same."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def check_json_depth(text: str, where: str) -> None:
    """Raise when the JSON ``text`` (call arguments) is nested too deep to parse safely.

    Raises:
        ConfigError: ``text`` opens more than :data:`MAX_DEPTH` brackets at once.
    """
    if _json_too_deep(text):
        raise _deep_error(where)


def to_json(value: Any, where: str, *, ensure_ascii: bool = True, lenient: bool = False) -> str:
    """``value`` as JSON text, after checking its depth.

    Args:
        value: the payload.
        where: the caller's index and field, for the error.
        ensure_ascii: as :func:`json.dumps`.
        lenient: write values JSON has no form for with ``str`` (Gemini and LangChain
            payloads may hold bytes or SDK objects) instead of raising.

    Raises:
        ConfigError: ``value`` is nested too deep, or (without ``lenient``) is not
            JSON-serializable.
    """
    try:
        text = json.dumps(value, ensure_ascii=ensure_ascii, default=str if lenient else None)
    except RecursionError:
        raise _deep_error(where) from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where} is not JSON-serializable: {exc}") from exc
    if _json_too_deep(text):  # the written text tells the depth (a bracket count, usually)
        raise _deep_error(where)
    return text


def parse_json(text: str) -> Any | None:
    """The JSON value of ``text``; ``None`` when it is empty, not JSON or nested too deep."""
    if not text or _json_too_deep(text):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def split_data_url(value: str) -> tuple[str | None, str | None]:
    """``(media_type, data)`` of a ``data:<type>;base64,<data>`` URL, else ``(None, None)``."""
    match = _DATA_URL.fullmatch(value)
    return (match.group(1), match.group(2)) if match else (None, None)


def data_url(media_type: str, data: str) -> str:
    """The ``data:`` URL that :func:`split_data_url` reads back byte for byte."""
    return f"data:{media_type};base64,{data}"
