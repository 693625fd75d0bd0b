"""Cutting text safely: never a lone surrogate, never a split grapheme, always a marker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import regex

from agent_adapter._messages import Message

Keep = Literal["start", "end", "both"]

#: One extended grapheme cluster (Unicode UAX #29), as the ``regex`` package implements it.
_GRAPHEME = regex.compile(r"\X", regex.DOTALL)
_SURROGATE = regex.compile(r"[\ud800-\udfff]")
_WINDOW = 64


def _is_regional_indicator(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"


def _boundary(text: str, i: int) -> int:
    """The nearest grapheme boundary at or before ``i`` (UAX #29 extended clusters: emoji ZWJ
    sequences, flags, skin tones, combining marks, Hangul syllables, CRLF...).

    Clusters are found in a window before ``i``; its start is moved back over a run of
    regional indicators, which pair up from the start of the run.
    """
    n = len(text)
    if i <= 0 or i >= n:
        return max(0, min(i, n))
    start = max(0, i - _WINDOW)
    while start > 0 and _is_regional_indicator(text[start - 1]):
        start -= 1
    best = start
    for match in _GRAPHEME.finditer(text, start, min(n, i + _WINDOW)):
        if match.end() > i:
            break
        best = match.end()
    return best


def _valid_unicode(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates (from bad JSON ``\\ud800``
    escapes) replaced by U+FFFD, so the text encodes as strict UTF-8."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def cut_text(text: str, keep_chars: int, keep: Keep = "start") -> str:
    """``text`` cut to about ``keep_chars`` characters plus a marker naming how many went.

    ``keep`` says which end survives: ``"start"``, ``"end"`` or ``"both"`` (head and tail).
    The cut falls on grapheme boundaries, so valid UTF-8 stays valid and no U+FFFD appears;
    lone surrogates already in ``text`` (invalid input) become U+FFFD, since they cannot be
    encoded at all. Returns ``text`` itself when it is already short enough.
    """
    keep_chars = max(0, keep_chars)
    if len(text) <= keep_chars:
        return text
    text = _valid_unicode(text)
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
