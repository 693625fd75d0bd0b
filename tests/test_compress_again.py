"""Regressions of issue 19: what one compression adds must not break the next one, and the
defaults keep their guarantees on the first (items 1, 4, 5 and 10), each on its own small input
and in every format it applies to."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from _replay import FORMATS, format_name, messages_of, natives
from agent_adapter._messages import Message, TextPart, ThinkingPart, ToolCall
from agent_adapter.context import (
    CompressionPolicy,
    KeepMostRelevant,
    MyOwnStep,
    Summarize,
    compress_for_sync,
)
from agent_adapter.context._own import is_own, own_kind, sign
from agent_adapter.context.formats import check

LATEST = "add a regression test, never push to main"


def _round(n: int, size: int = 200, thinking: bool = False) -> list[Message]:
    cid = f"call_{n}"
    text = f"step {n}"
    content: Any = (
        (ThinkingPart(f"thinking {n}", signature=f"sig{n}"), TextPart(text)) if thinking else text
    )
    call = ToolCall(cid, "bash", json.dumps({"command": f"cat src/mod{n}.py"}))
    return [
        Message("assistant", content, tool_calls=(call,)),
        Message("tool", f"contents of src/mod{n}.py\n" + "x = 1\n" * size, tool_call_id=cid),
    ]


def _agent(first: int, last: int) -> list[Message]:
    out: list[Message] = []
    for n in range(first, last):
        out += _round(n)
    return out


def _start() -> list[Message]:
    return [
        Message("system", "You are a coding agent."),
        Message("user", "fix the bug in mod"),
        *_agent(0, 6),
        Message("user", LATEST),
        *_agent(6, 9),
    ]


# --- item 1: the latest user message is never lost to our own note or summary ---------------


def _native_of(fmt: str, items: list[Any], text: str) -> Any:
    """The native holding the message whose text is ``text``."""
    for native in items:
        if any(m.text == text for m in messages_of(fmt, [native])):
            return native
    raise AssertionError(f"no native holds {text!r}")


@pytest.mark.parametrize("steps", [None, [Summarize()]], ids=["default", "summarize"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_note_after_the_latest_user_message_never_takes_its_place(
    fmt: str, steps: list[Any] | None
) -> None:
    # the exact case: the rounds after "add a regression test, never push to main" are
    # dropped into a note after it; on the next call that note took over the latest-user
    # protection and the user's request was dropped (and notes stacked up)
    policy = CompressionPolicy(threshold_tokens=3000, target_tokens=2000, steps=steps)
    name = format_name(fmt)
    sent = natives(fmt, _start())
    for k in range(5):
        latest = _native_of(fmt, sent, LATEST)
        out, _ = compress_for_sync(sent, policy, format=name)
        messages = messages_of(fmt, out)
        assert any(m.text == LATEST for m in messages), f"call {k}: the request was dropped"
        if len(messages_of(fmt, [latest])) == 1:  # a native of its own: the caller's object
            assert any(n is latest for n in out), f"call {k}: the request was rebuilt"
        last_user = [m for m in messages if m.role == "user" and not is_own(m)][-1]
        assert last_user.text == LATEST
        for a, b in itertools.pairwise(messages):
            assert not (is_own(a) and is_own(b)), f"call {k}: two of ours side by side"
        if fmt != "agent_adapter":
            assert check(out, name) == []
        sent = [*out, *natives(fmt, _agent(10 + 3 * k, 13 + 3 * k))]


def test_our_own_messages_are_known_by_their_head_and_tag_only() -> None:
    note = Message("user", sign("[12 earlier messages removed to fit the context window]"))
    summary = Message(
        "user",
        sign("[Summary of the earlier conversation (3 messages); the messages it replaced]"),
    )
    assert own_kind(note) == "note" and own_kind(summary) == "summary"
    # the user's words that mention such text, or quote it later, are the user's; so is a
    # head without its tag
    for text in (
        "why were [12 earlier messages removed to fit the context window]?",
        " [12 earlier messages removed to fit the context window]",
        "[Summary of the earlier conversation] please",
        "[12 earlier messages removed to fit the context window]",
        f"{note.text} now fix the bug",
    ):
        assert not is_own(Message("user", text)), text
    assert not is_own(Message("assistant", note.text))


def test_the_relevance_query_is_the_users_words_not_our_note() -> None:
    seen: list[str] = []

    def scorer(query: str, texts: list[str]) -> list[float]:
        seen.append(query)
        return [0.5] * len(texts)

    from agent_adapter.context import MyScorer

    messages = [
        Message("user", "find the flaky test"),
        *_agent(0, 4),
        Message("user", LATEST),
        Message("user", sign("[3 earlier messages removed to fit the context window]")),
        *_agent(4, 8),
    ]
    policy = CompressionPolicy(
        threshold_tokens=800,
        target_tokens=600,
        steps=[KeepMostRelevant(scorer=MyScorer(scorer), keep_count=0)],
    )
    compress_for_sync(messages, policy)
    assert seen and all(q == LATEST for q in seen)


# --- item 4: reasoning items and thought parts never pin the first round ---------------------


def _responses_loop(rounds: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    ]
    for n in range(rounds):
        items += [
            {"type": "reasoning", "id": f"rs_{n}", "summary": [], "encrypted_content": f"enc{n}"},
            {
                "type": "function_call",
                "call_id": f"call_{n}",
                "name": "bash",
                "arguments": json.dumps({"command": f"cat src/m{n}.py"}),
            },
            {"type": "function_call_output", "call_id": f"call_{n}", "output": "y\n" * 400},
        ]
    return items


def _gemini_loop(rounds: int) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "go"}]}]
    for n in range(rounds):
        contents += [
            {
                "role": "model",
                "parts": [
                    {"text": f"thinking {n}", "thought": True},
                    {
                        "function_call": {"name": "bash", "args": {"n": n}, "id": f"c{n}"},
                        "thought_signature": "c2ln",
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "function_response": {
                            "name": "bash",
                            "id": f"c{n}",
                            "response": {"output": "y\n" * 400},
                        }
                    }
                ],
            },
        ]
    return contents


@pytest.mark.parametrize("loop", [_responses_loop, _gemini_loop], ids=["responses", "gemini"])
def test_a_one_prompt_tool_loop_with_reasoning_compresses_its_first_round(loop: Any) -> None:
    # one user prompt, then rounds that each open on reasoning: the Anthropic rule (the
    # current turn opens on its thinking) kept the first round for the whole run, and once it
    # and the newest round were over the threshold nothing was compressed
    natives_ = loop(12)
    policy = CompressionPolicy(threshold_tokens=2000, target_tokens=1500)
    out, report = compress_for_sync(natives_, policy)
    assert report.reached_target, report.explain()
    assert natives_[1] not in out, "the first round is still pinned"
    assert out[0] is natives_[0]
    assert check(out) == []


def test_anthropic_still_keeps_the_current_turns_thinking_opener() -> None:
    messages = [Message("user", "go"), *(m for n in range(8) for m in _round(n, thinking=True))]
    sent = natives("anthropic", messages)
    out, _ = compress_for_sync(
        sent, CompressionPolicy(threshold_tokens=1200, target_tokens=900), format="anthropic"
    )
    assert sent[1] in out  # the opener: "a final assistant message must start with thinking"
    assert check(out, "anthropic") == []


# --- item 5: never more than the window when anything can go ----------------------------------


def _big_newest(old_rounds: int, newest_chars: int) -> list[Message]:
    return [
        Message("system", "You are a coding agent."),
        Message("user", "fix it"),
        *_agent(0, old_rounds),
        Message(
            "assistant", "", tool_calls=(ToolCall("big", "bash", '{"command": "cat big.log"}'),)
        ),
        Message("tool", "z" * newest_chars, tool_call_id="big"),
    ]


@pytest.mark.parametrize("fmt", FORMATS)
def test_old_rounds_go_when_the_newest_round_alone_is_over_the_threshold(fmt: str) -> None:
    # the exact figures: 165,131 tokens into a 128k window, the newest round alone 105,035
    messages = _big_newest(old_rounds=200, newest_chars=4 * 105_000)
    sent = natives(fmt, messages)
    policy = CompressionPolicy(model_max_tokens=128_000)  # 80% / 60%, "keep"
    out, report = compress_for_sync(sent, policy, format=format_name(fmt))
    assert report.tokens_before > 128_000
    assert report.tokens_after <= 128_000, report.explain()
    assert out[-1] is sent[-1]  # the newest round verbatim: it fits
    assert len(out) < len(sent)


def test_the_readme_policy_still_compresses_when_one_result_is_over_its_threshold() -> None:
    messages = _big_newest(old_rounds=30, newest_chars=4 * 3_500)
    out, report = compress_for_sync(
        messages, CompressionPolicy(threshold_tokens=3_000, target_tokens=2_000)
    )
    assert report.tokens_after < report.tokens_before
    assert out[-1] is messages[-1] and out[1] is messages[1]


def test_the_newest_content_is_cut_only_when_nothing_else_fits_the_window() -> None:
    messages = _big_newest(old_rounds=20, newest_chars=4 * 150_000)
    policy = CompressionPolicy(model_max_tokens=128_000)
    out, report = compress_for_sync(messages, policy)
    assert report.tokens_after <= 128_000, report.explain()
    assert out[0] is messages[0] and out[1] is messages[1]  # system prompt and task
    assert report.if_still_too_long == "cut"


def test_keep_keeps_what_still_fits() -> None:
    # without a known window, the protected part is kept whole; the old rounds still go
    messages = _big_newest(old_rounds=20, newest_chars=4 * 50_000)
    out, report = compress_for_sync(messages, CompressionPolicy(target_tokens=32_000))
    assert out[-1] is messages[-1]
    assert report.tokens_after < report.tokens_before


# --- item 10: never bigger ---------------------------------------------------------------------


def test_a_compression_never_returns_more_tokens_than_it_was_given() -> None:
    messages = [Message("user", "task"), *_agent(0, 3), Message("user", "go on")]

    def padding(ms: list[Message]) -> list[Message]:  # a note bigger than what it replaces
        return [ms[0], Message("user", "[note] " + "n" * 4_000), *ms[3:]]

    policy = CompressionPolicy(
        threshold_tokens=300, target_tokens=200, steps=[MyOwnStep(fn=padding)]
    )
    out, report = compress_for_sync(messages, policy)
    assert report.tokens_after <= report.tokens_before
    assert out == messages and all(a is b for a, b in zip(out, messages, strict=True))


def test_a_last_resort_note_stands_before_the_thinking_opener() -> None:
    # if_still_too_long=RemoveOldMessages(): the relaxed pass marked the opener only as
    # "pinned", so the note of the rounds dropped inside the thinking tool loop landed in it
    from agent_adapter.context import RemoveOldMessages
    from agent_adapter.context.formats._anthropic import check_thinking_unchanged

    messages = [Message("user", "go"), *(m for n in range(8) for m in _round(n, thinking=True))]
    sent = natives("anthropic", messages)
    policy = CompressionPolicy(
        threshold_tokens=900,
        target_tokens=700,
        steps=[MyOwnStep(fn=lambda ms: ms)],
        if_still_too_long=RemoveOldMessages(keep_first=1, keep_last=2),
    )
    out, report = compress_for_sync(sent, policy, format="anthropic")
    assert report.messages_removed > 0
    opener = next(k for k, n in enumerate(out) if n is sent[1])
    notes = [k for k, n in enumerate(out) if any(map(is_own, messages_of("anthropic", [n])))]
    assert notes and all(k < opener for k in notes), (notes, opener)
    assert check(out, "anthropic") == [] and check_thinking_unchanged(sent, out) == []


def test_a_note_or_summary_of_one_message_is_singular_and_still_ours() -> None:
    from agent_adapter.context._own import is_own, note_head, summary_head

    note, summary = note_head(1) + "]", summary_head(1)
    assert note == "[1 earlier message removed to fit the context window]"
    assert summary.startswith("[Summary of the earlier conversation (1 message); the message")
    assert is_own(Message("user", sign(note))) and is_own(Message("user", sign(summary)))
    assert is_own(Message("user", sign(note_head(2) + "]")))
