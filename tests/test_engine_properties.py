"""Property tests: whatever the conversation, target and steps, the output is a valid request."""

from __future__ import annotations

import asyncio
import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _convo import calls, pairing_problems, result
from agent_adapter._messages import Message, TextPart, ThinkingPart
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    MyOwnStep,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress,
    estimate_tokens,
)

_text = st.text(alphabet="ab 🦊\n", min_size=0, max_size=30).map(lambda s: s * 7)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    msgs: list[Message] = []
    if draw(st.booleans()):
        msgs.append(Message("system", draw(_text) or "sys"))
    n_turns = draw(st.integers(1, 8))
    call_no = 0
    for _ in range(n_turns):
        msgs.append(Message("user", draw(_text) or "q"))
        for _ in range(draw(st.integers(0, 3))):  # tool rounds in this turn
            k = draw(st.integers(1, 4))
            ids = [f"c{call_no + j}" for j in range(k)]
            call_no += k
            thinking = draw(st.booleans())
            head = calls(*ids, text=draw(_text))
            if thinking:
                head = Message(
                    "assistant",
                    (ThinkingPart("think", signature="sig=="), TextPart(draw(_text))),
                    tool_calls=head.tool_calls,
                )
            msgs.append(head)
            msgs.extend(result(i, draw(_text)) for i in ids)
        if draw(st.booleans()):
            msgs.append(Message("assistant", draw(_text) or "a"))
    if draw(st.booleans()):  # a pending round at the end
        msgs.append(calls(f"c{call_no}"))
    return msgs


def _evil(messages: list[Message]) -> list[Message]:
    """A step that tries everything forbidden: drop the system prompt, split rounds, add tool
    messages and calls, reorder."""
    out = [m for i, m in enumerate(messages) if i % 2 == 1]
    out.append(Message("tool", "fake", tool_call_id="c0"))
    out.append(calls("zz"))
    out.reverse()
    return out


_steps = st.lists(
    st.sampled_from(
        [
            RemoveDuplicates(),
            ShrinkToolResults(bigger_than_tokens=5, older_than_turns=1, keep_chars=10),
            CutLongMessages(max_tokens_per_message=8),
            RemoveOldMessages(keep_first=0, keep_last=0),
            RemoveOldMessages(),
            MyOwnStep(fn=_evil),
        ]
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msgs=conversations(), steps=_steps, ratio=st.floats(0.0, 1.2))
def test_output_is_always_a_valid_request(msgs: list[Message], steps: list, ratio: float) -> None:
    snapshot = copy.deepcopy(msgs)
    original = list(msgs)
    total = estimate_tokens(msgs)
    target = max(1, int(total * ratio))
    policy = CompressionPolicy(target_tokens=target, steps=steps)
    out, report = asyncio.run(compress(msgs, policy))

    assert msgs == snapshot and all(a is b for a, b in zip(msgs, original, strict=True))
    assert pairing_problems(out) == []
    ids = {id(m) for m in msgs}
    # system messages and the latest user message: the same objects, same order, at the front
    systems = [m for m in msgs if m.role == "system"]
    assert [m for m in out if m.role == "system"] == systems
    assert all(a is b for a, b in zip(out, systems, strict=False))
    latest_user = [m for m in msgs if m.role == "user"][-1]
    assert any(m is latest_user for m in out)
    # kept originals keep their order; nothing new carries calls or is a tool/system message
    pos = {id(m): i for i, m in enumerate(original)}
    kept_positions = [pos[id(m)] for m in out if id(m) in ids]
    assert kept_positions == sorted(kept_positions)
    original_calls = {m.tool_calls for m in msgs if m.tool_calls}
    original_results = {m.tool_call_id for m in msgs if m.role == "tool"}
    for m in out:
        if id(m) in ids:
            continue
        if m.tool_calls:  # an edited original: exactly its calls
            assert m.tool_calls in original_calls
        elif m.role == "tool":
            assert m.tool_call_id in original_results
        else:
            assert m.role in ("user", "assistant")
    # thinking parts and signatures are never changed
    orig_thinking = {
        tuple(c.id for c in m.tool_calls): [p for p in m.parts if isinstance(p, ThinkingPart)]
        for m in msgs
        if m.tool_calls
    }
    for m in out:
        if m.tool_calls:
            assert [p for p in m.parts if isinstance(p, ThinkingPart)] == orig_thinking[
                tuple(c.id for c in m.tool_calls)
            ]
    # the opening turn stays a user turn
    first = next((m for m in out if m.role != "system"), None)
    assert first is None or first.role == "user"
    assert report.tokens_after == estimate_tokens(out)
    if total <= target:
        assert out is msgs


@settings(max_examples=150, deadline=None)
@given(msgs=conversations(), ratio=st.floats(0.05, 0.9))
def test_default_steps_reach_the_target_unless_protected(msgs: list[Message], ratio: float) -> None:
    total = estimate_tokens(msgs)
    target = max(1, int(total * ratio))
    out, report = asyncio.run(compress(msgs, CompressionPolicy(target_tokens=target)))
    if not report.reached_target:
        # only the protected part (or rounds that cannot be split) can keep it over
        assert report.protected_tokens > 0
    assert pairing_problems(out) == []
