"""RemoveDuplicates(match="exact"): what counts as a copy (every part, in context), what goes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from _convo import pairing_problems
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
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import CompressionPolicy, RemoveDuplicates, compress
from agent_adapter.context._steps._base import StepContext
from agent_adapter.context._steps.dedup import _key
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import Protection, split_units
from agent_adapter.context.formats import convert


async def _dedup(
    msgs: Sequence[Message],
    target: int = 0,
    pinned: Callable[[Message], bool] | None = None,
) -> list[Message]:
    """RemoveDuplicates() on msgs with the given target (0: drop every copy it may)."""
    context = StepContext(
        target_tokens=target,
        threshold_tokens=0,
        protection=Protection(msgs, pinned),
        meter=TokenMeter(),
    )
    return await RemoveDuplicates().apply(list(msgs), context)


def _tokens(msgs: Sequence[Message]) -> int:
    return TokenMeter().total(list(msgs))


def _round(id_: str, command: str, output: str, text: str = "") -> list[Message]:
    call = ToolCall(id_, "bash", f'{{"command": "{command}"}}')
    return [
        Message("assistant", text, tool_calls=(call,)),
        Message("tool", output, tool_call_id=id_),
    ]


def _sent(attachment: Part, caption: str = "") -> Message:
    parts: tuple[Part, ...] = (TextPart(caption), attachment) if caption else (attachment,)
    return Message("user", parts)


def _asked_twice(first: Message, second: Message) -> list[Message]:
    """The same request twice, answered by first and then second, then the newest turn."""
    return [
        Message("user", "task"),
        Message("assistant", "Send the attachment."),
        first,
        Message("assistant", "Send the attachment."),
        second,
        Message("assistant", "Thanks."),
        Message("user", "done?"),
        Message("assistant", "yes"),
    ]


# ------------------------------------------------------------------------------------------
# every part counts


async def test_two_different_images_without_text_are_not_copies() -> None:
    aaa = Message("user", (ImagePart(data="AAA", media_type="image/png"),))
    bbb = Message("user", (ImagePart(data="BBB", media_type="image/png"),))
    msgs = _asked_twice(aaa, bbb)
    assert await _dedup(msgs) == msgs
    # the same image in the same context is a copy: the request and the image go together
    again = Message("user", (ImagePart(data="AAA", media_type="image/png"),))
    same = _asked_twice(aaa, again)
    assert await _dedup(same) == [same[0], *same[3:]]


async def test_two_different_pdfs_with_the_same_caption_are_not_copies() -> None:
    one = _sent(FilePart(data="JVBERi0xAAA", media_type="application/pdf"), "the contract")
    two = _sent(FilePart(data="JVBERi0xBBB", media_type="application/pdf"), "the contract")
    msgs = _asked_twice(one, two)
    assert await _dedup(msgs) == msgs
    same = _asked_twice(one, dataclasses.replace(one))
    assert await _dedup(same) == [same[0], *same[3:]]


def _unit(*messages: Message) -> tuple[Message, ...]:
    """A unit as ``_key`` takes it: its messages."""
    return messages


def _part_message(part: Part) -> Message:
    return Message("assistant", (TextPart("same caption"), part))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (ImagePart(url="https://x/a.png"), ImagePart(url="https://x/b.png")),
        (
            ImagePart(data="AAA", media_type="image/png"),
            ImagePart(data="AAA", media_type="image/jpeg"),
        ),
        (ImagePart(data="AAA", detail="low"), ImagePart(data="AAA", detail="high")),
        (FilePart(file_id="file-1"), FilePart(file_id="file-2")),
        (FilePart(data="AAA", filename="a.pdf"), FilePart(data="AAA", filename="b.pdf")),
        (FilePart(url="https://x/a.pdf"), FilePart(url="https://x/b.pdf")),
        (ThinkingPart("plan A", "sig"), ThinkingPart("plan B", "sig")),
        (ThinkingPart("plan", "sig-1"), ThinkingPart("plan", "sig-2")),
        (ThinkingPart("blob", redacted=True), ThinkingPart("blob")),
        (
            OpaquePart("openai", {"type": "audio", "data": "AAA"}),
            OpaquePart("openai", {"type": "audio", "data": "BBB"}),
        ),
        (OpaquePart("openai", {"x": 1}), OpaquePart("anthropic", {"x": 1})),
        (TextPart("t", {"title": "a"}), TextPart("t", {"title": "b"})),
    ],
)
def test_every_field_of_a_part_counts(a: Part, b: Part) -> None:
    assert _key(_unit(_part_message(a))) != _key(_unit(_part_message(b)))
    assert _key(_unit(_part_message(a))) == _key(_unit(_part_message(dataclasses.replace(a))))


def test_calls_compare_by_name_and_arguments_and_results_by_content() -> None:
    base = _round("c1", "cat foo.py", "print(1)")
    assert _key(_unit(*base)) == _key(_unit(*_round("other-id", "cat foo.py", "print(1)")))
    assert _key(_unit(*base)) != _key(_unit(*_round("c1", "cat bar.py", "print(1)")))
    assert _key(_unit(*base)) != _key(_unit(*_round("c1", "cat foo.py", "print(2)")))
    shot = Message("tool", (ImagePart(data="AAA"),), tool_call_id="c1")
    other = Message("tool", (ImagePart(data="BBB"),), tool_call_id="c1")
    assert _key(_unit(base[0], shot)) != _key(_unit(base[0], other))
    # a str and the same text as a part are the same message
    assert _key(_unit(Message("user", "hi"))) == _key(_unit(Message("user", (TextPart("hi"),))))


def test_swapped_results_of_parallel_calls_are_not_the_same_round() -> None:
    def parallel(first: str, second: str) -> tuple[Message, ...]:
        calls = (
            ToolCall("a", "bash", '{"command": "cat a"}'),
            ToolCall("b", "bash", '{"command": "cat b"}'),
        )
        return _unit(
            Message("assistant", "", tool_calls=calls),
            Message("tool", "A", tool_call_id=first),
            Message("tool", "B", tool_call_id=second),
        )

    assert _key(parallel("a", "b")) != _key(parallel("b", "a"))


def test_payloads_are_hashed_not_held() -> None:
    big = "A" * 1_000_000
    key = _key(
        _unit(
            Message("user", (ImagePart(data=big),)),
        )
    )
    assert len(repr(key)) < 500


# ------------------------------------------------------------------------------------------
# a message is a copy only together with what it answers


async def test_a_short_answer_to_a_different_question_stays() -> None:
    msgs = [
        Message("user", "clean up the server"),
        Message("assistant", "Delete the production backups?"),
        Message("user", "no"),
        Message("assistant", "Restart nginx?"),
        Message("user", "no"),
        Message("assistant", "OK, leaving both alone."),
        Message("user", "thanks"),
        Message("assistant", "bye"),
    ]
    assert await _dedup(msgs) == msgs


async def test_a_repeated_question_and_its_answer_go_together() -> None:
    msgs = [
        Message("user", "deploy"),
        Message("assistant", "Run the migrations first?"),
        Message("user", "yes"),
        Message("assistant", "Run the migrations first?"),
        Message("user", "yes"),
        Message("assistant", "Migrations done."),
        Message("user", "thanks"),
        Message("assistant", "bye"),
    ]
    # one message would reach the target, but the question never goes without its answer
    out = await _dedup(msgs, target=_tokens(msgs) - 1)
    assert out == [msgs[0], *msgs[3:]]


async def test_a_reply_never_lands_under_another_question() -> None:
    msgs = [
        Message("user", "task"),
        Message("assistant", "Anything else?"),
        Message("user", "Delete the production backups."),
        Message("assistant", "Are you sure?"),
        Message("user", "no"),
        Message("assistant", "Anything else?"),
        Message("user", "Delete the production backups."),
        Message("assistant", "Are you sure?"),
        Message("user", "yes"),
        Message("assistant", "Deleted."),
        Message("user", "thanks"),
        Message("assistant", "bye"),
    ]
    assert await _dedup(msgs) == msgs


async def test_a_protected_question_keeps_its_answer() -> None:
    msgs = [
        Message("user", "deploy"),
        Message("assistant", "Run the migrations first?"),
        Message("user", "yes"),
        Message("assistant", "Run the migrations first?"),
        Message("user", "yes"),
        Message("assistant", "Migrations done."),
        Message("user", "thanks"),
        Message("assistant", "bye"),
    ]
    assert await _dedup(msgs, pinned=lambda m: m is msgs[1]) == msgs


# ------------------------------------------------------------------------------------------
# re-read files and re-run commands still go


async def test_a_re_read_file_goes_oldest_first_and_only_as_needed() -> None:
    body = "def foo():\n    return 1\n" * 40
    msgs = [
        Message("user", "fix foo"),
        *_round("c1", "cat foo.py", body),
        Message("assistant", "Let me look again."),
        *_round("c2", "cat foo.py", body),
        Message("user", "and?"),
        *_round("c3", "cat foo.py", body),
        Message("assistant", "done"),
        Message("user", "thanks"),
        Message("assistant", "bye"),
    ]
    out = await _dedup(msgs, target=_tokens(msgs) - 1)
    assert out == [msgs[0], *msgs[3:]]
    out = await _dedup(msgs)
    assert out == [msgs[0], msgs[3], msgs[6], *msgs[7:]]
    assert pairing_problems(out) == []


async def test_a_re_run_with_another_output_stays() -> None:
    msgs = [
        Message("user", "fix the test"),
        *_round("c1", "pytest -q", "1 failed"),
        Message("assistant", "Patched."),
        *_round("c2", "pytest -q", "1 passed"),
        Message("user", "thanks"),
        Message("assistant", "bye"),
    ]
    assert await _dedup(msgs) == msgs


async def test_a_protected_round_stays() -> None:
    msgs = [
        Message("user", "fix foo"),
        *_round("c1", "cat foo.py", "x = 1"),
        Message("assistant", "again"),
        *_round("c2", "cat foo.py", "x = 1"),
        Message("user", "thanks"),
        Message("assistant", "bye"),
    ]
    assert await _dedup(msgs, pinned=lambda m: m is msgs[2]) == msgs


# ------------------------------------------------------------------------------------------
# a real mini-swe-agent run


def _mini(data_dir: Path, name: str) -> list[Message]:
    path = data_dir / "mini-swe-agent-gemini3pro" / "trajs" / name
    trace = load_trace(path)
    return convert(trace.messages, trace.format).messages


def _policy(msgs: Sequence[Message]) -> CompressionPolicy:
    """Compress whenever over the input's size less one token, with RemoveDuplicates only."""
    target = _tokens(msgs) - 1
    return CompressionPolicy(
        target_tokens=target, steps=[RemoveDuplicates()], on_step_error="raise"
    )


