"""Property: an agent loop compresses the same conversation again and again, each time our
previous output plus new rounds, and the guarantees hold after every compression.

After each call, in every format: the user's latest message and the task are the caller's own
objects, what the library added never stands beside another addition of its own (one note or
summary a run: folded), the list is a valid request of its format, the tokens never grow, and
every recall id a note names returns its original text.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _replay import FORMATS, format_name, natives
from agent_adapter import RunContext
from agent_adapter._messages import Message, TextPart, ThinkingPart, ToolCall
from agent_adapter._run import owner_scope
from agent_adapter.context import (
    CompressionPolicy,
    MemoryStore,
    RemoveOldMessages,
    ShrinkToolResults,
    Summarize,
    compress_for_sync,
)
from agent_adapter.context._own import is_own
from agent_adapter.context.formats import check, convert

ROUNDS = 4  # compressions in a row


class _Gen:
    """Builds rounds with fresh call ids and a path and an error line in each result."""

    def __init__(self, draw: st.DrawFn, thinking: bool) -> None:
        self.draw = draw
        self.thinking = thinking
        self.n = 0

    def round(self) -> list[Message]:
        self.n += 1
        k = self.draw(st.integers(1, 2))
        ids = [f"call_{self.n}_{j}" for j in range(k)]
        calls = tuple(
            ToolCall(i, "bash", f'{{"command": "cat src/m{self.n}_{j}.py"}}')
            for j, i in enumerate(ids)
        )
        text = f"step {self.n}"
        content: Any = text
        if self.thinking:
            content = (ThinkingPart(f"think {self.n}", signature=f"sig{self.n}"), TextPart(text))
        out = [Message("assistant", content, tool_calls=calls)]
        size = self.draw(st.sampled_from([20, 200, 900]))
        for j, i in enumerate(ids):
            body = f"src/m{self.n}_{j}.py\n" + "line of code\n" * size
            if self.draw(st.booleans()):
                body += f"FAILED tests/test_m{self.n}.py::test_x - ValueError\nexit code 1\n"
            out.append(Message("tool", body, tool_call_id=i))
        return out


@st.composite
def _loops(draw: st.DrawFn, fmt: str) -> tuple[list[Message], list[list[Message]]]:
    """A starting conversation and the rounds each later call adds."""
    gen = _Gen(draw, thinking=fmt in ("anthropic", "agent_adapter") and draw(st.booleans()))
    start: list[Message] = []
    if draw(st.booleans()):
        start.append(Message("system", "You are a coding agent."))
    start.append(Message("user", "fix the failing test in src/m1_0.py"))
    for _ in range(draw(st.integers(1, 5))):
        start += gen.round()
    if draw(st.booleans()):
        start.append(Message("assistant", "done with the first part"))
        start.append(Message("user", "add a regression test, never push to main"))
    for _ in range(draw(st.integers(0, 3))):
        start += gen.round()
    later: list[list[Message]] = []
    for _ in range(ROUNDS - 1):
        grow: list[Message] = []
        if draw(st.integers(0, 3)) == 0:
            grow += [Message("assistant", "ok"), Message("user", f"next: step {gen.n + 1}")]
        for _ in range(draw(st.integers(1, 3))):
            grow += gen.round()
        later.append(grow)
    return start, later


def _user_objects(fmt: str, natives: list[Any]) -> tuple[Any, Any]:
    """The task's native and the latest user message's native (the caller's own)."""
    conversion = convert(natives, format_name(fmt)) if fmt != "agent_adapter" else None
    messages = conversion.messages if conversion is not None else natives
    users = [i for i, m in enumerate(messages) if m.role == "user" and not is_own(m)]
    if conversion is None:
        return natives[users[0]], natives[users[-1]]
    idx = [conversion.native_index(i) for i in users]
    return natives[idx[0]], natives[idx[-1]]


_ID = re.compile(r"recall_context\(id='([^']+)'\)")


def _outline(messages: list[Message]) -> list[str]:
    return [f"{m.role}:{m.text[:40]!r}" for m in messages]


def _policy(kind: str, store: MemoryStore | None, budget: int) -> CompressionPolicy:
    if kind == "summarize":
        steps: list[Any] | None = [Summarize()]
    elif kind == "store":
        steps = [
            ShrinkToolResults(save_to=store, bigger_than_tokens=100, keep_chars=300),
            RemoveOldMessages(),
        ]
    else:
        steps = None
    return CompressionPolicy(threshold_tokens=budget, target_tokens=budget * 2 // 3, steps=steps)


@pytest.mark.parametrize("kind", ["default", "summarize", "store"])
@pytest.mark.parametrize("fmt", FORMATS)
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data(), budget=st.sampled_from([600, 1500, 4000]))
def test_guarantees_hold_after_every_compression(
    fmt: str, kind: str, data: st.DataObject, budget: int
) -> None:
    start, later = data.draw(_loops(fmt))
    store = MemoryStore() if kind == "store" else None
    policy = _policy(kind, store, budget)
    ctx = RunContext(thread_id="t1")
    name = format_name(fmt)
    sent = natives(fmt, start)
    originals = {
        m.tool_call_id: m.text for m in [*start, *(m for g in later for m in g)] if m.tool_call_id
    }
    for k in range(ROUNDS):
        task, latest = _user_objects(fmt, sent)
        out, report = compress_for_sync(sent, policy, format=name, ctx=ctx)
        where = f"call {k}"
        assert report.tokens_after <= report.tokens_before, where
        assert any(n is latest for n in out), f"{where}: the latest user message was lost"
        if kind != "summarize":
            assert any(n is task for n in out), f"{where}: the task was lost"
        if fmt != "agent_adapter":
            assert check(out, name) == [], where
            messages = convert(out, name).messages
        else:
            messages = out
        pairs = list(itertools.pairwise(messages))
        assert not any(is_own(a) and is_own(b) for a, b in pairs), (
            f"{where}: two notes side by side: {_outline(messages)}; "
            f"from {_outline(sent if fmt == 'agent_adapter' else convert(sent, name).messages)}"
        )
        if store is not None:
            for m in messages:
                for rid in _ID.findall(m.text):
                    assert m.role == "tool", where
                    saved = store.load_sync(owner_scope(ctx), rid)
                    assert saved == originals[m.tool_call_id or ""], f"{where}: {rid} lost"
        if k < len(later):
            sent = list(out) + natives(fmt, later[k])
