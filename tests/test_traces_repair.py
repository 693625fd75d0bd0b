"""The OpenAI repair of loaded sessions (agent_adapter.cli._openai_runs) follows the
library's one pairing rule.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from _trace_cases import Message, assert_openai_valid
from agent_adapter.cli._loaders import NO_RESULT_TEXT
from agent_adapter.cli._openai_runs import _repair_openai


def _tool(call_id: str, content: str = "out") -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _calls(*ids: str) -> Message:
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": "", "tool_calls": calls}


def _placeholder(call_id: str) -> Message:
    return _tool(call_id, NO_RESULT_TEXT)


USER: Message = {"role": "user", "content": "u"}


@pytest.mark.parametrize(
    ("messages", "expected", "stats"),
    [
        pytest.param(  # a call unanswered before the next message: a placeholder after the rest
            [USER, _calls("a", "b"), _tool("a"), USER],
            [USER, _calls("a", "b"), _tool("a"), _placeholder("b"), USER],
            {"missing tool result added": 1},
            id="missing-result",
        ),
        pytest.param(  # a result answering no open call becomes a user message
            [USER, _tool("z", "late")],
            [USER, {"role": "user", "content": "[tool result z] late"}],
            {"orphan tool message -> user": 1},
            id="stray-result",
        ),
        pytest.param(  # a stray result inside a round ends it: the rest of the round too
            [USER, _calls("a", "b"), _tool("z"), _tool("a"), USER],
            [
                USER,
                _calls("a", "b"),
                _placeholder("a"),
                _placeholder("b"),
                {"role": "user", "content": "[tool result z] out"},
                {"role": "user", "content": "[tool result a] out"},
                USER,
            ],
            {"missing tool result added": 2, "orphan tool message -> user": 2},
            id="stray-inside-a-round",
        ),
        pytest.param(  # partly answered at the very end: answered in full
            [USER, _calls("a", "b"), _tool("b")],
            [USER, _calls("a", "b"), _tool("b"), _placeholder("a")],
            {"missing tool result added": 1},
            id="partly-answered-at-end",
        ),
        pytest.param(  # the last message's calls wait for their results: left alone
            [USER, _calls("a")],
            [USER, _calls("a")],
            {},
            id="pending-at-end",
        ),
    ],
)
def test_openai_repair_follows_the_pairing_rule(
    messages: list[Message], expected: list[Message], stats: dict[str, int]
) -> None:
    repaired = json.loads(json.dumps(messages))
    counts: Counter[str] = Counter()
    _repair_openai(repaired, counts)
    assert repaired == expected
    assert dict(counts) == stats
    assert_openai_valid(repaired, "repaired")
