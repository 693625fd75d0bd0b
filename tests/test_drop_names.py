"""What a dropped round leaves in its note (issue 34, item 5): its error and failure lines
whole, the newest first, and its paths by their whole spelling, those that do not fit folded
by directory."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from _convo import calls, result
from agent_adapter import Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    CompressionPolicy,
    RemoveOldMessages,
    compress,
    compress_for_sync,
    estimate_tokens,
)
from agent_adapter.context._own import note_count, own_kind
from agent_adapter.context._shapes import fold_paths
from agent_adapter.context.formats import convert, strip_reserved

DJANGO_12713 = "mini-swe-agent-gemini3pro/trajs/django__django-12713.traj.json"
#: The last error line django-12713 prints (its last tool result that prints one), 98
#: characters: the note cut it to 80 before.
LAST_ERROR = (
    "UnicodeDecodeError: 'ascii' codec can't decode byte 0xe2 in position 3611: "
    "ordinal not in range(128)"
)


def _notes(messages: list[Message]) -> list[Message]:
    return [m for m in messages if note_count(m) is not None]


def test_the_last_error_line_of_a_real_run_stays_whole_in_the_note(data_dir: Path) -> None:
    """django-12713 at a quarter of its tokens, default pipeline: the round that printed the
    run's last error line is dropped, and its note (one of ours, tagged) holds the line
    whole; the target is still reached and the newest turns stay as they were."""
    trace = load_trace(data_dir / DJANGO_12713)
    messages = convert(trace.messages, trace.format).messages
    tools = [m for m in messages if m.role == "tool" and "Error" in m.text]
    assert LAST_ERROR in tools[-1].text.splitlines()  # the run's last error line
    target = round(estimate_tokens(messages) * 0.25)  # bench/quality.py's 25% budget
    policy = CompressionPolicy(target_tokens=target, threshold_tokens=target)
    out, report = compress_for_sync(trace.messages, policy, format=trace.format, states=False)
    after = convert(strip_reserved(out), trace.format).messages
    assert report.reached_target
    assert not any(LAST_ERROR in m.text for m in after if own_kind(m) is None)  # dropped
    holding = [m for m in _notes(after) if LAST_ERROR in m.text]
    assert holding and all(own_kind(m) == "note" for m in holding)
    assert [m.text for m in after[-3:]] == [m.text for m in messages[-3:]]


def _rounds(n: int, failure: str) -> list[Message]:
    out: list[Message] = []
    for i in range(n):
        out.append(calls(f"c{i}", text=f"step {i}: run the checks"))
        body = "\n".join(f"checked /testbed/src/pkg/sub/module_{i}_{k}.py" for k in range(6))
        body += "\n" + "ok\n" * 200
        if i == n - 1:
            body += f"\n{failure}\n"
        elif i == 1:
            body += "\nValueError: an older error\n"
        out.append(result(f"c{i}", body))
    return out


def test_the_newest_failure_line_goes_in_first_and_paths_left_out_are_folded() -> None:
    """Many paths and two error lines dropped with little room: the newest failure line
    (``FAIL: <prose>``, a script's own report) is in the note whole before anything else,
    the paths that do not fit whole are folded by directory, and ``+N more`` counts what is
    still left out, every folded path counted once."""
    failure = "FAIL: Migration files were created: ['0001_initial.py', '0002_auto.py']"
    msgs = [
        Message("system", "rules"),
        Message("user", "fix the bug"),
        *_rounds(8, failure),
        Message("assistant", "done?"),
        Message("user", "yes, go on"),
    ]
    target = sum(len(m.text) for m in msgs) // 4 // 6
    step = RemoveOldMessages(keep_last=2)
    out, report = asyncio.run(compress(msgs, CompressionPolicy(target_tokens=target, steps=[step])))
    assert report.reached_target
    (note,) = _notes(out)
    lines = note.text.splitlines()[1:]
    assert failure in lines
    folded = [line for line in lines if re.fullmatch(r"/testbed/src/pkg/sub/\{[^}]+\}", line)]
    assert folded  # the listing's fold: the directory once
    whole = [line for line in lines if line.startswith("/testbed/src/pkg/sub/module_")]
    named = len(whole) + sum(line.count(",") + 1 for line in folded)
    more = re.search(r"^\+(\d+) more", note.text, re.M)
    assert named + (int(more[1]) if more else 0) >= 48  # every path named or counted
    assert named > len(whole)


def test_fold_paths_is_the_listings_fold() -> None:
    assert fold_paths(["src/a.py", "src/b.py", "setup.py", "lib/c.py", "src/a.py"]) == [
        ("src/{a.py,b.py}", 2),
        ("setup.py", 1),
        ("lib/c.py", 1),
    ]
