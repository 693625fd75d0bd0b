"""Loaders that turn recorded agent runs into native provider message lists.

The datasets described in ``../shared/data/README.md`` (relative to the project root) are real
agent runs written by other people. Each loader here returns *native* provider messages as plain
dicts, so the rest of the package can be tested on conversations nobody on this project wrote:

* OpenAI Chat Completions (``format="openai"``): ``{"role": "system" | "user" | "assistant" |
  "tool", "content": str | list[{"type": "text", "text": str}] | None, "tool_calls"?: [...],
  "tool_call_id"?: str, "name"?: str}``. Every ``role: "tool"`` message answers a call of the
  nearest preceding assistant message, and every call is answered before the next non-tool
  message (a trailing unanswered call is tolerated only as the very last message).
* Anthropic Messages (``format="anthropic"``): ``{"role": "user" | "assistant", "content": str |
  list[block]}`` with strictly alternating roles starting with ``user``; every ``tool_use`` id is
  answered by a ``tool_result`` at the start of the very next user message.

Supported inputs (see :func:`load_trace` for the detection rules):

* mini-swe-agent ``*.traj.json`` (``trajectory_format`` ``"mini-swe-agent-1"``): textual bash
  blocks become ``bash`` tool calls (:func:`load_mini_swe_agent`).
* SWE-agent ``*.traj`` (``history``): :func:`load_swe_agent`.
* tau-bench historical trajectories (a JSON list of ``{task_id, trial, reward, info, traj}``):
  :func:`load_tau_bench`.
* Claude Code session transcripts ``*.jsonl``: :func:`load_claude_code`.
* A plain JSON list (or JSONL file) of provider messages, returned as is in the format
  :func:`agent_adapter.context.formats.detect_format` finds (OpenAI, Anthropic, Gemini).

Where a recording breaks the tool-pairing rule, the loaders repair it with what
:class:`agent_adapter.context._pairing.Pairing` finds (placeholder results for calls without
one, stray results turned into text); the real data sets need no repair.

Malformed input raises :class:`ValueError` naming the file and the problem.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter.cli._claude_code import (
    _claude_code_messages,
    _is_claude_code_record,
    load_claude_code,
)
from agent_adapter.cli._files import NO_RESULT_TEXT, _parse_any, _stem
from agent_adapter.cli._openai_runs import (
    _is_mini_swe_agent,
    _is_tau_bench,
    _mini_name,
    _mini_swe_agent_messages,
    _swe_agent_messages,
    _tau_bench_dialogs,
    load_mini_swe_agent,
    load_swe_agent,
    load_tau_bench,
)
from agent_adapter.context.formats import detect_format

__all__ = [
    "NO_RESULT_TEXT",
    "Trace",
    "load_claude_code",
    "load_mini_swe_agent",
    "load_swe_agent",
    "load_tau_bench",
    "load_trace",
]


@dataclass(frozen=True)
class Trace:
    """One conversation loaded from a dataset file.

    Attributes:
        format: Native format of ``messages``, a format name of
            :mod:`agent_adapter.context.formats`: ``"openai"`` (Chat Completions; Responses
            items in a plain list), ``"anthropic"`` (Messages API) or ``"gemini"``
            (``contents`` dicts in a plain list).
        messages: Native provider messages as plain dicts (see the module docstring).
        source: Kind of file: ``"mini-swe-agent"``, ``"swe-agent"``, ``"tau-bench"``,
            ``"claude-code"``, ``"json"`` or ``"jsonl"``.
        name: Instance id (mini-swe-agent), ``"<stem>[<index>]"`` (tau-bench) or the file stem
            without ``.traj``/``.json``/``.jsonl`` suffixes.
    """

    format: str
    messages: list[dict[str, Any]]
    source: str
    name: str


def load_trace(path: str | os.PathLike[str], *, index: int = 0) -> Trace:
    """Loads any supported file and detects its kind from the content.

    Detection, in order: a JSON object whose ``trajectory_format`` starts with
    ``"mini-swe-agent"``; a JSON object with ``history`` (SWE-agent ``.traj``); a non-empty JSON
    list of objects that all have ``traj`` (tau-bench; ``index`` picks the dialog); JSON lines
    of which any has both ``type`` and ``message`` (Claude Code transcript); a JSON list or JSON
    lines of message objects (returned as is, in the format
    :func:`agent_adapter.context.formats.detect_format` finds: OpenAI Chat Completions or
    Responses items, Anthropic Messages or Gemini ``contents``; plain ``{"role", "content":
    str}`` dicts count as ``"openai"``).

    Args:
        path: File to load.
        index: Dialog to pick from a tau-bench file (ignored for other kinds).

    Returns:
        The loaded :class:`Trace`.

    Raises:
        ValueError: The file is empty, not JSON/JSONL, of an unknown shape, malformed, or
            ``index`` is out of range. The message names the file.
    """
    p = Path(path)
    data, is_jsonl = _parse_any(p)
    if not is_jsonl and _is_mini_swe_agent(data):
        return Trace(
            "openai", _mini_swe_agent_messages(p, data), "mini-swe-agent", _mini_name(p, data)
        )
    if not is_jsonl and isinstance(data, dict) and "history" in data:
        return Trace("openai", _swe_agent_messages(p, data)[0], "swe-agent", _stem(p))
    if not is_jsonl and _is_tau_bench(data):
        dialogs = _tau_bench_dialogs(p, data)
        if not -len(dialogs) <= index < len(dialogs):
            raise ValueError(
                f"{p}: index {index} out of range for {len(dialogs)} tau-bench dialogs"
            )
        return Trace("openai", dialogs[index], "tau-bench", f"{_stem(p)}[{index % len(dialogs)}]")
    records = data if is_jsonl else [data] if isinstance(data, dict) else None
    if records is not None and any(_is_claude_code_record(r) for r in records):
        return Trace("anthropic", _claude_code_messages(p, records)[0], "claude-code", _stem(p))
    if isinstance(data, list):
        messages = _plain_messages(p, data)
        return Trace(
            _plain_format(p, messages), messages, "jsonl" if is_jsonl else "json", _stem(p)
        )
    raise ValueError(
        f"{p}: unknown trace shape: a JSON {type(data).__name__} that is none of mini-swe-agent "
        "(trajectory_format), SWE-agent (history), tau-bench (list with traj), Claude Code "
        "(lines with type and message) or a list of messages"
    )


def _plain_messages(path: Path, data: list[Any]) -> list[dict[str, Any]]:
    if not data:
        raise ValueError(f"{path}: no messages (empty list)")
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise ValueError(
                f"{path}: item {i} is {_article(type(item).__name__)}, expected a message object"
            )
    return list(data)


def _plain_format(path: Path, messages: list[dict[str, Any]]) -> str:
    """The format of a plain message list, as ``detect_format`` finds it.

    Raises:
        ValueError: no known format fits (naming the file and the first item without a string
            ``role``, else what ``detect_format`` says).
    """
    try:
        return detect_format(messages)
    except ConfigError as exc:
        for i, item in enumerate(messages):
            if not isinstance(item.get("role"), str):
                raise ValueError(
                    f"{path}: item {i} has no string 'role'; not a message list"
                ) from exc
        raise ValueError(f"{path}: not a message list of a known format: {exc}") from exc


def _article(noun: str) -> str:
    """``noun`` with its indefinite article (``an int``, ``a str``)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
