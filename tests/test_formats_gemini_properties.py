"""The ``gemini`` format, properties: generated valid contents stay valid after
compression in every form.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _gemini_cases import _camel, _objects, _run
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress_for,
    estimate_tokens,
)
from agent_adapter.context.formats import convert
from agent_adapter.context.formats._gemini import check_gemini

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
    out, _ = _run(compress_for(natives, policy, states=False))  # one compression on its own
    assert check_gemini(out, before=natives) == []
