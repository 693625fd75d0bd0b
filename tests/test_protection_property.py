"""Properties: protection follows a message through edits, pins hold in every
``if_still_too_long`` mode, and input errors name the caller's own index and ids."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_adapter import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MyOwnStep,
    RemoveOldMessages,
    ShrinkToolResults,
    compress,
    compress_for_sync,
    estimate_tokens,
    split_units,
)
from agent_adapter.context.formats import convert
from test_engine_properties import _evil, conversations


def _shorten_system_then_drop_it(messages: list[Message]) -> list[Message]:
    """Shortens the system prompt (allowed), then tries to remove it (never allowed)."""
    out = [
        dataclasses.replace(m, content=m.text[:5]) if m.role == "system" else m for m in messages
    ]
    return [m for m in out if m.role != "system"]


def _drop_everything(messages: list[Message]) -> list[Message]:
    return []


STEPS = st.lists(
    st.sampled_from(
        [
            CutLongMessages(max_tokens_per_message=8, include_system_prompt=True),
            MyOwnStep(fn=_shorten_system_then_drop_it, include_system_prompt=True),
            MyOwnStep(fn=_evil),
            MyOwnStep(fn=_drop_everything),
            RemoveOldMessages(keep_first=0, keep_last=0),
            ShrinkToolResults(bigger_than_tokens=5, older_than_turns=0, keep_chars=10),
        ]
    ),
    min_size=1,
    max_size=4,
)
MODES: list[Any] = [
    "keep",
    "cut",
    MyOwnStep(fn=_drop_everything),
    CutLongMessages(max_tokens_per_message=8),
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    msgs=conversations(),
    steps=STEPS,
    mode=st.sampled_from(MODES),
    data=st.data(),
    ratio=st.floats(0.0, 0.5),
)
def test_protection_follows_messages_through_edits_and_pins_hold(
    msgs: list[Message], steps: list[Any], mode: Any, data: st.DataObject, ratio: float
) -> None:
    pins = data.draw(st.sets(st.integers(0, len(msgs) - 1), max_size=3))
    # some messages long enough for the last-resort cut (it keeps at least 200 tokens)
    grow = data.draw(st.lists(st.integers(1, 60), min_size=len(msgs), max_size=len(msgs)))
    msgs = [
        m.with_text((m.text or "x") * k) if k > 30 else m for m, k in zip(msgs, grow, strict=True)
    ]
    pinned = {id(m) for i, m in enumerate(msgs) if i in pins}
    target = max(1, int(estimate_tokens(msgs) * ratio))
    policy = CompressionPolicy(target_tokens=target, steps=steps, if_still_too_long=mode)
    out, _ = asyncio.run(compress(msgs, policy, pinned=lambda m: id(m) in pinned))

    # the system prompt: still there, first, derived from the input's (maybe shortened)
    systems = [m for m in msgs if m.role == "system"]
    assert [m.origin for m in out[: len(systems)]] == [m.origin for m in systems]
    assert all(
        m.role == "system" and len(m.text) <= len(o.text)
        for m, o in zip(out, systems, strict=False)
    )
    assert sum(m.role == "system" for m in out) == len(systems)
    # pinned messages and the latest user message: the very same objects, in every mode
    kept = {id(m) for m in out}
    assert all(id(m) in kept for m in msgs if id(m) in pinned)
    latest_user = [m for m in msgs if m.role == "user"][-1]
    assert id(latest_user) in kept
    # the newest turn stays whole unless a last-resort mode was allowed to touch it
    if mode == "keep":
        newest = split_units(msgs)[-1]
        assert all(id(m) in kept for m in newest.messages)


@st.composite
def chat_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid Chat Completions lists."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    for n in range(draw(st.integers(0, 5))):
        if draw(st.booleans()):
            ids = [f"c{n}_{k}" for k in range(draw(st.integers(1, 3)))]
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                        for i in ids
                    ],
                }
            )
            out.extend({"role": "tool", "tool_call_id": i, "content": "r"} for i in ids)
        else:
            out.append({"role": "assistant", "content": "a"})
        out.append({"role": "user", "content": "q"})
    return out


def _anthropic(chat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same conversation as Anthropic Messages dicts (results in one user turn)."""
    out: list[dict[str, Any]] = []
    for m in chat:
        if m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": "r"}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.get("tool_calls"):
            uses = [
                {"type": "tool_use", "id": c["id"], "name": "f", "input": {}}
                for c in m["tool_calls"]
            ]
            out.append({"role": "assistant", "content": uses})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
@settings(max_examples=200, deadline=None)
@given(chat=chat_lists(), where=st.integers(0, 40))
def test_an_orphan_result_is_named_by_its_index_in_the_callers_list(
    fmt: str, chat: list[dict[str, Any]], where: int
) -> None:
    natives = chat if fmt == "openai" else _anthropic(chat)
    # an orphan result right after a user message (so no call can own it)
    users = [
        i for i, n in enumerate(natives) if n["role"] == "user" and isinstance(n["content"], str)
    ]
    k = users[where % len(users)] + 1
    orphan: dict[str, Any] = (
        {"role": "tool", "tool_call_id": "zz_orphan", "content": "r"}
        if fmt == "openai"
        else {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "zz_orphan", "content": "r"}],
        }
    )
    broken = [*natives[:k], orphan, *natives[k:]]
    assert len(convert(broken, fmt).messages) >= len(broken)
    with pytest.raises(ConfigError) as err:
        compress_for_sync(broken, CompressionPolicy(target_tokens=1), format=fmt)
    text = str(err.value)
    assert re.search(rf"messages\[{k}\]", text), text
    assert "'zz_orphan'" in text
    assert not re.search(r"messages\[(\d+)\]", text.replace(f"messages[{k}]", "")), text
