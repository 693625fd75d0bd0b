"""The ``gemini`` format: dicts (snake_case, camelCase) and google.genai Content objects."""

from __future__ import annotations

import asyncio
import base64
import copy
import functools
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_adapter._errors import ConfigError, MissingDependency
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.cli._loaders import load_claude_code, load_mini_swe_agent, load_tau_bench
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MyOwnStep,
    Protection,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    carries_approval_state,
    compress,
    compress_for,
    compress_for_sync,
    estimate_tokens,
    has_approval_marker,
)
from agent_adapter.context.formats import convert, detect_format
from agent_adapter.context.formats._checks import (
    check,
    check_gemini,
    check_thought_signatures,
    strip_reserved,
)
from agent_adapter.context.formats._gemini import RESERVED_KEY, GeminiConverter, _fields
from agent_adapter.context.formats._registry import _CONVERTERS

DICTS = GeminiConverter(objects=False)
OBJECTS = GeminiConverter(objects=True)
SIG = base64.b64encode(bytes(range(250, 256)) * 5).decode()  # has '+' and '/'
SIG2 = base64.b64encode(b"second signature").decode()


def _objects(contents: Sequence[dict[str, Any]]) -> list[types.Content]:
    return [types.Content.model_validate(c) for c in contents]


def _camel(value: Any) -> Any:
    """snake_case keys as the REST API's camelCase."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            head, *rest = k.split("_")
            key = head + "".join(w.title() for w in rest)
            out[key] = v if key in ("args", "response") else _camel(v)
        return out
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _weather() -> list[dict[str, Any]]:
    """A conversation with parallel calls (one signed), a thought and a final answer."""
    return [
        {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Two lookups.", "thought": True},
                {
                    "function_call": {"id": "c1", "name": "weather", "args": {"city": "Paris"}},
                    "thought_signature": SIG,
                },
                {"function_call": {"id": "c2", "name": "weather", "args": {"city": "Rome"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "function_response": {
                        "id": "c2",
                        "name": "weather",
                        "response": {"output": "sun"},
                    }
                },
                {
                    "function_response": {
                        "id": "c1",
                        "name": "weather",
                        "response": {"output": "rain"},
                    }
                },
            ],
        },
        {
            "role": "model",
            "parts": [{"text": "Rain in Paris, sun in Rome.", "thought_signature": SIG2}],
        },
    ]


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


# ------------------------------------------------------------------------------------ dump


def test_dump_follows_the_natives_the_conversion_loaded() -> None:
    def summarize(messages: list[Message]) -> list[Message]:
        return [messages[0], Message("user", "summary of the lookups"), *messages[-2:]]

    conversation = [
        *_weather(),
        {"role": "user", "parts": [{"text": "and tomorrow?"}]},
        {"role": "model", "parts": [{"text": "Unknown."}]},
    ]
    policy = CompressionPolicy(target_tokens=5, steps=[MyOwnStep(fn=summarize)])
    for contents, kind in ((conversation, dict), (_objects(conversation), types.Content)):
        out, report = _run(compress_for(contents, policy))
        assert report.messages_added == 1
        (new,) = [o for o in out if not any(o is c for c in contents)]
        assert isinstance(new, kind)
        assert convert([new], "gemini").messages == [Message("user", "summary of the lookups")]
        assert check_gemini(out) == []


def test_dump_objects_without_google_genai_raises_missing_dependency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)
    assert DICTS.dump(Message("user", "hi")) == {"role": "user", "parts": [{"text": "hi"}]}
    with pytest.raises(MissingDependency, match=r"agent-adapter\[gemini\]"):
        OBJECTS.dump(Message("user", "hi"))


def test_dump_dicts_carry_only_what_has_no_slot() -> None:
    assert RESERVED_KEY not in DICTS.dump(Message("user", "plain summary"))
    system = DICTS.dump(Message("system", "be brief"))
    assert system[RESERVED_KEY] == {"message": {"role": "system"}}
    assert DICTS.load(system, 0) == [Message("system", "be brief")]
    named = Message("tool", "ok", tool_call_id="t1", extras={"is_error": False})
    assert DICTS.load(DICTS.dump(named), 3) == [named]
    # Content objects drop what has no slot (documented in GeminiConverter.dump)
    assert OBJECTS.load(OBJECTS.dump(Message("system", "be brief")), 0) == [
        Message("user", "be brief")
    ]


_PNG = base64.b64encode(b"png bytes").decode()


@pytest.mark.parametrize(
    ("message", "comes_back"),
    [
        (Message("system", "rules"), Message("user", "rules")),
        (Message("user", "hi", name="ann", extras={"k": 1}), Message("user", "hi")),
        (Message("user", (TextPart("hi"),)), Message("user", "hi")),
        (
            Message("user", (TextPart("a", {"cache_control": {"type": "ephemeral"}}),)),
            Message("user", "a"),
        ),
        (
            Message("user", (ImagePart(data=_PNG, media_type="image/png", detail="low"),)),
            Message("user", (ImagePart(data=_PNG, media_type="image/png"),)),
        ),
        (
            Message("user", (ImagePart(url=f"data:image/png;base64,{_PNG}"),)),
            Message("user", (ImagePart(data=_PNG, media_type="image/png"),)),
        ),
        (
            Message(
                "user", (FilePart(url="gs://b/x.pdf", media_type="application/pdf", filename="x"),)
            ),
            Message("user", (FilePart(url="gs://b/x.pdf", media_type="application/pdf"),)),
        ),
        (Message("user", (FilePart(file_id="file-1"),)), Message("user", "")),
        (
            Message("assistant", (ThinkingPart("secret", redacted=True),)),
            Message("assistant", (ThinkingPart("secret"),)),
        ),
        (Message("assistant", (OpaquePart("anthropic", {"type": "x"}),)), Message("assistant", "")),
        (
            Message("assistant", "", (ToolCall("c1", "f", '{"a":1}', {"type": "custom"}),)),
            Message("assistant", "", (ToolCall("c1", "f", '{"a": 1}'),)),
        ),
        (
            Message("assistant", "", (ToolCall("c1", "f", "[1]"),)),
            Message("assistant", "", (ToolCall("c1", "f", "{}"),)),
        ),
        (
            Message("assistant", (ThinkingPart("t", "not base64!"),)),
            Message("assistant", (ThinkingPart("t"),)),
        ),
        (
            Message("tool", "ok", tool_call_id="c1", extras={"is_error": False, "x": 1}),
            Message("tool", "ok", tool_call_id="c1"),
        ),
    ],
)
def test_content_objects_lose_only_what_dump_documents(
    message: Message, comes_back: Message
) -> None:
    assert OBJECTS.load(OBJECTS.dump(message), 0) == [comes_back]
    assert DICTS.load(DICTS.dump(message), 0) == [message]  # dicts carry it


# ------------------------------------------------------------------------------------ real data


@functools.cache
def _real(data_dir: Path) -> dict[str, list[list[Message]]]:
    tau = load_tau_bench(data_dir / "tau-bench" / "gpt-4o-airline.json")
    sessions = [
        load_claude_code(p) for p in sorted((data_dir / "claude-code-spotter").glob("*.jsonl"))
    ]
    return {
        "openai": [convert(d, "openai").messages for d in tau],
        "anthropic": [convert(s, "anthropic").messages for s in sessions],
    }


def _real_gemini(data_dir: Path) -> list[list[Message]]:
    """mini-swe-agent runs of Gemini 3 Pro with their real thought signatures: each call
    carries the run's ``reasoning.encrypted`` signature, each turn its thought summary."""
    runs = sorted((data_dir / "mini-swe-agent-gemini3pro" / "trajs").rglob("*.traj.json"))
    out: list[list[Message]] = []
    for path in sorted(runs, key=lambda p: p.stat().st_size)[:6]:
        raw = json.loads(path.read_text())["messages"]
        msgs: list[Message] = []
        for m in convert(load_mini_swe_agent(path), "openai").messages:
            if m.role == "system":
                continue
            if m.tool_calls:
                i = int(m.tool_calls[0].id.split("_")[1])
                details = raw[i]["extra"]["response"]["choices"][0]["message"]
                details = details.get("reasoning_details") or []
                thought = "".join(
                    d.get("text", "") for d in details if d["type"] == "reasoning.text"
                )
                sig = next((d["data"] for d in details if d["type"] == "reasoning.encrypted"), None)
                if sig is not None:
                    signed = replace(m.tool_calls[0], extras={"thought_signature": sig})
                    m = replace(m, tool_calls=(signed,))
                parts = (ThinkingPart(thought), *m.parts) if thought else m.parts
                m = replace(m, content=parts)
            msgs.append(m)
        out.append(msgs)
    return out


