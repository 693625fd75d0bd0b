"""Patching the text of native content while every other block stays the same object."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: How a message's text parts are joined (``Message.text``), and so how a step's new text
#: lines up with the native text blocks it came from.
_SEP = "\n"
#: The text a dropped block keeps when it must stay for its keys (``cache_control``...).
_CUT_STUB = "[...]"


def _has_keys(block: Any, key: str) -> bool:
    """True for a text block carrying more than its type and text (``cache_control``,
    ``citations``...): it must keep its place."""
    return isinstance(block, Mapping) and any(k not in ("type", key) for k in block)


def _with_text(block: Any, key: str, text: str) -> Any:
    return {**block, key: text} if isinstance(block, Mapping) else block


def patch_text_blocks(
    blocks: list[Any], text: str, is_text: Callable[[Any], bool], key: str = "text"
) -> list[Any]:
    """``blocks`` with their text replaced by ``text`` (a message's text, the text blocks
    joined by newlines, as a step changed it); every other block is kept as the same object.

    The new text is lined up with the old blocks: leading and trailing text blocks whose text
    is still there whole stay as the same objects (a head or tail cut keeps them), and what is
    left goes into one block in between, so ``cache_control`` and other keys never move to
    another block. A block whose text went and that carries such keys stays in place with the
    text ``"[...]"``; other emptied text blocks are dropped. With no text block, one
    ``{"type": "text", key: text}`` is appended when ``text`` is not empty.
    """
    spots = [i for i, b in enumerate(blocks) if is_text(b)]
    if not spots:
        return [*blocks, {"type": "text", key: text}] if text else list(blocks)
    texts = [str(blocks[i][key]) for i in spots]
    if _SEP.join(texts) == text:
        return list(blocks)
    head, p = 0, 0  # whole blocks at the start of the new text
    while head < len(texts):
        t = texts[head]
        end = p + len(t)
        if not text.startswith(t, p) or (end < len(text) and text[end] != _SEP):
            break
        head, p = head + 1, min(len(text), end + 1)
    tail, q = 0, len(text)  # whole blocks at its end, not overlapping the head
    while head + tail < len(texts):
        t = texts[len(texts) - 1 - tail]
        start = q - len(t)
        if start < p or not text.endswith(t, 0, q) or (start > 0 and text[start - 1] != _SEP):
            break
        tail, q = tail + 1, max(p, start - 1)
    middle = text[p:q] if p < q else ""
    inner = spots[head : len(spots) - tail]
    new: dict[int, Any] = {}  # position -> replacement block, or None to drop
    if inner:
        keyed = [i for i in inner if _has_keys(blocks[i], key)]
        anchor = keyed[-1] if keyed else inner[0]
        for i in inner:
            if i == anchor and middle:
                new[i] = _with_text(blocks[i], key, middle)
            elif _has_keys(blocks[i], key):
                new[i] = _with_text(blocks[i], key, _CUT_STUB)
            else:
                new[i] = None
    elif middle:  # nothing between: the remainder joins the nearest whole block
        if tail:
            i = spots[len(spots) - tail]
            new[i] = _with_text(blocks[i], key, middle + _SEP + texts[len(texts) - tail])
        else:
            i = spots[head - 1]
            new[i] = _with_text(blocks[i], key, texts[head - 1] + _SEP + middle)
    out: list[Any] = []
    for i, block in enumerate(blocks):
        if i in new:
            if new[i] is not None:
                out.append(new[i])
        else:
            out.append(block)
    return out


def is_text_block(block: Any) -> bool:
    """True for a ``{"type": "text", "text": str}`` dict."""
    return isinstance(block, Mapping) and block.get("type") == "text" and "text" in block
