"""Regressions of issue 32, item 3: provenance across calls that a user cannot fake and a step
cannot break. Whether a message is the library's note or summary is known from a keyed tag in
its head, never from its opening words; no later step changes what the library added; a note
never stands next to a summary of ours (one addition a place)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from _replay import FORMATS, format_name, messages_of, natives
from agent_adapter import CallableModel, ModelRequest
from agent_adapter._messages import Message, ToolCall
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    CompressionPolicy,
    ContextSummary,
    CutLongMessages,
    MyOwnStep,
    Protection,
    RemoveOldMessages,
    Summarize,
    compress_for_sync,
    enforce_invariants,
)
from agent_adapter.context._own import KEY_ENV, is_own, own_kind, sign, unsigned
from agent_adapter.context.formats import AnthropicConverter, check, convert


def _round(n: int, size: int = 120) -> list[Message]:
    cid = f"call_{n}"
    call = ToolCall(cid, "bash", json.dumps({"command": f"pytest tests/test_mod{n}.py"}))
    out = f"tests/test_mod{n}.py::test_case_{n} FAILED\nsrc/pkg/mod{n}.py\n" + "ok\n" * size
    return [
        Message("assistant", f"running the tests of module {n}", tool_calls=(call,)),
        Message("tool", out, tool_call_id=cid),
    ]


def _history(rounds: int, start: int = 0) -> list[Message]:
    return [m for n in range(start, start + rounds) for m in _round(n)]


_POLICY = CompressionPolicy(threshold_tokens=1500, target_tokens=1000, steps=[RemoveOldMessages()])


def _a_note() -> Message:
    out, _ = compress_for_sync([Message("user", "fix the tests"), *_history(12)], _POLICY)
    return next(m for m in out if own_kind(m) == "note")


# --- (a) the tag: only the library writes it ---------------------------------------------------


def test_a_note_carries_a_tag_in_its_head_that_verifies_against_its_exact_text() -> None:
    note = _a_note()
    head = note.text.split("\n", 1)[0]
    assert "; ref " in head and note.text.startswith("[12 earlier messages removed")
    assert unsigned(note.text) is not None and is_own(note)
    for changed in (
        note.text + " ",
        note.text.replace("src/pkg", "src/pk"),
        note.text[:-40] + "]",
        note.text + "\nnow fix the bug",
    ):
        assert not is_own(Message("user", changed)), changed[-60:]
    assert sign("[3 earlier messages removed to fit the context window]") == sign(
        "[3 earlier messages removed to fit the context window]"
    )  # deterministic with the built-in key: prompt caches hold across workers


def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "[3 earlier messages removed to fit the context window]"
    built_in = sign(text)
    monkeypatch.setenv(KEY_ENV, "a deployment's secret")
    assert sign(text) != built_in and is_own(Message("user", sign(text)))
    assert not is_own(Message("user", built_in))  # a tag made with another key is the user's
    monkeypatch.delenv(KEY_ENV)
    assert is_own(Message("user", built_in))


_LATEST_USER = [
    "[12 earlier messages removed to fit the context window] now fix the bug",
    "[Summary of the earlier conversation (8 messages); the messages it replaced are gone]\n"
    "Task: fix the bug\n\nNow also add a regression test for it.",
]


@pytest.mark.parametrize("text", _LATEST_USER)
def test_a_latest_user_message_opening_with_our_head_is_the_users(text: str) -> None:
    latest = Message("user", text)
    messages = [Message("user", "fix the tests"), *_history(12), latest]
    out, report = compress_for_sync(messages, _POLICY)
    assert report.messages_removed > 0
    assert out[-1] is latest and not is_own(latest)
    assert Protection(messages).reason(latest) == "latest_user"


def test_a_pasted_summary_with_a_request_under_it_is_the_users() -> None:
    summarized, _ = compress_for_sync(
        [Message("user", "fix the tests"), *_history(12), Message("user", "go on")],
        CompressionPolicy(threshold_tokens=1500, target_tokens=1000, steps=[Summarize()]),
    )
    summary = next(m for m in summarized if own_kind(m) == "summary")
    pasted = Message("user", summary.text + "\n\nGiven that, now fix the bug in mod3.")
    messages = [Message("user", "fix the tests"), *_history(12, 20), pasted]
    out, _ = compress_for_sync(messages, _POLICY)
    assert out[-1] is pasted and not is_own(pasted)


def test_a_pasted_exact_note_as_the_latest_message_is_the_users() -> None:
    note = _a_note()
    pasted = Message("user", note.text)  # the very text, tag included
    assert is_own(pasted)  # alone it verifies; in the newest turn it is the user's anyway
    messages = [Message("user", "fix the tests"), *_history(12, 20), pasted]
    assert Protection(messages).reason(pasted) == "latest_user"
    out, _ = compress_for_sync(messages, _POLICY)
    assert out[-1] is pasted


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_note_stays_ours_through_every_format(fmt: str) -> None:
    task = [Message("user", "fix the tests")]
    out, _ = compress_for_sync(
        natives(fmt, [*task, *_history(12)]), _POLICY, format=format_name(fmt)
    )
    loaded = messages_of(fmt, out)
    notes = [m for m in loaded if own_kind(m) == "note"]
    assert len(notes) == 1 and notes[0].text.split("\n", 1)[0].count("; ref ") == 1
    # and a second call folds it, never takes it for the user's
    sent = [*out, *natives(fmt, [*_history(8, 30), Message("user", "now the docs")])]
    again, _ = compress_for_sync(sent, _POLICY, format=format_name(fmt))
    loaded = messages_of(fmt, again)
    assert sum(is_own(m) for m in loaded) == 1 and loaded[-1].text == "now the docs"


def test_a_note_merged_into_a_user_turn_by_strict_alternation_splits_back_as_ours() -> None:
    strict = AnthropicConverter(strict_alternation=True)
    sent: list[Any] = [{"role": "user", "content": "fix the tests"}]
    sent += natives("anthropic", _history(12))
    out, _ = compress_for_sync(sent, _POLICY, format=strict)
    assert check(out, "anthropic", strict_alternation=True) == []
    loaded = convert(out, "anthropic").messages
    assert [own_kind(m) for m in loaded].count("note") == 1
    assert loaded[0].text == "fix the tests"


# --- (b) no later step changes what the library added ------------------------------------------


def _cut_users(messages: list[Message]) -> list[Message]:
    """A step of the user's that cuts every long user text (our notes included)."""
    return [
        m.with_text(m.text[-80:]) if m.role == "user" and len(m.text) > 80 else m for m in messages
    ]


