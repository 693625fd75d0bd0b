"""Read a request's JSON body knowing what the previous request of the conversation held, and
write the changed body back as the client's own bytes wherever it is unchanged.

The append path is the gateway's steady state: an agent sends its whole conversation each
turn, one round longer. Parsing 700 kB of JSON (a 150k-token request) and counting every
message again costs tens of milliseconds; the compaction state and the token counts already
know the previous request's messages *by identity*. So the body is read item by item: an
item of the conversation array whose JSON text is, character for character, the text of an
item of an earlier request with the same opening is that earlier item's parsed object (the
same text is the same value: known, never guessed); only the rest is parsed. A client that
edits an older item (Claude Code moves its ``cache_control`` breakpoint) reuses the items
before it.

Writing back: an item the compaction kept comes back as the same object, so its text is the
client's own slice of the body; only what the library wrote is serialized (compact JSON,
UTF-8). Everything else of the body (model, system, tools, ...) stays the client's bytes.

The memo is bounded by the characters it holds (:data:`MEMO_CHARS`, least recently used
first out); a body the reader cannot take item by item (not UTF-8, not an object, a
duplicate key) is parsed whole by :func:`json.loads`, as without a memo.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = ["Body", "BodyReader"]

#: The characters of conversation text the memo keeps at most (about 4 bytes a token: some
#: 170 conversations of 150k tokens).
MEMO_CHARS = 96_000_000
#: Characters from the start of a conversation's first item that key its memo (a short first
#: item takes in the next ones: the same conversation has the same opening each turn).
_OPENING = 2048
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(slots=True)
class Body:
    """A parsed request body.

    Attributes:
        data: the JSON object.
        text: the body's text (``None`` when it was parsed whole).
        span: the conversation array's ``[start, end)`` in ``text`` (``None``: no array).
        starts / ends: each item's text in ``text``.
        items: the array's items (``data[field]``).
        reused: how many leading items are an earlier request's objects.
    """

    data: dict[str, Any]
    text: str | None = None
    span: tuple[int, int] | None = None
    starts: list[int] | None = None
    ends: list[int] | None = None
    items: list[Any] | None = None
    reused: int = 0

    def write(self, field: str, out: list[Any]) -> bytes:
        """The body with ``data[field]`` replaced by ``out``: the client's text for each item
        of ``out`` that is one of :attr:`items` (by identity), compact JSON for the rest."""
        if self.text is None or self.span is None or self.items is None:
            return json.dumps(
                {**self.data, field: out}, ensure_ascii=False, separators=(",", ":")
            ).encode("utf-8")
        assert self.starts is not None and self.ends is not None
        where = {id(item): i for i, item in enumerate(self.items)}
        text, pieces = self.text, []
        for item in out:
            i = where.get(id(item))
            if i is not None and self.items[i] is item:
                pieces.append(text[self.starts[i] : self.ends[i]])
            else:
                pieces.append(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
        start, end = self.span
        return (text[:start] + "[" + ",".join(pieces) + "]" + text[end:]).encode("utf-8")


@dataclass(slots=True)
class _Memo:
    """An earlier request's conversation: its items' text from the first item's start to the
    last item's end (separators as that client wrote them), each item's span in it, and the
    items."""

    joined: str
    starts: list[int]
    ends: list[int]
    items: list[Any]

    @property
    def size(self) -> int:
        return len(self.joined)

    def piece(self, i: int) -> str:
        return self.joined[self.starts[i] : self.ends[i]]


class BodyReader:
    """Parses bodies, reusing an earlier request's items (see the module docstring)."""

    def __init__(self, max_chars: int = MEMO_CHARS) -> None:
        self.max_chars = max_chars
        self._memos: OrderedDict[str, _Memo] = OrderedDict()
        self._chars = 0

    def read(self, raw: bytes, field: str) -> Body:
        """The body of ``raw``, its ``field`` array read item by item.

        Raises:
            ValueError: not JSON (as :func:`json.loads`).
        """
        try:
            text = raw.decode("utf-8")
            body = self._read(text, field)
        except (UnicodeDecodeError, ValueError, _NotPlain):
            return Body(json.loads(raw))
        return body

    def _read(self, text: str, field: str) -> Body:
        pos = _skip(text, 0)
        if text[pos : pos + 1] != "{":
            raise _NotPlain
        data: dict[str, Any] = {}
        pos = _skip(text, pos + 1)
        found: Body | None = None
        if text[pos : pos + 1] == "}":
            return Body(data, text)
        while True:
            key, pos = _DECODER.raw_decode(text, pos)
            if not isinstance(key, str) or key in data:
                raise _NotPlain
            pos = _skip(text, pos)
            if text[pos : pos + 1] != ":":
                raise _NotPlain
            pos = _skip(text, pos + 1)
            if key == field and text[pos : pos + 1] == "[":
                found, pos = self._array(text, pos)
                data[key] = found.items
            else:
                data[key], pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos)
            mark = text[pos : pos + 1]
            if mark == "}":
                break
            if mark != ",":
                raise _NotPlain
            pos = _skip(text, pos + 1)
        if _skip(text, pos + 1) != len(text):
            raise _NotPlain
        if found is None:
            return Body(data, text)
        found.data = data
        return found

    def _array(self, text: str, pos: int) -> tuple[Body, int]:
        """The array at ``text[pos] == "["``: its body record and the position after it."""
        start = pos
        pos = _skip(text, pos + 1)
        items: list[Any] = []
        starts: list[int] = []
        ends: list[int] = []
        if text[pos : pos + 1] == "]":
            return Body({}, text, (start, pos + 1), starts, ends, items), pos + 1
        memo = self._memo(text, pos)
        reused = 0
        done = False
        if memo is not None:
            # the common case first: every item of the earlier request, one comparison
            follows = _skip(text, pos + len(memo.joined))
            if text.startswith(memo.joined, pos) and text[follows : follows + 1] in (",", "]"):
                items.extend(memo.items)
                starts.extend(pos + s for s in memo.starts)
                ends.extend(pos + e for e in memo.ends)
                reused = len(items)
                done = text[follows] == "]"
                pos = follows if done else _skip(text, follows + 1)
        while not done:
            if memo is not None and reused == len(items) < len(memo.items):
                piece = memo.piece(len(items))  # reused up to the first item that differs
                after = pos + len(piece)
                follows = _skip(text, after)
                if text.startswith(piece, pos) and text[follows : follows + 1] in (",", "]"):
                    item, end = memo.items[len(items)], after
                    reused += 1
                else:
                    item, end = _DECODER.raw_decode(text, pos)
            else:
                item, end = _DECODER.raw_decode(text, pos)
            items.append(item)
            starts.append(pos)
            ends.append(end)
            pos = _skip(text, end)
            mark = text[pos : pos + 1]
            if mark == "]":
                break
            if mark != ",":
                raise _NotPlain
            pos = _skip(text, pos + 1)
        self._remember(text, starts, ends, items)
        return Body({}, text, (start, pos + 1), starts, ends, items, reused), pos + 1

    def _memo(self, text: str, pos: int) -> _Memo | None:
        memo = self._memos.get(text[pos : pos + _OPENING])
        if memo is not None:
            self._memos.move_to_end(text[pos : pos + _OPENING])
        return memo

    def _remember(self, text: str, starts: list[int], ends: list[int], items: list[Any]) -> None:
        first = starts[0]
        opening = text[first : first + _OPENING]
        old = self._memos.pop(opening, None)
        if old is not None:
            self._chars -= old.size
        memo = _Memo(
            text[first : ends[-1]], [s - first for s in starts], [e - first for e in ends], items
        )
        if memo.size > self.max_chars:
            return
        self._memos[opening] = memo
        self._chars += memo.size
        while self._chars > self.max_chars:
            _, gone = self._memos.popitem(last=False)
            self._chars -= gone.size


class _NotPlain(Exception):
    """A body this reader leaves to :func:`json.loads`."""


def _skip(text: str, pos: int) -> int:
    """The position after the JSON whitespace at ``pos``."""
    match = _WS.match(text, pos)
    return match.end() if match else pos
