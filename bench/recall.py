"""Recall benchmark: can the model find again what compression removed or summarized?

LoCoMo part: the LAST five conversations of ``locomo/locomo10.json`` (the untouched part:
the relevance work tunes on the others; taken from the end of the file so the two never
meet). For every category 1-4 question, the chat with the question put last is compressed
to each budget with ``RemoveOldMessages(save_to=store)`` and with
``Summarize(save_to=store)`` (the embedded extractive summarizer: no model, no network),
everything saved in a ``MemoryStore`` under the run's owner scope. For each question one of
whose evidence turns is no longer in the compressed list (by identity), the question is
searched with ``search_saved(store, scope, question, k)`` (what the ``search_context`` tool
runs; BM25 by default) and it counts as found at k when every evidence turn is among the
returned passages (its transcript block, ``role: text``, inside one of them).

Claude Code part: each long session (>= 100 messages) of ``claude-code-spotter`` is
compressed with ``RemoveOldMessages(save_to=store)`` to each budget; for every file path a
dropped message names in a tool call's arguments (``file_path``, ``path``,
``notebook_path``), the path's file name is searched and it counts as found when a returned
passage holds the whole path.

Speed: one search (``search_saved``, k=5, warm caches) of the longest of the five
conversations' saved span next to one LangChain ``trim_messages`` call on the same chat.
The bench does not assert anything: it prints the tables.

    python bench/recall.py                  # ~2 min on 2 cores
    python bench/recall.py --budgets 1000   # one budget
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _compress_cases import LONG_SESSION_MESSAGES, data_dir
from _locomo_data import CATEGORIES, PARTS, Chat, load_locomo, with_question
from agent_adapter import Message, RunContext, owner_scope
from agent_adapter.cli import load_trace
from agent_adapter.context import (
    BM25Scorer,
    CompressionPolicy,
    MemoryStore,
    RemoveOldMessages,
    Summarize,
    compress,
    estimate_tokens,
)
from agent_adapter.context._default_scorer import default_scorer, lexical_scorer
from agent_adapter.context._stores.search import CONTEXT, _Searcher
from agent_adapter.context.formats import convert

BUDGETS = (1000, 2000)
KS = (3, 5, 10)
SIZES = (500, 1000, 1500, 3000)
#: The scorers ``--scorer`` picks from: the tool's default (stemmed BM25 with neighbours),
#: KeepMostRelevant's default hybrid (BM25 + MiniLM), or plain BM25.
SCORERS: dict[str, Callable[[], Any]] = {
    "default": lexical_scorer,
    "hybrid": default_scorer,
    "bm25": BM25Scorer,
}
#: What ``--scorer``, ``--context`` and ``--passage-chars`` set (one searcher a chat).
SETTINGS: dict[str, Any] = {"scorer": "default", "context": CONTEXT}


_SEARCHERS: dict[tuple[str, int], _Searcher] = {}


def searcher(name: str, passage_chars: int = 1500) -> _Searcher:
    """What ``search_context`` runs (``search_saved``), one for a chat's searches (its
    caches, by content, are kept across the steps and budgets: only the time changes)."""
    key = (name, passage_chars)
    if key not in _SEARCHERS:
        scorer = SCORERS[SETTINGS["scorer"]]()
        _SEARCHERS[key] = _Searcher(scorer, passage_chars, context=SETTINGS["context"])
    return _SEARCHERS[key]


def search(s: _Searcher, store: MemoryStore, ctx: RunContext, query: str, k: int) -> list[Any]:
    return asyncio.run(s.search(store, owner_scope(ctx), query, k))


PATH_KEYS = ("file_path", "path", "notebook_path")

Step = Callable[[MemoryStore], Any]
STEPS: dict[str, Step] = {
    "RemoveOldMessages": lambda store: RemoveOldMessages(save_to=store),
    "Summarize": lambda store: Summarize(save_to=store),
}


def block(m: Message) -> str:
    """A message's block in a saved transcript (see ``_span.encode_span``)."""
    from agent_adapter.context._steps._summary_text import message_text

    return message_text(m)


@dataclass
class Tally:
    """What one (step, budget) found over the questions."""

    questions: int = 0
    removed: int = 0  # questions with evidence removed
    found: dict[int, int] = field(default_factory=lambda: dict.fromkeys(KS, 0))
    turns: int = 0  # evidence turns removed
    turns_found: int = 0  # ... among the k=5 passages
    chars: int = 0  # characters the k=5 passages hold, summed
    by_category: dict[int, list[int]] = field(default_factory=dict)  # cat -> [removed, found@5]