@pytest.mark.parametrize(
    "later",
    [CutLongMessages(max_tokens_per_message=20), MyOwnStep(fn=_cut_users)],
    ids=["cut_long_messages", "my_own_step"],
)
def test_a_step_after_remove_old_messages_never_cuts_the_note(later: Any) -> None:
    policy = CompressionPolicy(
        threshold_tokens=1500, target_tokens=1000, steps=[RemoveOldMessages(), later]
    )
    history: list[Message] = [Message("user", "fix the tests")]
    for call in range(6):
        latest = Message("user", f"request {call}: keep the API stable")
        history = [*history, latest, *_history(5, 10 * call)]
        out, _ = compress_for_sync(history, policy)
        assert any(m is latest for m in out), f"call {call}: the latest user message is gone"
        for m in out:
            if m.role == "user" and m.text.startswith("[") and "earlier messages" in m.text:
                assert is_own(m), f"call {call}: a changed note {m.text[:60]!r}"
        history = out


def test_the_guard_reverts_a_change_to_a_note_of_ours() -> None:
    note = _a_note()
    before = [Message("user", "task"), note, *_round(1), Message("user", "q")]
    after = [before[0], note.with_text(note.text[:60] + "]"), *before[2:]]
    assert enforce_invariants(before, after, Protection(before), step="t")[1] is note
    removed = [before[0], *before[2:]]
    assert enforce_invariants(before, removed, Protection(before), step="t") == removed


# --- (c) one addition a place ------------------------------------------------------------------


def _summary_reply(request: ModelRequest) -> str:
    return ContextSummary(task="fix the tests", files_read=["src/pkg/mod1.py"]).model_dump_json()


def _adjacent(messages: list[Message]) -> int:
    return sum(is_own(a) and is_own(b) for a, b in itertools.pairwise(messages))


def test_a_note_next_to_a_summary_is_folded_into_it() -> None:
    # several user turns: the first ones are summarized, the summary is what keep_first
    # keeps, and the note of the run after it would stand right next to it
    messages: list[Message] = []
    for n in range(8):
        messages += [Message("user", f"request {n}"), *_round(n)]
    summarize = Summarize(model=CallableModel(_summary_reply), keep_recent_messages=12)
    policy = CompressionPolicy(
        threshold_tokens=800, target_tokens=600, steps=[summarize, RemoveOldMessages()]
    )
    out, report = compress_for_sync(messages, policy)
    assert [s.step for s in report.steps] == ["summarize", "remove_old_messages"]
    assert report.steps[1].messages_removed > 0
    assert _adjacent(out) == 0
    ours = [m for m in out if is_own(m)]
    assert len(ours) == 1 and own_kind(ours[0]) == "summary"
    # it stands for every message it replaced (the summary's 12, the run's 3) and holds the
    # summary's fields and the names of the run
    assert ours[0].text.startswith("[Summary of the earlier conversation (15 messages)")
    assert "src/pkg/mod1.py" in ours[0].text and "test_mod4.py::test_case_4" in ours[0].text


@pytest.mark.parametrize("model", [True, False], ids=["model", "extractive"])
def test_summarize_then_remove_old_messages_over_a_real_replay(data_dir: Path, model: bool) -> None:
    """Issue 32: 367 of 9,999 replayed calls had a summary and a note side by side; a Claude
    Code session replayed call by call (compress, append, compress again) had 19 of 121."""
    path = data_dir / "claude-code-spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    trace = load_trace(path)
    summarize = Summarize(model=CallableModel(_summary_reply) if model else None)
    policy = CompressionPolicy(
        threshold_tokens=6000, target_tokens=4500, steps=[summarize, RemoveOldMessages()]
    )
    items = trace.messages
    ends = [i for i, n in enumerate(items) if i > 1 and n.get("role") == "assistant"][:120]
    sent: list[Any] = []
    done = compressed = 0
    for end in [*ends, len(items)]:
        out, report = compress_for_sync([*sent, *items[done:end]], policy, format=trace.format)
        compressed += report.messages_added > 0
        loaded = convert(out, trace.format).messages
        assert _adjacent(loaded) == 0, f"at {end}: two of ours side by side"
        assert check(out, trace.format) == []
        sent, done = out, end
    assert compressed >= 10
