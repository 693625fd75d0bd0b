"""search_tool: lets the model search everything compression saved for its run.

Every text saved under the run's owner scope (spans that ``RemoveOldMessages``,
``Summarize`` and ``KeepMostRelevant`` took out, tool results ``ShrinkToolResults``
shortened, texts ``SummarizeLongMessage`` summarized) is read back with the store's
``load_all``, split into passages (:func:`~._span.passages`: whole messages packed up to a
size, a long one in pieces) and scored against the query, BM25 by default
(:class:`~agent_adapter.context.BM25Scorer`, whose per-text cache lives on the tool, so a
second search reads only what was saved since) or the scorer you give. The best passages
come back with the id and offset that ``recall_context`` reads on from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._run import owner_scope
from agent_adapter._tools import FunctionTool
from agent_adapter.context._scorers import BM25Scorer, check_scorer, checked_scores, scoring_context
from agent_adapter.context._stores._base import StoreError, ToolResultStore, check_limit
from agent_adapter.context._stores._keys import store_id_key
from agent_adapter.context._stores._span import (
    RECALL_TOOL_NAME,
    SEARCH_TOOL_NAME,
    passages,
    read_saved,
)

__all__ = ["SavedPassage", "search_saved", "search_tool"]

#: The most passages one search returns, whatever k the model asks for.
MAX_K = 20


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
    """The ``k`` passages saved in ``store`` under ``scope`` that score best against
    ``query`` (a score above 0 only), best first (the newer on a tie); the passages that
    hold the query word for word (whitespace and case aside: a file name, an error line)
    come before the others. A passage that two saves hold word for word (the runs of two
    compressions of one growing conversation overlap) is returned once.

    Args:
        store: a store with ``load_all`` (MemoryStore, SQLiteStore, RedisStore).
        scope: the owner scope (see :func:`~agent_adapter.owner_scope`).
        query: what to look for.
        k: how many passages at most.
        scorer: a :class:`~agent_adapter.context.Scorer`; ``None``: a fresh BM25Scorer.
        passage_chars: the size passages are packed to.

    Raises:
        ConfigError: the store has no ``load_all``, or the scorer returned bad scores.
        StoreError: the store failed.
    """
    load = getattr(store, "load_all", None)
    if not callable(load):
        raise ConfigError(f"search_saved: {type(store).__name__} has no load_all(scope)")
    entries = await load(scope)
    if not entries or not query.strip():
        return []
    key = await store_id_key(store)
    found: list[tuple[str, int, int, str]] = []
    seen: set[str] = set()
    for id_, text in entries:
        saved = read_saved(key, text)
        for start, end in passages(saved, passage_chars):
            piece = saved.transcript[start:end]
            if piece not in seen:  # the same passage of two overlapping saves: scored once
                seen.add(piece)
                found.append((id_, start, end, piece))
    if not found:
        return []
    used = scorer if scorer is not None else BM25Scorer()
    raw = await used.score(query, [f[3] for f in found])
    scores = checked_scores(raw, len(found), SEARCH_TOOL_NAME)
    # a passage holding the query word for word (a file name, an error line) comes first
    needle = " ".join(query.split()).casefold()
    exact = [needle in " ".join(f[3].split()).casefold() for f in found]
    order = sorted(range(len(found)), key=lambda n: (-exact[n], -scores[n], -n))
    out = []
    for n in order[:k]:
        if scores[n] <= 0 and not exact[n]:
            break
        id_, start, end, text = found[n]
        out.append(SavedPassage(id_, start, end, text, scores[n]))
    return out


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
        scorer: a :class:`~agent_adapter.context.Scorer`; default :class:`BM25Scorer` (no
            model; its per-text cache lives on the tool).
        k: the passages a call returns unless the model asks for another number (1 to 20).
        passage_chars: the size passages are packed to (whole messages; a longer message in
            pieces).

    Raises:
        ConfigError: store is not a ToolResultStore or has no ``load_all``, the scorer is not
            a Scorer, k is not in 1..20, or passage_chars is not an int >= 1.
    """
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
    used = scorer if scorer is not None else BM25Scorer()

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
                found = await search_saved(
                    store,
                    owner_scope(ctx),
                    query,
                    min(want, MAX_K),
                    scorer=used,
                    passage_chars=passage_chars,
                )
        except StoreError:
            return f"{SEARCH_TOOL_NAME} could not read the saved context just now; try again later."
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

    return FunctionTool(
        name=SEARCH_TOOL_NAME,
        description=(
            "Search the earlier context that was removed, summarized or shortened to save "
            "room (words to look for, e.g. a file name, an error, a name or a date). Returns "
            "the best passages, each with the recall_context call that reads on from it."
        ),
        parameters={
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
        },
        fn=search,
    )
