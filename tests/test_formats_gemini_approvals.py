"""The ``gemini`` format, approvals: an ADK confirmation is an approval marker and is
protected.
"""

from __future__ import annotations

from typing import Any

import pytest

from _gemini_cases import _camel, _objects, _run
from agent_adapter.context import (
    CompressionPolicy,
    Protection,
    RemoveOldMessages,
    carries_approval_state,
    compress_for,
    has_approval_marker,
)
from agent_adapter.context.formats import convert

# ------------------------------------------------------------------------------------ approvals


def _confirmation(form: str) -> list[Any]:
    contents: list[Any] = [
        {"role": "user", "parts": [{"text": "transfer 100 EUR " * 40}]},
        {
            "role": "model",
            "parts": [
                {
                    "function_call": {
                        "id": "adk-1",
                        "name": "adk_request_confirmation",
                        "args": {
                            "originalFunctionCall": {"name": "transfer", "args": {"eur": 100}}
                        },
                    }
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "function_response": {
                        "id": "adk-1",
                        "name": "adk_request_confirmation",
                        "response": {"confirmed": True},
                    }
                }
            ],
        },
        {"role": "model", "parts": [{"text": "Transferred. " * 40}]},
        {"role": "user", "parts": [{"text": "thanks"}]},
        {"role": "model", "parts": [{"text": "You are welcome."}]},
    ]
    return (
        _camel(contents)
        if form == "camel"
        else _objects(contents)
        if form == "objects"
        else contents
    )


@pytest.mark.parametrize("form", ["snake", "camel", "objects"])
def test_adk_confirmation_is_an_approval_marker_and_is_protected(form: str) -> None:
    contents = _confirmation(form)
    assert [has_approval_marker(c) for c in contents] == [False, True, True, False, False, False]
    msgs = convert(contents, "gemini").messages
    assert [carries_approval_state(m) for m in msgs] == [False, True, True, False, False, False]
    protection = Protection(msgs)
    assert protection.is_protected(msgs[1]) and protection.is_protected(msgs[2])
    policy = CompressionPolicy(
        target_tokens=5, steps=[RemoveOldMessages(keep_first=0, keep_last=0)]
    )
    out, _ = _run(compress_for(contents, policy))
    assert out[1] is contents[1] and out[2] is contents[2]
