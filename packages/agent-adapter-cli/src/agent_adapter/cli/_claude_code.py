"""Claude Code session transcripts (JSON lines) as Anthropic Messages API messages."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from agent_adapter.cli._files import NO_RESULT_TEXT, _parse_jsonl, _read_text
from agent_adapter.context._pairing import Pairing

__all__ = ["load_claude_code"]


def _is_claude_code_record(item: Any) -> bool:
    return isinstance(item, dict) and "type" in item and "message" in item


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
    messages = _one_per_response(path, _main_lines(records, stats), stats)  # 1-2
    merged = _alternate(_drop_empty(messages, stats), stats)  # 3-4
    if not merged:
        raise ValueError(f"{path}: no user or assistant messages")

    # 6: first message must be user
    if merged[0]["role"] != "user":
        merged.insert(0, {"role": "user", "content": "[conversation start]"})
        stats["user message added at start"] += 1

    # 5: tool_use / tool_result pairing
    _pair_tool_uses(merged, stats)
    return merged, stats


def _main_lines(records: list[Any], stats: Counter[str]) -> list[dict[str, Any]]:
    """The user and assistant lines that carry a message, the main chain's when there is one."""
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
    return lines


def _one_per_response(
    path: Path, lines: list[dict[str, Any]], stats: Counter[str]
) -> list[dict[str, Any]]:
    """1-2: one message per API response (an assistant message's lines share its id)."""
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
    return messages


def _drop_empty(messages: list[dict[str, Any]], stats: Counter[str]) -> list[dict[str, Any]]:
    """3: whitespace-only text blocks and the messages left empty."""
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
    return kept


def _alternate(kept: list[dict[str, Any]], stats: Counter[str]) -> list[dict[str, Any]]:
    """4: alternation: consecutive messages of one role merged."""
    merged: list[dict[str, Any]] = []
    for message in kept:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1]["content"] = [*_blocks(merged[-1]["content"]), *_blocks(message["content"])]
            stats[f"consecutive {message['role']} messages merged"] += 1
        else:
            merged.append(dict(message))
    return merged


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def _tool_use_ids(message: dict[str, Any]) -> list[str]:
    if message["role"] != "assistant" or isinstance(message["content"], str):
        return []
    return [
        str(b.get("id"))
        for b in message["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def _pair_tool_uses(messages: list[dict[str, Any]], stats: Counter[str]) -> None:
    """Step 5 of :func:`load_claude_code`, in place, on alternating messages from ``user``.

    A :class:`Pairing` fed with every ``tool_use`` (each assistant message is a turn) and every
    ``tool_result`` block finds what breaks the rule: a result answering no open ``tool_use``
    becomes a text block; the ``tool_use`` ids left without a result get a placeholder result
    in the very next user message (added at the end when the transcript ends on the call).
    Then every user message with results lists them first, in their order, then the
    placeholders, then its other blocks.
    """
    pairing = Pairing()
    where: list[tuple[int, int]] = []  # item -> (message, block); block -1 for a turn
    for k, message in enumerate(messages):
        if message["role"] == "assistant":
            pairing.turn(len(where), _tool_use_ids(message))
            where.append((k, -1))
        elif isinstance(message["content"], list):
            for b, block in enumerate(message["content"]):
                if _is_result(block):
                    pairing.result(len(where), str(block.get("tool_use_id")))
                    where.append((k, b))
    pairing.end()
    strays: set[tuple[int, int]] = set()
    missing: dict[int, list[str]] = {}  # user message -> placeholder results it needs
    for problem in pairing.problems:
        if problem.rule == "tool_without_call":
            strays.add(where[problem.index])
        elif problem.rule in ("call_unanswered", "calls_pending_at_end"):
            k = where[problem.index][0]
            uses = dict.fromkeys(_tool_use_ids(messages[k]))
            missing[k + 1] = [u for u in uses if u in problem.call_ids]
    if len(messages) in missing:
        messages.append({"role": "user", "content": []})
        stats["user message added at end"] += 1
    for k, message in enumerate(messages):
        content = message["content"]
        has_results = isinstance(content, list) and any(_is_result(b) for b in content)
        if message["role"] == "user" and (has_results or k in missing):
            messages[k] = _results_first(k, message, strays, missing.get(k, []), stats)


def _results_first(
    k: int,
    message: dict[str, Any],
    strays: set[tuple[int, int]],
    missing: list[str],
    stats: Counter[str],
) -> dict[str, Any]:
    """User message ``k`` with its results first, then placeholders for ``missing``, then the
    rest; the ``strays`` among its blocks become text."""
    results: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    reordered = False
    for b, block in enumerate(_blocks(message["content"])):
        if _is_result(block) and (k, b) not in strays:
            results.append(block)
            reordered = reordered or bool(others)
        elif _is_result(block):
            text = f"[tool result {block.get('tool_use_id')}] {_result_text(block.get('content'))}"
            others.append({"type": "text", "text": text})
            stats["orphan tool_result -> text"] += 1
        else:
            others.append(block)
    for use_id in missing:
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
