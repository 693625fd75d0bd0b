"""LoCoMo evidence benchmark: does compression keep the turns that answer the question?

For every category 1-4 question of the LoCoMo conversations (``../shared/data/locomo``), the
chat is built (see ``_locomo_data.py``), the question put last, and the list compressed to
each budget; a question counts when every one of its evidence turns survived.

The ten conversations are split in two (``_locomo_data.PARTS``): ``tuning`` (the first five)
is where settings were chosen, ``held-out`` (the last five) was not looked at while choosing;
each part gets its own tables. Contenders on the same questions in the same run:

* ``recency``: the newest turns that fit (the baseline named in issue 11);
* ``langchain``: LangChain ``trim_messages(strategy="last")`` with the same chars/4 + 4 count;
* ``bm25-greedy``: a reference outside the library (issue 23's): rank-bm25's ``BM25Okapi``
  over single turns (lowercased word runs), the turns taken best first while they fit;
* ``bm25`` / ``bm25-stem`` / ``bm25-default`` / ``minilm`` / ``hybrid`` / ``hybrid-k10`` /
  ``default``: ``compress(..., CompressionPolicy(threshold_tokens=B, target_tokens=B,
  steps=[KeepMostRelevant(scorer=...)]))`` with BM25Scorer(), BM25Scorer(stem=True),
  BM25Scorer(stem=True, context_weight=0.3) (the default without the embeddings extra),
  EmbeddingScorer(LocalEmbedder()), HybridScorer of
  BM25 and MiniLM (RRF k=60), the default before stemming (``HybridScorer(BM25Scorer(),
  EmbeddingScorer(LocalEmbedder(), context_weight=0.5), k=10)``) and ``KeepMostRelevant()``'s
  own default scorer (that hybrid over ``bm25-default``'s BM25 when the embeddings extra is
  installed, else ``bm25-default``).

Embeddings are cached on disk (``--cache-dir``, default ``~/.cache/agent-adapter/bench``) by
text, so a warm run embeds nothing. ``ms / question`` is the mean time of one compress call
at the first budget, scoring included (with a warm cache: the first call on each
conversation fills it and is not timed); the other budgets of a question reuse its scores
(the same texts against the same query), which keeps the run short. Peak memory is
tracemalloc's for one compress call on the longest conversation (numpy and onnxruntime
buffers are partly outside it), plus the process's max RSS at the end.

    python bench/locomo.py                      # both parts, ~1,500 questions
    python bench/locomo.py --part held-out      # one part
    python bench/locomo.py --speed              # time per call on the longest chat (689 turns)
"""

from __future__ import annotations

import argparse
import asyncio
import re
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _compress_cases import data_dir
from _embed_cache import DiskCachedEmbedder, default_cache_dir
from _locomo_data import (
    CATEGORIES,
    PARTS,
    Chat,
    all_evidence_kept,
    load_locomo,
    with_question,
)
from agent_adapter import Message
from agent_adapter.context import (
    BM25Scorer,
    CompressionPolicy,
    EmbeddingScorer,
    HybridScorer,
    KeepMostRelevant,
    LocalEmbedder,
    compress,
    estimate_tokens,
)
from agent_adapter.context._default_scorer import BM25_CONTEXT_WEIGHT, STEM

BUDGETS = (1000, 2000, 4000, 8000)
SCORERS = ("bm25", "bm25-default", "hybrid-k10", "default")
KNOWN = ("bm25", "bm25-stem", "bm25-default", "minilm", "hybrid", "hybrid-k10", "default")
_WORDS = re.compile(r"\w+")


def recency(messages: list[Message], budget: int) -> list[Message]:
    """The newest messages whose estimate_tokens fits the budget (the question included)."""
    total = 0
    for i in range(len(messages) - 1, -1, -1):
        total += estimate_tokens([messages[i]])
        if total > budget:
            return messages[i + 1 :]
    return messages


class BM25Greedy:
    """The plain reference: rank-bm25's BM25Okapi over single turns, best first while they
    fit (a turn that does not fit is skipped, the next tried); the question always kept.
    Each chat is indexed once (its turns do not change between questions)."""

    def __init__(self) -> None:
        self.indexes: dict[int, Any] = {}

    def __call__(self, messages: list[Message], budget: int) -> list[Message]:
        from rank_bm25 import BM25Okapi

        turns = messages[:-1]
        index = self.indexes.get(id(turns[0]))
        if index is None:
            index = BM25Okapi([_WORDS.findall(m.text.lower()) or [""] for m in turns])
            self.indexes[id(turns[0])] = index
        scores = index.get_scores(_WORDS.findall(messages[-1].text.lower()))
        used = estimate_tokens([messages[-1]])
        keep = {len(turns)}
        for i in sorted(range(len(turns)), key=lambda i: (-scores[i], -i)):
            cost = estimate_tokens([turns[i]])
            if used + cost <= budget:
                keep.add(i)
                used += cost
        return [m for i, m in enumerate(messages) if i in keep]


