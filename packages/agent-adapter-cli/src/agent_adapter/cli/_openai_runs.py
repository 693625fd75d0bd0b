"""mini-swe-agent, SWE-agent and tau-bench runs as OpenAI Chat Completions messages.

mini-swe-agent and SWE-agent runs keep their commands in the assistant text; the loaders here
turn them into ``bash`` tool calls and the next observation into its result. tau-bench dialogs
are native Chat Completions already. See :mod:`agent_adapter.cli._loaders` for the shapes.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from agent_adapter.cli._files import NO_RESULT_TEXT, _checked_messages, _load_json, _stem
from agent_adapter.context._pairing import Pairing

__all__ = ["load_mini_swe_agent", "load_swe_agent", "load_tau_bench"]

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


def _is_mini_swe_agent(data: Any) -> bool:
    return isinstance(data, dict) and str(data.get("trajectory_format", "")).startswith(
        "mini-swe-agent"
    )


def _is_tau_bench(data: Any) -> bool:
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and "traj" in item for item in data)
    )


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
        content = _openai_content(path, where, message["content"])
        if message["role"] == "tool":
            out.extend(_swe_tool_messages(path, where, message, content, stats))
            i += 1
            continue
        native = _swe_native(path, where, message, content)
        if message["role"] == "assistant" and not function_calling:
            # function-calling off: no message has tool_calls, so ``native`` has none
            round_ = _text_command_round(path, history, i, native)
            if round_ is not None:
                out.extend(round_)
                stats["text command -> tool call"] += 1
                i += 2
                continue
            stats["assistant text left as text"] += 1
        out.append(native)
        i += 1
    _repair_openai(out, stats)
    return out, stats


def _swe_tool_messages(
    path: Path, where: str, message: dict[str, Any], content: Any, stats: Counter[str]
) -> list[dict[str, Any]]:
    """A SWE-agent tool message: one OpenAI tool message per id it answers."""
    ids = message.get("tool_call_ids")
    if ids is None and isinstance(message.get("tool_call_id"), str):
        ids = [message["tool_call_id"]]
    if not isinstance(ids, list) or not ids or not all(isinstance(x, str) for x in ids):
        raise ValueError(f"{path}: {where}: tool message without tool_call_ids")
    if len(ids) > 1:
        stats["tool message split per id"] += 1
    return [{"role": "tool", "tool_call_id": x, "content": content} for x in ids]


def _swe_native(path: Path, where: str, message: dict[str, Any], content: Any) -> dict[str, Any]:
    """A SWE-agent message other than a tool one, as an OpenAI message."""
    native: dict[str, Any] = {"role": message["role"], "content": content}
    if isinstance(message.get("name"), str):
        native["name"] = message["name"]
    if message["role"] == "assistant" and message.get("tool_calls"):
        native["tool_calls"] = _openai_tool_calls(path, where, message["tool_calls"])
    return native


def _text_command_round(
    path: Path, history: list[dict[str, Any]], i: int, native: dict[str, Any]
) -> list[dict[str, Any]] | None:
    """``history[i]``'s one command block as a bash call and the next user message as its
    result (``native`` edited), or None when it has not exactly one or no user message follows."""
    if i + 1 >= len(history):
        return None
    text = _content_text(native["content"])
    blocks = _command_blocks(text) if text is not None else []
    if len(blocks) != 1 or history[i + 1]["role"] != "user" or text is None:
        return None
    start, end, body = blocks[0]
    call_id = f"call_{i}"
    native["content"] = (text[:start] + text[end:]).strip()
    native["tool_calls"] = [_bash_call(call_id, body.strip())]
    following = _openai_content(path, f"history[{i + 1}]", history[i + 1]["content"])
    return [native, {"role": "tool", "tool_call_id": call_id, "content": following}]


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
    """Minimal in-place repair of what breaks the tool-pairing rule, found by :class:`Pairing`.

    Chat Completions rejects a request otherwise (see :mod:`agent_adapter.context._pairing`).
    A call without a result gets a tool message ``"[no result recorded]"`` right after the
    results of its round, unless nothing answers its round at all and it is in the very last
    message (a pending round); a tool message that answers no open call becomes a ``user``
    message ``"[tool result <id>] <content>"``. Turning a tool message into a user message ends
    the round it sat in: the check then runs again on the repaired list.
    """
    while True:
        pairing = _openai_pairing(messages)
        edits: list[tuple[int, int, list[str]]] = []  # (position, order, call ids)
        for problem in pairing.problems:
            if problem.rule == "tool_without_call":
                edits.append((problem.index, 1, []))
                if _splits_round(messages, problem.index, pairing):
                    break  # the results after it answer another round once it is a user message
            elif problem.rule in ("call_unanswered", "calls_pending_at_end"):
                answered = problem.index in pairing.last_result
                if problem.rule == "calls_pending_at_end" and not answered:
                    continue  # the last message's calls, waiting for their results
                calls = dict.fromkeys(c["id"] for c in messages[problem.index]["tool_calls"])
                missing = [c for c in calls if c in problem.call_ids]
                after = pairing.last_result.get(problem.index, problem.index)
                edits.append((after + 1, 0, missing))
        if not edits:
            return
        # from the end, so positions stay valid; at one position the conversion goes first
        for position, _, missing in sorted(edits, key=lambda e: (-e[0], -e[1])):
            if not missing:
                message = messages[position]
                text = _content_text(message.get("content")) or ""
                orphan_id = message.get("tool_call_id")
                messages[position] = {
                    "role": "user",
                    "content": f"[tool result {orphan_id}] {text}",
                }
                stats["orphan tool message -> user"] += 1
                continue
            messages[position:position] = [
                {"role": "tool", "tool_call_id": call_id, "content": NO_RESULT_TEXT}
                for call_id in missing
            ]
            stats["missing tool result added"] += len(missing)


def _splits_round(messages: list[dict[str, Any]], index: int, pairing: Pairing) -> bool:
    """True when a result of the open round follows the stray tool message at ``index``."""
    k = index + 1
    while k < len(messages) and messages[k]["role"] == "tool":
        if k in pairing.answers:
            return True
        k += 1
    return False


def _openai_pairing(messages: list[dict[str, Any]]) -> Pairing:
    """The :class:`Pairing` of Chat Completions dicts: ``tool`` messages are the results."""
    pairing = Pairing()
    for i, message in enumerate(messages):
        if message["role"] == "tool":
            call_id = message.get("tool_call_id")
            pairing.result(i, call_id if isinstance(call_id, str) else None)
        else:
            pairing.turn(i, [call["id"] for call in message.get("tool_calls") or []])
    pairing.end()
    return pairing


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
