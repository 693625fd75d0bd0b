"""The ``gemini`` format, ``dump``: new messages follow the loaded natives; dicts carry
what has no slot, Content objects lose only what ``dump`` documents.
"""

from __future__ import annotations

import base64
import sys

import pytest
from google.genai import types

from _gemini_cases import DICTS, OBJECTS, _objects, _run, _weather
from agent_adapter._errors import MissingDependency
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.context import CompressionPolicy, MyOwnStep, compress_for
from agent_adapter.context.formats import convert
from agent_adapter.context.formats._carrier import RESERVED_KEY
from agent_adapter.context.formats._gemini import check_gemini

# ------------------------------------------------------------------------------------ dump


def test_dump_follows_the_natives_the_conversion_loaded() -> None:
    def summarize(messages: list[Message]) -> list[Message]:
        return [messages[0], Message("user", "summary of the lookups"), *messages[-2:]]

    conversation = [
        *_weather(),
        {"role": "user", "parts": [{"text": "and tomorrow?"}]},
        {"role": "model", "parts": [{"text": "Unknown."}]},
    ]
    # a target the protected part (14 tokens) fits: "keep" removes nothing that cannot help
    policy = CompressionPolicy(target_tokens=20, steps=[MyOwnStep(fn=summarize)])
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
