"""Reading the recorded-session files: JSON, JSON lines, and the checks every loader shares."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

NO_RESULT_TEXT = "[no result recorded]"
"""Content of the result a loader adds for a tool call whose result the recording lacks."""


def _read_text(path: Path) -> str:
    """The file as UTF-8 text.

    Raises:
        ValueError: it cannot be read or is not UTF-8 (naming the file).
    """
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read file: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text: {exc}") from exc


def _too_deep(path: Path, where: str = "") -> ValueError:
    """The error for JSON nested past what Python's parser reads: it recurses once a level
    and raises ``RecursionError`` near the recursion limit (1,000 by default)."""
    return ValueError(
        f"{path}: {where}JSON nested too deep to read (more than about "
        f"{sys.getrecursionlimit():,} levels of brackets)"
    )


def _parse_jsonl(path: Path, text: str) -> list[Any]:
    """The values of the non-blank lines of ``text``.

    Raises:
        ValueError: a line is not JSON or nested too deep to read (naming the file and the
            line number).
    """
    records: list[Any] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {lineno} is not valid JSON: {exc.msg}") from exc
        except RecursionError:
            raise _too_deep(path, f"line {lineno}: ") from None
    return records


def _parse_any(path: Path) -> tuple[Any, bool]:
    """The file as one JSON document, else as JSONL (a ``.jsonl`` / ``.ndjson`` file of one
    object is JSONL of one line: one message, not a document of another shape).

    Returns:
        ``(data, is_jsonl)``: the JSON value, or the list of line values for JSONL.

    Raises:
        ValueError: the file is empty, unreadable, neither JSON nor JSONL, or nested too deep
            to read.
    """
    text = _read_text(path)
    if not text.strip():
        raise ValueError(f"{path}: file is empty")
    try:
        data = json.loads(text)
        if isinstance(data, dict) and path.suffix.lower() in (".jsonl", ".ndjson"):
            return [data], True
        return data, False
    except json.JSONDecodeError as first_error:
        if len(text.strip().splitlines()) < 2:
            raise ValueError(f"{path}: not valid JSON: {first_error.msg}") from first_error
    except RecursionError:
        if len(text.strip().splitlines()) < 2:
            raise _too_deep(path) from None
    return _parse_jsonl(path, text), True


def _load_json(path: Path) -> Any:
    """The file as one JSON document.

    Raises:
        ValueError: the file is empty, unreadable, not JSON or nested too deep to read.
    """
    text = _read_text(path)
    if not text.strip():
        raise ValueError(f"{path}: file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc.msg}") from exc
    except RecursionError:
        raise _too_deep(path) from None


def _stem(path: Path) -> str:
    """The file name without ``.traj.json`` / ``.traj`` / ``.jsonl`` / ``.json``."""
    name = path.name
    for suffix in (".traj.json", ".traj", ".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return path.stem


def _checked_messages(path: Path, data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """``data[key]`` as a list of ``{"role": str, "content": ...}`` dicts.

    Raises:
        ValueError: it is missing, not a list, or holds something else.
    """
    messages = data.get(key)
    if not isinstance(messages, list):
        raise ValueError(f"{path}: '{key}' is missing or not a list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"{path}: {key}[{i}] is not a message object with a string 'role'")
        if "content" not in message:
            raise ValueError(f"{path}: {key}[{i}] has no 'content'")
    return messages
