"""Cutting text safely: never a lone surrogate, never a split grapheme, always a marker."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Literal

from agent_adapter.messages import Message

Keep = Literal["start", "end", "both"]

_JOINERS = {"\u200d", "\u200c", "\u034f"}


def _extends(ch: str) -> bool:
    """True when ``ch`` belongs to the grapheme before it (combining mark, ZWJ, selector)."""
    if ch in _JOINERS:
        return True
    if "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef":
        return True
    if "\U0001f3fb" <= ch <= "\U0001f3ff":  # skin tone modifiers
        return True
    if "\udc00" <= ch <= "\udfff":  # a low surrogate: second half of a pair
        return True
    return unicodedata.category(ch) in ("Mn", "Me", "Mc")


def _boundary(text: str, i: int) -> int:
    """The nearest index <= i that does not split a grapheme or a surrogate pair."""
    while 0 < i < len(text) and (_extends(text[i]) or (text[i - 1] == "\u200d")):
        i -= 1
    return i


def cut_text(text: str, keep_chars: int, keep: Keep = "start") -> str:
    """``text`` cut to about ``keep_chars`` characters plus a marker naming how many went.

    ``keep`` says which end survives: ``"start"``, ``"end"`` or ``"both"`` (head and tail).
    The cut falls on grapheme boundaries, so valid UTF-8 stays valid and no U+FFFD appears.
    Returns ``text`` itself when it is already short enough.
    """
    keep_chars = max(0, keep_chars)
    if len(text) <= keep_chars:
        return text
    if keep == "start":
        i = _boundary(text, keep_chars)
        return f"{text[:i]}\n[... {len(text) - i} characters cut ...]"
    if keep == "end":
        i = _boundary(text, len(text) - keep_chars)
        return f"[... {i} characters cut ...]\n{text[i:]}"
    head = _boundary(text, keep_chars // 2)
    tail = _boundary(text, len(text) - (keep_chars - keep_chars // 2))
    if tail <= head:
        return text
    return f"{text[:head]}\n[... {tail - head} characters cut ...]\n{text[tail:]}"


def fit_message(
    message: Message, max_tokens: int, count: Callable[[Message], int], keep: Keep
) -> Message:
    """``message`` with its text cut until it counts at most ``max_tokens`` (or no text is left
    to cut). Tool calls, ids and non-text parts are kept; returns ``message`` when nothing
    could be cut."""
    text = message.text
    tokens = count(message)
    if tokens <= max_tokens or not text:
        return message
    best = message
    keep_chars = len(text)
    for _ in range(6):
        ratio = max_tokens / max(tokens, 1)
        keep_chars = min(keep_chars - 1, int(keep_chars * ratio * 0.97))
        if keep_chars < 0:
            break
        candidate = message.with_text(cut_text(text, keep_chars, keep))
        tokens = count(candidate)
        if tokens < count(best):
            best = candidate
        if tokens <= max_tokens:
            break
    return best
