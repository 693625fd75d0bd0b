"""RemoveDuplicates(match="similar") at scale: the same drops as scoring every pair, fewer scores.

Issue 19: the similar match scored every unit against every later unit of its shape (BM25
indexing them all again for each), 106 s at 10,000 messages. BM25Scorer is now scored pair
by pair through an inverted index (``_dedup_index.Bm25Index``), and other scorers are not
asked about units already chained. These tests hold the step to a brute-force reference
(every pair of one shape, each asked alone) on small random conversations, check the
index's bounds, and count the scores (never time) on a bigger one. ``bench/dedup_scale.py``
has the timings.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_adapter import Message, ToolCall
from agent_adapter.context import BM25Scorer, MyScorer, RemoveDuplicates
from agent_adapter.context._steps import _dedup_index as index
from agent_adapter.context._steps import dedup
from agent_adapter.context._steps._base import StepContext
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import Protection, Unit

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]
COMMANDS = ['{"command": "cat a.py"}', '{"command": "pytest -q"}', '{"command": "ls"}']


class EveryPair(RemoveDuplicates):
    """The reference: every pair of units of one shape (texts within a factor of two in
    length, the older unit unprotected) asked alone, ``scorer.score(older, [later])``."""

    async def _similar_keys(self, units: list[Unit], context: StepContext) -> list[Hashable]:
        texts = [dedup._similar_text(u) for u in units]
        parent = list(range(len(units)))

        def root(i: int) -> int:
            while parent[i] != i:
                i = parent[i]
            return i

        for i, j in itertools.combinations(range(len(units)), 2):
            if units[i].protected or not texts[i].strip() or not texts[j].strip():
                continue
            if dedup._shape(units[i]) != dedup._shape(units[j]):
                continue
            if not len(texts[i]) <= 2 * len(texts[j]) <= 4 * len(texts[i]):
                continue
            (score,) = await self.scorer.score(texts[i], [texts[j]])
            if score > self.same_if_score_above:
                parent[root(i)] = root(j)
        return [("similar", root(n)) for n in range(len(units))]


def _context(msgs: Sequence[Message], pinned: set[int], target: int = 0) -> StepContext:
    ids = {id(msgs[i]) for i in pinned}
    return StepContext(
        target_tokens=target,
        threshold_tokens=0,
        protection=Protection(msgs, lambda m: id(m) in ids),
        meter=TokenMeter(),
    )


def _text(base: list[str], edits: list[int]) -> str:
    """base's words with a few replaced or added: near-copies of one another."""
    words = list(base)
    for e in edits:
        if e % 3 == 0 and words:
            words[e % len(words)] = WORDS[e % len(WORDS)]
        elif e % 3 == 1:
            words.append(WORDS[e % len(WORDS)])
        elif len(words) > 1:
            words.pop(e % len(words))
    return " ".join(words)


bases = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=1, max_size=4)
turns = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant", "round"]),
        st.integers(0, 3),  # which base text
        st.lists(st.integers(0, 30), max_size=2),  # its edits
        st.integers(0, len(COMMANDS) - 1),
    ),
    min_size=2,
    max_size=24,
)


def _conversation(
    base_texts: list[list[str]], plan: list[tuple[str, int, list[int], int]]
) -> list[Message]:
    msgs = [Message("system", "you help"), Message("user", "start")]
    for n, (kind, which, edits, command) in enumerate(plan):
        text = _text(base_texts[which % len(base_texts)], edits)
        if kind == "round":
            call = ToolCall(f"c{n}", "bash", COMMANDS[command])
            msgs += [
                Message("assistant", "", tool_calls=(call,)),
                Message("tool", text, tool_call_id=f"c{n}"),
            ]
        else:
            msgs.append(Message(kind, text))
    return [*msgs, Message("user", "done?")]


async def _both(
    step: RemoveDuplicates, reference: RemoveDuplicates, msgs: list[Message], pinned: set[int]
) -> tuple[list[Message], list[Message]]:
    got = await step.apply(list(msgs), _context(msgs, pinned))
    want = await reference.apply(list(msgs), _context(msgs, pinned))
    return got, want


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bases,
    turns,
    st.sets(st.integers(0, 60), max_size=6),
    st.sampled_from([0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0]),
    st.sampled_from([(1.5, 0.75), (0.5, 0.0), (3.0, 1.0), (1.2, 0.3)]),
)
async def test_bm25_index_drops_what_scoring_every_pair_drops(
    base_texts: list[list[str]],
    plan: list[tuple[str, int, list[int], int]],
    pinned: set[int],
    above: float,
    params: tuple[float, float],
) -> None:
    msgs = _conversation(base_texts, plan)
    k1, b = params
    step = RemoveDuplicates(
        match="similar", scorer=BM25Scorer(k1=k1, b=b), same_if_score_above=above
    )
    reference = EveryPair(match="similar", scorer=BM25Scorer(k1=k1, b=b), same_if_score_above=above)
    got, want = await _both(step, reference, msgs, {i for i in pinned if i < len(msgs)})
    assert got == want
    assert all(any(g is m for m in msgs) for g in got)  # kept messages are the same objects


def _jaccard(query: str, texts: list[str]) -> list[float]:
    mine = set(query.split())
    return [len(mine & set(t.split())) / len(mine | set(t.split()) or {""}) for t in texts]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bases, turns, st.sets(st.integers(0, 60), max_size=6), st.sampled_from([0.5, 0.7, 0.9]))
