"""Thinking that went back as it came: Anthropic ``thinking`` blocks and Responses
``reasoning`` items, compared between a list and what was made of it.

Sources: Anthropic extended thinking guide
(https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking) and the OpenAI
reasoning guide (https://platform.openai.com/docs/guides/reasoning).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_adapter.context.formats._violations import Violation

__all__ = ["check_thinking_unchanged"]


def _uses(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, Mapping) else None
    if message is None or not isinstance(content, list) or message.get("role") != "assistant":
        return []
    return [
        b["id"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def _thinking_blocks(message: Any) -> list[Any]:
    if not isinstance(message, Mapping):
        return []
    if message.get("type") == "reasoning":
        return [message]
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [
        b
        for b in content
        if isinstance(b, Mapping) and b.get("type") in ("thinking", "redacted_thinking")
    ]


def _content_blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _is_real_user(message: Any) -> bool:
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return True
    return any(
        not (isinstance(b, Mapping) and b.get("type") == "tool_result") for b in content or ()
    )


def check_thinking_unchanged(before: Sequence[Any], after: Sequence[Any]) -> list[Violation]:
    """Thinking that went back as it came (Anthropic messages and Responses reasoning items).

    * ``thinking_changed`` (index in ``after``): a ``thinking`` / ``redacted_thinking`` block or
      a ``reasoning`` item that is in no message of ``before``, or a message of ``after`` whose
      thinking blocks are not those of the messages of ``before`` it comes from (the same
      object, or sharing a ``tool_use`` id or a block object: a rebuilt or merged message), in
      order. Extended thinking guide: "you must include the
      complete unmodified block back to the API".
    * ``turn_thinking_dropped`` (index in ``before``): a thinking block of the current
      turn's first assistant message (the first one after the last user message that is not
      only tool results: the turn a tool loop is still in) is missing from ``after``. With
      thinking enabled the API rejects that ("a final assistant message must start with a
      thinking block (preceding the lastmost set of tool_use and tool_result blocks)"); the
      thinking of later messages of the turn and of finished turns may go. The rule is
      Anthropic's alone: a Responses ``reasoning`` item has only its pairing rule ("Item of
      type 'function_call' was provided without its required 'reasoning' item"; "Item of type
      'reasoning' was provided without its required following item"), which the pairing
      checks keep, so a whole (reasoning, call, output) group may go; a Gemini thought part
      has none (a kept ``functionCall`` of the current turn must carry its
      ``thought_signature``, which compression never changes).
    """
    return [*_changed(before, after), *_turn_dropped(before, after)]


def _changed(before: Sequence[Any], after: Sequence[Any]) -> list[Violation]:
    """``thinking_changed``: each message of ``after`` with a thinking block in no message of
    ``before``, or whose thinking blocks are not those of the messages it comes from."""
    out: list[Violation] = []
    known = [b for m in before for b in _thinking_blocks(m)]
    by_obj = {id(m): k for k, m in enumerate(before)}
    by_use = {u: k for k, m in enumerate(before) for u in _uses(m)}
    by_block = {id(b): k for k, m in enumerate(before) for b in _content_blocks(m)}
    for j, m in enumerate(after):
        blocks = _thinking_blocks(m)
        out.extend(
            Violation(j, "thinking_changed", "a thinking block not in the input")
            for b in blocks
            if not _among(b, known)
        )
        sources = _sources(m, by_obj, by_use, by_block)
        expected = [b for k in sources for b in _thinking_blocks(before[k])]
        if sources and expected != blocks:
            where = ", ".join(f"before[{k}]" for k in sources)
            out.append(Violation(j, "thinking_changed", f"thinking blocks differ from {where}"))
    return out


def _sources(
    m: Any, by_obj: dict[int, int], by_use: dict[str, int], by_block: dict[int, int]
) -> list[int]:
    """The indexes in ``before`` of the messages ``m`` comes from, in order: the same object,
    or sharing a ``tool_use`` id or a block object with it."""
    sources = {by_obj[id(m)]} if id(m) in by_obj else set()
    sources.update(by_use[u] for u in _uses(m) if u in by_use)
    sources.update(by_block[id(b)] for b in _content_blocks(m) if id(b) in by_block)
    return sorted(sources)


def _among(block: Any, blocks: Sequence[Any]) -> bool:
    """True when ``block`` is one of ``blocks`` or equal to one."""
    return any(block is x or block == x for x in blocks)


def _turn_dropped(before: Sequence[Any], after: Sequence[Any]) -> list[Violation]:
    """``turn_thinking_dropped``: each thinking block of the current turn's first assistant
    message in ``before`` that is missing from ``after``."""
    last_user = max((k for k, m in enumerate(before) if _is_real_user(m)), default=-1)
    opener = next(
        (
            k
            for k in range(last_user + 1, len(before))
            if isinstance(before[k], Mapping) and before[k].get("role") == "assistant"
        ),
        None,
    )
    if last_user < 0 or opener is None:
        return []
    after_blocks = [b for m in after for b in _thinking_blocks(m)]
    return [
        Violation(
            opener,
            "turn_thinking_dropped",
            "a thinking block of the current turn's first assistant message is missing",
        )
        for b in _thinking_blocks(before[opener])
        if not _among(b, after_blocks)
    ]
