"""Regressions of the compression speed work (issue items 14 and 8): the digests' scans and
the notes' checks are remembered by content and change nothing, and every dropped run leaves
its note.

Speed itself is measured by ``bench/compress_bench.py``, never timed here.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_adapter import Message
from agent_adapter.cli._loaders import Trace, load_trace
from agent_adapter.context import (
    CompressionPolicy,
    RemoveOldMessages,
    _lru,
    compress,
    compress_for,
    estimate_tokens,
)
from agent_adapter.context._digest import clear_memos, names_in, shown_by
from agent_adapter.context._own import note_count

_NOTE = re.compile(r"\A\[(\d+) earlier messages? removed")


def _run(natives: list[Any], fmt: str, target: int) -> tuple[list[Any], Any]:
    return asyncio.run(
        compress_for(natives, CompressionPolicy(target_tokens=target), format=fmt, states=False)
    )


def _tau(data_dir: Path, index: int) -> Trace:
    return load_trace(data_dir / "tau-bench" / "gpt-4o-airline.json", index=index)


# --------------------------------------------------------------------------------------------
# item 8: every dropped run leaves its note


def test_tau_bench_dialog_5_at_2000_tokens_leaves_a_note_for_its_dropped_run(
    data_dir: Path,
) -> None:
    # was: 18 messages dropped, no note (a bare note did not fit the last 4 tokens of room,
    # so the notes were left out)
    trace = _tau(data_dir, 5)
    out, report = _run(trace.messages, trace.format, 2000)
    removed = len(trace.messages) - (len(out) - report.messages_added)
    notes = [m for m in out if m.get("role") == "user" and _NOTE.match(str(m.get("content")))]
    assert removed > 0
    assert len(notes) == 1
    match = _NOTE.match(str(notes[0]["content"]))
    assert match is not None and int(match[1]) == removed
    assert report.reached_target and report.tokens_after <= 2000


def test_bare_notes_stay_when_even_they_do_not_fit_and_the_report_says_so() -> None:
    big = "x" * 4000
    messages = [
        Message("system", big),
        Message("user", "the task"),
        *[Message("assistant" if i % 2 else "user", f"turn {i} " + "y" * 60) for i in range(6)],
        Message("user", "a"),
        Message("assistant", "b"),
        Message("user", "c"),
        Message("assistant", "d"),
    ]
    step = RemoveOldMessages(keep_first=1, keep_last=4)
    # dropping the six middle turns leaves 2 tokens of room: enough without a note, not for
    # even a bare one
    target = estimate_tokens([messages[0], messages[1], *messages[-4:]]) + 2
    policy = CompressionPolicy(target_tokens=target, steps=[step], recent_turns=0)
    out, report = asyncio.run(compress(messages, policy))
    notes = [m for m in out if note_count(m) is not None]
    # the six middle turns, then (the result still over the threshold) the older of the
    # last turns that may go: never over while something that may go is still there
    assert [note_count(m) for m in notes] == [8]
    assert not report.reached_target and report.tokens_after > target
    assert report.tokens_after < report.tokens_before


# --------------------------------------------------------------------------------------------
# item 14: what is remembered changes nothing


def test_names_in_remembered_by_content_gives_the_same_names_as_a_fresh_scan() -> None:
    removed = "$ pytest tests/x.py\nE   TypeError: bad operand\nsee /testbed/src/pkg/mod.py:12\n"
    kept = ("head", "tail mentions nothing")
    clear_memos()
    fresh = names_in(removed, kept)
    fresh[0].append(("mutated by a caller", 0, (), False))  # a caller's list is its own
    again = names_in("".join(list(removed)), kept)  # an equal text, another object
    clear_memos()
    assert again == names_in(removed, kept)
    assert again[0] and ("mutated by a caller", 0, (), False) not in again[0]


def test_shown_by_one_kept_text_remembers_its_answers_and_they_are_right() -> None:
    kept = "we opened src/pkg/mod.py and ran it\n" * 50
    names = [
        ("src/pkg/mod.py", 1, ("/testbed/src/pkg/mod.py", "src/pkg/mod.py"), False),
        ("other.py", 1, ("other.py",), False),
        ("exit 1", 0, (), True),
    ]
    clear_memos()
    cold = [shown_by(kept)(n) for n in names]
    warm = [shown_by(kept)(n) for n in names]
    several = shown_by((kept[:10], kept[10:]))  # several texts: never remembered
    assert cold == warm == [True, False, False]
    assert [several(n) for n in names[1:]] == [False, False]


def test_the_memos_are_bounded() -> None:
    memo = _lru.Memo(entries=3, chars=400)
    for i in range(10):
        memo.put(f"k{i}", i, 10)
    assert len(memo.items) == 3 and memo.get("k9") == 9 and memo.get("k0") is None
    memo.put("huge", 1, 101)  # over a quarter of the bound: never held
    assert memo.get("huge") is None
    memo.put("a", 1, 100)
    memo.put("b", 2, 100)
    assert memo.held <= 400


@pytest.mark.parametrize(
    ("group", "name", "target"),
    [
        ("mini-swe-agent-gemini3pro", "pytest-dev__pytest-6197", 32000),
        ("mini-swe-agent-gemini3pro", "psf__requests-1142", 32000),
        ("claude-code-spotter", "258c7280-ae70-4798-800f-63464d01a85d", 32000),
        ("tau-bench", "3", 2000),
    ],
)
def test_compressing_again_with_warm_memos_is_byte_identical_to_a_cold_run(
    data_dir: Path, group: str, name: str, target: int
) -> None:
    if group == "tau-bench":
        trace = _tau(data_dir, int(name))
    elif group == "claude-code-spotter":
        trace = load_trace(data_dir / group / f"{name}.jsonl")
    else:
        trace = load_trace(data_dir / group / "trajs" / f"{name}.traj.json")
    clear_memos()
    cold, cold_report = _run(trace.messages, trace.format, target)
    warm, warm_report = _run(trace.messages, trace.format, target)
    assert json.dumps(warm, sort_keys=True, default=str) == json.dumps(
        cold, sort_keys=True, default=str
    )
    assert warm_report.tokens_after == cold_report.tokens_after
    assert [s.tokens_after for s in warm_report.steps] == [
        s.tokens_after for s in cold_report.steps
    ]


def _chat_list() -> list[dict[str, Any]]:
    natives: list[dict[str, Any]] = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "the task"},
    ]
    for i in range(8):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "run", "arguments": "{}"}}
        natives.append({"role": "assistant", "content": None, "tool_calls": [call]})
        text = [{"type": "text", "text": f"out {i} " * 300}]
        natives.append({"role": "tool", "tool_call_id": f"c{i}", "content": text})
    natives.append({"role": "user", "content": "and now?"})
    return natives


def test_a_native_edited_deep_inside_is_converted_again_not_reused() -> None:
    natives = _chat_list()
    _run(natives, "openai", 600)
    natives[3]["content"][0]["text"] = "/src/edited.py failed\n" * 100  # edited deep inside
    warm, _ = _run(natives, "openai", 600)
    clear_memos()
    from agent_adapter.context.formats import _conversion

    _conversion._REMEMBERED.clear()
    cold, _ = _run(natives, "openai", 600)
    assert json.dumps(warm, sort_keys=True) == json.dumps(cold, sort_keys=True)


def test_a_native_object_given_twice_converts_to_two_messages() -> None:
    natives = _chat_list()
    twice = [*natives[:2], natives[1], *natives[2:]]  # the task dict twice, one object
    _run(natives, "openai", 600)
    from agent_adapter.context.formats import convert

    messages = convert(twice, "openai").messages
    assert messages[1] == messages[2] and messages[1] is not messages[2]
    assert messages[1].origin != messages[2].origin


def test_a_block_replaced_by_an_equal_one_goes_back_as_the_callers_new_object() -> None:
    # a remembered load whose native now holds an equal but new block is loaded again: its
    # messages hold the native's own blocks, and a thinking block goes back as the caller's
    natives: list[dict[str, Any]] = [{"role": "user", "content": "the task"}]
    for i in range(6):
        thinking = {"type": "thinking", "thinking": f"plan {i}", "signature": f"sig{i}=="}
        call = {"type": "tool_use", "id": f"t{i}", "name": "run", "input": {"n": i}}
        text = {"type": "text", "text": f"step {i} " + "lorem " * 2000}  # cut: rebuilt
        natives.append({"role": "assistant", "content": [thinking, text, call]})
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "out " * 400}
        natives.append({"role": "user", "content": [result]})
    natives.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    natives.append({"role": "user", "content": "thanks"})
    _run(natives, "anthropic", 15000)
    for native in natives:
        if native["role"] == "assistant" and native["content"][0]["type"] == "thinking":
            native["content"][0] = dict(native["content"][0])  # equal, another object
    out, report = _run(natives, "anthropic", 15000)
    assert report.messages_changed  # rebuilt natives, their thinking block in them
    blocks = {id(n["content"][0]) for n in natives if isinstance(n["content"], list)}
    kept = [
        b
        for n in out
        if isinstance(n.get("content"), list)
        for b in n["content"]
        if b.get("type") == "thinking"
    ]
    assert kept and all(id(b) in blocks for b in kept)


# --------------------------------------------------------------------------------------------
# item 14, second slice: a call sent again does nothing twice, and gives the same answer


def test_a_list_compressed_again_is_not_cut_again_and_comes_back_equal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_adapter.context import _text

    natives: list[dict[str, Any]] = [{"role": "user", "content": "fix the build"}]
    for i in range(6):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "run", "arguments": "{}"}}
        natives.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out = f"/src/mod{i}.py: error {i}\n" + f"line {i} " * 1500
        natives.append({"role": "tool", "tool_call_id": f"c{i}", "content": out})
    natives.append({"role": "user", "content": "and now?"})
    clear_memos()
    first, report = _run(natives, "openai", 6000)
    assert report.messages_changed and "characters cut" in json.dumps(first)
    cuts: list[int] = []
    real = _text._cut

    def counted(*args: Any) -> str:
        cuts.append(1)
        return real(*args)

    monkeypatch.setattr(_text, "_cut", counted)
    again, _ = _run(natives, "openai", 6000)
    assert cuts == []  # the same tool outputs, cut the same way: found, not cut again
    assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)
    clear_memos()
    from agent_adapter.context.formats import _conversion

    _conversion._REMEMBERED.clear()
    cold, _ = _run(natives, "openai", 6000)
    assert cuts  # nothing remembered: cut afresh, to the very same output
    assert json.dumps(cold, sort_keys=True) == json.dumps(first, sort_keys=True)


def test_a_derived_message_is_the_same_object_only_for_the_same_message_and_text() -> None:
    a = Message("tool", "x" * 50, tool_call_id="c1")
    b = Message("tool", "x" * 50, tool_call_id="c1")  # equal, another object
    short = _lru.with_text(a, "short")
    assert _lru.with_text(a, "short") is short
    assert _lru.with_text(a, "other") is not short
    other = _lru.with_text(b, "short")
    assert other is not short and other.origin == b.origin != a.origin
    assert short.text == "short" and short.tool_call_id == "c1" and a.text == "x" * 50


def test_the_guard_gives_a_new_list_when_the_step_changed_nothing() -> None:
    from agent_adapter.context import Protection, enforce_invariants

    messages = [Message("user", "task"), Message("assistant", "ok"), Message("user", "go")]
    returned = list(messages)
    out = enforce_invariants(messages, returned, Protection(messages), step="noop")
    assert out == messages and out is not returned and out is not messages
    assert all(a is b for a, b in zip(out, messages, strict=True))
