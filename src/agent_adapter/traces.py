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
* A plain JSON list (or JSONL file) of provider messages, returned as is.

Malformed input raises :class:`ValueError` naming the file and the problem.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "NO_RESULT_TEXT",
    "Trace",
    "load_claude_code",
    "load_mini_swe_agent",
    "load_swe_agent",
    "load_tau_bench",
    "load_trace",
]

Format = Literal["openai", "anthropic"]

# mini-swe-agent 1.x parses actions with the default ``AgentConfig.action_regex``
# (``minisweagent/agents/default.py``) and strips the match: exactly one match is an action,
# anything else gets the "Please always provide EXACTLY ONE action in triple backticks, found N
# actions." format error. The N in those messages in the data matches this regex every time.
_MINI_ACTION_RE = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)

# SWE-agent ``ThoughtActionParser`` (sweagent/tools/parsing.py): fence lines, where an opening
# fence may carry a language tag and a bare fence closes the innermost open block.
_FENCE_RE = re.compile(r"^```(\S*)\s*\n|^```\s*$", re.MULTILINE)
# SWE-agent ``XMLThoughtActionParser``: the command sits in ``<command>...</command>``.
_XML_COMMAND_RE = re.compile(r"<command>\n?(.*?)\n?</command>", re.DOTALL)

_ANTHROPIC_TOOL_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})

NO_RESULT_TEXT = "[no result recorded]"
"""Content of the ``tool_result`` added for a ``tool_use`` whose result the transcript lacks."""


@dataclass(frozen=True)
class Trace:
    """One conversation loaded from a dataset file.

    Attributes:
        format: Native format of ``messages``: ``"openai"`` (Chat Completions) or
            ``"anthropic"`` (Messages API).
        messages: Native provider messages as plain dicts (see the module docstring).
        source: Kind of file: ``"mini-swe-agent"``, ``"swe-agent"``, ``"tau-bench"``,
            ``"claude-code"``, ``"json"`` or ``"jsonl"``.
        name: Instance id (mini-swe-agent), ``"<stem>[<index>]"`` (tau-bench) or the file stem
            without ``.traj``/``.json``/``.jsonl`` suffixes.
    """

    format: Format
    messages: list[dict[str, Any]]
    source: str
    name: str


# --------------------------------------------------------------------------------------------
# file reading and detection


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read file: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text: {exc}") from exc


def _parse_jsonl(path: Path, text: str) -> list[Any]:
    records: list[Any] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {lineno} is not valid JSON: {exc.msg}") from exc
    return records


def _parse_any(path: Path) -> tuple[Any, bool]:
    """Parses a file as one JSON document, else as JSONL.

    Returns:
        ``(data, is_jsonl)``: the JSON value, or the list of line values for JSONL.
    """
    text = _read_text(path)
    if not text.strip():
        raise ValueError(f"{path}: file is empty")
    try:
        return json.loads(text), False
    except json.JSONDecodeError as first_error:
        if len(text.strip().splitlines()) < 2:
            raise ValueError(f"{path}: not valid JSON: {first_error.msg}") from first_error
    return _parse_jsonl(path, text), True


def _load_json(path: Path) -> Any:
    text = _read_text(path)
    if not text.strip():
        raise ValueError(f"{path}: file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc.msg}") from exc


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".traj.json", ".traj", ".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return path.stem


def _is_mini_swe_agent(data: Any) -> bool:
    return isinstance(data, dict) and str(data.get("trajectory_format", "")).startswith(
        "mini-swe-agent"
    )


def _is_claude_code_record(item: Any) -> bool:
    return isinstance(item, dict) and "type" in item and "message" in item


def _is_tau_bench(data: Any) -> bool:
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and "traj" in item for item in data)
    )


