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


# ---------------------------------------------------------------- regressions (a new user's repros)


def _chat_round(i: int, lines: int) -> list[dict[str, object]]:
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "bash", "arguments": f'{{"cmd": "cat src/m{i}.py"}}'},
    }
    body = "\n".join(f"src/m{i}.py:{j}: x = {j}" for j in range(lines))
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": body},
    ]


def _note_texts(texts: list[str]) -> list[str]:
    return [t for t in texts if "earlier messages removed" in t]


def test_a_pass_that_cannot_reach_the_target_keeps_its_note() -> None:
    # the first pass dropped rounds 0-5, could not reach the target and left no note; the
    # second pass reached it by shrinking a newest result: src/m0..m5.py were named nowhere
    msgs: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix src/app.py"},
    ]
    for i in range(6):
        msgs += _chat_round(i, 10)
    for i in range(6, 9):
        msgs += _chat_round(i, 200)
    out, report = compress_for_sync(
        msgs, CompressionPolicy(threshold_tokens=2500, target_tokens=2500)
    )
    assert report.reached_target
    (note,) = _note_texts([str(o["content"] or "") for o in out])
    assert note.startswith("[12 earlier messages removed")
    assert all(f"src/m{i}.py" in note for i in range(6))


def test_one_note_counts_every_message_of_the_run_across_passes() -> None:
    # Gemini: the first pass dropped 14 messages without a note, the second 2 with a note of
    # "2 earlier messages"; now the second folds the first's note
    contents: list[dict[str, object]] = [{"role": "user", "parts": [{"text": "Fix src/app.py"}]}]
    for i in range(10):
        out_text = "\n".join(f"src/m{i}.py:{j}: y={j}" for j in range(80))
        contents += [
            {
                "role": "model",
                "parts": [
                    {
                        "function_call": {"name": "bash", "args": {"cmd": f"cat src/m{i}.py"}},
                        "thought_signature": "U0lH",
                    }
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"function_response": {"name": "bash", "response": {"output": out_text}}}
                ],
            },
        ]
    contents.append({"role": "user", "parts": [{"text": "Now run tests"}]})
    out, report = compress_for_sync(
        contents, CompressionPolicy(threshold_tokens=800, target_tokens=800), format="gemini"
    )
    texts = [str(p.get("text", "")) for o in out for p in o["parts"]]  # type: ignore[union-attr]
    (note,) = _note_texts(texts)
    assert note.startswith(f"[{report.messages_removed} earlier messages removed")
    assert "src/m0.py" in note
    assert check(out, "gemini") == []


def test_rounds_dropped_inside_a_thinking_tool_loop_leave_a_note_before_its_opener() -> None:
    natives: list[dict[str, object]] = [{"role": "user", "content": "Fix the bug in src/app.py"}]
    for i in range(10):
        natives.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"t{i}",
                        "name": "bash",
                        "input": {"cmd": f"cat src/m{i}.py"},
                    }
                ],
            }
        )
        body = "\n".join(f"src/m{i}.py:{j}: y={j}" for j in range(80))
        natives.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": body}],
            }
        )
    natives[1]["content"].insert(
        0, {"type": "thinking", "thinking": "Plan " * 50, "signature": "S"}
    )  # type: ignore[attr-defined]
    out, report = compress_for_sync(
        natives, CompressionPolicy(threshold_tokens=2500, target_tokens=2500), format="anthropic"
    )
    assert report.reached_target and report.messages_added == 1
    assert out[0] is natives[0] and out[2] is natives[1]  # the note between task and opener
    assert "earlier messages removed" in str(out[1]["content"]) and "src/m1.py" in str(
        out[1]["content"]
    )
    assert check(out, "anthropic", thinking=True) == []


def test_a_text_cut_again_keeps_one_whole_marker_counting_every_character() -> None:
    # a shrunk result shrunk again (a growing conversation) used to get a new marker counting
    # only the second cut, and a cut inside an image-holding result cut into the marker itself
    import re

    from agent_adapter.context import ShrinkToolResults

    big = "\n".join(f"src/a{j}.py: line {j}" for j in range(600))
    msgs: list[dict[str, object]] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
    ]
    msgs += _chat_round(0, 0)
    msgs[-1]["content"] = big
    for i in range(1, 5):
        msgs += _chat_round(i, 1)
    policy = CompressionPolicy(
        threshold_tokens=3300, target_tokens=3000, steps=[ShrinkToolResults()]
    )
    for i in range(6):
        msgs, _ = compress_for_sync(msgs, policy)
        text = str(msgs[3]["content"])
        markers = re.findall(r"\[\.\.\. (\d+) characters cut", text)
        assert len(markers) <= 1 and text.count("[...") == len(markers)
        if markers:
            kept = len(re.sub(r"\n?\[\.\.\. .*? \.\.\.\]\n?", "", text, flags=re.S))
            assert abs(int(markers[0]) - (len(big) - kept)) <= 4  # every character that went
        msgs = msgs + [dict(m) for m in _chat_round(10 + i, 1)]
        msgs[-1]["content"] = "x" * 600
    assert markers


def test_cuts_fall_between_words() -> None:
    from agent_adapter.context._text import cut_text

    text = " ".join(f"/home/user/projects/spotter/deps/m{j}/mix.exs" for j in range(300))
    out = cut_text(text, 1000, "both")
    head, tail = out.split("\n[...")[0], out.rsplit("...]\n", 1)[1]
    assert head.rstrip().endswith(".exs") and tail.lstrip().startswith("/home/")


def test_claude_code_plan_approval_round_is_kept_as_approval_state() -> None:
    natives: list[dict[str, object]] = [{"role": "user", "content": "Plan the refactor"}]
    natives += [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "p1",
                    "name": "ExitPlanMode",
                    "input": {"plan": "1. split"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "p1",
                    "content": "User has approved exiting plan mode. You can now proceed.",
                }
            ],
        },
    ]
    for i in range(6):
        natives += [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"t{i}",
                        "name": "Read",
                        "input": {"file_path": f"src/m{i}.py"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x = 1\n" * 200}
                ],
            },
        ]
    natives.append({"role": "user", "content": "go on"})
    out, report = compress_for_sync(
        natives, CompressionPolicy(threshold_tokens=1500, target_tokens=1500), format="anthropic"
    )
    assert report.messages_removed > 0
    assert natives[1] in out and natives[2] in out  # the approved plan stays
