"""Stale reads go first (issue 34, item 2): a file read a later edit or read of the same file
superseded is replaced by a one-line marker naming the path (and its recall call with a
store), on real traces: Claude Code (Read / Edit), mini-swe-agent (``cat`` / ``sed -n`` then
``sed -i`` or a heredoc), SWE-agent (``str_replace_editor`` view then str_replace)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from agent_adapter import Message, ToolCall
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    CompressionPolicy,
    DropStaleReads,
    MemoryStore,
    compress_for_sync,
    recall_tool,
)
from agent_adapter.context._own import stale_path
from agent_adapter.context._steps._extractive import edited_paths, file_access
from agent_adapter.context._steps.stale import stale_reads
from agent_adapter.context.formats import convert, strip_reserved

RECALL = re.compile(r"recall_context\(id='([0-9a-f]{32})'\)")
SESSION = "claude-code-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
MINI = "mini-swe-agent-gemini3pro/trajs/django__django-11133.traj.json"


def _call(name: str, **args: Any) -> ToolCall:
    return ToolCall(id="c", name=name, arguments=json.dumps(args))


def test_file_access_reads_the_calls_arguments() -> None:
    assert file_access(_call("Read", file_path="/w/a.py")) == ("read", "/w/a.py", "")
    assert file_access(_call("Read", file_path="a.py", offset=10, limit=5)) == (
        "read",
        "a.py",
        '{"limit": 5, "offset": 10}',
    )
    assert file_access(_call("Edit", file_path="a.py", old_string="x")) == ("edit", "a.py", "")
    assert file_access(_call("str_replace_editor", command="view", path="/t/a.py")) == (
        "read",
        "/t/a.py",
        "",
    )
    edit = _call("str_replace_editor", command="str_replace", path="/t/a.py")
    assert file_access(edit) == ("edit", "/t/a.py", "")
    assert file_access(_call("bash", command="cat src/a.py")) == ("read", "src/a.py", "")
    assert file_access(_call("bash", command="sed -n '10,40p' src/a.py")) == (
        "read",
        "src/a.py",
        "10,40",
    )
    assert file_access(_call("bash", command="sed -i 's/a/b/' src/a.py")) == (
        "edit",
        "src/a.py",
        "",
    )
    assert file_access(_call("bash", command="python -m pytest tests")) is None
    assert file_access(_call("Grep", path="src", pattern="x")) is None  # a search, no read
    # SWE-agent's view is no edit (it was one before: the tool's name holds "replace")
    viewing = _call("str_replace_editor", command="view", path="/t/a.py")
    view = Message("assistant", "", tool_calls=[viewing])
    assert edited_paths([view]) == set()


def _round(i: int, call: ToolCall, result: str) -> list[Message]:
    call = ToolCall(id=f"c{i}", name=call.name, arguments=call.arguments)
    return [
        Message("assistant", "", tool_calls=[call]),
        Message("tool", result, tool_call_id=f"c{i}", name=call.name),
    ]


def test_partial_reads_go_stale_only_by_the_same_part_an_edit_or_a_whole_read() -> None:
    body = "x = 1\n" * 300
    messages = [
        Message("user", "task"),
        *_round(0, _call("bash", command="sed -n '1,50p' a.py"), body),
        *_round(1, _call("bash", command="sed -n '51,99p' a.py"), body),  # another part
        *_round(2, _call("bash", command="sed -n '1,50p' ./a.py"), body),  # the first again
        *_round(3, _call("Read", file_path="b.py"), body),
        *_round(4, _call("Edit", file_path="/w/b.py"), "ok"),  # another spelling of b.py
        *_round(5, _call("Read", file_path="c.py"), body),
    ]
    assert stale_reads(messages) == {2: ("a.py", "read again"), 8: ("b.py", "edited")}


def test_stale_reads_of_a_real_session_go_first_with_a_tagged_marker(data_dir: Path) -> None:
    trace = load_trace(data_dir / SESSION)
    messages = convert(trace.messages, trace.format).messages
    stale = stale_reads(messages)
    assert len(stale) >= 10
    policy = CompressionPolicy(threshold_tokens=60_000, steps=[DropStaleReads()])
    out, report = compress_for_sync(trace.messages, policy, format=trace.format, states=False)
    after = convert(strip_reserved(out), trace.format).messages
    markers = [m for m in after if m.role == "tool" and stale_path(m.text) is not None]
    assert markers and report.tokens_after < report.tokens_before
    for m in markers:
        assert "\n" not in m.text and stale_path(m.text) in m.text  # one line, the path
        assert m.tool_call_id  # the round stays whole
    newest = [m for m in after if m.role == "tool"][-3:]
    assert not any(stale_path(m.text) for m in newest)  # the recency window is untouched
    # known by the tag, never by its words: a marker edited by hand is the tool's text
    assert stale_path(markers[0].text.replace("out of date", "stale")) is None
    # sent again, the compressed request is left as it is
    again, _ = compress_for_sync(out, policy, format=trace.format, states=False)
    assert strip_reserved(again) == strip_reserved(out)


def test_a_stale_read_is_read_back_from_the_store(data_dir: Path) -> None:
    trace = load_trace(data_dir / MINI)
    store = MemoryStore()
    messages = convert(trace.messages, trace.format).messages
    stale = stale_reads(messages)
    assert all(why == "edited" for _, why in stale.values()) and len(stale) >= 3
    policy = CompressionPolicy(threshold_tokens=8_000, steps=[DropStaleReads(save_to=store)])
    out, _ = compress_for_sync(trace.messages, policy, format=trace.format, states=False)
    after = convert(strip_reserved(out), trace.format).messages
    originals = {m.tool_call_id: m.text for m in messages if m.role == "tool"}
    recall = recall_tool(store)
    read_back = 0
    for m in after:
        if m.role == "tool" and stale_path(m.text) is not None:
            (id_,) = RECALL.findall(m.text)
            text = asyncio.run(recall({"id": id_}, None))  # type: ignore[arg-type]
            assert text == originals[m.tool_call_id]
            read_back += 1
    assert read_back >= 3


def test_swe_agent_open_then_edit_of_the_open_file_is_stale(data_dir: Path) -> None:
    """SWE-agent's windowed editor: ``open f`` shows the file, ``edit 4:4`` (no path) edits
    the file open; the function-calling run's ``open`` / ``edit`` tools the same."""
    runs = sorted((data_dir / "swe-agent").rglob("marshmallow-code__marshmallow-1867.traj"))
    found = 0
    for path in runs:
        trace = load_trace(path)
        messages = convert(trace.messages, trace.format).messages
        stale = stale_reads(messages)
        for i, (name, why) in stale.items():
            assert messages[i].role == "tool" and why == "edited"
            assert name.endswith("src/marshmallow/fields.py")
            found += 1
    assert found >= len(runs) >= 5
