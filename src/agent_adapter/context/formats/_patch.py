"""Patching the text of native content while every other block stays the same object.

Every format stores a message's text in a list of blocks of its own (Chat and Anthropic
``{"type": "text"}`` blocks, Responses ``input_text`` / ``output_text`` parts, Gemini ``text``
parts, LangChain text blocks and bare strings). :func:`patch_text_blocks` is the one way a
changed message's text goes back into such a list, so a cut behaves the same in every format:
the block structure stays and ``cache_control``, signatures and other keys stay on their
block. A :class:`TextBlocks` tells it how one format's blocks hold text.

Text that went blank must not leave an empty native, which providers reject (Anthropic,
Gemini, OpenAI alike): a converter writes changed natives through :func:`never_blank`, with
:func:`blank_dict` as the test of an empty message dict.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter._messages import Message

__all__ = [
    "CHAT_TEXT",
    "Rebuild",
    "TextBlocks",
    "blank_dict",
    "dict_text_blocks",
    "never_blank",
    "patch_text_blocks",
]

#: How a message's text parts are joined (``Message.text``), and so how a step's new text
#: lines up with the native text blocks it came from.
_SEP = "\n"


@dataclass(frozen=True, slots=True)
class TextBlocks:
    """How one format's content blocks hold text.

    Attributes:
        is_text: True for a block that loads as a text part (exactly those).
        text_of: a text block's text.
        with_text: a copy of a text block with another text (never mutating it).
        new: a new text block for a text.
        keyed: True for a text block carrying more than its text (``cache_control``,
            ``citations``, a ``thought_signature``...): it keeps its place when cut.
        stub: the text a keyed block keeps when its text went (Anthropic rejects empty text
            blocks: ``"[...]"``; Gemini keeps a signature on an empty part: ``""``).
    """

    is_text: Callable[[Any], bool]
    text_of: Callable[[Any], str]
    with_text: Callable[[Any, str], Any]
    new: Callable[[str], Any]
    keyed: Callable[[Any], bool]
    stub: str = "[...]"


def dict_text_blocks(
    types: frozenset[str],
    new_type: str,
    *,
    defaults: Mapping[str, Any] | None = None,
    ignore: Mapping[str, Any] | None = None,
) -> TextBlocks:
    """:class:`TextBlocks` for dict blocks ``{"type": t, "text": str, ...}`` with ``t`` in
    ``types``; new blocks are ``{"type": new_type, "text": ..., **defaults}``, and keys equal to
    their value in ``defaults`` or ``ignore`` (a Responses ``output_text``'s empty
    ``annotations`` and ``logprobs``) do not count as keys of their own."""
    plain = {**(ignore or {}), **(defaults or {})}
    fresh = dict(defaults or {})

    def is_text(block: Any) -> bool:
        return (
            isinstance(block, Mapping)
            and isinstance(block.get("type"), str)
            and block.get("type") in types
            and isinstance(block.get("text"), str)
        )

    def keyed(block: Any) -> bool:
        return isinstance(block, Mapping) and any(
            k not in ("type", "text") and not (k in plain and v == plain[k])
            for k, v in block.items()
        )

    return TextBlocks(
        is_text=is_text,
        text_of=lambda block: str(block["text"]),
        with_text=lambda block, text: {**block, "text": text},
        new=lambda text: {"type": new_type, "text": text, **copy.deepcopy(fresh)},
        keyed=keyed,
    )


#: ``{"type": "text", "text": str}`` blocks (Chat Completions content parts, Anthropic).
CHAT_TEXT = dict_text_blocks(frozenset({"text"}), "text")


def patch_text_blocks(blocks: list[Any], text: str, kind: TextBlocks = CHAT_TEXT) -> list[Any]:
    """``blocks`` with their text replaced by ``text`` (a message's text, the text blocks
    joined by newlines, as a step changed it); every other block is kept as the same object.

    The new text is lined up with the old blocks: leading and trailing text blocks whose text
    is still there whole stay as the same objects (a head or tail cut keeps them), and what is
    left goes into one block in between (the last keyed one, else the first), so
    ``cache_control`` and other keys never move to another block. A keyed block whose text
    went stays in place with ``kind.stub``; other emptied text blocks are dropped. With no text
    block, ``kind.new(text)`` is appended when ``text`` is not empty.
    """
    spots = [i for i, b in enumerate(blocks) if kind.is_text(b)]
    if not spots:
        return [*blocks, kind.new(text)] if text else list(blocks)
    texts = [kind.text_of(blocks[i]) for i in spots]
    if _SEP.join(texts) == text:
        return list(blocks)
    head, p = _whole_head(texts, text)
    tail, q = _whole_tail(texts, text, head, p)
    middle = text[p:q] if p < q else ""
    inner = spots[head : len(spots) - tail]
    if inner:
        new = _spread(blocks, inner, middle, kind)
    else:
        new = _joined(blocks, spots, texts, head, tail, middle, kind)
    out: list[Any] = []
    for i, block in enumerate(blocks):
        if i in new:
            if new[i] is not None:
                out.append(new[i])
        else:
            out.append(block)
    return out


def _whole_head(texts: Sequence[str], text: str) -> tuple[int, int]:
    """How many of ``texts`` start ``text`` whole (each followed by a separator or the end),
    and where the rest of ``text`` starts."""
    head, p = 0, 0
    while head < len(texts):
        t = texts[head]
        end = p + len(t)
        if not text.startswith(t, p) or (end < len(text) and text[end] != _SEP):
            break
        head, p = head + 1, min(len(text), end + 1)
    return head, p


def _whole_tail(texts: Sequence[str], text: str, head: int, p: int) -> tuple[int, int]:
    """How many of ``texts`` end ``text`` whole, not overlapping the ``head`` blocks before
    ``p``, and where they start (the separator before them left out)."""
    tail, q = 0, len(text)
    while head + tail < len(texts):
        t = texts[len(texts) - 1 - tail]
        start = q - len(t)
        if start < p or not text.endswith(t, 0, q) or (start > 0 and text[start - 1] != _SEP):
            break
        tail, q = tail + 1, max(p, start - 1)
    return tail, q


def _spread(
    blocks: Sequence[Any], inner: Sequence[int], middle: str, kind: TextBlocks
) -> dict[int, Any]:
    """The replacements (``None``: drop) of the text blocks between the whole ones: the
    ``middle`` text in the last keyed one (else the first), other keyed ones stubbed."""
    new: dict[int, Any] = {}
    keyed = [i for i in inner if kind.keyed(blocks[i])]
    anchor = keyed[-1] if keyed else inner[0]
    for i in inner:
        if i == anchor and middle:
            new[i] = kind.with_text(blocks[i], middle)
        elif i in keyed:
            new[i] = kind.with_text(blocks[i], kind.stub)
        else:
            new[i] = None
    return new


def _joined(
    blocks: Sequence[Any],
    spots: Sequence[int],
    texts: Sequence[str],
    head: int,
    tail: int,
    middle: str,
    kind: TextBlocks,
) -> dict[int, Any]:
    """With no text block between the whole ones, the replacement of the nearest whole
    block that the ``middle`` text joins (none when it is empty)."""
    if not middle:
        return {}
    if tail:
        i = spots[len(spots) - tail]
        return {i: kind.with_text(blocks[i], middle + _SEP + texts[len(texts) - tail])}
    i = spots[head - 1]
    return {i: kind.with_text(blocks[i], texts[head - 1] + _SEP + middle)}


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
