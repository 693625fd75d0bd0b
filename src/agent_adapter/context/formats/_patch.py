"""Patching the text of native content while every other block stays the same object."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def patch_text_blocks(
    blocks: list[Any], text: str, is_text: Callable[[Any], bool], key: str = "text"
) -> list[Any]:
    """``blocks`` with the first text block's ``key`` set to ``text`` and the other text blocks
    removed; non-text blocks are kept as the same objects, in place. With no text block, one
    ``{"type": "text", key: text}`` is appended when ``text`` is not empty."""
    out: list[Any] = []
    placed = False
    for block in blocks:
        if is_text(block):
            if not placed:
                out.append({**block, key: text} if isinstance(block, Mapping) else block)
                placed = True
        else:
            out.append(block)
    if not placed and text:
        out.append({"type": "text", key: text})
    return out


def is_text_block(block: Any) -> bool:
    """True for a ``{"type": "text", "text": str}`` dict."""
    return isinstance(block, Mapping) and block.get("type") == "text" and "text" in block
