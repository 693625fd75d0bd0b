"""JSON: the structure and every distinct key stay, long arrays are sampled with a count.

**Recognizes** a text that is one JSON document (an object or an array, after leading
whitespace), parsed by :func:`json.loads`.

**Keeps** every object with all its keys, in their order, and the nesting; long arrays keep
their first items and their last one, with one string counting the rest and naming the
keys of the objects left out that the items shown do not have (``"... 97 more items;
keys also: zip, phone"``); long strings keep their start and a count. The detail is chosen
as the most that fits: each level samples fewer items and clips strings shorter (5 items
and 200 characters, then 3 and 80, 2 and 40, 1 and 16). The document is written one key or
item a line, indented one space a level; when even the least detail does not fit, the
lines repeating keys already shown go first, then the deepest (the outer structure and
every key's first line stay longest).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent_adapter.context._shapes._lines import MUST, Ranked

_LEVELS = ((5, 200), (3, 80), (2, 40), (1, 16))


def parse(text: str) -> Any:
    """The JSON document ``text`` is (an object or array), else ``None``."""
    s = text.strip()
    if s[:1] not in ("{", "[") or s[-1:] not in ("}", "]"):
        return None
    try:
        value = json.loads(s)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def _sampled(value: Any, items: int, chars: int) -> Any:
    """``value`` with arrays past ``items`` sampled and strings past ``chars`` clipped."""
    if isinstance(value, dict):
        return {k: _sampled(v, items, chars) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) <= items + 1:
            return [_sampled(v, items, chars) for v in value]
        shown = value[:items] + value[-1:]
        rest = value[items:-1]
        have = {k for v in shown if isinstance(v, dict) for k in v}
        missing = list(dict.fromkeys(k for v in rest if isinstance(v, dict) for k in v))
        missing = [k for k in missing if k not in have]
        note = f"... {len(rest)} more items" + (
            f"; keys also: {', '.join(missing)}" if missing else ""
        )
        head = [_sampled(v, items, chars) for v in value[:items]]
        return [*head, note, _sampled(value[-1], items, chars)]
    if isinstance(value, str) and len(value) > chars:
        return f"{value[:chars]}...(+{len(value) - chars} chars)"
    return value


def _lines(value: Any) -> list[str]:
    """``value`` written one key or item a line, indented one space a level."""
    return json.dumps(value, ensure_ascii=False, indent=1).split("\n")


def rank(value: Any, budget: int) -> Ranked:
    """The JSON ``value`` written at the most detail that fits ``budget`` characters (see
    the module), its lines ranked by depth (the outer structure stays longest) for when
    none does."""
    lines: list[str] = []
    for items, chars in _LEVELS:
        lines = _lines(_sampled(value, items, chars))
        if sum(len(line) + 1 for line in lines) <= budget:
            break
    out = Ranked()
    seen: set[tuple[int, str]] = set()
    for i, line in enumerate(lines):
        depth = len(line) - len(line.lstrip(" "))
        key = _KEY.match(line, depth)
        # a key's first line at its depth before the lines repeating keys already shown
        fresh = key is not None and (depth, key[0]) not in seen
        if key is not None:
            seen.add((depth, key[0]))
        r = MUST if depth == 0 else min(depth, 8) + (0 if fresh else 8)
        out.add(line, r, i)
    return out


_KEY = re.compile(r'"(?:[^"\\]|\\.)*":')
