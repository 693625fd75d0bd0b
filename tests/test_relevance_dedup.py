"""RemoveDuplicates(match="similar"): near-copies go on the exact rules, never a lone reply."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from _convo import pairing_problems
from agent_adapter import ConfigError, Message, ToolCall
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    BM25Scorer,
    EmbeddingScorer,
    LocalEmbedder,
    MyScorer,
    RemoveDuplicates,
)
from agent_adapter.context._steps._base import StepContext
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import Protection, split_units
from agent_adapter.context.formats import convert


async def _similar(
    msgs: Sequence[Message], scorer: object = None, target: int = 0, above: float = 0.9
) -> list[Message]:
    step = RemoveDuplicates(
        match="similar", scorer=scorer or BM25Scorer(), same_if_score_above=above
    )
    context = StepContext(
        target_tokens=target, threshold_tokens=0, protection=Protection(msgs), meter=TokenMeter()
    )
    return await step.apply(list(msgs), context)


def _round(id_: str, command: str, output: str, text: str = "") -> list[Message]:
    call = ToolCall(id_, "bash", f'{{"command": "{command}"}}')
    return [
        Message("assistant", text, tool_calls=(call,)),
        Message("tool", output, tool_call_id=id_),
    ]


BODY = "".join(
    f"def handler_{i}(request):\n    return render(request, 'page_{i}')\n" for i in range(30)
)


async def test_a_file_read_again_after_an_edit_loses_its_older_read() -> None:
    edited = BODY.replace("page_7", "page_seven")
    msgs = [
        Message("user", "rename page 7"),
        *_round("c1", "cat views.py", BODY),
        *_round("c2", "sed -i s/page_7/page_seven/ views.py", ""),
        *_round("c3", "cat views.py", edited),
        Message("assistant", "Renamed."),
        Message("user", "thanks"),
    ]
    exact = await RemoveDuplicates().apply(
        list(msgs),
        StepContext(
            target_tokens=0, threshold_tokens=0, protection=Protection(msgs), meter=TokenMeter()
        ),
    )
    assert exact == msgs  # not a copy
    out = await _similar(msgs)
    assert out == [msgs[0], *msgs[3:]]
    assert pairing_problems(out) == []


async def test_another_command_with_a_like_output_stays() -> None:
    """Two test files whose output opens alike are not the same round: calls must match."""
    header = "===== test session starts =====\nplatform linux, pytest-8\n" * 20
    msgs = [
        Message("user", "run the tests"),
        *_round("c1", "pytest tests/test_a.py", header + "1 passed"),
        *_round("c2", "pytest tests/test_b.py", header + "1 passed"),
        Message("assistant", "All green."),
        Message("user", "thanks"),
    ]
    assert await _similar(msgs, above=0.5) == msgs


async def test_a_rerun_with_a_different_outcome_stays() -> None:
    msgs = [
        Message("user", "fix the test"),
        *_round("c1", "pytest -q", "FAILED tests/test_x.py::test_parse - KeyError: 'id'"),
        Message("assistant", "Patched the parser."),
        *_round("c2", "pytest -q", "1 passed in 0.02s"),
        Message("user", "thanks"),
    ]
    assert await _similar(msgs) == msgs


async def test_a_short_answer_to_another_question_stays() -> None:
    """The context rule of match="exact": a reply is a copy only with what it answers."""
    msgs = [
        Message("user", "Should I delete the production backups?"),
        Message("assistant", "Yes."),
        Message("user", "Should I restart nginx?"),
        Message("assistant", "Yes."),
        Message("user", "ok"),
    ]
    assert await _similar(msgs) == msgs


async def test_a_question_asked_again_goes_with_its_answer() -> None:
    msgs = [
        Message("user", "start"),
        Message("user", "What does the parse_header function in parser.py return?"),
        Message("assistant", "It returns a dict of header names to values."),
        Message("user", "What does the parse_header function in parser.py return exactly?"),
        Message("assistant", "It returns a dict of header names to their values."),
        Message("user", "thanks"),
    ]
    out = await _similar(msgs, above=0.6)
    assert out == [msgs[0], *msgs[3:]]


async def test_only_as_many_as_the_target_needs() -> None:
    msgs = [
        Message("user", "go"),
        *_round("c1", "cat views.py", BODY),
        *_round("c2", "cat views.py", BODY + "\n# 1"),
        *_round("c3", "cat views.py", BODY + "\n# 2"),
        Message("user", "thanks"),
    ]
    meter = TokenMeter()
    out = await _similar(msgs, target=meter.total(msgs) - 1)
    assert out == [msgs[0], *msgs[3:]]


async def test_bad_scores_are_a_config_error() -> None:
    msgs = [*_round("c1", "ls", "a b"), *_round("c2", "ls", "a b c"), Message("user", "x")]
    with pytest.raises(ConfigError, match=r"RemoveDuplicates: score \[0\]"):
        await _similar(msgs, scorer=MyScorer(lambda q, t: [1.5] * len(t)))
    with pytest.raises(ConfigError, match="needs a scorer"):
        RemoveDuplicates(match="similar")


async def test_real_runs_lose_re_run_rounds_and_keep_every_pair(data_dir: Path) -> None:
    """django__django-11133: the agent re-runs its reproduction script after each edit;
    the packaged embedding model finds the older runs, and every kept result has its call."""
    path = data_dir / "mini-swe-agent-gemini3pro" / "trajs" / "django__django-11133.traj.json"
    trace = load_trace(path)
    msgs = convert(trace.messages, trace.format).messages
    out = await _similar(msgs, scorer=EmbeddingScorer(LocalEmbedder()))
    meter = TokenMeter()
    assert meter.total(out) < meter.total(msgs)
    assert pairing_problems(out) == []
    gone = [u for u in split_units(msgs) if u.messages[0] not in out]
    assert gone and all(u.is_tool_round for u in gone)
    kept_calls = {
        (c.name, c.arguments) for m in out for c in m.tool_calls
    }  # a dropped round's command was run again later and that run is kept
    assert all((c.name, c.arguments) in kept_calls for u in gone for c in u.messages[0].tool_calls)