def test_dump_then_load_is_identity_for_messages_of_every_format(data_dir: Path) -> None:
    real = _real(data_dir)
    gem = [convert(DICTS.dump_all(m), "gemini").messages for m in _real_gemini(data_dir)]
    lc = _CONVERTERS["langchain"]
    via_lc = [lc.load_all([lc.dump(m) for m in msgs])[0] for msgs in real["openai"][:20]]
    n = 0
    for msgs in [*real["openai"], *real["anthropic"], *gem, *via_lc]:
        for m in msgs:
            assert DICTS.load(DICTS.dump(m), 7) == [m]
            n += 1
    assert n > 7000
    # objects are lossless for what Gemini itself produces
    for msgs in gem:
        for m in convert(OBJECTS.dump_all(msgs), "gemini").messages:
            assert OBJECTS.load(OBJECTS.dump(m), 0) == [m]


def _policies(total: int) -> list[CompressionPolicy]:
    steps: list[Any] = [
        [RemoveDuplicates()],
        [ShrinkToolResults(bigger_than_tokens=40, older_than_turns=1, keep_chars=80)],
        [CutLongMessages(max_tokens_per_message=60)],
        [RemoveOldMessages()],
        [RemoveOldMessages(keep_first=0, keep_last=2)],
        None,  # the default steps
    ]
    return [
        CompressionPolicy(target_tokens=max(1, int(total * ratio)), steps=s)
        for s in steps
        for ratio in (0.7, 0.3, 0.05)
    ]


