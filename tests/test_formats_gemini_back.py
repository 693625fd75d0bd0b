"""The ``gemini`` format, ``back``: a changed message keeps every other part and field
of its native, calls and thoughts stay the same objects.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
from google.genai import types

from _gemini_cases import SIG, SIG2, _camel, _objects, _run, _weather
from agent_adapter._messages import Message
from agent_adapter.context import CompressionPolicy, ShrinkToolResults, compress_for
from agent_adapter.context.formats import convert
from agent_adapter.context.formats._gemini import check_gemini

# ------------------------------------------------------------------------------------ back


def _cut_first_model_text(messages: list[Message]) -> list[Message]:
    out = list(messages)
    for i, m in enumerate(out):
        if m.role == "assistant" and m.text:
            out[i] = m.with_text("cut")
            break
    return out


@pytest.mark.parametrize("form", ["snake", "camel", "objects"])
def test_changed_text_keeps_every_other_part_and_field(form: str) -> None:
    base = _weather()
    base[3]["parts"] = [
        {"text": "Rain in Paris,", "thought_signature": SIG2},
        {"text": " sun in Rome."},
        {"text": "", "thought_signature": SIG},
    ]
    contents: list[Any] = (
        base if form == "snake" else _camel(base) if form == "camel" else _objects(base)
    )
    snapshot = copy.deepcopy(contents)
    conv = convert(contents, "gemini")
    msgs = conv.messages
    edited = [*msgs[:4], msgs[4].with_text("short")]
    out = conv.back(edited)
    assert contents == snapshot  # nothing mutated
    assert all(a is b for a, b in zip(out[:3], contents[:3], strict=True))
    assert out[3] is not contents[3]
    if form == "objects":
        assert [p.text for p in out[3].parts] == ["short", ""]
        assert [p.thought_signature for p in out[3].parts] == [
            base64.b64decode(SIG2),
            base64.b64decode(SIG),
        ]
    else:
        sig_key = "thought_signature" if form == "snake" else "thoughtSignature"
        assert out[3] == {
            "role": "model",
            "parts": [{"text": "short", sig_key: SIG2}, {"text": "", sig_key: SIG}],
        }
    assert convert(out, "gemini").messages[4].text == "short"


def test_changed_model_turn_keeps_calls_and_thoughts_as_the_same_objects() -> None:
    contents = _objects(_weather())
    contents[1] = contents[1].model_copy(
        update={"parts": [types.Part(text="I will look."), *contents[1].parts]}
    )
    conv = convert(contents, "gemini")
    out = conv.back(_cut_first_model_text(conv.messages))
    new, old = out[1], contents[1]
    assert new is not old and new.parts[0].text == "cut" and old.parts[0].text == "I will look."
    assert all(a is b for a, b in zip(new.parts[1:], old.parts[1:], strict=True))
    assert check_gemini(out, before=contents) == []


@pytest.mark.parametrize("form", ["snake", "camel", "objects"])
def test_changed_tool_result_only_changes_the_response(form: str) -> None:
    base = _weather()
    base[2]["parts"][0]["function_response"]["will_continue"] = False
    base[2]["parts"][1]["function_response"]["response"] = {"output": "rain " * 500}
    # a later user turn: the weather round is no longer the current turn, whose thinking
    # opener (and so its round) is protected
    base.append({"role": "user", "parts": [{"text": "thanks"}]})
    contents: list[Any] = (
        base if form == "snake" else _camel(base) if form == "camel" else _objects(base)
    )
    policy = CompressionPolicy(
        target_tokens=60,
        steps=[ShrinkToolResults(bigger_than_tokens=20, older_than_turns=0, keep_chars=20)],
    )
    out, report = _run(compress_for(contents, policy))
    assert report.messages_changed == 1
    assert [o is c for o, c in zip(out, contents, strict=True)] == [True, True, False, True, True]
    kept, shrunk = out[2].parts if form == "objects" else out[2]["parts"]
    assert kept is (contents[2].parts if form == "objects" else contents[2]["parts"])[0]
    if form == "objects":
        fr = shrunk.function_response
        assert (fr.id, fr.name) == ("c1", "weather") and list(fr.response) == ["output"]
        assert len(fr.response["output"]) < 600
    else:
        key = "function_response" if form == "snake" else "functionResponse"
        fr = shrunk[key]
        assert (fr["id"], fr["name"]) == ("c1", "weather") and list(fr["response"]) == ["output"]
    assert check_gemini(out, before=contents) == []


def test_json_response_keeps_its_shape_when_the_text_still_parses() -> None:
    contents = _weather()
    contents[2]["parts"][0]["function_response"]["response"] = {"temp": 21, "sky": "sun"}
    conv = convert(contents, "gemini")
    msgs = list(conv.messages)
    msgs[2] = msgs[2].with_text('{"temp": 21}')
    msgs[3] = msgs[3].with_text("not json")
    out = conv.back(msgs)
    responses = [p["function_response"]["response"] for p in out[2]["parts"]]
    assert responses == [{"temp": 21}, {"output": "not json"}]