def load_trace(path: str | os.PathLike[str], *, index: int = 0) -> Trace:
    """Loads any supported file and detects its kind from the content.

    Detection, in order: a JSON object whose ``trajectory_format`` starts with
    ``"mini-swe-agent"``; a JSON object with ``history`` (SWE-agent ``.traj``); a non-empty JSON
    list of objects that all have ``traj`` (tau-bench; ``index`` picks the dialog); JSON lines
    of which any has both ``type`` and ``message`` (Claude Code transcript); a JSON list or JSON
    lines of message objects with a string ``role`` (returned as is, ``format="anthropic"`` if
    any message has list content with a ``tool_use``/``tool_result``/``thinking`` block, else
    ``"openai"``).

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
        return Trace(_guess_format(messages), messages, "jsonl" if is_jsonl else "json", _stem(p))
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
                f"{path}: item {i} is a {type(item).__name__}, expected a message object"
            )
        if not isinstance(item.get("role"), str):
            raise ValueError(f"{path}: item {i} has no string 'role'; not a message list")
    return list(data)


def _guess_format(messages: list[dict[str, Any]]) -> Format:
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(block, dict) and block.get("type") in _ANTHROPIC_TOOL_BLOCKS
            for block in content
        ):
            return "anthropic"
    return "openai"


# --------------------------------------------------------------------------------------------
# mini-swe-agent


def _mini_name(path: Path, data: dict[str, Any]) -> str:
    instance_id = data.get("instance_id")
    return instance_id if isinstance(instance_id, str) and instance_id else _stem(path)


def load_mini_swe_agent(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Loads a mini-swe-agent trajectory as OpenAI Chat Completions messages with tool calls.

    Input shape (``*.traj.json``, ``trajectory_format: "mini-swe-agent-1"``): ``{"messages":
    [{"role", "content", "extra"?}, ...], "info": {...}, "instance_id": str}``. Tool use is
    textual: an assistant turn holds a THOUGHT and one fenced bash block (```` ```bash ````),
    and the next ``user`` message (``<returncode>..</returncode><output>..</output>``) is its
    result.

    Conversion (``extra``, the raw provider response, is dropped):

    * Messages before the first assistant message (system prompt and task) keep their role
      and content.
    * An assistant message ``i`` with exactly one block (mini-swe-agent's own ``action_regex``)
      that is followed by a ``user`` message becomes ``{"role": "assistant", "content": <text
      without the block, stripped; "" if nothing is left>, "tool_calls": [{"id": "call_<i>",
      "type": "function", "function": {"name": "bash", "arguments": '{"command": ...}'}}]}`` and
      that user message becomes ``{"role": "tool", "tool_call_id": "call_<i>", "content": ...}``.
      The command is the block body stripped, as mini-swe-agent executed it.
    * Assistant messages with zero or several blocks (answered by a format-error user message)
      stay plain assistant text, and the next user message stays a user message.
    * End of run: in all 30 runs of the dataset the last assistant message is the submit command
      and the last message is its output (the ``git diff``, possibly empty), so it becomes the
      last tool result. An assistant message with one block but no following message would be
      left as plain text: a call is only made when its result exists, so the output never ends
      with an unanswered call.

    Args:
        path: A mini-swe-agent ``.traj.json`` file.

    Returns:
        OpenAI Chat Completions message dicts (one per source message).

    Raises:
        ValueError: Not a mini-swe-agent trajectory, or malformed messages.
    """
    p = Path(path)
    data = _load_json(p)
    if not _is_mini_swe_agent(data):
        raise ValueError(f"{p}: not a mini-swe-agent trajectory (no trajectory_format)")
    return _mini_swe_agent_messages(p, data)


