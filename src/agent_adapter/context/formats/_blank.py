"""Never write an empty native: the rule every dict converter shares when text goes.

Providers reject a message left with nothing in it (Anthropic, Gemini, OpenAI alike), so a
converter dumps through :func:`never_blank`, with :func:`blank_dict` as the test of an empty
message dict (Chat Completions messages, Responses ``message`` items, Anthropic messages).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_adapter._messages import Message

__all__ = ["Rebuild", "blank_dict", "never_blank"]

Rebuild = Callable[[Any, Sequence[Message], Sequence[Message | None]], list[Any]]
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


def blank_dict(native: Any) -> bool:
    """True for a message dict with nothing in it: no calls, and a ``content`` that is
    missing, blank text or only text blocks with blank text (Chat Completions messages,
    Responses ``message`` items, Anthropic messages). Tool results and other items are never
    blank: an empty tool output is an answer."""
    if not isinstance(native, Mapping) or native.get("role") == "tool":
        return False
    if native.get("type", "message") != "message":
        return False
    if any(native.get(k) for k in ("tool_calls", "function_call", "audio", "refusal")):
        return False
    content = native.get("content")
    if content is None or isinstance(content, str):
        return not (content or "").strip()
    return isinstance(content, list) and all(
        isinstance(b, Mapping)
        and isinstance(b.get("type"), str)
        and b.get("type") in _TEXT_PARTS
        and isinstance(b.get("text"), str)
        and not b["text"].strip()
        for b in content
    )


def never_blank(
    rebuild: Rebuild,
    is_blank: Callable[[Any], bool],
    native: Any,
    originals: Sequence[Message],
    now: Sequence[Message | None],
) -> list[Any]:
    """``rebuild(native, originals, now)`` for a converter that must never write an empty
    native (Anthropic: "all messages must have non-empty content except for the optional
    final assistant message" and "text content blocks must contain non-whitespace text";
    Gemini: "contents.parts must not be empty"; OpenAI: an empty content array is rejected).

    A changed message (not a tool result) whose text became blank (``""`` or whitespace) is
    rebuilt with no text, so its text blocks go. When that leaves the native with nothing
    (``[]``, or natives ``is_blank`` says are empty) while some message of it is still there,
    those messages keep their original text instead; only a native whose every message is
    gone is dropped (``[]``).
    """
    cut: list[Message | None] = []
    kept: list[Message | None] = []
    for o, m in zip(originals, now, strict=True):
        blank = m is not None and m is not o and m.role != "tool" and not m.text.strip()
        cut.append(m.with_text("") if blank and m is not None and m.text else m)
        kept.append(o if blank else m)
    out = rebuild(native, originals, cut)
    if all(m is None for m in now) or (out and not any(is_blank(n) for n in out)):
        return out
    return rebuild(native, originals, kept)
