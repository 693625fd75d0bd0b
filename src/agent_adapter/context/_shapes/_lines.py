"""Lines ranked by what they are, kept best first within a budget; what goes is counted.

Every line-based shape (test runs, listings, code, diffs, logs) ranks the lines of a text
and hands them to :func:`select`, which keeps the best-ranked lines that fit the budget, in
their order, and stands one gap line for each run of lines that went, counting the source
lines it stands for: ``[37 lines cut]``, or ``[36 more like the line above]`` when all of
them repeat the kept line above but for numbers and ids (:func:`near_key`). A rank is an
int, lower kept first; within a rank, a line's ``sub`` orders (lower first), then its
position. Gap lines never open with ``[...``: that is the one marker's
(:func:`~agent_adapter.context._text.cut_text`), which the library's other readers look for.

Repeats are a rank, not a rewrite: a near-repeat of the line before it (:func:`repeats`)
is ranked :data:`REPEAT` and goes first, so a log keeps one line a run when the budget is
tight and every line when it is not (a step that needs only a few tokens takes only those).

The choice is exact and fast: the lines in keeping order are a prefix of one sorted list,
and the longest prefix whose rendering fits is found by bisection, each probe one pass over
the lines (``O(n log n)`` for ``n`` lines; no regex runs here), then up to 256 lines past
it are tried one by one (a long line that did not fit leaves room for shorter ones). A kept
line longer than its clip is shown clipped, with how many characters went
(``...(+812 chars)``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agent_adapter.context._text import _boundary

#: A gap line: how many source lines went there.
GAP = "[{} lines cut]"
GAP_ONE = "[1 line cut]"
#: A gap whose lines all repeat the kept line above.
REPEATS = "[{} more like the line above]"
#: An earlier gap line (a text shortened again): the lines it stood for.
_EARLIER = re.compile(r"\[(\d+) (?:more like the line above|lines? cut)\]\Z")
#: Kept lines are clipped past these many characters: must-keep lines (rank 0), the rest.
CLIP_MUST, CLIP = 500, 200
#: Where a ranked line must stay (an error, a summary, a path of a listing).
MUST = 0
#: A near-repeat of the line before it: goes before any other line.
REPEAT = 90
#: An earlier gap line (a text shortened again) goes before anything: it is merged into the
#: gap around it.
LAST = 99


@dataclass(slots=True)
class Ranked:
    """Lines to choose from: their text as shown, rank, order within the rank, how many
    source lines each stands for (an earlier gap line stands for its lines), and whether
    each repeats the line before it."""

    texts: list[str] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    subs: list[int] = field(default_factory=list)
    weights: list[int] = field(default_factory=list)
    repeat: bytearray = field(default_factory=bytearray)
    #: gaps are not shown where they are but counted in one line at the end (a listing
    #: whose contents went: its paths stay one a line)
    quiet: bool = False

    def add(
        self, text: str, rank: int, sub: int = 0, *, repeat: bool = False, weight: int = 1
    ) -> None:
        """One line more (a near-repeat of the one before: ranked :data:`REPEAT`), standing
        for ``weight`` source lines."""
        earlier = _EARLIER.match(text) if text.startswith("[") else None
        self.texts.append(text)
        self.ranks.append(LAST if earlier else REPEAT if repeat else rank)
        self.subs.append(sub)
        self.weights.append(int(earlier[1]) if earlier else weight)
        self.repeat.append(1 if repeat and not earlier else 0)


def clip(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters (on a grapheme boundary) and how many
    went."""
    if len(text) <= limit:
        return text
    at = _boundary(text, limit)
    return f"{text[:at]}...(+{len(text) - at} chars)"


def near_key(text: str) -> str:
    """What near-repeated log lines share: the line with every run of digits (times, ids,
    counters) and hex ids as ``#``, but the paths it names as they are (lines naming
    different files are never one line: every path is kept)."""
    key = _VARYING.sub("#", text)
    if "/" in text or "." in text:
        paths = _PATHS.findall(text)
        if paths:
            key = f"{key}\0{'|'.join(paths)}"
    return key


_VARYING = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-f]{8,}\b|\d+")
_PATHS = re.compile(r"[\w.-]*/[\w./-]+|[\w-]+\.[A-Za-z]\w{0,5}\b")


def repeats(lines: list[str], distinct: Callable[[str], bool] | None = None) -> bytearray:
    """Which of ``lines`` repeat the line before them but for numbers and ids
    (:func:`near_key`); a line ``distinct`` says is one (a linter's finding) repeats only
    its exact copy. Blank lines never repeat."""
    out = bytearray(len(lines))
    before: str | None = None
    for i, line in enumerate(lines):
        if not line.strip():
            before = None
            continue
        key = line if distinct is not None and distinct(line) else near_key(line)
        if key == before:
            out[i] = 1
        before = key
    return out


def clip_limit(rank: int) -> int:
    """The longest a kept line of ``rank`` is shown (:func:`clip` cuts it there)."""
    return CLIP_MUST if rank == MUST else CLIP


def _shown(r: Ranked) -> list[str]:
    return [clip(t, clip_limit(rank)) for t, rank in zip(r.texts, r.ranks, strict=True)]


def _gap(weight: int, all_repeats: bool) -> str:
    if all_repeats:
        return REPEATS.format(weight)
    return GAP_ONE if weight == 1 else GAP.format(weight)