async def test_a_real_run_repeats_calls_but_never_a_whole_round(data_dir: Path) -> None:
    """psf__requests-1142 runs five commands twice with the same output (re-reading
    requests/models.py among them), but the model's THOUGHT beside each call differs, so no
    round is a copy: nothing unique (that reasoning) is dropped."""
    msgs = _mini(data_dir, "psf__requests-1142.traj.json")
    rounds = [u for u in split_units(msgs) if u.is_tool_round]
    seen: dict[object, int] = {}
    for u in rounds:
        call_and_output = (u.messages[0].tool_calls[0].arguments, u.messages[1].text)
        seen[call_and_output] = seen.get(call_and_output, 0) + 1
    assert sum(n - 1 for n in seen.values()) == 5
    assert len({_key(u.messages) for u in rounds}) == len(rounds)
    assert await _dedup(msgs) == msgs


async def test_a_real_round_repeated_verbatim_goes(data_dir: Path) -> None:
    msgs = _mini(data_dir, "psf__requests-1142.traj.json")
    units = split_units(msgs)
    first = next(
        u
        for u in units
        if u.is_tool_round and "sed -n '388,400p'" in u.messages[0].tool_calls[0].arguments
    )
    call = first.messages[0].tool_calls[0]
    again = [  # new messages with a new call id: the agent ran the same command again
        Message("assistant", first.messages[0].content, (dataclasses.replace(call, id="again"),)),
        Message("tool", first.messages[1].content, tool_call_id="again"),
    ]
    last = units[-1].start
    grown = [*msgs[:last], *again, *msgs[last:]]
    out, report = await compress(grown, _policy(grown))
    assert report.steps[0].messages_removed == 2 and report.steps[0].changes_reverted == 0
    assert out == [m for i, m in enumerate(grown) if i not in (first.start, first.start + 1)]
    assert pairing_problems(out) == []
