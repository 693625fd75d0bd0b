"""The ``gemini`` format, check rules: ``check_gemini`` names each rule,
``check_thought_signatures`` compares bytes and base64.
"""

from __future__ import annotations

import copy
from typing import Any

from _gemini_cases import SIG2, _camel, _objects, _weather
from agent_adapter.context.formats._gemini import check_gemini, check_thought_signatures

# ------------------------------------------------------------------------------------ check rules


def test_check_gemini_names_each_rule() -> None:
    good = _weather()
    assert check_gemini(good) == [] == check_gemini(_camel(good)) == check_gemini(_objects(good))

    def rules(contents: list[Any]) -> list[tuple[int, str]]:
        return [(v.index, v.rule) for v in check_gemini(contents)]

    assert rules(good[1:]) == [(0, "first_turn")]
    assert rules([good[0], good[2]]) == [(1, "response_position")]
    # the last round partly answered: still waiting for the rest, as compress() sees it
    assert rules([*good[:2], {"role": "user", "parts": good[2]["parts"][:1]}]) == [
        (2, "calls_pending_at_end")
    ]
    partly = [*good[:2], {"role": "user", "parts": good[2]["parts"][:1]}, *good[3:]]
    assert (2, "response_count") in rules(partly)
    assert rules([*good[:2], {"role": "user", "parts": [{"text": "?"}]}]) == [
        (1, "unanswered_call")
    ]
    assert rules([good[0], good[3], *good[1:3]]) == [(2, "call_position")]
    assert rules([good[0], {"role": "assistant", "parts": [{"text": "x"}]}]) == [(1, "role")]
    assert rules([good[0], {"role": "model", "parts": []}]) == [(1, "empty_turn")]
    assert rules(good[:2]) == []  # a pending call at the end is fine
    wrong_id = copy.deepcopy(good)
    wrong_id[2]["parts"][0]["function_response"]["id"] = "zz"
    assert rules(wrong_id) == [(2, "response_count")]


def test_check_thought_signatures_compares_bytes_and_base64() -> None:
    before = _weather()
    assert check_thought_signatures(before, _objects(before)) == []
    lost = copy.deepcopy(before)
    del lost[1]["parts"][1]["thought_signature"]
    changed = copy.deepcopy(before)
    changed[1]["parts"][1]["thought_signature"] = SIG2
    assert [(v.index, v.rule) for v in check_gemini(lost, before=before)] == [
        (1, "thought_signature")
    ]
    assert "changed" in check_thought_signatures(before, changed)[0].message
    assert "lost" in check_thought_signatures(before, lost)[0].message
