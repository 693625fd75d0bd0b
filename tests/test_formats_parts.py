"""Every part kind through every converter: ``load(dump(m)) == m``, or the documented loss.

The part kinds come from the ``Part`` union itself (``typing.get_args``), so a kind added to
``agent_adapter._messages.Part`` fails here until every converter handles it (and mypy fails
on the ``assert_never`` of each converter's part branches).
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any, get_args

import pytest
from google.genai import types

from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.context.formats import Converter, strip_reserved
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._carrier import RESERVED_KEY, decode_part, encode_part
from agent_adapter.context.formats._gemini import GeminiConverter
from agent_adapter.context.formats._langchain import LangChainConverter
from agent_adapter.context.formats._openai import (
    ChatConverter,
    OpenAIChatConverter,
    ResponsesConverter,
)

PNG = base64.b64encode(b"\x89PNG fake").decode()
PDF = base64.b64encode(b"%PDF-1.7 fake").decode()
SIG = base64.b64encode(b"a thinking signature").decode()

#: Samples of every part kind: text, image by url and by data, a file, thinking with a
#: signature, redacted thinking, an opaque part of no provider here.
SAMPLES: dict[type[Any], list[Part]] = {
    TextPart: [TextPart("hello")],
    ImagePart: [
        ImagePart(url="https://x/a.png", media_type="image/png"),
        ImagePart(data=PNG, media_type="image/png"),
    ],
    FilePart: [FilePart(data=PDF, media_type="application/pdf")],
    ThinkingPart: [ThinkingPart("plan it", SIG), ThinkingPart("ZW5jcnlwdGVk", redacted=True)],
    OpaquePart: [OpaquePart("elsewhere", {"type": "mystery", "x": 1})],
}
#: An opaque part of each converter's own provider (written back as it is).
OWN_OPAQUE: dict[str, OpaquePart] = {
    "chat": OpaquePart("openai", {"type": "input_audio", "input_audio": {"data": "QQ=="}}),
    "responses": OpaquePart("openai", {"type": "refusal", "refusal": "no"}),
    "anthropic": OpaquePart("anthropic", {"type": "server_tool_use", "id": "s1", "name": "w"}),
    "gemini": OpaquePart("gemini", {"executable_code": {"code": "1", "language": "PYTHON"}}),
    "gemini objects": OpaquePart("gemini", {"executable_code": {"code": "1"}}),
    "langchain": OpaquePart("langchain", {"type": "citation", "x": 1}),
}
CONVERTERS: dict[str, Converter[Any]] = {
    "chat": ChatConverter(),
    "responses": ResponsesConverter(),
    "anthropic": AnthropicConverter(),
    "gemini": GeminiConverter(objects=False),
    "gemini objects": GeminiConverter(objects=True),
    "langchain": LangChainConverter(),
}
KINDS = list(get_args(Part))


def test_every_part_kind_has_samples() -> None:
    assert set(SAMPLES) == set(KINDS), "a new Part kind needs samples (and every converter)"


def _expected(name: str, part: Part) -> Part | None:
    """What ``part`` comes back as through converter ``name`` (``None``: dropped).

    Only Content objects lose anything (they have no room for the reserved carrier; see
    ``GeminiConverter.dump``): the redacted flag of thinking, and opaque parts of other
    providers; a gemini opaque part comes back as the SDK's ``Part``.
    """
    if name != "gemini objects":
        return part
    match part:
        case TextPart() | ImagePart() | FilePart():
            return part
        case ThinkingPart():
            return replace(part, redacted=False)
        case OpaquePart():
            if part.provider != "gemini":
                return None
            return OpaquePart("gemini", types.Part.model_validate(part.data))
        case _:
            pytest.fail(f"no expectation for {type(part).__name__}")


def _want(name: str, message: Message) -> Message:
    """``message`` as converter ``name`` gives it back (see :func:`_expected`; Content objects
    also read one plain text part as a str, as Gemini content does)."""
    assert not isinstance(message.content, str)
    parts = [p for p in (_expected(name, p) for p in message.content) if p is not None]
    if name == "gemini objects" and len(parts) == 1:
        (only,) = parts
        if isinstance(only, TextPart) and not only.extras:
            return replace(message, content=only.text)
    return replace(message, content=tuple(parts))


def _round_trip(name: str, message: Message) -> Message:
    conv = CONVERTERS[name]
    (back,) = conv.load(conv.dump(message), 0)
    return back


def _message(role: str, parts: list[Part]) -> Message:
    calls = (ToolCall("c1", "f", '{"a": 1}'),) if role == "assistant" else ()
    return Message(role, (TextPart("intro"), *parts), tool_calls=calls)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("name", list(CONVERTERS))
@pytest.mark.parametrize("role", ["user", "assistant"])
def test_each_part_kind_round_trips(kind: type[Any], name: str, role: str) -> None:
    message = _message(role, SAMPLES[kind])
    assert _round_trip(name, message) == _want(name, message)


@pytest.mark.parametrize("name", list(CONVERTERS))
def test_a_message_with_every_part_kind_round_trips(name: str) -> None:
    parts = [p for kind in KINDS for p in SAMPLES[kind]]
    parts.append(OWN_OPAQUE[name])
    message = _message("assistant", parts)
    back = _round_trip(name, message)
    assert back == _want(name, message)
    if name != "gemini objects":
        assert back == message  # lossless: what has no slot rides in the carrier


@pytest.mark.parametrize("name", ["chat", "responses", "anthropic", "gemini"])
def test_the_own_opaque_part_is_written_natively(name: str) -> None:
    message = Message("user", (TextPart("see"), OWN_OPAQUE[name]))
    native = CONVERTERS[name].dump(message)
    assert RESERVED_KEY not in native  # it has a slot: nothing to carry
    assert CONVERTERS[name].load(native, 0) == [message]


@pytest.mark.parametrize("name", ["chat", "responses", "anthropic", "gemini"])
def test_a_dump_is_sendable_once_stripped(name: str) -> None:
    parts = [p for kind in KINDS for p in SAMPLES[kind]]
    native = CONVERTERS[name].dump(_message("assistant", parts))
    (clean,) = strip_reserved([native])
    assert RESERVED_KEY not in clean
    CONVERTERS[name].load(clean, 0)  # still a valid native of the format


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_the_carrier_codec_encodes_every_part_kind(kind: type[Any]) -> None:
    for part in SAMPLES[kind]:
        assert decode_part(encode_part(part)) == part


def test_every_converter_names_its_calls_and_results() -> None:
    default = Converter.call_terms
    for conv in [*CONVERTERS.values(), OpenAIChatConverter()]:
        call, result = type(conv).call_terms
        assert call and result
    assert AnthropicConverter.call_terms == ("tool_use", "tool_result")
    assert GeminiConverter.call_terms == ("function_call", "function_response")
    assert ResponsesConverter.call_terms == ("call_id", "call_id")
    assert ChatConverter.call_terms == default == OpenAIChatConverter.call_terms
    assert LangChainConverter().native_call_id("lc_call_3_1") == "tool_calls[1] (no id)"
    assert ChatConverter().native_call_id("c1") == "'c1'"


# --------------------------------------------------------------------------------------------
# one text patcher: a cut behaves the same in every format


def _cut_natives() -> dict[str, tuple[list[Any], Any]]:
    """Per format: a conversation whose second native holds three text blocks, the middle
    one with a key of its own, and how to read a native's blocks."""
    from langchain_core.messages import AIMessage, HumanMessage

    marker = {"type": "ephemeral"}
    chat_blocks = [
        {"type": "text", "text": "head"},
        {"type": "text", "text": "middle", "cache_control": marker},
        {"type": "text", "text": "tail"},
    ]
    out_blocks = [
        {"type": "output_text", "text": "head", "annotations": []},
        {"type": "output_text", "text": "middle", "annotations": [{"type": "url_citation"}]},
        {"type": "output_text", "text": "tail", "annotations": []},
    ]
    gemini_parts = [
        {"text": "head"},
        {"text": "middle", "thought_signature": SIG},
        {"text": "tail"},
    ]
    lc_blocks = ["head", {"type": "text", "text": "middle", "id": "b1"}, "tail"]

    def key(name: str) -> Any:
        return lambda native: native[name]

    return {
        "chat": (
            [{"role": "user", "content": "q"}, {"role": "assistant", "content": chat_blocks}],
            key("content"),
        ),
        "anthropic": (
            [{"role": "user", "content": "q"}, {"role": "assistant", "content": chat_blocks}],
            key("content"),
        ),
        "responses": (
            [
                {"role": "user", "content": "q"},
                {"type": "message", "role": "assistant", "content": out_blocks},
            ],
            key("content"),
        ),
        "gemini": (
            [{"role": "user", "parts": [{"text": "q"}]}, {"role": "model", "parts": gemini_parts}],
            key("parts"),
        ),
        "gemini objects": (
            [
                types.Content.model_validate({"role": "user", "parts": [{"text": "q"}]}),
                types.Content.model_validate({"role": "model", "parts": gemini_parts}),
            ],
            lambda native: native.parts,
        ),
        "langchain": ([HumanMessage("q"), AIMessage(content=lc_blocks)], lambda n: n.content),
    }