class LangChainTrim:
    """trim_messages on the same chat; kept LangChain messages mapped back by position (each
    chat converted once; the question's message is added per call)."""

    def __init__(self) -> None:
        self.converted: dict[int, list[Any]] = {}

    def __call__(self, messages: list[Message], budget: int) -> list[Message]:
        from _compress_langchain import AIMessage, HumanMessage, lc_trim

        head = self.converted.get(id(messages[0]))
        if head is None or len(head) != len(messages) - 1:
            head = [
                (HumanMessage if m.role == "user" else AIMessage)(content=m.text, id=str(i))
                for i, m in enumerate(messages[:-1])
            ]
            self.converted[id(messages[0])] = head
        question = HumanMessage(content=messages[-1].text, id=str(len(messages) - 1))
        return [messages[int(str(m.id))] for m in lc_trim([*head, question], budget)]


class Memo:
    """A scorer remembering its last answers: the budgets of one question score the same
    texts against the same query, so only the first budget's call is scored (and timed)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.memo: dict[tuple[str, tuple[str, ...]], list[float]] = {}

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        key = (query, tuple(texts))
        hit = self.memo.get(key)
        if hit is None:
            if len(self.memo) > 8:
                self.memo.clear()
            hit = self.memo[key] = await self.inner.score(query, texts)
        return hit


def make_scorers(names: Sequence[str], cache_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    embedder = None
    if any(n in ("minilm", "hybrid", "hybrid-k10", "default") for n in names):
        embedder = DiskCachedEmbedder(LocalEmbedder(), cache_dir / "minilm-int8.sqlite")
    for name in names:
        if name == "bm25":
            out[name] = BM25Scorer()
        elif name == "bm25-stem":
            out[name] = BM25Scorer(stem=True)
        elif name == "bm25-default":  # KeepMostRelevant()'s own without the embeddings extra
            out[name] = BM25Scorer(stem=STEM, context_weight=BM25_CONTEXT_WEIGHT)
        elif name == "hybrid-k10":
            inner = EmbeddingScorer(embedder, context_weight=0.5)  # type: ignore[arg-type]
            out[name] = HybridScorer(BM25Scorer(), inner, k=10)
        elif name == "minilm":
            out[name] = EmbeddingScorer(embedder)  # type: ignore[arg-type]
        elif name == "hybrid":
            out[name] = HybridScorer(BM25Scorer(), EmbeddingScorer(embedder))  # type: ignore[arg-type]
        elif name == "default":  # KeepMostRelevant()'s own, its embedder behind the disk cache
            out[name] = KeepMostRelevant().scorer
            for inner in getattr(out[name], "scorers", ()):
                if isinstance(inner, EmbeddingScorer):
                    inner.embedder = embedder  # type: ignore[assignment]
        else:
            sys.exit(f"unknown scorer {name!r}; known: {', '.join(KNOWN)}")
    return out


def ours(scorer: Any) -> Callable[[list[Message], int], list[Message]]:
    step = KeepMostRelevant(scorer=Memo(scorer))
    policies: dict[int, CompressionPolicy] = {}

    def run(messages: list[Message], budget: int) -> list[Message]:
        policy = policies.setdefault(
            budget, CompressionPolicy(threshold_tokens=budget, target_tokens=budget, steps=[step])
        )
        return asyncio.run(compress(messages, policy))[0]

    return run


def speed(chats: list[Chat], contenders: dict[str, Any], budget: int) -> int:
    """Time one compress call on the longest conversation, per contender, for 20 of its
    questions: the chat seen once before (its turns' words and vectors cached), as an agent
    asks it again with one new question; trim_messages on the same list next to it."""
    longest = max(chats, key=lambda c: len(c.messages))
    print(
        f"one call on {longest.name} ({len(longest.messages) + 1} messages, "
        f"{estimate_tokens(longest.messages):,} tokens) to {budget:,} tokens, warm cache\n"
    )
    print("| contender | median ms | max ms |")
    print("|---|---:|---:|")
    for name, run in contenders.items():
        run(with_question(longest, longest.questions[0]), budget)  # fill the caches
        times = []
        for q in longest.questions[1:21]:
            messages = with_question(longest, q)
            t0 = time.perf_counter()
            run(messages, budget)
            times.append(1000 * (time.perf_counter() - t0))
        print(f"| {name} | {statistics.median(times):.1f} | {max(times):.1f} |")
    return 0


def evaluate(
    part: str, chats: list[Chat], contenders: dict[str, Any], budgets: list[int]
) -> dict[str, tuple[float, int]]:
    """Print the tables of one part; the time spent in first-budget calls per contender."""
    kept: dict[tuple[str, int, int], list[bool]] = {}  # (contender, budget, category)
    timed: dict[str, tuple[float, int]] = dict.fromkeys(contenders, (0.0, 0))
    for chat in chats:
        for name, run in contenders.items():
            run(with_question(chat, chat.questions[0]), budgets[0])  # fill caches untimed
            for q in chat.questions:
                messages = with_question(chat, q)
                for at, budget in enumerate(budgets):
                    t0 = time.perf_counter()
                    out = run(messages, budget)
                    if at == 0:  # the call that scores (later budgets reuse the scores)
                        seconds, calls = timed[name]
                        timed[name] = (seconds + time.perf_counter() - t0, calls + 1)
                    kept.setdefault((name, budget, q.category), []).append(
                        all_evidence_kept(chat, q, out)
                    )
    tokens = [estimate_tokens(c.messages) for c in chats]
    questions = sum(len(c.questions) for c in chats)
    names = ", ".join(c.name for c in chats)
    print(
        f"## LoCoMo {part}: {len(chats)} conversations ({names}; {min(tokens):,}-"
        f"{max(tokens):,} tokens, estimate_tokens), {questions} category 1-4 questions; "
        "all evidence turns kept, %\n"
    )
    counts = {c: sum(q.category == c for ch in chats for q in ch.questions) for c in CATEGORIES}
    head = " | ".join(f"{CATEGORIES[c]} ({counts[c]})" for c in CATEGORIES)
    for budget in budgets:
        print(f"{part}, budget {budget:,} tokens\n")
        print(f"| contender | {head} | all |")
        print("|---|" + "---:|" * (len(CATEGORIES) + 1))
        for name in contenders:
            cells = []
            every: list[bool] = []
            for c in CATEGORIES:
                got = kept.get((name, budget, c), [])
                every += got
                cells.append(f"{100 * sum(got) / max(1, len(got)):.1f}")
            cells.append(f"**{100 * sum(every) / max(1, len(every)):.1f}**")
            print(f"| {name} | " + " | ".join(cells) + " |")
        print()
    return timed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="the shared data folder (default ../shared/data)")
    parser.add_argument("--part", choices=[*PARTS, "both"], default="both")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--scorers", default=",".join(SCORERS), help=f"of {', '.join(KNOWN)}")
    parser.add_argument("--cache-dir", default=str(default_cache_dir()))
    parser.add_argument(
        "--speed", action="store_true", help="only time one call on the longest conversation"
    )
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    every = load_locomo(data_dir(args.data))
    parts = list(PARTS) if args.part == "both" else [args.part]
    scorers = make_scorers([s for s in args.scorers.split(",") if s], Path(args.cache_dir))
    contenders: dict[str, Callable[[list[Message], int], list[Message]]] = {
        "recency": recency,
        "langchain": LangChainTrim(),
        "bm25-greedy": BM25Greedy(),
        **{name: ours(s) for name, s in scorers.items()},
    }
    if args.speed:
        return speed(every, contenders, 4000)
    started = time.perf_counter()
    timed: dict[str, tuple[float, int]] = {}
    for part in parts:
        got = evaluate(part, [every[i] for i in PARTS[part]], contenders, budgets)
        for name, (seconds, calls) in got.items():
            before = timed.get(name, (0.0, 0))
            timed[name] = (before[0] + seconds, before[1] + calls)
    wall = time.perf_counter() - started
    print(
        f"| contender | ms / question (compress to {budgets[0]:,}, scoring included) "
        "| peak traced MiB, one call (longest chat) |"
    )
    print("|---|---:|---:|")
    chats = [every[i] for part in parts for i in PARTS[part]]
    longest = max(chats, key=lambda c: len(c.messages))
    for name, run in contenders.items():
        messages = with_question(longest, longest.questions[-1])
        run(messages, budgets[0])
        tracemalloc.start()
        run(messages, budgets[0])
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        seconds, calls = timed[name]
        print(f"| {name} | {1000 * seconds / max(1, calls):.2f} | {peak:.1f} |")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    embedders = {
        id(e): e
        for s in scorers.values()
        for inner in (s, *getattr(s, "scorers", ()))
        if isinstance(inner, EmbeddingScorer)
        for e in [inner.embedder]
    }
    embedded = sum(getattr(e, "embedded", 0) for e in embedders.values())
    print(
        f"\n{wall:.0f} s in all; max RSS {rss:.0f} MiB; texts embedded this run (cache misses): "
        f"{embedded:,}; cache: {args.cache_dir}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
