"""The ``gemini`` format, reading: detection of dicts (snake_case, camelCase) and
google.genai Content objects, loading every part kind, errors naming the caller's fields.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from typing import Any

import pytest

from _gemini_cases import DICTS, OBJECTS, SIG, SIG2, _camel, _objects, _weather
from agent_adapter._errors import ConfigError
from agent_adapter._messages import FilePart, ImagePart, OpaquePart, ThinkingPart, ToolCall
from agent_adapter.context import CompressionPolicy, compress_for_sync
from agent_adapter.context.formats import convert, detect_format

# ------------------------------------------------------------------------------------ detection


def test_detects_snake_camel_model_dump_and_object_contents() -> None:
    snake = _weather()
    dumped = [c.model_dump() for c in _objects(snake)]  # every key, None values included
    for contents in (snake, _camel(snake), dumped, _objects(snake)):
        assert detect_format(contents) == "gemini"
    assert DICTS.kind({"role": "user", "content": "hi"}) is None
    assert DICTS.kind({"parts": [{"text": "no role defaults to user"}]}) == "sure"
    assert DICTS.kind({"role": "assistant", "parts": []}) is None
    assert detect_format([{"role": "user", "content": "hi"}]) == "openai"


def test_detection_never_imports_google_genai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)
    assert detect_format(_weather()) == "gemini"
    assert [m.role for m in convert(_weather()).messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]


# ------------------------------------------------------------------------------------ loading


def test_load_maps_every_part_kind() -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    contents = [
        {
            "role": "user",
            "parts": [
                {"text": "look"},
                {"inline_data": {"mime_type": "image/png", "data": png}},
                {"file_data": {"mime_type": "application/pdf", "file_uri": "gs://b/doc.pdf"}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "plan", "thought": True, "thought_signature": SIG2},
                {"executable_code": {"code": "print(1)", "language": "PYTHON"}},
                {
                    "function_call": {"name": "read", "args": {"path": "a"}},
                    "thought_signature": SIG,
                },
            ],
        },
        {"role": "user", "parts": [{"function_response": {"name": "read", "response": {"x": 1}}}]},
    ]
    for form in (contents, _camel(contents), _objects(contents)):
        user, model, tool = convert(form, "gemini").messages
        assert user.content[1] == ImagePart(data=png, media_type="image/png")
        assert user.content[2] == FilePart(url="gs://b/doc.pdf", media_type="application/pdf")
        assert model.content[0] == ThinkingPart("plan", SIG2)
        assert isinstance(model.content[1], OpaquePart)
        (call,) = model.tool_calls
        assert call == ToolCall(
            "gemini_call_1_0",
            "read",
            '{"path": "a"}',
            {"gemini_no_id": True, "thought_signature": SIG},
        )
        assert tool.tool_call_id == "gemini_call_1_0" and tool.name == "read"
        assert json.loads(tool.text) == {"x": 1} and tool.extras["gemini_response"] == "json"


def test_user_turn_with_responses_and_text_becomes_tool_and_user_messages() -> None:
    contents = _weather()
    contents[2]["parts"].append({"text": "also: thanks"})
    msgs = convert(contents, "gemini").messages
    assert [(m.role, m.tool_call_id, m.text) for m in msgs[2:5]] == [
        ("tool", "c2", "sun"),
        ("tool", "c1", "rain"),
        ("user", None, "also: thanks"),
    ]


def test_responses_without_ids_match_calls_by_name_then_order() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {
            "role": "model",
            "parts": [
                {"function_call": {"name": "a", "args": {}}},
                {"function_call": {"name": "b", "args": {}}},
                {"function_call": {"name": "b", "args": {"n": 2}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"function_response": {"name": "b", "response": {"output": "b1"}}},
                {"function_response": {"name": "a", "response": {"error": "boom"}}},
                {"function_response": {"name": "b", "response": {"result": "b2"}}},
            ],
        },
    ]
    msgs = convert(contents, "gemini").messages
    assert [(m.tool_call_id, m.text) for m in msgs[2:]] == [
        ("gemini_call_1_1", "b1"),
        ("gemini_call_1_0", "boom"),
        ("gemini_call_1_2", "b2"),
    ]
    assert msgs[3].extras == {"is_error": True, "gemini_no_id": True}
    assert msgs[4].extras == {"gemini_response_key": "result", "gemini_no_id": True}
    # generated ids never go out: a dump (through another format too) has no id
    out = OBJECTS.dump_all(msgs)
    assert all(p.function_call.id is None for p in out[1].parts)
    assert all(p.function_response.id is None for p in out[2].parts)
    assert convert(out, "gemini").messages == msgs


def test_invalid_contents_raise_config_error_naming_the_index() -> None:
    with pytest.raises(ConfigError, match=r"messages\[1\]\.role"):
        convert([{"role": "user", "parts": []}, {"role": "assistant", "parts": []}], "gemini")
    with pytest.raises(ConfigError, match=r"messages\[0\]\.parts\[0\]\.function_call\.name"):
        convert([{"role": "model", "parts": [{"function_call": {"args": {}}}]}], "gemini")
    with pytest.raises(ConfigError, match=r"messages\[0\] is str"):
        convert(["hi"], "gemini")


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("form", ["snake", "camel", "objects"])
def test_deeply_nested_args_and_responses_are_config_errors(form: str) -> None:
    def contents(args: Any, response: Any) -> list[Any]:
        base = [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"function_call": {"name": "f", "args": args}}]},
            {"role": "user", "parts": [{"function_response": {"name": "f", "response": response}}]},
        ]
        return base if form == "snake" else _camel(base) if form == "camel" else _objects(base)

    fc = "functionCall" if form == "camel" else "function_call"
    fr = "functionResponse" if form == "camel" else "function_response"
    cases = [
        (contents(_nested(1000), {"output": "x"}), rf"messages\[1\]\.parts\[0\]\.{fc}\.args"),
        (contents({}, _nested(1000)), rf"messages\[2\]\.parts\[0\]\.{fr}\.response"),
    ]
    policy = CompressionPolicy(target_tokens=5)
    for natives, field in cases:  # was RecursionError
        with pytest.raises(ConfigError, match=field + " is nested more than"):
            convert(natives, "gemini")
        with pytest.raises(ConfigError, match=field):
            compress_for_sync(natives, policy)
    assert len(convert(contents(_nested(150), _nested(150)), "gemini").messages) == 3


def test_errors_name_the_callers_own_fields_and_never_a_made_up_id() -> None:
    user = {"role": "user", "parts": [{"text": "weather?"}]}
    for bad, field in [
        ({"role": "model", "parts": [{"functionCall": {"args": {}}}]}, "functionCall.name"),
        (
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": [1]}}]},
            "functionCall.args",
        ),
        ({"role": "model", "parts": [{"function_call": "f"}]}, "function_call must be an object"),
        (
            {"role": "user", "parts": [{"functionResponse": "x"}]},
            "functionResponse must be an object",
        ),
    ]:
        with pytest.raises(ConfigError, match=re.escape(f"messages[1].parts[0].{field}")):
            convert([user, bad], "gemini")
    # a call without id left unanswered: named by its function, never by the made-up id
    contents = [
        user,
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}}]},
        {"role": "user", "parts": [{"text": "never mind"}]},
    ]
    conv = convert(contents, "gemini")
    made_up = conv.messages[1].tool_calls[0].id
    assert conv.native_call_id(made_up) == "function_call 'get_weather'"
    assert conv.call_terms == ("function_call", "function_response")
    for form in (contents, _objects([user, *(_snake(c) for c in contents[1:])])):
        with pytest.raises(ConfigError) as err:
            compress_for_sync(form, CompressionPolicy(target_tokens=5))
        assert made_up not in str(err.value) and "gemini_call" not in str(err.value)
        assert "function_call 'get_weather'" in str(err.value)
        assert "messages[1]" in str(err.value)


def _snake(value: Any) -> Any:
    """camelCase keys as snake_case (``args`` and ``response`` values left as they are)."""
    if isinstance(value, dict):
        return {
            re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): v
            if k in ("args", "response")
            else _snake(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_snake(v) for v in value]
    return value