def _walk(shown: list[str], r: Ranked, kept: bytearray, out: list[str] | None) -> int:
    """Characters of the rendering that keeps the lines ``kept`` marks (line breaks in);
    with ``out``, the rendered lines are appended to it."""
    total = 0
    gap = 0
    all_repeats = True
    if r.quiet:
        dropped = sum(w for w, k in zip(r.weights, kept, strict=True) if not k)
        for i, text in enumerate(shown):
            if kept[i]:
                total += len(text) + 1
                if out is not None:
                    out.append(text)
        if dropped:
            line = _gap(dropped, False)
            total += len(line) + 1
            if out is not None:
                out.append(line)
        return total
    for i, text in enumerate(shown):
        if kept[i]:
            if gap:
                line = _gap(gap, all_repeats)
                total += len(line) + 1
                if out is not None:
                    out.append(line)
            gap = 0
            all_repeats = True
            total += len(text) + 1
            if out is not None:
                out.append(text)
        else:
            gap += r.weights[i]
            all_repeats = all_repeats and bool(r.repeat[i]) and i > 0
    if gap:
        line = _gap(gap, all_repeats)
        total += len(line) + 1
        if out is not None:
            out.append(line)
    return total


def select(r: Ranked, budget: int, must_budget: int | None = None) -> tuple[list[str], bytearray]:
    """The lines of ``r`` that fit in ``budget`` characters, best rank first, in their order,
    with a gap line for each run that went; and which lines were kept (``1`` each). The
    must-keep lines (rank :data:`MUST`) alone may take up to ``must_budget`` (a cut that
    removes much may keep more of what matters, never more of the rest)."""
    n = len(r.texts)
    shown = _shown(r)
    order = sorted(range(n), key=lambda i: (r.ranks[i], r.subs[i], i))
    must = sum(1 for x in r.ranks if x == MUST)
    big = max(budget, must_budget if must_budget is not None else budget)

    def fits(k: int, limit: int) -> bool:
        kept = bytearray(n)
        for i in order[:k]:
            kept[i] = 1
        return _walk(shown, r, kept, None) <= limit

    lo = _longest(0, must, lambda k: fits(k, big))
    limit = big
    if lo == must and fits(must, budget):
        lo = _longest(must, n, lambda k: fits(k, budget))
        limit = budget
    kept = bytearray(n)
    for i in order[:lo]:
        kept[i] = 1
    more = bytearray(kept)
    after = order[lo : lo + _EXTEND]
    if limit == big and big > budget:
        after = [i for i in after if r.ranks[i] == MUST]
    _extend(shown, r.weights, more, after, limit)
    _fill_single_gaps(shown, r.weights, more)
    if _walk(shown, r, more, None) <= limit:  # the estimates of _extend held
        kept = more
    out: list[str] = []
    _walk(shown, r, kept, out)
    return out, kept


def _longest(lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """The largest ``k`` in ``[lo, hi]`` with ``fits(k)`` (``fits(lo)`` assumed), by
    bisection."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


#: Lines past the fitting prefix tried one by one (a long line that did not fit leaves room
#: for shorter ones after it).
_EXTEND = 256


def _gap_cost(weight: int) -> int:
    """Characters of the gap line for ``weight`` source lines, its line break in (the
    longer repeat line's when all repeat: an estimate on the safe side)."""
    return len(REPEATS) - 1 + len(str(weight)) if weight else 0


def _extend(
    shown: list[str], weights: list[int], kept: bytearray, candidates: list[int], budget: int
) -> None:
    """Keep each of ``candidates`` too, in order, while the rendering stays in ``budget``
    (each try ``O(log n)``: the gap around a line is found among the kept lines by
    bisection and weighed by prefix sums)."""
    if not candidates:
        return
    n = len(shown)
    prefix = [0] * (n + 1)
    for i, w in enumerate(weights):
        prefix[i + 1] = prefix[i] + w
    at = [i for i in range(n) if kept[i]]
    total = sum(len(shown[i]) + 1 for i in at)
    before = -1
    for i in [*at, n]:
        total += _gap_cost(prefix[i] - prefix[before + 1])
        before = i
    for i in candidates:
        k = bisect.bisect_left(at, i)
        lo = at[k - 1] if k > 0 else -1
        hi = at[k] if k < len(at) else n
        left = prefix[i] - prefix[lo + 1]
        right = prefix[hi] - prefix[i + 1]
        whole = left + right + weights[i]
        delta = len(shown[i]) + 1 + _gap_cost(left) + _gap_cost(right) - _gap_cost(whole)
        if total + delta <= budget:
            kept[i] = 1
            at.insert(k, i)
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
            and shown[i].strip() != ""
            and len(shown[i]) <= len(GAP_ONE)
        ):
            kept[i] = 1


#: A text's kind is read off at most this many lines: its first and its last.
_SAMPLE_HEAD, _SAMPLE_TAIL = 400, 100


def sample(lines: list[str]) -> list[str]:
    """The lines a kind is read from: all, or the first 400 and the last 100."""
    if len(lines) <= _SAMPLE_HEAD + _SAMPLE_TAIL:
        return lines
    return lines[:_SAMPLE_HEAD] + lines[-_SAMPLE_TAIL:]


def ends_first(i: int, n: int) -> int:
    """The default order within a rank: lines nearest either end first (a head and a tail
    stay, as a plain cut keeps them)."""
    return min(i, n - 1 - i)
