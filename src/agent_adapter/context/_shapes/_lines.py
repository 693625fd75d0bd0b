"""Lines ranked by what they are, kept best first within a budget; what goes is counted.

Every line-based shape (test runs, listings, code, diffs, logs) ranks the lines of a text
and hands them to :func:`select`, which keeps the best-ranked lines that fit the budget, in
their order, and stands one gap line (``[... 37 lines ...]``) for each run of lines that
went, counting the source lines it stands for. A rank is an int, lower kept first; within a
rank, a line's ``sub`` orders (lower first), then its position.

The choice is exact and fast: the lines in keeping order are a prefix of one sorted list,
and the longest prefix whose rendering fits is found by bisection, each probe one pass over
the lines (``O(n log n)`` for ``n`` lines; no regex runs here). A kept line longer than its
clip is shown clipped, with how many characters went (``...(+812 chars)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent_adapter.context._text import _boundary

#: A gap line: how many source lines went there.
GAP = "[... {} lines ...]"
#: A gap of one line.
GAP_ONE = "[... 1 line ...]"
#: A run of near-repeated lines after its first: how many more there were.
REPEATS = "[... {} more like the line above ...]"
#: An earlier gap or repeat line (a text shortened again): the lines it stood for.
_EARLIER = re.compile(r"\[\.\.\. (\d+) (?:more like the line above|lines?) \.\.\.\]\Z")
#: Kept lines are clipped past these many characters: must-keep lines (rank 0), the rest.
CLIP_MUST, CLIP = 500, 200
#: Where a ranked line must stay (an error, a summary, a path of a listing).
MUST = 0
#: An earlier gap line (a text shortened again) goes before anything: it is merged into the
#: gap around it.
LAST = 99


@dataclass(slots=True)
class Ranked:
    """Lines to choose from: their text as shown, rank, order within the rank, and how many
    source lines each stands for (a repeat line stands for its run)."""

    texts: list[str] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    subs: list[int] = field(default_factory=list)
    weights: list[int] = field(default_factory=list)

    def add(self, text: str, rank: int, sub: int = 0, weight: int = 1) -> None:
        """One line more."""
        earlier = _EARLIER.match(text) if text.startswith("[... ") else None
        self.texts.append(text)
        self.ranks.append(LAST if earlier else rank)
        self.subs.append(sub)
        self.weights.append(int(earlier[1]) if earlier else weight)


def clip(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters (on a grapheme boundary) and how many
    went."""
    if len(text) <= limit:
        return text
    at = _boundary(text, limit)
    return f"{text[:at]}...(+{len(text) - at} chars)"


def near_key(text: str) -> str:
    """What near-repeated log lines share: the line with every run of digits (times, ids,
    counters) and hex ids as ``#``."""
    return _VARYING.sub("#", text)


_VARYING = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-f]{8,}\b|\d+")


def collapse_repeats(lines: list[str], least: int = 3) -> list[tuple[str, int]]:
    """``lines`` with each run of ``least`` or more near-repeats (:func:`near_key`) as its
    first line and one repeat line counting the rest: ``(text, source lines)`` pairs."""
    out: list[tuple[str, int]] = []
    i, n = 0, len(lines)
    keys = [near_key(line) if line.strip() else "" for line in lines]
    while i < n:
        j = i + 1
        while j < n and keys[j] == keys[i] and keys[i]:
            j += 1
        out.append((lines[i], 1))
        if j - i >= least:
            out.append((REPEATS.format(j - i - 1), j - i - 1))
        else:
            out.extend((lines[k], 1) for k in range(i + 1, j))
        i = j
    return out


def _shown(r: Ranked) -> list[str]:
    return [
        clip(t, CLIP_MUST if rank == MUST else CLIP)
        for t, rank in zip(r.texts, r.ranks, strict=True)
    ]


def _cost(shown: list[str], weights: list[int], kept: bytearray) -> int:
    """Characters of the rendering that keeps the lines ``kept`` marks (line breaks in)."""
    total = 0
    gap = 0
    for i, text in enumerate(shown):
        if kept[i]:
            total += _gap_cost(gap) + len(text) + 1
            gap = 0
        else:
            gap += weights[i]
    return total + _gap_cost(gap)


def select(r: Ranked, budget: int) -> tuple[list[str], bytearray]:
    """The lines of ``r`` that fit in ``budget`` characters, best rank first, in their order,
    with a gap line for each run that went; and which lines were kept (``1`` each)."""
    n = len(r.texts)
    shown = _shown(r)
    order = sorted(range(n), key=lambda i: (r.ranks[i], r.subs[i], i))
    lo, hi = 0, n  # the longest fitting prefix of ``order`` is lo
    while lo < hi:
        mid = (lo + hi + 1) // 2
        kept = bytearray(n)
        for i in order[:mid]:
            kept[i] = 1
        if _cost(shown, r.weights, kept) <= budget:
            lo = mid
        else:
            hi = mid - 1
    kept = bytearray(n)
    for i in order[:lo]:
        kept[i] = 1
    _extend(shown, r.weights, kept, order[lo : lo + _EXTEND], budget)
    _fill_single_gaps(shown, r.weights, kept)
    return _render(shown, r.weights, kept), kept


#: Lines past the fitting prefix tried one by one (a long line that did not fit leaves room
#: for shorter ones after it).
_EXTEND = 256


def _gap_cost(weight: int) -> int:
    """Characters of the gap line for ``weight`` source lines, its line break in."""
    if weight == 1:
        return len(GAP_ONE) + 1
    return len(GAP) - 1 + len(str(weight)) if weight else 0


def _extend(
    shown: list[str], weights: list[int], kept: bytearray, candidates: list[int], budget: int
) -> None:
    """Keep each of ``candidates`` too, in order, while the rendering stays in ``budget``."""
    if not candidates:
        return
    total = _cost(shown, weights, kept)
    n = len(shown)
    for i in candidates:
        left = right = 0
        j = i - 1
        while j >= 0 and not kept[j]:
            left += weights[j]
            j -= 1
        j = i + 1
        while j < n and not kept[j]:
            right += weights[j]
            j += 1
        whole = left + right + weights[i]
        delta = len(shown[i]) + 1 + _gap_cost(left) + _gap_cost(right) - _gap_cost(whole)
        if total + delta <= budget:
            kept[i] = 1
            total += delta


def _fill_single_gaps(shown: list[str], weights: list[int], kept: bytearray) -> None:
    """A gap of one line no longer than its gap line shows the line instead (no cost)."""
    n = len(shown)
    for i in range(n):
        if (
            not kept[i]
            and weights[i] == 1
            and (i == 0 or kept[i - 1])
            and (i == n - 1 or kept[i + 1])
            and len(shown[i].strip()) > 0
            and len(shown[i]) <= len(GAP_ONE)
        ):
            kept[i] = 1


def _render(shown: list[str], weights: list[int], kept: bytearray) -> list[str]:
    out: list[str] = []
    gap = 0
    for i, text in enumerate(shown):
        if kept[i]:
            if gap:
                out.append(_gap(gap))
                gap = 0
            out.append(text)
        else:
            gap += weights[i]
    if gap:
        out.append(_gap(gap))
    return out


def _gap(weight: int) -> str:
    return GAP_ONE if weight == 1 else GAP.format(weight)


def ends_first(i: int, n: int) -> int:
    """The default order within a rank: lines nearest either end first (a head and a tail
    stay, as a plain cut keeps them)."""
    return min(i, n - 1 - i)
