"""Property: every output native's text comes from the native it is rebuilt on, or is new.

Each input message ``i`` carries the tag ``{{Ti}}`` in its text and ``{{Ii}}`` in fields that
are not text (its ``name``, a thinking signature, and where a format merges natives or has no
slot for names, a key of its text block: Anthropic merges adjacent same-role turns, Gemini
``Content`` objects keep only their own fields), so every native built from it holds both. After
a compression with a random list of steps (the built-in ones and a random editing function
that drops, cuts, duplicates, adds, rebuilds by ids and swaps), every output native that is not
an input native itself may hold text tags only of the inputs whose non-text tags it holds: a
text grafted onto another message's native fails. Run for every format.
"""

from __future__ import annotations

import base64
import dataclasses
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_adapter._messages import Message, TextPart, ThinkingPart, ToolCall
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MyOwnStep,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress_for_sync,
)
from agent_adapter.context._pairing import validate_messages
from agent_adapter.context.formats import convert

EXAMPLES = 400  # a format; six formats


def _seed(fmt: str) -> tuple[list[Any], str]:
    """One native of the format, to bind a conversion that dumps new messages in it."""
    if fmt == "responses":
        return [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "s"}]}
        ], "openai"
    if fmt == "gemini_objects":
        from google.genai import types

        return [types.Content(role="user", parts=[types.Part(text="s")])], "gemini"
    if fmt == "langchain":
        from langchain_core.messages import HumanMessage

        return [HumanMessage("s")], "langchain"
    if fmt == "gemini":
        return [{"role": "user", "parts": [{"text": "s"}]}], "gemini"
    return [{"role": "user", "content": "s"}], fmt


FORMATS = ["openai", "responses", "anthropic", "gemini", "gemini_objects", "langchain"]


def _block_extras(fmt: str, i: int) -> dict[str, Any]:
    """A text block's own key naming message ``i``, where the format needs one."""
    if fmt == "anthropic":
        return {"cache_control": {"type": "ephemeral", "ttl": f"{{{{I{i}}}}}"}}
    if fmt == "gemini_objects":
        return {"thought_signature": base64.b64encode(f"{{{{I{i}}}}}".encode()).decode()}
    return {}


@st.composite
def conversations(draw: st.DrawFn, fmt: str) -> list[Message]:
    """A valid conversation; message ``i`` tagged in its text and its non-text fields."""
    out: list[Message] = []
    ids = iter(range(10_000))

    def text_of(i: int, text: str) -> Any:
        extras = _block_extras(fmt, i)
        return (TextPart(text, extras),) if extras else text

    def tagged(role: str, **kw: Any) -> Message:
        i = len(out)
        filler = "word " * draw(st.integers(0, 120))
        text = f"{{{{T{i}}}}} {filler}"
        if kw.pop("thinking", False):
            content: Any = (
                (
                    ThinkingPart("pondering", signature=f"sig{{{{I{i}}}}}"),
                    *text_of(i, text),
                )
                if _block_extras(fmt, i)
                else (
                    ThinkingPart("pondering", signature=f"sig{{{{I{i}}}}}"),
                    TextPart(text),
                )
            )
        else:
            content = text_of(i, text)
        m = Message(role, content, name=f"{{{{I{i}}}}}", **kw)  # type: ignore[arg-type]
        out.append(m)
        return m

    if draw(st.booleans()):
        tagged("system")
    for _ in range(draw(st.integers(1, 6))):
        tagged("user")
        shape = draw(st.sampled_from(["text", "thinking", "tools", "tools_then_text"]))
        if shape in ("text", "thinking"):
            tagged("assistant", thinking=shape == "thinking")
            continue
        n = draw(st.integers(1, 3))
        reuse = draw(st.booleans())  # tau-bench reuses call ids across rounds
        call_ids = [f"c{k}" for k in range(n)] if reuse else [f"c{next(ids)}" for _ in range(n)]
        i = len(out)
        out.append(
            Message(
                "assistant",
                text_of(i, f"{{{{T{i}}}}} calling"),
                tool_calls=[ToolCall(c, "fn", '{"q": 1}') for c in call_ids],
                name=f"{{{{I{i}}}}}",
            )
        )
        for c in call_ids:
            tagged("tool", tool_call_id=c)
        if shape == "tools_then_text":
            tagged("assistant")
    tagged("user")
    return validate_messages(out)


def _editor(seed: int) -> MyOwnStep:
    """A step that edits at random: drop, cut, duplicate, add, rebuild by ids, swap."""

    def fn(messages: list[Message]) -> list[Message]:
        rng = random.Random(seed)
        out: list[Message] = []
        for m in messages:
            r = rng.random()
            if r < 0.2:
                continue  # drop
            if r < 0.4:
                out.append(m.with_text(m.text[: rng.randint(0, len(m.text))]))  # cut
            elif r < 0.45:
                out.extend([m, dataclasses.replace(m)])  # a second copy of one origin
            elif r < 0.5:
                out.extend([Message("user", "SUMMARY"), m])  # an addition
            elif r < 0.55 and m.role == "tool":
                out.append(Message("tool", "FRESH", tool_call_id=m.tool_call_id))  # by ids
            elif r < 0.6 and m.role == "assistant" and not m.tool_calls:
                out.append(Message("assistant", "FRESH ASSISTANT"))  # a look-alike
            else:
                out.append(m)
        if len(out) > 2 and rng.random() < 0.2:
            k = rng.randrange(len(out) - 1)
            out[k], out[k + 1] = out[k + 1], out[k]  # a swap
        return out

    return MyOwnStep(fn=fn)


STEPS = st.lists(
    st.one_of(
        st.just(RemoveDuplicates()),
        st.builds(
            ShrinkToolResults,
            bigger_than_tokens=st.just(20),
            older_than_turns=st.integers(0, 2),
            keep_chars=st.just(40),
        ),
        st.builds(CutLongMessages, max_tokens_per_message=st.sampled_from([10, 30, 80])),
        st.builds(RemoveOldMessages, keep_first=st.integers(0, 2), keep_last=st.integers(0, 3)),
        st.integers(0, 2**31).map(_editor),
    ),
    min_size=1,
    max_size=4,
)

_T = re.compile(r"\{\{T(\d+)\}\}")
_I = re.compile(r"\{\{I(\d+)\}\}")


@pytest.mark.parametrize("fmt", FORMATS)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data(), steps=STEPS, share=st.floats(0.05, 0.9))
def test_every_output_text_comes_from_its_own_native(
    fmt: str, data: st.DataObject, steps: list[Any], share: float
) -> None:
    messages = data.draw(conversations(fmt))
    seed, name = _seed(fmt)
    natives = convert(seed, name).back(messages)  # every message dumped as a new native
    total = sum(len(m.text) for m in messages) // 4 + 4 * len(messages)
    target = max(1, int(total * share))
    policy = CompressionPolicy(threshold_tokens=target, target_tokens=target, steps=steps)
    out, report = compress_for_sync(natives, policy, format=name, states=False)
    inputs = {id(n) for n in natives}
    for native in out:
        if id(native) in inputs:
            continue
        text = repr(native)
        texts = {int(t) for t in _T.findall(text)}
        own = {int(t) for t in _I.findall(text)}
        assert texts <= own, f"text of {sorted(texts - own)} on the native of {sorted(own)}"
    # and the result is a valid conversation of the format
    validate_messages(convert(out, name).messages)
    assert report.messages_after <= len(messages) + report.messages_added