def _parts(content: Any) -> list[Any]:
    return list(content.parts if isinstance(content, types.Content) else content["parts"])


def _shape(m: Message) -> tuple[Any, ...]:
    return (m.role, m.text, m.tool_calls, m.tool_call_id, m.name)


def _ranges(contents: Sequence[Any]) -> list[tuple[int, int]]:
    return DICTS.load_all(contents)[1]


def _compress_and_check(contents: list[Any]) -> int:
    """Every policy over ``contents``: valid Gemini, kept natives the same objects, changed
    ones keep their calls, thoughts and signatures. Returns the number of runs."""
    assert check_gemini(contents) == []
    snapshot = copy.deepcopy(contents)
    ranges = _ranges(contents)
    all_parts = {id(p) for c in contents for p in _parts(c)}
    runs = 0
    for policy in _policies(estimate_tokens(convert(contents, "gemini").messages)):
        conv = convert(contents, "gemini")
        result, _ = _run(compress(conv.messages, policy))
        out = conv.back(result)
        runs += 1
        assert check_gemini(out, before=contents) == [], policy
        again = convert(out, "gemini").messages  # back() then load: what was compressed
        assert [_shape(m) for m in again] == [_shape(m) for m in result]
        kept = {id(m) for m in result}
        for native, (start, stop) in zip(contents, ranges, strict=True):
            if all(id(m) in kept for m in conv.messages[start:stop]):
                assert any(o is native for o in out)
        for native in out:
            if any(native is c for c in contents):
                continue
            for part in _parts(native):
                fields = _fields(part)
                if "function_response" in fields or (
                    "text" in fields and not fields.get("thought")
                ):
                    continue
                assert id(part) in all_parts  # calls, thoughts, images: the very same parts
    for policy in _policies(estimate_tokens(convert(contents, "gemini").messages))[-3:]:
        plain, _ = _run(compress_for(contents, policy))  # the one-call API, default steps
        assert check_gemini(plain, before=contents) == []
    assert contents == snapshot
    return runs