def locomo(
    chats: Sequence[Chat], budgets: Sequence[int], passage_chars: int
) -> dict[tuple[str, int], Tally]:
    """For each step and budget, the tally over every question of ``chats``."""
    out: dict[tuple[str, int], Tally] = {}
    for name, make in STEPS.items():
        for budget in budgets:
            tally = Tally()
            for chat in chats:
                store = MemoryStore()
                s = searcher(chat.name, passage_chars)
                policy = CompressionPolicy(
                    threshold_tokens=budget, target_tokens=budget, steps=[make(store)]
                )
                ctx = RunContext(thread_id=f"{chat.name}-{name}-{budget}")
                for q in chat.questions:
                    kept, _ = asyncio.run(compress(with_question(chat, q), policy, ctx=ctx))
                    ids = {id(m) for m in kept}
                    tally.questions += 1
                    gone = [chat.turns[e] for e in q.evidence if id(chat.turns[e]) not in ids]
                    if not gone:
                        continue
                    tally.removed += 1
                    wanted = [block(m) for m in gone]
                    for k in KS:  # one search a k: a passage widens by the hits before the k-th
                        texts = [p.text for p in search(s, store, ctx, q.text, k)]
                        hits = [any(w in t for t in texts) for w in wanted]
                        tally.found[k] += all(hits)
                        if k == 5:
                            tally.turns += len(hits)
                            tally.turns_found += sum(hits)
                            tally.chars += sum(map(len, texts))
                            cat = tally.by_category.setdefault(q.category, [0, 0])
                            cat[0] += 1
                            cat[1] += all(hits)
            out[(name, budget)] = tally
    return out


