"""The ``anthropic`` format on real Claude Code sessions: round trips, validity after
compression, the turn openers' thinking.
"""

from __future__ import annotations

import copy
import glob
from pathlib import Path
from typing import Any

import pytest

from _anthropic_cases import ANTHROPIC, OPENAI, compressed, every_step, thinking_blocks, tokens
from agent_adapter.cli._loaders import load_claude_code
from agent_adapter.context import RemoveOldMessages
from agent_adapter.context.formats import check, convert
from agent_adapter.context.formats._anthropic import check_thinking_unchanged

# --------------------------------------------------------------------------------------------
# real data


def _sessions(data_dir: Path) -> list[list[dict[str, Any]]]:
    files = sorted(
        glob.glob(str(data_dir / "claude-code-spotter" / "**" / "*.jsonl"), recursive=True)
    )
    return [load_claude_code(f) for f in files]


def test_real_claude_code_sessions_round_trip_unchanged(data_dir: Path) -> None:
    sessions = _sessions(data_dir)
    assert len(sessions) == 20
    for natives in sessions:
        assert check(natives, "anthropic") == []
        conv = convert(natives, "anthropic")
        assert conv.back(list(conv.messages)) is natives
        for message in conv.messages:
            assert ANTHROPIC.load(ANTHROPIC.dump(message), 0) == [message]
        via_chat = [OPENAI.load(OPENAI.dump(m), 0)[0] for m in conv.messages]
        assert via_chat == conv.messages  # Anthropic -> chat -> Message keeps everything
        back = conv.back(via_chat)  # and the natives rebuilt from them are the originals
        assert len(back) == len(natives) and all(a is b for a, b in zip(back, natives, strict=True))


@pytest.mark.parametrize("ratio", [0.7, 0.4, 0.1])
def test_real_claude_code_sessions_stay_valid_after_compression(
    data_dir: Path, ratio: float
) -> None:
    for natives in _sessions(data_dir):
        snapshot = copy.deepcopy(natives)
        total = tokens(natives)
        blocks = {id(b) for b in thinking_blocks(natives)}
        for step in every_step():
            out = compressed(natives, int(total * ratio), [step])
            assert check(out, "anthropic") == [], step.name
            assert all(id(b) in blocks for b in thinking_blocks(out))
            changed = [
                v
                for v in check_thinking_unchanged(natives, out)
                if v.rule != "turn_thinking_dropped"
            ]
            assert changed == []
        assert natives == snapshot


def test_real_sessions_keep_the_turn_openers_thinking(data_dir: Path) -> None:
    dropped = 0
    for natives in _sessions(data_dir):
        total = tokens(natives)
        for ratio in (0.7, 0.4, 0.1):
            out = compressed(
                natives, int(total * ratio), [RemoveOldMessages(keep_first=1, keep_last=2)]
            )
            dropped += len(check_thinking_unchanged(natives, out))
    assert dropped == 0
