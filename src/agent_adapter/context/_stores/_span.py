"""What a saved span is: its sealed text form, its readable transcript, and its passages.

A span that ``RemoveOldMessages``, ``Summarize`` or ``KeepMostRelevant`` takes out of the
conversation is saved as one text: :data:`_MAGIC`, a seal, a newline, then JSON of its
transcript (each message as :func:`~agent_adapter.context._steps._summary_text.message_text`
writes it: the role, the text, each tool call with its arguments, a tool result with its
tool's name; non-text parts as placeholders) and where each message starts in it. The seal
is a BLAKE2b MAC of the JSON keyed with the store's secret id key, so a saved span is known
by its seal, never by its look. A text that opens with :data:`_MAGIC` but whose seal this
key does not make is never read back raw (a NUL, a seal, then JSON) nor as a span: it is
``unreadable`` (a span sealed under a key the store has since lost, e.g. a Redis that
evicted its id key, and a text made to look like one are alike without that key). Any other
saved text (a tool result ``ShrinkToolResults`` shortened, a text ``SummarizeLongMessage``
summarized) is its own transcript.

:func:`units` splits a transcript into the pieces ``search_context`` scores: each
message's block, a longer one in pieces at line breaks; each one a range of the transcript,
so ``recall_context(id, offset)`` reads on from any of them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass

from agent_adapter._messages import Message
from agent_adapter.context._steps._summary_text import message_text
from agent_adapter.context._stores._base import encode_text

__all__ = [
    "RECALL_TOOL_NAME",
    "SEARCH_TOOL_NAME",
    "Saved",
    "encode_span",
    "encode_transcript",
    "read_saved",
    "saved_phrase",
    "units",
]

RECALL_TOOL_NAME = "recall_context"
SEARCH_TOOL_NAME = "search_context"
#: The first characters of a saved span's text (a NUL: no message text opens with one).
_MAGIC = "\x00agent_adapter.saved_span.v1:"
_PERSON = b"aa.saved-span"
#: What separates two messages in a transcript.
_SEP = "\n\n"


def saved_phrase(id_: str, them: str = "them") -> str:
    """The one short line a note or summary holds when a store keeps its span: how to read
    it back (the id) and how to search everything saved."""
    return (
        f"saved: call {RECALL_TOOL_NAME}(id={id_!r}) to read {them}, or "
        f"{SEARCH_TOOL_NAME}(query) to search"
    )


def _seal(key: bytes, body: str) -> str:
    return hashlib.blake2b(encode_text(body), key=key, digest_size=16, person=_PERSON).hexdigest()


def encode_transcript(messages: Sequence[Message]) -> str:
    """The transcript a span of ``messages`` is saved with (what a recall of it shows)."""
    return _SEP.join(message_text(m) for m in messages)


def encode_span(key: bytes, messages: Sequence[Message]) -> str:
    """The sealed text of a span of ``messages`` (see the module doc)."""
    blocks = [message_text(m) for m in messages]
    starts: list[int] = []
    at = 0
    for block in blocks:
        starts.append(at)
        at += len(block) + len(_SEP)
    body = json.dumps(
        {"starts": starts, "transcript": _SEP.join(blocks)},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return f"{_MAGIC}{_seal(key, body)}\n{body}"


@dataclass(frozen=True, slots=True)
class Saved:
    """A saved text as it is read back: its transcript and where each message starts (one
    start, 0, for a plain text); ``span`` is True for a saved span. ``unreadable`` is True
    for a text that opens like a span but whose seal the key does not make: its transcript
    is then empty (it is never shown raw)."""

    transcript: str
    starts: tuple[int, ...]
    span: bool
    unreadable: bool = False


#: What a text that opens like a span without a valid seal reads as (see the module doc).
_UNREADABLE = Saved("", (0,), False, True)


def read_saved(key: bytes, text: str) -> Saved:
    """``text`` as saved: a span when it carries a valid seal of ``key``; unreadable when
    it opens like one without it (see the module doc); else plain."""
    if not text.startswith(_MAGIC):
        return Saved(text, (0,), False)
    seal, _, body = text[len(_MAGIC) :].partition("\n")
    if not hmac.compare_digest(seal.encode("ascii", "replace"), _seal(key, body).encode()):
        return _UNREADABLE
    data = json.loads(body)
    transcript, starts = data.get("transcript"), data.get("starts")
    if not isinstance(transcript, str) or not isinstance(starts, list):
        return _UNREADABLE  # pragma: no cover - sealed by us: never
    return Saved(transcript, tuple(int(s) for s in starts), True)


def units(saved: Saved, size: int) -> list[tuple[int, int]]:
    """``saved``'s transcript as the ``(start, end)`` ranges search scores: each message's
    block, a longer one than ``size`` characters in pieces of about ``size`` cut at line
    breaks (else at spaces); blank ones left out."""
    text = saved.transcript
    bounds = [*saved.starts, len(text) + len(_SEP)]
    out: list[tuple[int, int]] = []
    for n in range(len(saved.starts)):
        start, end = bounds[n], bounds[n + 1] - len(_SEP)
        out.extend([(start, end)] if end - start <= size else _pieces(text, start, end, size))
    return [(s, e) for s, e in out if text[s:e].strip()]


def _pieces(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    at = start
    while at < end:
        stop = min(end, at + size)
        if stop < end:
            cut = text.rfind("\n", at + size // 2, stop)
            if cut < 0:
                cut = text.rfind(" ", at + size // 2, stop)
            if cut > at:
                stop = cut + 1
        out.append((at, stop))
        at = stop
    return out
