"""Cutting text safely: never a lone surrogate, never a split grapheme; a marker names what went."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import regex

from agent_adapter._messages import Message
from agent_adapter.context._digest import (
    DIGEST_MAX_CHARS,
    drop_shown,
    join_names,
    leading_status,
    names_in,
)
from agent_adapter.context._lru import Memo, with_text

Keep = Literal["start", "end", "both"]

#: One extended grapheme cluster (Unicode UAX #29), as the ``regex`` package implements it.
_GRAPHEME = regex.compile(r"\X", regex.DOTALL)
_SURROGATE = regex.compile(r"[\ud800-\udfff]")
_WINDOW = 64
#: The marker's digest field, and the least room worth giving it.
_NAMES = "; names: "
_MIN_DIGEST_CHARS = 24
_WORD = regex.compile(r"\S*")
_WORD_BACK = regex.compile(r"\S*", regex.REVERSE)


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


def _kept_span(text: str, keep_chars: int, keep: Keep, exact: bool = True) -> tuple[int, int]:
    """``(a, b)``: ``text[:a]`` and ``text[b:]`` stay when ``keep_chars`` are kept; on
    grapheme boundaries when ``exact``, else (for a scan) at the plain offsets."""
    n = len(text)
    at = _boundary if exact else _clamp
    if keep == "start":
        return at(text, keep_chars), n
    if keep == "end":
        return 0, at(text, n - keep_chars)
    return at(text, keep_chars // 2), at(text, n - (keep_chars - keep_chars // 2))


def _clamp(text: str, i: int) -> int:
    return max(0, min(i, len(text)))


def _cut_names(
    text: str, keep_chars: int, keep: Keep, names_chars: int = 0
) -> tuple[str, tuple[int, int]]:
    """The marker's names field for a cut keeping about ``keep_chars`` (or ``""``), and the
    kept span ``(a, b)`` with the field's room taken out.

    The removed part is read as if the digest took all its room; the cut then keeps more
    when the digest is shorter, and the names that the text kept back shows are dropped, so
    the field names only what went. A word cut in two at either end is not read: half a
    path is no name. With ``names_chars`` over that room, the field may take up to that
    many characters: what it takes past its room is added to the cut, not taken from the
    kept text."""
    room = min(DIGEST_MAX_CHARS, keep_chars // 2)
    if room < _MIN_DIGEST_CHARS:
        return "", _kept_span(text, keep_chars, keep)
    a, b = _kept_span(text, max(0, keep_chars - room - len(_NAMES)), keep, exact=False)
    if a > 0 and not text[a - 1].isspace():
        a = _WORD.match(text, a, b).end()
    if b < len(text) and not text[b].isspace():
        b = _WORD_BACK.match(text, a, b).start()
    if b <= a:
        return "", _kept_span(text, keep_chars, keep)
    status = leading_status(text) if a > 0 else None
    names, extra = names_in(text[a:b], (text[:a], text[b:]), exit_status=status)
    field = join_names(names, extra, max(room, names_chars))
    if not field:
        return "", _kept_span(text, keep_chars, keep)
    span = _kept_span(text, keep_chars - len(_NAMES) - min(len(field), room), keep)
    back = (text[a : span[0]], text[span[1] : b])  # read as removed, then kept
    if any(back):
        field = join_names(drop_shown(names, back), extra, len(field))
        if not field:
            return "", _kept_span(text, keep_chars, keep)
    return _NAMES + field, span


def cut_text(
    text: str, keep_chars: int, keep: Keep = "start", *, note: str = "", names_chars: int = 0
) -> str:
    """``text`` cut to about ``keep_chars`` characters plus a marker naming what went.

    ``keep`` says which end survives: ``"start"``, ``"end"`` or ``"both"`` (head and tail).
    The marker is one bracketed note: how many characters went, then a digest of the names
    the removed part held and the kept part does not show (paths, the exit status, error
    lines, failed tests, ids; see :func:`~agent_adapter.context._digest.digest`), then
    ``note``: ``[... 10442 characters cut; names: src/a.py, exit 1; <note> ...]``. With no
    names it is ``[... 10442 characters cut ...]``. The digest counts against
    ``keep_chars``: it takes at most half of them (and at most ``DIGEST_MAX_CHARS``), so with
    a tiny budget it gives way first, and the kept text grows back by whatever it leaves
    unused. The cut falls on grapheme boundaries, so valid UTF-8 stays valid and no U+FFFD
    appears; lone surrogates already in ``text`` (invalid input) become U+FFFD, since they
    cannot be encoded at all. Returns ``text`` itself when it is already short enough.
    ``names_chars`` (see :func:`~agent_adapter.context._digest.names_room`) lets a cut that
    removes much name more: the digest may then take up to that many characters, and what
    it takes past its usual room is added to the cut instead of taken from the kept text.
    """
    keep_chars = max(0, keep_chars)
    if len(text) <= keep_chars:
        return text
    key = (text, keep_chars, keep, note, names_chars)
    hit: str | None = _CUTS.get(key)
    if hit is None:
        hit = _cut(text, keep_chars, keep, note, names_chars)
        _CUTS.put(key, hit, len(text))
    return hit


#: cut_text results by (text, keep_chars, keep, note, names_chars): the same tool output
#: cut again, in a later pass or call, is not cut again.
_CUTS = Memo(entries=2048, chars=16_000_000)


def _cut(text: str, keep_chars: int, keep: Keep, note: str, names_chars: int) -> str:
    """:func:`cut_text` of a text longer than ``keep_chars``."""
    text = _valid_unicode(text)
    names, (a, b) = _cut_names(text, keep_chars, keep, names_chars)
    a, b = _whole_words(text, a, b)
    a, b, earlier = _around_markers(text, a, b)
    if b <= a:
        return text
    count = b - a + earlier
    marker = f"[... {count} characters cut{names}{'; ' + note if note else ''} ...]"
    if keep == "start":
        return f"{text[:a]}\n{marker}"
    if keep == "end":
        return f"{marker}\n{text[b:]}"
    return f"{text[:a]}\n{marker}\n{text[b:]}"


#: An earlier cut's marker (its count, then its names and note).
_MARKER = regex.compile(r"\[\.\.\. (\d+) characters cut[^\n]*? \.\.\.\]")
#: How far a cut moves to fall between words (a path cut in two is no name).
_WORD_SLACK = 40


def _whole_words(text: str, a: int, b: int) -> tuple[int, int]:
    """The removed span ``[a, b)`` widened to whole words at both ends: the kept head ends
    after a space and the kept tail starts at one, when one is within ``_WORD_SLACK``
    characters (else the grapheme boundary stays)."""
    if 0 < a < len(text) and not text[a].isspace() and not text[a - 1].isspace():
        space = max(text.rfind(" ", a - _WORD_SLACK, a), text.rfind("\n", a - _WORD_SLACK, a))
        if space > 0:
            a = space + 1
    if a < b < len(text) and not text[b].isspace() and not text[b - 1].isspace():
        found = [
            i
            for i in (text.find(" ", b, b + _WORD_SLACK), text.find("\n", b, b + _WORD_SLACK))
            if i >= 0
        ]
        if found:
            b = min(found)
    return a, b


def _around_markers(text: str, a: int, b: int) -> tuple[int, int, int]:
    """``(a, b, earlier)``: the removed span widened so no earlier cut's marker is cut in
    two, and what the markers inside it stood for beyond their own length (a text cut
    again counts every character that went, the first cut's included)."""
    if "characters cut" not in text:
        return a, b, 0
    earlier = 0
    for m in _MARKER.finditer(text):
        start, end = m.span()
        if start < a < end:
            a = start
        if start < b < end:
            b = end
        if a <= start and end <= b:
            earlier += int(m[1]) - (end - start)
    return a, b, max(0, earlier)


def fit_message(
    message: Message,
    max_tokens: int,
    count: Callable[[Message], int],
    keep: Keep,
    cut: Callable[..., str] = cut_text,
    *,
    source: str | None = None,
    note: str = "",
) -> Message:
    """``message`` with its text cut until it counts at most ``max_tokens`` (or no text is left
    to cut). Tool calls, ids and non-text parts are kept; returns ``message`` when nothing
    could be cut. ``cut(text, keep_chars, keep, note=...)`` cuts (default :func:`cut_text`;
    the steps pass :func:`~agent_adapter.context._shapes.shorten_text`, which keeps what
    matters of a text's kind). ``source``: the text to cut (the caller's, when an earlier step
    shortened ``message``; default its own); ``note``: the marker's last field (a recall
    call)."""
    text = message.text if source is None else source
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
        candidate = with_text(message, cut(text, keep_chars, keep, note=note))
        tokens = count(candidate)
        if tokens < count(best):
            best = candidate
        if tokens <= max_tokens:
            break
    return best
