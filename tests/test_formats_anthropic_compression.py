"""The ``anthropic`` format after compression: thinking of the turn opener stays byte
identical mid-loop, and generated valid lists stay valid.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _anthropic_cases import compressed, every_step, thinking_blocks, tokens
from agent_adapter.context import CutLongMessages, RemoveOldMessages, ShrinkToolResults
from agent_adapter.context.formats import check
from agent_adapter.context.formats._anthropic import check_thinking_unchanged
from test_formats_anthropic import anthropic_conversations

FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------------
# thinking mid-loop


def _mid_loop() -> list[dict[str, Any]]:
    big = "line of output\n" * 300
    return [
        {"role": "user", "content": "fix the bug"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I will read a then b", "signature": "ErUBsig=="},
                {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": big}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "now b " * 100},
                {"type": "tool_use", "id": "t2", "name": "read", "input": {"path": "b"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": big}]},
    ]


@pytest.mark.parametrize(
    "step",
    [
        CutLongMessages(max_tokens_per_message=20),
        ShrinkToolResults(bigger_than_tokens=10, older_than_turns=0),
        RemoveOldMessages(),
        RemoveOldMessages(keep_first=1, keep_last=2),
    ],
    ids=["cut", "shrink", "remove_old_default", "remove_old_keep_last_2"],
)
def test_thinking_of_the_turn_opener_stays_byte_identical(step: Any) -> None:
    natives = _mid_loop()
    before = json.dumps(natives[1]["content"][0])
    out = compressed(natives, 30, [step])
    assert check(out, "anthropic") == []
    assert check_thinking_unchanged(natives, out) == []
    (block,) = thinking_blocks(out)
    assert block is natives[1]["content"][0] and json.dumps(block) == before


# --------------------------------------------------------------------------------------------
# properties


STEP_LISTS = st.lists(
    st.sampled_from([*every_step(), RemoveOldMessages(keep_first=0, keep_last=1)]),
    min_size=1,
    max_size=4,
)


@FAST
@given(anthropic_conversations(), STEP_LISTS, st.floats(0.02, 1.0))
def test_compressed_anthropic_stays_valid(
    natives: list[dict[str, Any]], steps: list[Any], ratio: float
) -> None:
    assert check(natives, "anthropic") == []
    out = compressed(natives, int(tokens(natives) * ratio), steps)
    assert check(out, "anthropic") == []
    kept = {id(n) for n in out}
    for native in out:
        twins = [n for n in natives if n == native]
        # equal to an input native: it is that native, unless every equal input native is
        # also in the output itself (a rebuilt message that happens to equal another one)
        if twins and not any(native is n for n in twins):
            assert all(id(n) in kept for n in twins)
    blocks = {id(b) for b in thinking_blocks(natives)}
    assert all(id(b) in blocks for b in thinking_blocks(out))
    changed = [v for v in check_thinking_unchanged(natives, out) if v.rule == "thinking_changed"]
    assert changed == []
