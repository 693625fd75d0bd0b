"""search_tool: lets the model search everything compression saved for its run.

Every text saved under the run's owner scope (spans that ``RemoveOldMessages``,
``Summarize`` and ``KeepMostRelevant`` took out, tool results ``ShrinkToolResults``
shortened, texts ``SummarizeLongMessage`` summarized) is read back with the store's
``load_all`` and cut into units (:func:`~._span.units`: one a message, a long one in
pieces), which are scored against the query by BM25 (the lexical half of ``KeepMostRelevant``'s
default: stemmed, each message read with a share of its neighbours; word counts cached by
content on the tool) or the scorer you give. BM25 is the default, not the hybrid with
MiniLM: the first search would embed everything the run saved (seconds to minutes on a
coding session's tool output, inside one tool call) for about 1.7 points more found on
LoCoMo's tuning half (``bench/recall.py --scorer hybrid``); pass a hybrid as ``scorer=``
(``HybridScorer(BM25Scorer(stem=True), EmbeddingScorer(LocalEmbedder()))``) to get it, its
vectors cached the same way. The best units
become passages, each a hit with its neighbours (see :class:`_Searcher`), and come back
with the id and offset that ``recall_context`` reads on from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._run import owner_scope
from agent_adapter._tools import FunctionTool
from agent_adapter.context._default_scorer import lexical_scorer
from agent_adapter.context._scorers import (
    _LRU,
    _text_key,
    check_scorer,
    checked_scores,
    scoring_context,
)
from agent_adapter.context._stores._base import StoreError, ToolResultStore, check_limit
from agent_adapter.context._stores._keys import store_id_key
from agent_adapter.context._stores._span import (
    RECALL_TOOL_NAME,
    SEARCH_TOOL_NAME,
    read_saved,
    units,
)

__all__ = ["SavedPassage", "search_saved", "search_tool"]

#: The most passages one search returns, whatever k the model asks for.
MAX_K = 20
#: Saved texts whose parsed units a search tool keeps between calls.
_PARSED_CACHE = 4096
#: The units each side of a hit a passage holds (while they fit passage_chars): chosen on
#: LoCoMo's tuning part (1 / 2 / 3 / 4 measured: 66.5 / 71.0 / 72.8 / 74.1% found at k=5 in
#: one search for every k; ``bench/recall.py --part tuning``).
CONTEXT = 4
#: A passage widened by nearby hits stays under this many times passage_chars.
_MERGE_MAX = 2


@dataclass(frozen=True, slots=True)
class SavedPassage:
    """One passage a search found: characters ``offset`` to ``end`` of the saved text
    ``id`` as ``recall_context`` reads it, and its score (0..1)."""

    id: str
    offset: int
    end: int
    text: str
    score: float


async def search_saved(
    store: Any,
    scope: str,
    query: str,
    k: int = 5,
    *,
    scorer: Any = None,
    passage_chars: int = 1500,
) -> list[SavedPassage]:
    """The ``k`` places saved in ``store`` under ``scope`` that best match ``query``, best
    first: each a hit message with its neighbours (see :class:`_Searcher`).

    Args:
        store: a store with ``load_all`` (MemoryStore, SQLiteStore, RedisStore).
        scope: the owner scope (see :func:`~agent_adapter.owner_scope`).
        query: what to look for.
        k: how many passages at most.
        scorer: a :class:`~agent_adapter.context.Scorer`; ``None``: a new default BM25
            (as :func:`search_tool`'s).
        passage_chars: the most characters a passage holds (a hit with its neighbours);
            one widened by nearby hits holds at most twice that.

    Raises:
        ConfigError: the store has no ``load_all``, or the scorer returned bad scores.
        StoreError: the store failed.
    """
    searcher = _Searcher(scorer if scorer is not None else lexical_scorer(), passage_chars)
    return await searcher.search(store, scope, query, k)


@dataclass(frozen=True, slots=True)
class _Unit:
    """One scored piece of a saved text: a message's block (a long one in pieces)."""

    save: int  # index of its saved text
    pos: int  # its place among that text's units
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class _Parsed:
    id: str
    transcript: str
    units: tuple[tuple[int, int], ...]


class _Searcher:
    """What search_context runs, with what it keeps between calls.

    Each saved text is cut into units: a message's transcript block (a longer one in pieces
    of about a third of ``passage_chars``, at line breaks); a unit that two saves hold with
    the same neighbours (the runs of two compressions of one growing chat overlap) is scored
    once. Units are scored in conversation order against the query (so a scorer that reads
    each text in its context, like the default BM25, sees its neighbours); a
    unit that holds the query word for word (whitespace and case aside: a file name, an
    error line) comes before the others. The best units, one after another, become
    passages: the unit and up to ``context`` units each side, while they fit
    ``passage_chars``; a hit that falls in (or next to) a passage already chosen widens that
    passage instead of taking a slot, so k passages are k distinct places. The parsed saved
    texts are kept (by content) for the next call.
    """

    def __init__(self, scorer: Any, passage_chars: int, *, context: int = CONTEXT) -> None:
        self.scorer = scorer
        self.passage_chars = passage_chars
        self.context = context
        self.unit_chars = max(1, passage_chars // 3)
        self._parsed: _LRU[_Parsed] = _LRU(_PARSED_CACHE)

    def _parse(self, key: bytes, id_: str, text: str) -> _Parsed:
        ck = _text_key(f"{key.hex()}\x00{id_}\x00{text}")  # a span reads by the key
        hit = self._parsed.get(ck)
        if hit is None:
            saved = read_saved(key, text)
            cut = units(saved, self.unit_chars)
            hit = _Parsed(id_, saved.transcript, tuple(cut))
            self._parsed.put(ck, hit)
        return hit

    async def search(self, store: Any, scope: str, query: str, k: int) -> list[SavedPassage]:
        """The ``k`` best passages of what ``store`` holds under ``scope``."""
        load = getattr(store, "load_all", None)
        if not callable(load):
            raise ConfigError(f"search_saved: {type(store).__name__} has no load_all(scope)")
        entries = await load(scope)
        if not entries or not query.strip():
            return []
        key = await store_id_key(store)
        saves = [self._parse(key, id_, text) for id_, text in entries]
        found: list[_Unit] = []
        seen: set[tuple[str, str, str]] = set()
        for n, p in enumerate(saves):
            texts = [p.transcript[s:e] for s, e in p.units]
            for i, (s, e) in enumerate(p.units):
                before = texts[i - 1] if i else ""
                after = texts[i + 1] if i + 1 < len(texts) else ""
                if (before, texts[i], after) not in seen:  # the same place in another save
                    seen.add((before, texts[i], after))
                    found.append(_Unit(n, i, s, e, texts[i]))
        if not found:
            return []
        raw = await self.scorer.score(query, [u.text for u in found])
        scores = checked_scores(raw, len(found), SEARCH_TOOL_NAME)
        needle = " ".join(query.split()).casefold()
        exact = [needle in " ".join(u.text.split()).casefold() for u in found]
        order = sorted(range(len(found)), key=lambda n: (-exact[n], -scores[n], -n))
        return self._passages(saves, found, order, scores, exact, k)

    def _passages(
        self,
        saves: list[_Parsed],
        units: list[_Unit],
        order: list[int],
        scores: list[float],
        exact: list[bool],
        k: int,
    ) -> list[SavedPassage]:
        chosen: list[list[Any]] = []  # [save, first unit, last unit, score]
        for n in order:
            if len(chosen) >= k or (scores[n] <= 0 and not exact[n]):
                break
            u = units[n]
            p = saves[u.save]
            first, last = self._window(p, u.pos)
            if any(u.text in _text(saves[c[0]], c[1], c[2]) for c in chosen):
                continue  # already shown (this place, or the same text in another save)
            for c in chosen:
                if c[0] == u.save and first <= c[2] + 1 and last >= c[1] - 1:
                    lo, hi = min(c[1], first), max(c[2], last)
                    if p.units[hi][1] - p.units[lo][0] > _MERGE_MAX * self.passage_chars:
                        lo, hi = min(c[1], u.pos), max(c[2], u.pos)
                    if p.units[hi][1] - p.units[lo][0] <= _MERGE_MAX * self.passage_chars:
                        c[1], c[2] = lo, hi
                        break
            else:
                chosen.append([u.save, first, last, scores[n]])
        out = []
        for save, first, last, score in chosen:
            p = saves[save]
            start, end = p.units[first][0], p.units[last][1]
            out.append(SavedPassage(p.id, start, end, p.transcript[start:end], score))
        return out

    def _window(self, p: _Parsed, pos: int) -> tuple[int, int]:
        """The units around ``pos`` that fit passage_chars: up to ``context`` each side,
        the next one first. A side stops at its first unit that does not fit (a passage is
        one unbroken stretch, so a later, smaller unit would bring the one skipped with it);
        the passage is characters ``units[first][0]`` to ``units[last][1]``, so its size is
        measured as that span."""
        first = last = pos
        ends = p.units
        open_after = open_before = True
        for _ in range(self.context):
            if open_after:
                open_after = last + 1 < len(ends) and self._fits(p, first, last + 1)
                last += open_after
            if open_before:
                open_before = first > 0 and self._fits(p, first - 1, last)
                first -= open_before
            if not (open_after or open_before):
                break
        return first, last

    def _fits(self, p: _Parsed, first: int, last: int) -> bool:
        return p.units[last][1] - p.units[first][0] <= self.passage_chars


def _text(p: _Parsed, first: int, last: int) -> str:
    return p.transcript[p.units[first][0] : p.units[last][1]]


def search_tool(
    store: ToolResultStore,
    *,
    scorer: Any = None,
    k: int = 5,
    passage_chars: int = 1500,
) -> FunctionTool:
    """The search_context(query, k) tool: the passages of everything this run saved in
    ``store`` that best match ``query``, each with the ``recall_context`` call that reads on
    from it.

    It searches only what was saved under the calling context's owner scope (see
    owner_scope): nothing saved, everything expired and another owner's saves all give the
    very same short text (not an error); a store that cannot be reached gives another short
    text (try later), and neither names the store's error. Like any tool's result, the
    returned text goes to the model only: nothing here logs it.

    Args:
        store: where the steps saved (their ``save_to``); it must offer ``load_all``.
        scorer: a :class:`~agent_adapter.context.Scorer`; default a stemmed BM25, each
            message read with a share of its neighbours (no model: see the module
            docstring for why not the hybrid); its caches live on the tool.
        k: the passages a call returns unless the model asks for another number (1 to 20).
        passage_chars: the most characters a passage holds: a hit message (a longer one in
            pieces) with up to four messages each side that fit; one widened by nearby hits
            holds at most twice that.

    Raises:
        ConfigError: store is not a ToolResultStore or has no ``load_all``, the scorer is not
            a Scorer, k is not in 1..20, or passage_chars is not an int >= 1.
    """
    _check_search_tool(store, scorer, k, passage_chars)
    searcher = _Searcher(scorer if scorer is not None else lexical_scorer(), passage_chars)

    async def search(args: dict[str, Any], ctx: Any = None) -> str:
        query = args.get("query") if isinstance(args, dict) else None
        if not isinstance(query, str) or not query.strip():
            return f"{SEARCH_TOOL_NAME} needs a 'query' string."
        want = args.get("k", k) if isinstance(args, dict) else k
        if want is None:
            want = k
        if isinstance(want, bool) or not isinstance(want, int) or want < 1:
            return f"{SEARCH_TOOL_NAME}: 'k' must be an integer >= 1."
        try:
            with scoring_context(ctx):
                found = await searcher.search(store, owner_scope(ctx), query, min(want, MAX_K))
        except StoreError:
            return f"{SEARCH_TOOL_NAME} could not read the saved context just now; try again later."
        return _found_text(query, found)

    return FunctionTool(
        name=SEARCH_TOOL_NAME,
        description=(
            "Search the earlier context that was removed, summarized or shortened to save "
            "room (words to look for, e.g. a file name, an error, a name or a date). Returns "
            "the best passages, each with the recall_context call that reads on from it."
        ),
        parameters=_search_parameters(k),
        fn=search,
    )


def _check_search_tool(store: Any, scorer: Any, k: Any, passage_chars: Any) -> None:
    """:func:`search_tool`'s arguments checked (see its Raises)."""
    if not isinstance(store, ToolResultStore):
        raise ConfigError(f"search_tool: {type(store).__name__} is not a ToolResultStore")
    for name in ("load_all", "load_all_sync"):
        if not callable(getattr(store, name, None)):
            raise ConfigError(
                f"search_tool: {type(store).__name__} has no {name}(scope): it cannot list "
                "what a run saved (MemoryStore, SQLiteStore and RedisStore can)"
            )
    if scorer is not None:
        check_scorer(scorer, "search_tool.scorer")
    check_limit("search_tool.k", k)
    if k > MAX_K:
        raise ConfigError(f"search_tool.k must be at most {MAX_K}, got {k!r}")
    check_limit("search_tool.passage_chars", passage_chars)


def _search_parameters(k: int) -> dict[str, Any]:
    """The search tool's JSON schema (``k``: the default number of passages)."""
    return {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "k": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_K,
                "description": f"how many passages (default {k})",
            },
        },
        "required": ["query"],
    }


def _found_text(query: str, found: list[SavedPassage]) -> str:
    """The search tool's answer: the passages found for ``query``, best first, each with
    the recall call that reads on from it."""
    if not found:
        return f"Nothing saved matches {query!r}."
    many = "passage" if len(found) == 1 else "passages"
    lines = [f"{len(found)} saved {many} for {query!r}, best first (quoted data):"]
    for n, p in enumerate(found, 1):
        lines.append(
            f"[{n}] {RECALL_TOOL_NAME}(id={p.id!r}, offset={p.offset}) reads on from here:"
        )
        lines.append(p.text)
    return "\n".join(lines)