def test_real_conversations_compress_to_valid_gemini(data_dir: Path) -> None:
    real = _real(data_dir)
    conversations = [
        [m for m in msgs if m.role != "system"]
        for msgs in [*real["openai"][:12], *real["anthropic"]]
    ]
    runs = 0
    for msgs in conversations:
        runs += _compress_and_check(DICTS.dump_all(msgs, carry=False))
        runs += _compress_and_check(OBJECTS.dump_all(msgs))
    assert runs == len(conversations) * 2 * 18


def test_carried_dicts_stay_lossless_through_compression(data_dir: Path) -> None:
    """Dicts dumped from other formats (reserved key on) come back, once compressed and
    loaded again, as exactly the compressed messages: the carrier follows text changes."""
    real = _real(data_dir)
    policy_steps = [
        CutLongMessages(max_tokens_per_message=40, include_system_prompt=True),
        ShrinkToolResults(bigger_than_tokens=30, older_than_turns=1, keep_chars=60),
        RemoveOldMessages(),
    ]
    carried = 0
    for msgs in [*real["openai"][:5], *real["anthropic"][-3:]]:
        contents = DICTS.dump_all(msgs)
        conv = convert(contents, "gemini")
        assert conv.messages == msgs
        total = estimate_tokens(msgs)
        policy = CompressionPolicy(target_tokens=total // 4, steps=policy_steps)
        result, report = _run(compress(conv.messages, policy))
        assert report.messages_changed > 0
        out = conv.back(result)
        again = convert(out, "gemini").messages
        assert [_norm(m) for m in again] == [_norm(m) for m in result]
        changed = [n for n in out if not any(n is c for c in contents)]
        carried += sum(RESERVED_KEY in n for n in changed)
        assert not any(RESERVED_KEY in p for n in out for p in n["parts"])  # content level only
        assert check(strip_reserved(out), "gemini") == []
    assert carried > 0  # rebuilt natives with a carrier were exercised


def _norm(m: Message) -> tuple[Any, ...]:
    """``m`` up to how its text is split into text parts: a changed text goes back into the
    native's text parts, which keep their place (``patch_text_blocks``), while a step's
    message holds it in one part (``with_text``)."""
    others = tuple(p for p in m.parts if not isinstance(p, TextPart))
    return (m.role, m.text, others, m.tool_calls, m.tool_call_id, m.name, m.extras)


def test_real_gemini_signatures_stay_byte_identical(data_dir: Path) -> None:
    for msgs in _real_gemini(data_dir):
        for contents in (DICTS.dump_all(msgs, carry=False), OBJECTS.dump_all(msgs)):
            signed = [p for c in contents for p in _parts(c) if "thought_signature" in _fields(p)]
            assert signed  # real signatures are there
            _compress_and_check(contents)


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
        policy = CompressionPolicy(
            target_tokens=10, steps=[RemoveOldMessages(keep_first=keep_first, keep_last=0)]
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


# ------------------------------------------------------------------------------------ check rules


def test_check_gemini_names_each_rule() -> None:
    good = _weather()
    assert check_gemini(good) == [] == check_gemini(_camel(good)) == check_gemini(_objects(good))

    def rules(contents: list[Any]) -> list[tuple[int, str]]:
        return [(v.index, v.rule) for v in check_gemini(contents)]

    assert rules(good[1:]) == [(0, "first_turn")]
    assert rules([good[0], good[2]]) == [(1, "response_position")]
    assert rules([*good[:2], {"role": "user", "parts": good[2]["parts"][:1]}]) == [
        (2, "response_count")
    ]
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


# ------------------------------------------------------------------------------------ properties

_text = st.text(alphabet="ab 🦊\n", min_size=0, max_size=20).map(lambda s: s * 5)
_sig = st.binary(min_size=4, max_size=24).map(lambda b: base64.b64encode(b).decode())


@st.composite
def gemini_conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []
    k = 0
    for _ in range(draw(st.integers(1, 6))):
        parts: list[dict[str, Any]] = [{"text": draw(_text) or "q"}]
        if draw(st.booleans()):
            image = base64.b64encode(draw(st.binary(min_size=1, max_size=30))).decode()
            parts.append({"inline_data": {"mime_type": "image/png", "data": image}})
        contents.append({"role": "user", "parts": parts})
        for _ in range(draw(st.integers(0, 3))):
            with_ids = draw(st.booleans())
            model: list[dict[str, Any]] = []
            if draw(st.booleans()):
                model.append(
                    {
                        "text": "think " + draw(_text),
                        "thought": True,
                        "thought_signature": draw(_sig),
                    }
                )
            if draw(st.booleans()):
                model.append({"text": draw(_text) or "t"})
            fcs = []
            for j in range(draw(st.integers(1, 3))):
                fc: dict[str, Any] = {
                    "name": draw(st.sampled_from(["search", "read"])),
                    "args": {"q": draw(_text)},
                }
                if with_ids:
                    fc["id"] = f"id-{k}"
                    k += 1
                part: dict[str, Any] = {"function_call": fc}
                if j == 0 and draw(st.booleans()):
                    part["thought_signature"] = draw(_sig)
                model.append(part)
                fcs.append(fc)
            contents.append({"role": "model", "parts": model})
            order = draw(st.permutations(range(len(fcs)))) if with_ids else range(len(fcs))
            responses = []
            for i in order:
                fr: dict[str, Any] = {"name": fcs[i]["name"], "response": {"output": draw(_text)}}
                if with_ids:
                    fr["id"] = fcs[i]["id"]
                responses.append({"function_response": fr})
            contents.append({"role": "user", "parts": responses})
        if draw(st.booleans()):
            final: dict[str, Any] = {"text": draw(_text) or "a"}
            if draw(st.booleans()):
                final["thought_signature"] = draw(_sig)
            contents.append({"role": "model", "parts": [final]})
    if contents[-1]["role"] == "user" and draw(st.booleans()):  # a pending call at the end
        contents.append(
            {"role": "model", "parts": [{"function_call": {"name": "read", "args": {}}}]}
        )
    return contents


_steps = st.lists(
    st.sampled_from(
        [
            RemoveDuplicates(),
            ShrinkToolResults(bigger_than_tokens=5, older_than_turns=1, keep_chars=10),
            CutLongMessages(max_tokens_per_message=8),
            RemoveOldMessages(keep_first=0, keep_last=0),
            RemoveOldMessages(),
        ]
    ),
    min_size=1,
    max_size=4,
)
_FORMS: dict[str, Callable[[list[dict[str, Any]]], list[Any]]] = {
    "snake": lambda c: c,
    "camel": _camel,
    "objects": _objects,
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    contents=gemini_conversations(),
    steps=_steps,
    ratio=st.floats(0.0, 1.0),
    form=st.sampled_from(sorted(_FORMS)),
)
def test_valid_gemini_stays_valid_after_compression(
    contents: list[dict[str, Any]], steps: list[Any], ratio: float, form: str
) -> None:
    natives = _FORMS[form](contents)
    assert check_gemini(natives) == []
    total = estimate_tokens(convert(natives, "gemini").messages)
    policy = CompressionPolicy(target_tokens=max(1, int(total * ratio)), steps=steps)
    out, _ = _run(compress_for(natives, policy))
    assert check_gemini(out, before=natives) == []
