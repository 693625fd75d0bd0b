"""The ``anthropic`` format, role alternation: adjacent same-role turns stay as they are by
default, ``strict_alternation`` merges them, and merged natives load, rebuild and merge again
as their sources.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _anthropic_cases import ANTHROPIC, EPHEMERAL, THINKING, WORDS
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ToolCall
from agent_adapter.context import CompressionPolicy, MyOwnStep, compress_for, compress_for_sync
from agent_adapter.context._pairing import validate_messages
from agent_adapter.context.formats import check, convert
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._carrier import RESERVED_KEY

FAST = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------------
# alternation


def test_finish_merges_adjacent_same_role_messages() -> None:
    a = {"role": "user", "content": "one"}
    b = {"role": "user", "content": [{"type": "text", "text": "two", "cache_control": EPHEMERAL}]}
    c = {"role": "assistant", "content": [THINKING, {"type": "text", "text": "x"}]}
    d = {"role": "assistant", "content": "y"}
    valid = [a, c]
    assert ANTHROPIC.finish(valid) is valid
    out = ANTHROPIC.finish([a, b, c, d])
    assert out == [
        {"role": "user", "content": [{"type": "text", "text": "one"}, b["content"][0]]},
        {
            "role": "assistant",
            "content": [THINKING, c["content"][1], {"type": "text", "text": "y"}],
        },
    ]
    assert out[0]["content"][1] is b["content"][0] and out[1]["content"][0] is THINKING
    assert check(out, "anthropic") == []


def _alternating() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "old answer " * 200},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": [THINKING, {"type": "text", "text": "ok"}]},
        {"role": "user", "content": "latest"},
    ]


def _drop_old_answer(messages: list[Message]) -> list[Message]:
    return [m for m in messages if not m.text.startswith("old answer")]


def test_removing_an_assistant_between_users_leaves_the_caller_objects_adjacent() -> None:
    # the Messages API combines consecutive same-role turns itself: the task and the next
    # user message stay the caller's objects (same-object promise, prompt-cache prefix)
    natives = _alternating()
    conversion = convert(natives, "anthropic")
    out = conversion.back(_drop_old_answer(conversion.messages))
    assert len(out) == 4
    assert all(a is b for a, b in zip(out, [natives[0], *natives[2:]], strict=True))
    assert check(out, "anthropic") == []
    assert [v.rule for v in check(out, "anthropic", strict_alternation=True)] == [
        "roles_not_alternating"
    ]


def test_strict_alternation_merges_them_into_one_new_dict() -> None:
    natives = _alternating()
    strict = AnthropicConverter(strict_alternation=True)
    conversion = convert(natives, strict)
    out = conversion.back(_drop_old_answer(conversion.messages))
    assert check(out, strict) == [] and check(out, "anthropic", strict_alternation=True) == []
    assert out[0] == {
        "role": "user",
        "content": [{"type": "text", "text": "task"}, {"type": "text", "text": "more"}],
    }
    assert out[1] is natives[3] and out[2] is natives[4]
    assert strict.finish(out) is out  # nothing left to merge: the same list
    policy = CompressionPolicy(target_tokens=60, steps=[MyOwnStep(fn=_drop_old_answer)])
    merged, _ = compress_for_sync(natives, policy, format=strict)
    assert merged == out
    kept, _ = compress_for_sync(natives, policy, format="anthropic")
    assert kept[0] is natives[0] and kept[1] is natives[2]


def test_strict_alternation_is_a_bool_and_only_for_anthropic() -> None:
    with pytest.raises(ConfigError, match="strict_alternation must be a bool"):
        AnthropicConverter(strict_alternation="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="strict_alternation= is for the anthropic format"):
        check([{"role": "user", "content": "q"}], "openai", strict_alternation=True)


def test_a_step_that_rewrites_a_result_turn_gets_one_user_turn_back() -> None:
    # back() writes each message it cannot put onto its native as a native of its own; the
    # pieces of one user turn (tool results, then text) are joined again, and when nothing
    # changed that is the caller's very native
    natives = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
                {"type": "text", "text": "and then"},
            ],
        },
    ]
    conversion = convert(natives, "anthropic")
    copies = [
        Message(m.role, m.content, tool_calls=m.tool_calls, tool_call_id=m.tool_call_id)
        for m in conversion.messages
    ]
    out = conversion.back(copies)
    assert len(out) == 3 and out[2] is natives[2]


SEED = [{"role": "user", "content": "s"}]  # binds a conversion that dumps everything


def test_a_merge_keeps_the_names_of_the_messages_it_merged() -> None:
    messages = [Message("user", "a", name="n1"), Message("user", "b", name="n2")]
    out = convert(SEED, "anthropic").back(messages)
    assert len(out) == 1 and [b["text"] for b in out[0]["content"]] == ["a", "b"]
    assert convert(out, "anthropic").messages == messages


def _reused_ids(second: list[str]) -> list[Message]:
    """Two tool rounds that both use the call id ``c0``, then a user message."""
    out = [Message("user", "q")]
    for ids in (["c0"], second):
        out.append(Message("assistant", "", tool_calls=[ToolCall(c, "f", "{}") for c in ids]))
        out.extend(Message("tool", f"r {c}", tool_call_id=c) for c in ids)
    return [*out, Message("user", "done")]


@pytest.mark.parametrize("second", [["c0", "c1"], ["c0"]])
def test_reused_ids_through_a_merged_result_turn_load_and_validate(second: list[str]) -> None:
    messages = _reused_ids(second)
    natives = convert(SEED, "anthropic").back(messages)
    assert natives[-1]["content"][0]["tool_use_id"] == "c0__2"  # results and "done": merged
    conversion = convert(natives, "anthropic")
    validate_messages(conversion.messages)  # was: 'c0__2' answers no open tool call
    assert conversion.messages == messages
    compress_for_sync(natives, CompressionPolicy(target_tokens=5), format="anthropic")


def test_a_merged_native_rebuilds_part_by_part() -> None:
    messages = [Message("user", f"{t} " * 40, name=t) for t in ("a", "b", "c")]
    natives = convert(SEED, "anthropic").back(messages)
    conversion = convert(natives, "anthropic")
    assert conversion.back(list(conversion.messages)) is natives
    kept = conversion.messages
    cut = [kept[0], kept[1].with_text("b cut"), kept[2]]
    assert convert(conversion.back(cut), "anthropic").messages == cut
    out = conversion.back([kept[0], kept[2]])
    assert convert(out, "anthropic").messages == [kept[0], kept[2]]
    only = conversion.back([kept[1]])  # one source left: its own native, no merge
    assert only == [ANTHROPIC.dump(kept[1])]


def test_merges_of_merges_and_other_keys_load_as_their_sources() -> None:
    plain = {"role": "user", "content": "p", "id": "x1"}  # loads with extras {"id": "x1"}
    named = [ANTHROPIC.dump(Message("user", t, name=t)) for t in ("a", "b")]
    twice = ANTHROPIC.finish([ANTHROPIC.finish([plain, named[0]])[0], named[1]])
    assert len(twice) == 1 and twice[0]["id"] == "x1"
    expected = [m for i, n in enumerate([plain, *named]) for m in ANTHROPIC.load(n, i)]
    assert ANTHROPIC.load(twice[0], 0) == expected
    assert ANTHROPIC.finish([named[1], plain])[0][RESERVED_KEY]["merged"][1][3] == {"id": "x1"}
    bad = {**twice[0], RESERVED_KEY: {"merged": [[1, None, True]]}}
    with pytest.raises(ConfigError, match=r"merged counts 1 blocks; the message has 3"):
        ANTHROPIC.load(bad, 0)


NAMES = st.sampled_from(["ann", "bob"])


@st.composite
def reusing_conversations(draw: st.DrawFn) -> list[Message]:
    """Valid Message lists with same-role neighbours and call ids reused by rounds. User and
    assistant messages have names (a merge of natives with no carrier is one message, as
    before); tool messages may not (their results load apart anyway)."""
    out = [Message("user", draw(WORDS), name=draw(NAMES))]
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            out.append(Message("user", draw(WORDS), name=draw(NAMES)))
        if draw(st.booleans()):
            out.append(Message("assistant", draw(WORDS), name=draw(NAMES)))
        ids = draw(st.lists(st.sampled_from(["c0", "c1", "c2"]), min_size=1, unique=True))
        calls = [ToolCall(c, "f", '{"q": 1}') for c in ids]
        out.append(Message("assistant", draw(WORDS), tool_calls=calls, name=draw(NAMES)))
        for c in draw(st.permutations(ids)):
            name = draw(st.one_of(st.none(), NAMES))
            out.append(Message("tool", draw(WORDS), tool_call_id=c, name=name))
        if draw(st.booleans()):
            out.append(Message("user", draw(WORDS), name=draw(NAMES)))
    return validate_messages(out)


@FAST
@given(reusing_conversations(), st.data())
def test_dumped_conversations_round_trip_through_merges(
    messages: list[Message], data: st.DataObject
) -> None:
    natives = convert(SEED, "anthropic").back(messages)
    blocks = [b for n in natives if isinstance(n["content"], list) for b in n["content"]]
    ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    assert len(ids) == len(set(ids))
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(natives))
    conversion = convert(natives, "anthropic")
    assert conversion.messages == messages
    validate_messages(conversion.messages)
    # dropping messages rebuilds merged natives part by part and merges again
    keep = data.draw(st.lists(st.booleans(), min_size=len(messages), max_size=len(messages)))
    kept = [m for m, k in zip(conversion.messages, keep, strict=True) if k]
    assert convert(conversion.back(kept), "anthropic").messages == kept


def test_compress_for_output_alternates_without_help() -> None:
    natives = _alternating()
    out, _ = asyncio.run(
        compress_for(
            natives,
            CompressionPolicy(target_tokens=10, steps=[MyOwnStep(fn=_drop_old_answer)]),
            format="anthropic",
        )
    )
    assert check(out, "anthropic") == []


def test_strict_alternation_over_a_replay_keeps_one_note_and_a_bounded_task_turn() -> None:
    """Regression: strict_alternation merged each removal note into the task's user turn;
    the next compaction loaded that turn as one message (the task, always kept), so every
    later note and the user text of each dropped round joined it for good (38 blocks, 26
    notes after 60 calls), the note of a fold was dropped where it could not be written
    inside that turn, and tokens_after was off a recount of the list returned."""
    from agent_adapter.context import CompactionStates, TokenMeter, tiktoken_counter

    counter = tiktoken_counter("o200k_base")
    policy = CompressionPolicy(threshold_tokens=3000, target_tokens=2000, token_counter=counter)
    strict = AnthropicConverter(strict_alternation=True)
    states = CompactionStates()
    history: list[dict[str, Any]] = [{"role": "user", "content": "Task: fix the bug"}]
    compactions = 0
    for i in range(40):
        call = {"type": "tool_use", "id": f"toolu_{i:04d}", "name": "bash", "input": {"n": i}}
        history.append(
            {"role": "assistant", "content": [{"type": "text", "text": f"Checking {i}."}, call]}
        )
        output = f"line of output: some/path/file_{i}.py error E{i}\n" * 40
        reminder = f"<system-reminder>step {i}: keep going with file_{i}.py</system-reminder>"
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": output}
        history.append({"role": "user", "content": [result, {"type": "text", "text": reminder}]})
        out, report = compress_for_sync(
            history, policy, format=strict, states=states, conversation="c"
        )
        compactions += report.skipped == ""
        text = json.dumps(out)
        assert text.count("earlier messages removed") <= 1, f"call {i}"
        if i >= 4:
            assert "earlier messages removed" in text, f"call {i}: the names of what went, lost"
        first = out[0]["content"]
        assert first == "Task: fix the bug" or len(first) <= 3, f"call {i}: {first}"
        assert report.tokens_after == TokenMeter(counter).total(convert(out, strict).messages)
        assert check(out, "anthropic", strict_alternation=True) == []
    assert compactions >= 10