def _checked_messages(path: Path, data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    messages = data.get(key)
    if not isinstance(messages, list):
        raise ValueError(f"{path}: '{key}' is missing or not a list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"{path}: {key}[{i}] is not a message object with a string 'role'")
        if "content" not in message:
            raise ValueError(f"{path}: {key}[{i}] has no 'content'")
    return messages


def _bash_call(call_id: str, command: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }


def _mini_swe_agent_messages(path: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    source = _checked_messages(path, data, "messages")
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(source):
        message = source[i]
        role, content = message["role"], message["content"]
        if role == "assistant" and isinstance(content, str) and i + 1 < len(source):
            actions = list(_MINI_ACTION_RE.finditer(content))
            following = source[i + 1]
            if len(actions) == 1 and following["role"] == "user":
                match = actions[0]
                call_id = f"call_{i}"
                text = (content[: match.start()] + content[match.end() :]).strip()
                out.append(
                    {
                        "role": "assistant",
                        "content": text,
                        "tool_calls": [_bash_call(call_id, match.group(1).strip())],
                    }
                )
                out.append(
                    {"role": "tool", "tool_call_id": call_id, "content": following["content"]}
                )
                i += 2
                continue
        out.append({"role": role, "content": content})
        i += 1
    _repair_openai(out, Counter())
    return out


# --------------------------------------------------------------------------------------------
# SWE-agent


def load_swe_agent(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Loads a SWE-agent ``.traj`` file's ``history`` as OpenAI Chat Completions messages.

    Input shape: ``{"history": [{"role", "content", "agent", "message_type"?, "thought"?,
    "action"?, "tool_calls"?, "tool_call_ids"?, "is_demo"?, ...}], "trajectory": [...], ...}``.
    ``content`` is a string or a list of text parts (``{"type": "text", "text", ...}``).

    Conversion:

    * Only the OpenAI keys (``role``, ``content``, ``tool_calls``, ``tool_call_id``, ``name``)
      are kept; SWE-agent's ``agent``, ``message_type``, ``thought``, ``action``, ``is_demo``,
      ``cache_control`` etc. are dropped. Content part lists become ``[{"type": "text",
      "text": ...}]`` (part-level extras such as ``cache_control`` are dropped).
    * Function-calling runs (any message has ``tool_calls``): ``tool_call_ids`` (a list)
      becomes ``tool_call_id``; a tool message with several ids becomes one tool message per
      id, each with the same content (none of the 22 files has more than one id).
    * Runs without ``tool_calls`` keep the command in the assistant text, in a fenced block
      (``ThoughtActionParser``, nested fences handled like SWE-agent's
      ``sweagent/tools/parsing.py``) or in ``<command>...</command>``
      (``XMLThoughtActionParser``). An assistant message ``i`` with exactly one such block that
      is followed by a ``user`` message becomes an assistant message with the text outside
      the block and a ``bash`` tool call ``call_<i>`` (arguments ``{"command": <body>}``); the
      user message becomes its tool result. Otherwise the text stays as is. In the dataset
      every such run ends with the ``submit`` assistant message and no observation; it stays
      plain assistant text.
    * A final pairing repair (see :func:`_repair_openai`) answers calls without a result and
      turns tool messages without a call into user messages; the 22 files need none.

    Args:
        path: A SWE-agent ``.traj`` file.

    Returns:
        OpenAI Chat Completions message dicts.

    Raises:
        ValueError: No ``history`` list, or malformed messages.
    """
    p = Path(path)
    data = _load_json(p)
    if not isinstance(data, dict) or "history" not in data:
        raise ValueError(f"{p}: not a SWE-agent trajectory (no 'history')")
    return _swe_agent_messages(p, data)[0]


def _openai_content(path: Path, where: str, content: Any) -> Any:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[dict[str, Any]] = []
        for part in content:
            if isinstance(part, str):
                parts.append({"type": "text", "text": part})
            elif isinstance(part, dict) and part.get("type", "text") == "text":
                parts.append({"type": "text", "text": str(part.get("text", ""))})
            elif isinstance(part, dict):
                parts.append(part)
            else:
                raise ValueError(f"{path}: {where}: content part is a {type(part).__name__}")
        return parts
    raise ValueError(f"{path}: {where}: content is a {type(content).__name__}")


def _content_text(content: Any) -> str | None:
    """Returns the text of a string or text-part-list content, None for anything else."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        for p in content
    ):
        return "".join(p["text"] for p in content)
    return None


def _fenced_blocks(text: str) -> list[tuple[int, int, str]]:
    """Top-level fenced code blocks as ``(start, end, body)``, nesting as in SWE-agent."""
    blocks: list[tuple[int, int, str]] = []
    stack: list[re.Match[str]] = []
    for match in _FENCE_RE.finditer(text):
        if stack and not match.group(1):
            start = stack.pop()
            if not stack:
                blocks.append((start.start(), match.end(), text[start.end() : match.start()]))
        elif match.group(1) is not None:
            stack.append(match)
    return blocks


def _command_blocks(text: str) -> list[tuple[int, int, str]]:
    blocks = _fenced_blocks(text)
    blocks += [(m.start(), m.end(), m.group(1)) for m in _XML_COMMAND_RE.finditer(text)]
    return blocks


def _swe_agent_messages(
    path: Path, data: dict[str, Any]
) -> tuple[list[dict[str, Any]], Counter[str]]:
    history = _checked_messages(path, data, "history")
    stats: Counter[str] = Counter()
    function_calling = any(m.get("tool_calls") for m in history)
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(history):
        message = history[i]
        where = f"history[{i}]"
        role = message["role"]
        content = _openai_content(path, where, message["content"])
        if role == "tool":
            ids = message.get("tool_call_ids")
            if ids is None and isinstance(message.get("tool_call_id"), str):
                ids = [message["tool_call_id"]]
            if not isinstance(ids, list) or not ids or not all(isinstance(x, str) for x in ids):
                raise ValueError(f"{path}: {where}: tool message without tool_call_ids")
            if len(ids) > 1:
                stats["tool message split per id"] += 1
            out.extend({"role": "tool", "tool_call_id": x, "content": content} for x in ids)
            i += 1
            continue
        native: dict[str, Any] = {"role": role, "content": content}
        if isinstance(message.get("name"), str):
            native["name"] = message["name"]
        if role == "assistant" and message.get("tool_calls"):
            native["tool_calls"] = _openai_tool_calls(path, where, message["tool_calls"])
        elif role == "assistant" and not function_calling and i + 1 < len(history):
            text = _content_text(content)
            blocks = _command_blocks(text) if text is not None else []
            if len(blocks) == 1 and history[i + 1]["role"] == "user" and text is not None:
                start, end, body = blocks[0]
                call_id = f"call_{i}"
                native["content"] = (text[:start] + text[end:]).strip()
                native["tool_calls"] = [_bash_call(call_id, body.strip())]
                following = _openai_content(path, f"history[{i + 1}]", history[i + 1]["content"])
                out.append(native)
                out.append({"role": "tool", "tool_call_id": call_id, "content": following})
                stats["text command -> tool call"] += 1
                i += 2
                continue
        if role == "assistant" and not function_calling and "tool_calls" not in native:
            stats["assistant text left as text"] += 1
        out.append(native)
        i += 1
    _repair_openai(out, stats)
    return out, stats


def _openai_tool_calls(path: Path, where: str, calls: Any) -> list[dict[str, Any]]:
    if not isinstance(calls, list):
        raise ValueError(f"{path}: {where}: tool_calls is not a list")
    native: list[dict[str, Any]] = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(function, dict)
            or not isinstance(call.get("id"), str)
            or not isinstance(function.get("name"), str)
        ):
            raise ValueError(f"{path}: {where}: malformed tool call {call!r:.200}")
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        native.append(
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": function["name"], "arguments": arguments},
            }
        )
    return native


def _repair_openai(messages: list[dict[str, Any]], stats: Counter[str]) -> None:
    """Minimal in-place repair of OpenAI tool-call pairing.

    Rules (Chat Completions rejects a request otherwise): a ``tool`` message must answer a call
    of the assistant message right before its run of tool messages, and every call must be
    answered before the next non-tool message. A call without a result gets a tool message
    ``"[no result recorded]"``, unless it is in the very last message; a tool message that
    answers no pending call becomes a ``user`` message ``"[tool result <id>] <content>"``.
    """
    pending: list[str] = []
    k = 0
    while k < len(messages):
        message = messages[k]
        if message["role"] == "tool" and message.get("tool_call_id") in pending:
            pending.remove(message["tool_call_id"])
            k += 1
            continue
        for call_id in pending:  # any other message ends the answers to the last calls
            messages.insert(k, {"role": "tool", "tool_call_id": call_id, "content": NO_RESULT_TEXT})
            stats["missing tool result added"] += 1
            k += 1
        pending = []
        if message["role"] == "tool":
            text = _content_text(message.get("content")) or ""
            orphan_id = message.get("tool_call_id")
            messages[k] = {"role": "user", "content": f"[tool result {orphan_id}] {text}"}
            stats["orphan tool message -> user"] += 1
        elif message["role"] == "assistant" and message.get("tool_calls"):
            pending = [call["id"] for call in message["tool_calls"]]
        k += 1
    if pending and messages[-1]["role"] == "tool":  # partly answered calls at the very end
        for call_id in pending:
            messages.append({"role": "tool", "tool_call_id": call_id, "content": NO_RESULT_TEXT})
            stats["missing tool result added"] += 1


# --------------------------------------------------------------------------------------------
# tau-bench


def load_tau_bench(path: str | os.PathLike[str]) -> list[list[dict[str, Any]]]:
    """Loads every dialog of a tau-bench historical trajectory file.

    Input shape: ``[{"task_id", "trial", "reward", "info", "traj": [OpenAI message...]}]``
    (``historical_trajectories/gpt-4o-airline.json`` holds 200). ``traj`` is already native
    OpenAI Chat Completions (``tool_calls``, ``role: "tool"`` with ``tool_call_id`` and
    ``name``) and is returned as is.

    Args:
        path: A tau-bench trajectory JSON file.

    Returns:
        One OpenAI message list per dialog, in file order.

    Raises:
        ValueError: Not a non-empty list of objects with a ``traj`` message list.
    """
    p = Path(path)
    data = _load_json(p)
    if not _is_tau_bench(data):
        raise ValueError(f"{p}: not a tau-bench trajectory list (objects with 'traj')")
    return _tau_bench_dialogs(p, data)


def _tau_bench_dialogs(path: Path, data: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [_checked_messages(path, item, "traj") for item in data]


# --------------------------------------------------------------------------------------------
# Claude Code


def load_claude_code(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Loads a Claude Code session transcript as Anthropic Messages API messages.

    Input shape: JSON lines; ``type`` is ``user``, ``assistant``, ``system``, ``progress``,
    ``file-history-snapshot`` or ``queue-operation``; only ``user`` and ``assistant`` lines carry
    a ``message`` (``{"role", "content": str | [block]}``, assistant lines also ``id``,
    ``model``, ``usage``...). Claude Code writes every content block of one API response as its
    own line.

    Conversion, in file order (the ``parentUuid`` tree is not followed):

    1. Keep ``user``/``assistant`` lines with a ``message``; skip ``isSidechain`` lines, except
       that a file whose lines are *all* sidechain (a ``subagents/agent-*.jsonl`` transcript) is
       kept whole. ``isMeta`` (hook output) and ``isCompactSummary`` lines are kept: the model
       saw them.
    2. Merge assistant lines that share ``message.id`` into one message, concatenating blocks in
       order. Besides consecutive lines this also merges lines separated only by user lines
       that hold nothing but ``tool_result`` blocks: Claude Code logs the result of a tool it
       ran while the response was still streaming before the response's next ``tool_use``
       line, but the model produced (and the API later received) one message.
    3. Drop whitespace-only ``text`` blocks/strings (the API rejects them: "text content blocks
       must contain non-whitespace text"; Claude Code logs a ``"\\n\\n"`` text block before many
       thinking blocks), then messages left empty.
    4. Merge consecutive same-role messages (the API requires alternation); a string content
       becomes a ``{"type": "text", "text": ...}`` block.
    5. Pair tool uses (the API requires every ``tool_use`` to be answered by a ``tool_result``
       in the very next user message, results first): a missing result becomes
       ``{"type": "tool_result", "tool_use_id": id, "content": "[no result recorded]",
       "is_error": true}`` (appending a user message if the transcript ends with the call); a
       ``tool_result`` answering no ``tool_use`` of the previous message becomes a text block
       ``"[tool result <id>] <text>"``; ``tool_result`` blocks are moved before other blocks of
       their user message when needed.
    6. A leading assistant message gets a user message ``"[conversation start]"`` before it.

    Output dicts hold only ``role`` and ``content``; block dicts are the file's own (thinking
    blocks keep their ``signature``, tool_use blocks their ``caller``). In this dataset the
    signatures are mostly redacted (``[REDACTED_SIGNATURE]``), so thinking blocks would not
    verify against the real API.

    Args:
        path: A Claude Code ``.jsonl`` transcript.

    Returns:
        Anthropic Messages API message dicts.

    Raises:
        ValueError: A line is not JSON, or no user/assistant message is left.
    """
    p = Path(path)
    text = _read_text(p)
    if not text.strip():
        raise ValueError(f"{p}: file is empty")
    return _claude_code_messages(p, _parse_jsonl(p, text))[0]


def _is_tool_result_only(content: Any) -> bool:
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def _is_blank_text(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and not str(block.get("text", "")).strip()
    )


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', 'block')}]")
        return "\n".join(parts)
    return "" if content is None else str(content)


def _claude_code_messages(
    path: Path, records: list[Any]
) -> tuple[list[dict[str, Any]], Counter[str]]:
    stats: Counter[str] = Counter()
    lines = [
        r
        for r in records
        if isinstance(r, dict)
        and r.get("type") in ("user", "assistant")
        and isinstance(r.get("message"), dict)
    ]
    if lines and not all(r.get("isSidechain") for r in lines):
        main_lines = [r for r in lines if not r.get("isSidechain")]
        if len(main_lines) < len(lines):
            stats["sidechain lines skipped"] += len(lines) - len(main_lines)
        lines = main_lines

    # 1-2: one message per API response
    messages: list[dict[str, Any]] = []
    open_id: Any = None  # message.id of the last assistant message, while still mergeable
    open_index = -1
    for record in lines:
        message = record["message"]
        role = message.get("role", record["type"])
        content = message.get("content")
        if role not in ("user", "assistant") or not isinstance(content, str | list):
            raise ValueError(f"{path}: {record['type']} line has a malformed message")
        if role == "assistant":
            message_id = message.get("id")
            if message_id is not None and message_id == open_id:
                if open_index != len(messages) - 1:
                    stats["same-id lines merged across tool results"] += 1
                messages[open_index]["content"] = [
                    *_blocks(messages[open_index]["content"]),
                    *_blocks(content),
                ]
                continue
            open_id, open_index = message_id, len(messages)
        elif not _is_tool_result_only(content):
            open_id = None
        messages.append(
            {"role": role, "content": content if isinstance(content, str) else list(content)}
        )

    # 3: whitespace-only text and empty messages
    kept: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            if not content.strip():
                stats["empty message dropped"] += 1
                continue
        else:
            blocks = [b for b in content if not _is_blank_text(b)]
            if len(blocks) < len(content):
                stats["whitespace text block dropped"] += len(content) - len(blocks)
            if not blocks:
                stats["empty message dropped"] += 1
                continue
            message = {"role": message["role"], "content": blocks}
        kept.append(message)

    # 4: alternation
    merged: list[dict[str, Any]] = []
    for message in kept:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1]["content"] = [*_blocks(merged[-1]["content"]), *_blocks(message["content"])]
            stats[f"consecutive {message['role']} messages merged"] += 1
        else:
            merged.append(dict(message))
    if not merged:
        raise ValueError(f"{path}: no user or assistant messages")

    # 6: first message must be user
    if merged[0]["role"] != "user":
        merged.insert(0, {"role": "user", "content": "[conversation start]"})
        stats["user message added at start"] += 1

    # 5: tool_use / tool_result pairing
    k = 0
    while k < len(merged):
        message = merged[k]
        if message["role"] == "assistant":
            k += 1
            continue
        previous = merged[k - 1] if k > 0 else None
        use_ids = _tool_use_ids(previous)
        merged[k] = _paired_user_message(message, use_ids, stats)
        k += 1
    last_ids = _tool_use_ids(merged[-1])
    if last_ids:
        merged.append(_paired_user_message({"role": "user", "content": []}, last_ids, stats))
        stats["user message added at end"] += 1
    return merged, stats


def _tool_use_ids(message: dict[str, Any] | None) -> list[str]:
    if message is None or message["role"] != "assistant" or isinstance(message["content"], str):
        return []
    return [
        str(b.get("id"))
        for b in message["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def _paired_user_message(
    message: dict[str, Any], use_ids: list[str], stats: Counter[str]
) -> dict[str, Any]:
    """Returns ``message`` (a user message) made to answer exactly ``use_ids``, results first."""
    content = message["content"]
    has_results = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
    if not use_ids and not has_results:
        return message
    results: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    answered: set[str] = set()
    reordered = False
    for block in _blocks(content):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            use_id = str(block.get("tool_use_id"))
            if use_id in use_ids and use_id not in answered:
                answered.add(use_id)
                results.append(block)
                reordered = reordered or bool(others)
                continue
            text = f"[tool result {use_id}] {_result_text(block.get('content'))}"
            others.append({"type": "text", "text": text})
            stats["orphan tool_result -> text"] += 1
        else:
            others.append(block)
    for use_id in use_ids:
        if use_id not in answered:
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": use_id,
                    "content": NO_RESULT_TEXT,
                    "is_error": True,
                }
            )
            stats["missing tool_result added"] += 1
    if reordered:
        stats["tool_result blocks moved first"] += 1
    return {"role": "user", "content": [*results, *others]}
