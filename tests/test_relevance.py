"""KeepMostRelevant: what it scores, what it keeps, in which order it drops, and its errors."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from _convo import pairing_problems
from agent_adapter import ConfigError, Message, RunContext, ToolCall
from agent_adapter.context import (
    BM25Scorer,
    CallableReranker,
    CompressionPolicy,
    KeepMostRelevant,
    MyScorer,
    RerankerScorer,
    compress,
)
from agent_adapter.context._lexical import stem
from agent_adapter.context._steps._base import StepContext
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import Protection


def _tokens(msgs: Sequence[Message]) -> int:
    return TokenMeter().total(list(msgs))


async def _keep(msgs: Sequence[Message], step: KeepMostRelevant, target: int) -> list[Message]:
    context = StepContext(
        target_tokens=target, threshold_tokens=0, protection=Protection(msgs), meter=TokenMeter()
    )
    return await step.apply(list(msgs), context)


def _chat() -> list[Message]:
    return [
        Message("system", "You are a helpful assistant."),
        Message("user", "Hi there!"),  # the opening user turn always stays
        Message("user", "I adopted a dog named Oscar last spring."),
        Message("assistant", "Congratulations! What breed is he?"),
        Message("user", "My sister lives in Lisbon and works as a nurse."),
        Message("assistant", "Lisbon is lovely in May."),
        Message("user", "Oscar is a beagle and loves long walks."),
        Message("assistant", "Beagles are great companions."),
        Message("user", "I am learning to paint with watercolors."),
        Message("assistant", "Watercolor painting is relaxing."),
        Message("user", "What breed is my dog Oscar?"),
    ]


async def test_the_least_relevant_go_first_only_as_many_as_needed() -> None:
    msgs = _chat()
    one = _tokens(msgs) - 1
    out = await _keep(
        msgs, KeepMostRelevant(scorer=BM25Scorer(), keep_count=0, neighbor_weight=0), one
    )
    removed = [m for m in msgs if m not in out]
    assert len(removed) == 1 and "Oscar" not in removed[0].text and "breed" not in removed[0].text
    out = await _keep(msgs, KeepMostRelevant(scorer=BM25Scorer(), keep_count=0), 0)
    assert out == [msgs[0], msgs[1], msgs[-1]]  # only the protected ones and the opening


async def test_keep_count_best_units_are_never_dropped() -> None:
    msgs = _chat()
    out = await _keep(
        msgs, KeepMostRelevant(scorer=BM25Scorer(), keep_count=3, neighbor_weight=0), 0
    )
    # the turns naming Oscar, his breed or a dog; BM25 has no notion of "beagle" being one
    assert out == [msgs[0], msgs[1], msgs[2], msgs[3], msgs[6], msgs[-1]]
    assert msgs == _chat()  # the caller's list is left alone


async def test_ties_drop_the_older_first() -> None:
    msgs = [Message("user", f"note {i}") for i in range(5)] + [Message("user", "question")]
    flat = MyScorer(lambda q, texts: [0.5] * len(texts))
    target = _tokens(msgs) - _tokens(msgs[:1])
    out = await _keep(msgs, KeepMostRelevant(scorer=flat, keep_count=0), target)
    assert out == [msgs[0], *msgs[2:]]  # msgs[0] opens the conversation


async def test_compare_to_overrides_the_latest_user_message() -> None:
    msgs = _chat()
    step = KeepMostRelevant(
        scorer=BM25Scorer(), keep_count=1, compare_to="Lisbon nurse sister", neighbor_weight=0
    )
    out = await _keep(msgs, step, 0)
    assert out == [msgs[0], msgs[1], msgs[4], msgs[-1]]


async def test_a_reply_shares_the_relevance_of_what_it_answers() -> None:
    msgs = [
        Message("user", "Hi!"),
        Message("user", "Guess where I went for my birthday?"),
        Message("assistant", "Paris?"),
        Message("user", "No, to Lisbon, with my sister."),
        Message("assistant", "Lovely."),
        Message("user", "The quarterly report is done."),
        Message("assistant", "Great work."),
        Message("user", "Where did I go for my birthday?"),
    ]
    alone = await _keep(
        msgs, KeepMostRelevant(scorer=BM25Scorer(), keep_count=1, neighbor_weight=0), 0
    )
    assert alone == [msgs[0], msgs[1], msgs[-1]]  # the answer (Lisbon) shares no word
    out = await _keep(msgs, KeepMostRelevant(scorer=BM25Scorer(), keep_count=2), 0)
    assert out == [msgs[0], msgs[1], msgs[2], msgs[-1]]
    out = await _keep(msgs, KeepMostRelevant(scorer=BM25Scorer(), keep_count=3), 0)
    assert msgs[3] not in out  # two steps away: 0.8 * 0.8 is not passed on
    with pytest.raises(ConfigError, match="neighbor_weight"):
        KeepMostRelevant(neighbor_weight=1.5)


async def test_without_a_question_nothing_goes() -> None:
    msgs = [Message("system", "sys"), Message("assistant", "hello"), Message("assistant", "hi")]
    assert await _keep(msgs, KeepMostRelevant(scorer=BM25Scorer(), keep_count=0), 0) == msgs


async def test_a_tool_round_is_scored_and_dropped_whole() -> None:
    def round_(id_: str, cmd: str, out: str) -> list[Message]:
        call = ToolCall(id_, "bash", f'{{"command": "{cmd}"}}')
        return [
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", out, tool_call_id=id_),
        ]

    msgs = [
        Message("user", "start"),
        *round_("a", "cat setup.py", "name='pkg' version='1.0'"),
        *round_("b", "cat parser.py", "def parse_header(line): ..."),
        Message("assistant", "ok"),
        Message("user", "fix parse_header in parser.py"),
    ]
    out = await _keep(msgs, KeepMostRelevant(scorer=BM25Scorer(), keep_count=1), 0)
    assert out == [msgs[3], msgs[4], msgs[-1]] or out == [msgs[0], msgs[3], msgs[4], msgs[-1]]
    assert msgs[1] not in out and msgs[2] not in out
    assert pairing_problems(out) == []


@pytest.mark.parametrize(
    "scores",
    [[0.5], [2.0] * 9, ["0.5"] * 9, [float("nan")] * 9],
)
async def test_bad_scores_are_a_config_error(scores: list[object]) -> None:
    step = KeepMostRelevant(scorer=MyScorer(lambda q, t: scores), keep_count=0)
    with pytest.raises(ConfigError, match="KeepMostRelevant"):
        await _keep(_chat(), step, 0)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ConfigError, match="Scorer"):
        KeepMostRelevant(scorer=lambda q, t: t)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="keep_count"):
        KeepMostRelevant(keep_count=-1)
    with pytest.raises(ConfigError, match="compare_to"):
        KeepMostRelevant(compare_to=3)  # type: ignore[arg-type]
    assert KeepMostRelevant(scorer=BM25Scorer()).config()["keep_count"] == 10


async def test_in_a_policy_the_reranker_bills_the_run() -> None:
    calls: list[int] = []

    def fn(query: str, texts: list[str]) -> list[float]:
        calls.append(len(texts))
        return [0.9 if "Oscar" in t else 0.1 for t in texts]

    step = KeepMostRelevant(scorer=RerankerScorer(CallableReranker(fn)), keep_count=0)
    msgs = _chat()
    ctx = RunContext()
    policy = CompressionPolicy(target_tokens=_tokens(msgs) // 2, steps=[step], recent_turns=0)
    out, report = await compress(msgs, policy, ctx=ctx)
    assert report.reached_target
    assert msgs[2] in out and msgs[6] in out
    assert len(ctx.ledger.entries) == len(calls) >= 1


@pytest.mark.parametrize(
    ("words", "one"),
    [
        (("camped", "camping", "camps", "camp"), "camp"),
        (("paintings", "painting", "painted", "paint"), "paint"),
        (("families", "family"), "famili"),
        (("running", "run"), "run"),
        (("making", "make", "makes"), "make"),
        (("reasoning", "reasoned", "reasons"), "reason"),
    ],
)
def test_stem_joins_the_forms_of_a_word(words: tuple[str, ...], one: str) -> None:
    assert {stem(w) for w in words} == {one}


def test_stem_leaves_short_and_other_words_alone() -> None:
    assert [stem(w) for w in ("is", "was", "bus", "2023s", "café", "größten")] == [
        "is", "was", "bus", "2023s", "café", "größten"
    ]  # fmt: skip
    assert stem("class") == "class" and stem("status") == "status"  # no plural "s" to strip


async def test_a_stemmed_bm25_matches_a_word_in_another_form() -> None:
    texts = ["We went camping at the beach last summer.", "The quarterly report is done."]
    assert await BM25Scorer().score("Where has she camped?", texts) == [0.0, 0.0]
    got = await BM25Scorer(stem=True).score("Where has she camped?", texts)
    assert got[0] > 0 and got[1] == 0
    assert repr(BM25Scorer(stem=True)) == "BM25Scorer(k1=1.5, b=0.75, stem=True)"
    with pytest.raises(ConfigError, match="stem must be a bool"):
        BM25Scorer(stem=1)  # type: ignore[arg-type]


async def test_a_bm25_context_weight_lends_a_turn_its_neighbours_score() -> None:
    texts = ["Where did you go?", "We went camping at the beach.", "Nice.", "The report is done."]
    alone = await BM25Scorer().score("camping trip", texts)
    mixed = await BM25Scorer(context_weight=0.5).score("camping trip", texts)
    assert alone[0] == alone[2] == alone[3] == 0 and alone[1] > 0
    assert mixed[0] == mixed[2] == pytest.approx(0.5 * alone[1] / 2)  # a share, over 1 + 2w
    assert mixed[1] == pytest.approx(alone[1] / 2) and mixed[3] == 0  # not next to it
    assert repr(BM25Scorer(context_weight=0.5)) == "BM25Scorer(k1=1.5, b=0.75, context_weight=0.5)"
    for bad in (-0.1, float("nan"), True, "0.3"):
        with pytest.raises(ConfigError, match="context_weight must be a finite number"):
            BM25Scorer(context_weight=bad)  # type: ignore[arg-type]