def passage_sizes(
    chats: Sequence[Chat], budget: int, sizes: Sequence[int]
) -> list[tuple[int, float, float, int]]:
    """(passage_chars, % questions with all removed evidence found at k=5, % evidence turns
    found, mean characters returned) with RemoveOldMessages at ``budget``; one compression a
    chat (its first question's), every question searched."""
    rows = []
    for size in sizes:
        q_n = q_found = t_n = t_found = chars = 0
        for chat in chats:
            store = MemoryStore()
            s = searcher(chat.name, size)
            ctx = RunContext(thread_id=f"{chat.name}-sizes")
            policy = CompressionPolicy(
                threshold_tokens=budget,
                target_tokens=budget,
                steps=[RemoveOldMessages(save_to=store)],
            )
            kept, _ = asyncio.run(compress(with_question(chat, chat.questions[0]), policy, ctx=ctx))
            ids = {id(m) for m in kept}
            for q in chat.questions:
                gone = [block(chat.turns[e]) for e in q.evidence if id(chat.turns[e]) not in ids]
                if not gone:
                    continue
                found = search(s, store, ctx, q.text, 5)
                texts = [p.text for p in found]
                hits = [any(w in t for t in texts) for w in gone]
                q_n += 1
                q_found += all(hits)
                t_n += len(hits)
                t_found += sum(hits)
                chars += sum(map(len, texts))
        rows.append((size, 100 * q_found / q_n, 100 * t_found / t_n, chars // q_n))
    return rows


def _paths(m: Message) -> set[str]:
    """The file paths ``m``'s tool calls name in their arguments."""
    out = set()
    for c in m.tool_calls:
        args = c.arguments
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                continue
        if isinstance(args, dict):
            out |= {v for k in PATH_KEYS if isinstance(v := args.get(k), str) and v}
    return out


def claude_code(data: Path, budgets: Sequence[int]) -> list[tuple[str, int, int, int]]:
    """(session, budget, paths dropped, found at k=5) for each long session."""
    rows = []
    for path in sorted((data / "claude-code-spotter").glob("*.jsonl")):
        trace = load_trace(path)
        if len(trace.messages) < LONG_SESSION_MESSAGES:
            continue
        messages = convert(trace.messages, trace.format).messages
        for budget in budgets:
            store = MemoryStore()
            s = searcher(trace.name)
            policy = CompressionPolicy(
                threshold_tokens=budget,
                target_tokens=budget,
                steps=[RemoveOldMessages(save_to=store)],
            )
            ctx = RunContext(thread_id=f"{trace.name}-{budget}")
            kept, _ = asyncio.run(compress(messages, policy, ctx=ctx))
            ids = {id(m) for m in kept}
            dropped = {p for m in messages if id(m) not in ids for p in _paths(m)}
            shown = {p for m in kept for p in _paths(m)}
            paths = sorted(dropped - shown)
            found = 0
            for p in paths:
                name = p.rsplit("/", 1)[-1]
                hits = search(s, store, ctx, name, 5)
                found += any(p in h.text for h in hits)
            rows.append((trace.name[:13], budget, len(paths), found))
    return rows


def speed(chats: Sequence[Chat], budget: int) -> tuple[str, int, float, float, float]:
    """(chat, turns, median ms of one search, max ms, median ms of one trim_messages call)."""
    from _compress_langchain import AIMessage, HumanMessage, lc_trim

    chat = max(chats, key=lambda c: len(c.messages))
    store = MemoryStore()
    s = searcher(chat.name)
    ctx = RunContext(thread_id="speed")
    policy = CompressionPolicy(
        threshold_tokens=budget, target_tokens=budget, steps=[RemoveOldMessages(save_to=store)]
    )
    asyncio.run(compress(with_question(chat, chat.questions[0]), policy, ctx=ctx))
    questions = [q.text for q in chat.questions[:30]]
    search(s, store, ctx, questions[0], 5)  # warm the caches
    times = []
    for q in questions:
        t0 = time.perf_counter()
        search(s, store, ctx, q, 5)
        times.append(1000 * (time.perf_counter() - t0))
    lc = [
        (HumanMessage if m.role == "user" else AIMessage)(content=m.text)
        for m in with_question(chat, chat.questions[0])
    ]
    trims = []
    for _ in range(10):
        t0 = time.perf_counter()
        lc_trim(lc, budget)
        trims.append(1000 * (time.perf_counter() - t0))
    return (
        chat.name,
        len(chat.messages),
        statistics.median(times),
        max(times),
        statistics.median(trims),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", help="the shared data folder (default ../shared/data)")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--passage-chars", type=int, default=1500)
    parser.add_argument("--part", choices=sorted(PARTS), default="held-out")
    parser.add_argument("--scorer", choices=sorted(SCORERS), default=SETTINGS["scorer"])
    parser.add_argument("--context", type=int, default=SETTINGS["context"])
    parser.add_argument("--quick", action="store_true", help="LoCoMo tables only")
    parser.add_argument("--steps", default=",".join(STEPS), help="the steps of the LoCoMo table")
    args = parser.parse_args(argv)
    SETTINGS.update(scorer=args.scorer, context=args.context)
    for name in set(STEPS) - set(args.steps.split(",")):
        del STEPS[name]
    data = data_dir(args.data)
    budgets = [int(b) for b in args.budgets.split(",")]
    every = load_locomo(data)
    chats = [every[n] for n in PARTS[args.part]]
    started = time.perf_counter()
    tokens = [estimate_tokens(c.messages) for c in chats]
    print(
        f"LoCoMo: the last {len(chats)} conversations ({', '.join(c.name for c in chats)}; "
        f"{min(tokens)}-{max(tokens)} tokens), {sum(len(c.questions) for c in chats)} questions\n"
    )
    print(f"passages packed to {args.passage_chars} characters; found: every removed evidence turn")
    print("among the passages (questions with evidence removed), and per evidence turn at k=5\n")
    print(
        "| step | budget | questions | evidence removed | found k=3 | found k=5 | found k=10 "
        "| turns found k=5 | chars returned k=5 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    tallies = locomo(chats, budgets, args.passage_chars)
    for (name, budget), t in tallies.items():
        pct = [f"{100 * t.found[k] / t.removed:.1f}%" if t.removed else "-" for k in KS]
        turns = f"{100 * t.turns_found / t.turns:.1f}%" if t.turns else "-"
        chars = t.chars // t.removed if t.removed else 0
        print(
            f"| {name} | {budget} | {t.questions} | {t.removed} | {' | '.join(pct)} | {turns} "
            f"| {chars} |"
        )
    print("\nfound at k=5 by LoCoMo category (questions with evidence removed)\n")
    print("| step | budget | " + " | ".join(CATEGORIES[c] for c in sorted(CATEGORIES)) + " |")
    print("|---|---:|" + "---:|" * len(CATEGORIES))
    for (name, budget), t in tallies.items():
        cells = []
        for c in sorted(CATEGORIES):
            n, f = t.by_category.get(c, [0, 0])
            cells.append(f"{100 * f / n:.1f}% of {n}" if n else "-")
        print(f"| {name} | {budget} | {' | '.join(cells)} |")
    if args.quick:
        print(f"\n{time.perf_counter() - started:.0f} s")
        return 0
    print(f"\npassage size, RemoveOldMessages at {budgets[0]} tokens, k=5\n")
    print("| passage_chars | questions found | evidence turns found | chars returned |")
    print("|---:|---:|---:|---:|")
    for size, qf, tf, chars in passage_sizes(chats, budgets[0], SIZES):
        print(f"| {size} | {qf:.1f}% | {tf:.1f}% | {chars} |")
    print("\nClaude Code sessions: file paths of the dropped span, searched by file name (k=5)\n")
    print("| session | budget | paths dropped | found | found % |")
    print("|---|---:|---:|---:|---:|")
    total = [0, 0]
    for session, budget, n, found in claude_code(data, budgets):
        total[0] += n
        total[1] += found
        pct = f"{100 * found / n:.1f}%" if n else "-"
        print(f"| {session} | {budget} | {n} | {found} | {pct} |")
    if total[0]:
        print(f"| all | | {total[0]} | {total[1]} | {100 * total[1] / total[0]:.1f}% |")
    name, turns, med, worst, trim = speed(chats, budgets[-1])
    print(f"\nspeed on {name} ({turns} turns, its saved span):\n")
    print("| call | median ms | max ms |")
    print("|---|---:|---:|")
    print(f"| search_saved(k=5), warm caches | {med:.1f} | {worst:.1f} |")
    print(f"| langchain trim_messages (budget {budgets[-1]}) | {trim:.1f} | |")
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
