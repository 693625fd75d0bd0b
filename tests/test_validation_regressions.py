"""Issue 19, item 12: bad arguments are a ConfigError naming the argument, where they are given.

Before: ``RemoveDuplicates(same_if_score_above="0.5")`` raised TypeError (and True passed);
``scorer=5`` passed RemoveDuplicates (and a class passed both steps) until ``apply``; an
OpaquePart nested 5,000 deep raised RecursionError when compressed or converted; and the CLI
printed a traceback for a 100,000-deep JSON file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from agent_adapter import ConfigError, Message
from agent_adapter._messages import OPAQUE_MAX_DEPTH, OpaquePart, TextPart
from agent_adapter.cli import main
from agent_adapter.context import (
    BM25Scorer,
    CompressionPolicy,
    KeepMostRelevant,
    MyScorer,
    RemoveDuplicates,
    compress,
)
from agent_adapter.context.formats import convert
from agent_adapter.context.formats._codec import MAX_DEPTH


def _nested(depth: int) -> Any:
    """``{"a": {"a": ... 1}}``, ``depth`` dicts deep, built in a loop."""
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


# ------------------------------------------------------------------------------------------
# RemoveDuplicates.same_if_score_above


@pytest.mark.parametrize("above", ["0.5", math.nan, math.inf, -0.1, 1.5, True, None, [0.5]])
def test_a_threshold_that_is_not_a_number_in_0_1_is_a_config_error(above: object) -> None:
    with pytest.raises(ConfigError, match=r"same_if_score_above must be a number in 0\.\.1"):
        RemoveDuplicates(match="similar", scorer=BM25Scorer(), same_if_score_above=above)  # type: ignore[arg-type]


@pytest.mark.parametrize("above", [0, 0.0, 0.5, 1, 1.0])
def test_a_threshold_in_0_1_is_taken(above: float) -> None:
    step = RemoveDuplicates(match="similar", scorer=BM25Scorer(), same_if_score_above=above)
    assert step.same_if_score_above == above


# ------------------------------------------------------------------------------------------
# scorer= on both steps


class SyncScorer:
    def score(self, query: str, texts: list[str]) -> list[float]:
        return [0.0] * len(texts)


class AsyncScorer:
    async def score(self, query: str, texts: list[str]) -> list[float]:
        return [0.0] * len(texts)


NOT_SCORERS = [5, "bm25", object(), BM25Scorer, SyncScorer(), lambda q, t: t]


@pytest.mark.parametrize("scorer", NOT_SCORERS)
@pytest.mark.parametrize("match", ["exact", "similar"])
def test_remove_duplicates_refuses_what_is_not_a_scorer(scorer: object, match: str) -> None:
    with pytest.raises(ConfigError, match=r"RemoveDuplicates\.scorer must be a Scorer"):
        RemoveDuplicates(match=match, scorer=scorer)  # type: ignore[arg-type]


@pytest.mark.parametrize("scorer", NOT_SCORERS)
def test_keep_most_relevant_refuses_what_is_not_a_scorer(scorer: object) -> None:
    with pytest.raises(ConfigError, match=r"KeepMostRelevant\.scorer must be a Scorer"):
        KeepMostRelevant(scorer=scorer)  # type: ignore[arg-type]


def test_a_class_is_named_with_how_to_pass_an_instance() -> None:
    with pytest.raises(ConfigError, match=r"the class BM25Scorer \(pass an instance"):
        RemoveDuplicates(match="similar", scorer=BM25Scorer)


@pytest.mark.parametrize(
    "scorer", [BM25Scorer(), MyScorer(lambda q, t: [0.0] * len(t)), AsyncScorer()]
)
def test_scorers_are_taken_by_both_steps(scorer: Any) -> None:
    assert RemoveDuplicates(match="similar", scorer=scorer).scorer is scorer
    assert KeepMostRelevant(scorer=scorer).scorer is scorer
    assert RemoveDuplicates().scorer is None  # "exact" needs none


# ------------------------------------------------------------------------------------------
# OpaquePart nested too deep


def test_the_opaque_limit_is_the_converters_tool_payload_limit() -> None:
    assert OPAQUE_MAX_DEPTH == MAX_DEPTH == 200


@pytest.mark.parametrize("make", [lambda v: {"a": v}, lambda v: [v], lambda v: ("x", v)])
def test_an_opaque_part_nested_5000_deep_is_a_config_error(make: Any) -> None:
    value: Any = 1
    for _ in range(5000):
        value = make(value)
    with pytest.raises(ConfigError, match="nested more than 200 levels deep"):
        OpaquePart("openai", value)


def _chat(part: OpaquePart) -> list[Message]:
    return [
        Message("system", "you help"),
        Message("user", (TextPart("listen"), part)),
        Message("assistant", "x " * 300),
        Message("user", "and?"),
    ]


async def test_an_opaque_part_at_the_limit_compresses_and_converts() -> None:
    part = OpaquePart("openai", _nested(OPAQUE_MAX_DEPTH))
    msgs = _chat(part)
    steps = [RemoveDuplicates(), KeepMostRelevant(keep_count=0)]
    out, _ = await compress(msgs, CompressionPolicy(target_tokens=10, steps=steps))
    assert out[1] is msgs[1]  # the caller's message, unchanged
    with pytest.raises(ConfigError, match="nested more than 200"):
        OpaquePart("openai", {"wrapped": part.data})  # one level more


async def test_a_cycle_in_opaque_data_is_still_carried() -> None:
    data: dict[str, Any] = {"type": "audio"}
    data["self"] = data
    msgs = _chat(OpaquePart("openai", data))
    out, _ = await compress(msgs, CompressionPolicy(target_tokens=10))
    assert msgs[1] in out


def test_remove_duplicates_keys_opaque_data_deepened_in_place() -> None:
    """``data`` is the caller's object: deepened after construction, RemoveDuplicates keys it
    as a copy of nothing else (repr raised RecursionError too)."""
    from agent_adapter.context._steps.dedup import _blob

    one, two = _nested(5000), _nested(5000)
    assert _blob(one) != _blob(two)
    assert _blob({"a": 1}) == _blob({"a": 1})


def test_a_native_item_nested_5000_deep_converts_to_a_config_error() -> None:
    """An Anthropic block of a type with no slot here becomes an OpaquePart on load."""
    natives = [
        {"role": "user", "content": [{"type": "future_block", "payload": _nested(5000)}]},
        {"role": "assistant", "content": "ok"},
    ]
    with pytest.raises(ConfigError, match="nested more than 200"):
        convert(natives, "anthropic")


# ------------------------------------------------------------------------------------------
# the CLI on a 100,000-deep JSON file


def _one_line_error(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent-adapter: error: "), err
    return code, lines[0]


@pytest.mark.parametrize("command", ["compress", "inspect", "report"])
def test_the_cli_on_a_100000_deep_json_file_prints_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    code, line = _one_line_error(capsys, command, str(path))
    assert code == 2
    assert str(path) in line and "nested too deep" in line


def test_the_cli_names_the_line_of_a_jsonl_file_nested_too_deep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.jsonl"
    first = json.dumps({"role": "user", "content": "hi"})
    path.write_text(first + "\n" + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    code, line = _one_line_error(capsys, "compress", str(path))
    assert code == 2 and "line 2: JSON nested too deep" in line


def test_the_cli_reports_input_too_deep_for_a_later_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read, but too deep for a step past the loaders: the same one-line bad-input error."""
    import agent_adapter.cli._app as app

    def deep(*args: object, **kwargs: object) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(app, "compress_for_sync", deep)
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    code, line = _one_line_error(capsys, "compress", str(path))
    assert code == 2 and "nested too deep to process" in line