@pytest.mark.parametrize("name", list(CONVERTERS))
def test_a_cut_keeps_the_blocks_and_their_keys_in_every_format(name: str) -> None:
    from agent_adapter.context.formats import convert

    natives, blocks_of = _cut_natives()[name]
    fmt = {"chat": "openai", "responses": "openai", "gemini objects": "gemini"}.get(name, name)
    conv = convert(natives, fmt)
    user, answer = conv.messages
    assert answer.text == "head\nmiddle\ntail"
    old = blocks_of(natives[1])
    stub = "" if name.startswith("gemini") else "[...]"

    def text(block: Any) -> str:
        if isinstance(block, str):
            return block
        return block["text"] if isinstance(block, dict) else block.text

    # the middle cut out: head and tail stay the very same blocks, the keyed one a stub
    new = blocks_of(conv.back([user, answer.with_text("head\ntail")])[1])
    assert [text(b) for b in new] == ["head", stub, "tail"]
    assert new[0] is old[0] and new[2] is old[2]
    # a tail cut: the remainder goes to the keyed block, which keeps its key in place
    new = blocks_of(conv.back([user, answer.with_text("head\nmid")])[1])
    assert [text(b) for b in new] == ["head", "mid"]
    assert new[0] is old[0]
    if isinstance(old[1], dict):
        assert {k: v for k, v in new[1].items() if k != "text"} == {
            k: v for k, v in old[1].items() if k != "text"
        }
    else:
        assert new[1].thought_signature == old[1].thought_signature
