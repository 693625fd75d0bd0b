"""The ``openai`` format on real data: tau-bench and SWE-agent conversations round-trip
unchanged and stay valid after compression.
"""

from __future__ import annotations

import copy
import glob
from pathlib import Path
from typing import Any

import pytest

from _openai_cases import OPENAI, compressed, every_step, tokens
from agent_adapter.cli._loaders import load_swe_agent, load_tau_bench
from agent_adapter.context.formats import check, convert

# --------------------------------------------------------------------------------------------
# real data


def _openai_traces(data_dir: Path) -> list[list[dict[str, Any]]]:
    traces = load_tau_bench(data_dir / "tau-bench" / "gpt-4o-airline.json")
    traces += [
        load_swe_agent(f)
        for f in sorted(glob.glob(str(data_dir / "swe-agent" / "**" / "*.traj"), recursive=True))
    ]
    return traces


def test_real_openai_conversations_round_trip_unchanged(data_dir: Path) -> None:
    traces = _openai_traces(data_dir)
    assert len(traces) == 222
    for natives in traces:
        assert check(natives, "openai") == []
        conv = convert(natives, "openai")
        assert conv.back(list(conv.messages)) is natives
        for message in conv.messages:
            assert OPENAI.load(OPENAI.dump(message), 0) == [message]


@pytest.mark.parametrize("ratio", [0.7, 0.4, 0.1])
def test_real_openai_conversations_stay_valid_after_compression(
    data_dir: Path, ratio: float
) -> None:
    for natives in _openai_traces(data_dir):
        snapshot = copy.deepcopy(natives)
        total = tokens(natives, "openai")
        for step in every_step():
            out = compressed(natives, "openai", int(total * ratio), [step])
            assert check(out, "openai") == [], step.name
            for native in out:
                if any(native == n for n in natives):
                    assert any(native is n for n in natives)
        assert natives == snapshot  # the caller's list is never mutated