async def test_another_scorer_drops_what_asking_every_pair_drops(
    base_texts: list[list[str]],
    plan: list[tuple[str, int, list[int], int]],
    pinned: set[int],
    above: float,
) -> None:
    """A scorer other than BM25Scorer is asked once per unit, not about units already
    chained to it: the same chains as asking about every pair."""
    msgs = _conversation(base_texts, plan)
    step = RemoveDuplicates(match="similar", scorer=MyScorer(_jaccard), same_if_score_above=above)
    reference = EveryPair(match="similar", scorer=MyScorer(_jaccard), same_if_score_above=above)
    got, want = await _both(step, reference, msgs, {i for i in pinned if i < len(msgs)})
    assert got == want


texts = st.lists(st.sampled_from([*WORDS, "alpha", "alpha", "beta"]), min_size=1, max_size=40).map(
    " ".join
)


@settings(max_examples=300, deadline=None)
@given(texts, texts, st.floats(0.05, 4.0), st.floats(0.0, 1.0))
def test_a_pair_scores_as_bm25_scorer_scores_it(a: str, b: str, k1: float, b_: float) -> None:
    """The index's pair score is BM25Scorer.scores(a, [b])[0], bit for bit."""
    scorer = BM25Scorer(k1=k1, b=b_)
    length, counts = scorer._terms(a)
    groups: dict[int, list[str]] = {}
    for word, count in counts.items():
        groups.setdefault(count, []).append(word)
    got = index._pair_score(list(groups.items()), length, scorer._terms(b), k1, b_)
    assert got == scorer.scores(a, [b])[0]


@settings(max_examples=300, deadline=None)
@given(texts, texts, st.floats(0.05, 4.0), st.floats(0.0, 1.0), st.floats(0.0, 0.99))
def test_what_the_index_skips_never_scores_above(
    a: str, b: str, k1: float, b_: float, above: float
) -> None:
    """The bounds the index prunes by: a text lacking every word a query probes (for lengths
    in the span bounded), or one _may_score_above rules out, scores at most ``above``."""
    scorer = BM25Scorer(k1=k1, b=b_)
    length, counts = scorer._terms(a)
    order = sorted(counts)
    in_order = [counts[w] for w in order]
    for probe in (index._probe_count, index._rough_probe_count):
        for span in ((1, 2 * length + 5), (max(1, length // 2), length + 3)):
            k = probe(in_order, length, span, k1, b_, above)
            lacking = " ".join(w for w in (a + " " + b).split() if w not in order[:k])
            doc = scorer._terms(lacking)
            if doc[0] and span[0] <= doc[0] <= span[1]:
                assert scorer.scores(a, [lacking])[0] <= above
    doc = scorer._terms(b)
    if not index._may_score_above(counts, length, max(in_order), doc, k1, b_, above):
        assert scorer.scores(a, [b])[0] <= above


def _session(n: int) -> list[Message]:
    """n rounds reading files, every tenth a file read before with one value changed, each
    with a note and a user reply ("ok" every other time)."""
    msgs = [Message("system", "s"), Message("user", "go")]
    bodies: dict[int, str] = {}
    for i in range(n):
        if i % 10 == 9:
            f = i - 9
            body = bodies[f].replace(f"value_{f * 31}", "changed", 1)
        else:
            f = i
            body = bodies[f] = "\n".join(f"line {i} {j} value_{i * 31 + j}" for j in range(20))
        call = ToolCall(f"c{i}", "bash", f'{{"command": "cat f{f}.py"}}')
        msgs += [
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", body, tool_call_id=f"c{i}"),
            Message("assistant", f"note {i} about value_{i}"),
            Message("user", "ok" if i % 2 else f"why {i}?"),
        ]
    return msgs


async def test_the_index_scores_only_candidate_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """4,000 messages: the 1,000 notes and the 1,000 replies are each one shape (a million
    pairs of units between them); the index scores under one pair for every two messages,
    and still finds every file read again."""
    msgs = _session(1000)
    scored = 0
    pair_score = index._pair_score

    def counting(*args: object) -> float:
        nonlocal scored
        scored += 1
        return pair_score(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "_pair_score", counting)
    step = RemoveDuplicates(match="similar", scorer=BM25Scorer())
    out = await step.apply(list(msgs), _context(msgs, set()))
    assert scored < len(msgs) // 2
    reads_again = [m for m in msgs if m.role == "tool" and "changed" in m.text]
    assert len(reads_again) == 100 and all(m in out for m in reads_again)
    gone = {m.tool_call_id for m in msgs if m.role == "tool"} - {m.tool_call_id for m in out}
    assert gone == {f"c{i - 9}" for i in range(9, 1000, 10)}  # the older reads, only them


async def test_another_scorer_is_not_asked_about_units_already_chained() -> None:
    """Forty copies of one answer: the first is asked about the 39 after it, the rest about
    none (every pair would be 780 texts)."""
    asked: dict[str, int] = {}

    def same(query: str, texts: list[str]) -> list[float]:
        asked[query] = asked.get(query, 0) + len(texts)
        return [1.0 if t == query else 0.0 for t in texts]

    msgs = [
        Message("system", "s"),
        Message("user", "go"),
        *(Message("assistant", "the same answer") for _ in range(40)),
        Message("user", "thanks"),
    ]
    step = RemoveDuplicates(match="similar", scorer=MyScorer(same))
    out = await step.apply(list(msgs), _context(msgs, set()))
    assert asked["the same answer"] == 39
    assert len(out) < len(msgs)  # and the copies still go
