"""What dropped rounds leave behind: one note a run of dropped messages, naming what they
held; the task is never cut by CutLongMessages."""

from __future__ import annotations

import asyncio

import pytest

from _convo import calls, result
from agent_adapter import ConfigError, Message
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    RemoveOldMessages,
    compress,
    compress_for_sync,
)
from agent_adapter.context.formats import check, convert


def _run(rounds: int, start: int = 0) -> list[Message]:
    out: list[Message] = []
    for i in range(start, start + rounds):
        out.append(calls(f"c{i}", text=f"step {i}: cat src/pkg/mod{i}.py"))
        body = f"def f{i}():\n    pass\n" * 30
        if i == start + 1:
            body += "Traceback (most recent call last):\nTypeError: unsupported operand type\n"
        out.append(result(f"c{i}", body))
    return out


def _convo() -> list[Message]:
    return [
        Message("system", "rules"),
        Message("user", "fix the bug in src/pkg"),
        *_run(12),
        Message("assistant", "done?"),
        Message("user", "yes, go on"),
    ]


def _compress(msgs: list[Message], target: int, **kw: object) -> list[Message]:
    step = RemoveOldMessages(keep_last=4, **kw)  # type: ignore[arg-type]
    out, report = asyncio.run(compress(msgs, CompressionPolicy(target_tokens=target, steps=[step])))
    assert report.reached_target
    return out


def _notes(out: list[Message]) -> list[Message]:
    return [m for m in out if m.text.startswith("[") and "earlier messages removed" in m.text]


def test_a_run_of_dropped_rounds_leaves_one_note_naming_what_it_held() -> None:
    msgs = _convo()
    total = sum(len(m.text) for m in msgs) // 4
    out = _compress(msgs, total // 3)
    (note,) = _notes(out)
    assert out.index(note) == 2  # in the place of the run: right after the task
    dropped = [m for m in msgs if not any(o is m for o in out)]
    assert note.text.startswith(f"[{len(dropped)} earlier messages removed")
    assert note.role == "user" and not note.tool_calls
    # the names of the dropped rounds: their paths and the error line
    assert "src/pkg/mod0.py" in note.text and "src/pkg/mod1.py" in note.text
    assert "TypeError: unsupported operand type" in note.text
    # names the kept messages still show are not repeated
    kept_paths = {
        f"src/pkg/mod{i}.py"
        for i in range(12)
        if any(f"mod{i}.py" in o.text for o in out if o is not note)
    }
    assert kept_paths and not any(p in note.text for p in kept_paths)


def test_a_later_compression_folds_the_earlier_note_into_one() -> None:
    msgs = _convo()
    total = sum(len(m.text) for m in msgs) // 4
    first = _compress(msgs, total // 2)
    (old,) = _notes(first)
    grown = [*first, *_run(6, start=12), Message("assistant", "and now?"), Message("user", "more")]
    again = _compress(grown, total // 2)
    (note,) = _notes(again)
    assert note is not old
    n_old = int(old.text[1:].split()[0])
    dropped_now = [m for m in grown if m is not old and not any(o is m for o in again)]
    assert note.text.startswith(f"[{n_old + len(dropped_now)} earlier messages removed")
    assert "src/pkg/mod0.py" in note.text  # a name of the first run, carried over


def test_the_note_counts_against_the_target_and_can_be_turned_off() -> None:
    msgs = _convo()
    total = sum(len(m.text) for m in msgs) // 4
    for target in (total // 2, total // 3, total // 5):
        out = _compress(msgs, target)
        assert sum(len(m.text) for m in out) // 4 <= target + len(out)  # chars/4 + overhead
    silent = _compress(msgs, total // 3, note=False)
    assert not _notes(silent)
    with pytest.raises(ConfigError, match="note must be a bool"):
        RemoveOldMessages(note="yes")  # type: ignore[arg-type]


def test_the_note_is_valid_in_every_format() -> None:
    natives = [
        {"role": "user", "content": "fix the bug in src/pkg/a.py"},
        *[
            item
            for i in range(8)
            for item in (
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": f"look {i}"},
                        {
                            "type": "tool_use",
                            "id": f"t{i}",
                            "name": "cat",
                            "input": {"p": f"src/m{i}.py"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x " * 300}
                    ],
                },
            )
        ],
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"},
    ]
    total = sum(len(str(n)) for n in natives) // 4
    policy = CompressionPolicy(target_tokens=total // 3, steps=[RemoveOldMessages()])
    out, report = compress_for_sync(natives, policy, format="anthropic")
    assert report.reached_target and out[0] is natives[0] and out[-1] is natives[-1]
    assert check(out, "anthropic") == []
    (note,) = [
        m for m in convert(out, "anthropic").messages if "earlier messages removed" in m.text
    ]
    assert "src/m0.py" in note.text  # a tool call's argument names it


def test_cut_long_messages_never_cuts_the_task() -> None:
    task = Message("user", "the task: " + "requirement " * 600)
    msgs = [
        task,
        Message("assistant", "a " * 1500),
        Message("user", "ok"),
        Message("assistant", "b"),
    ]
    out, _ = asyncio.run(
        compress(
            msgs,
            CompressionPolicy(
                target_tokens=900, steps=[CutLongMessages(max_tokens_per_message=100)]
            ),
        )
    )
    assert out[0] is task and out[1] is not msgs[1]
    out, _ = asyncio.run(
        compress(
            msgs,
            CompressionPolicy(
                target_tokens=300, steps=[CutLongMessages(max_tokens_per_message=100, keep_first=0)]
            ),
        )
    )
    assert out[0] is not task
    with pytest.raises(ConfigError, match="keep_first must be an int >= 0"):
        CutLongMessages(keep_first=-1)
