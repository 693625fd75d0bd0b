"""The ``gemini`` format, regressions: signatures survive other formats, trimming
and dedup never leave a call turn after a model turn.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from _gemini_cases import DICTS, OBJECTS, SIG, _objects, _run, _weather
from agent_adapter.context import (
    CompressionPolicy,
    RemoveDuplicates,
    RemoveOldMessages,
    compress_for,
)
from agent_adapter.context.formats import convert
from agent_adapter.context.formats._gemini import check_gemini
from agent_adapter.context.formats._registry import _CONVERTERS

# ------------------------------------------------------------------------------------ regressions


@pytest.mark.parametrize("other", ["openai", "anthropic", "langchain"])
def test_signature_on_a_call_survives_a_trip_through_another_format(other: str) -> None:
    (model,) = convert(_weather()[1:2], "gemini").messages[:1]
    converter = _CONVERTERS[other]
    back = converter.load(converter.dump(model), 1)
    assert back == [model]
    for gemini in (DICTS, OBJECTS):
        part = gemini.dump(back[0])
        first = part.parts[1] if gemini is OBJECTS else part["parts"][1]
        sig = first.thought_signature if gemini is OBJECTS else first["thought_signature"]
        assert (sig if gemini is OBJECTS else base64.b64decode(sig)) == base64.b64decode(SIG)


@pytest.mark.parametrize("form", ["snake", "objects"])
def test_trimming_never_opens_the_history_on_a_model_call_turn(form: str) -> None:
    contents: list[Any] = [{"role": "user", "parts": [{"text": "fix the bug " * 30}]}]
    for i in range(6):
        contents.append(
            {
                "role": "model",
                "parts": [
                    {"function_call": {"id": f"c{i}", "name": "bash", "args": {"cmd": "ls"}}}
                ],
            }
        )
        contents.append(
            {
                "role": "user",
                "parts": [
                    {
                        "function_response": {
                            "id": f"c{i}",
                            "name": "bash",
                            "response": {"output": "file " * 200},
                        }
                    }
                ],
            }
        )
    if form == "objects":
        contents = _objects(contents)
    for keep_first in (0, 1):
        # a target the protected part fits ("keep" removes nothing that cannot help)
        policy = CompressionPolicy(
            target_tokens=500, steps=[RemoveOldMessages(keep_first=keep_first, keep_last=0)]
        )
        out, report = _run(compress_for(contents, policy))
        assert report.messages_removed > 0
        assert out[0] is contents[0]
        assert check_gemini(out, before=contents) == []


def test_dedup_never_puts_a_call_turn_right_after_a_model_turn() -> None:
    def call(i: int) -> list[dict[str, Any]]:
        return [
            {
                "role": "model",
                "parts": [{"function_call": {"id": f"c{i}", "name": "f", "args": {"n": i}}}],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "function_response": {
                            "id": f"c{i}",
                            "name": "f",
                            "response": {"output": "r " * 50},
                        }
                    }
                ],
            },
        ]

    contents = [
        {"role": "user", "parts": [{"text": "book it " * 20}]},
        {"role": "model", "parts": [{"text": "Your id? " * 20}]},
        {"role": "user", "parts": [{"text": "yes"}]},
        *call(1),
        {"role": "model", "parts": [{"text": "Confirm? " * 20}]},
        {"role": "user", "parts": [{"text": "yes"}]},
        *call(2),
        {"role": "model", "parts": [{"text": "Done. " * 20}]},
        {"role": "user", "parts": [{"text": "thanks " * 10}]},
    ]
    policy = CompressionPolicy(target_tokens=100, steps=[RemoveDuplicates()])
    out, _ = _run(compress_for(contents, policy))
    assert check_gemini(out, before=contents) == []
