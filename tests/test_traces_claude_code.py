"""The Claude Code loader (agent_adapter.cli._loaders) on the real data in ../shared/data,
and its repairs of synthetic transcripts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _trace_cases import Message, assert_anthropic_valid, claude_code_files, jsonl_records, tokens
from agent_adapter.cli._loaders import NO_RESULT_TEXT, load_claude_code, load_trace

# ------------------------------------------------------------------------------------------
# Claude Code


def test_claude_code_all_files_valid(data_dir: Path) -> None:
    files = claude_code_files(data_dir)
    assert len(files) == 20  # 5 long + 3 short sessions, 12 subagent transcripts
    assert sum("subagents" in p.parts for p in files) == 12
    for path in files:
        where = str(path.relative_to(data_dir))
        messages = load_claude_code(path)
        assert_anthropic_valid(messages, where)
        assert load_trace(path).source == "claude-code"
        records = list(jsonl_records(path))
        # every tool_use and thinking block of the file is kept exactly once, unchanged
        # (subagent transcripts are all sidechain lines and are kept whole)
        kept = [
            b
            for m in messages
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] in ("tool_use", "thinking")
        ]
        source = [
            b
            for r in records
            if r.get("type") == "assistant" and "message" in r
            for b in r["message"]["content"]
            if b["type"] in ("tool_use", "thinking")
        ]
        assert kept == source, where
        results = [
            b
            for m in messages
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        ]
        # the real data records a result for every tool use (rejected/interrupted ones as
        # is_error results), so no placeholder is needed
        assert not [b for b in results if b["content"] == NO_RESULT_TEXT], where


def test_claude_code_long_session_shape(data_dir: Path) -> None:
    path = data_dir / "claude-code-spotter" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    messages = load_claude_code(path)
    assert len(messages) > 300
    assert 50_000 < tokens(messages) < 400_000
    texts = [
        b.get("text", "") if isinstance(b, dict) else b
        for m in messages
        if m["role"] == "user"
        for b in ([m["content"]] if isinstance(m["content"], str) else m["content"])
    ]
    # the real compaction summary is part of the conversation
    assert any("This session is being continued from a previous conversation" in t for t in texts)


def test_claude_code_repairs(tmp_path: Path) -> None:
    def line(kind: str, content: Any, message_id: str | None = None, **extra: Any) -> str:
        message: Message = {"role": kind, "content": content}
        if message_id:
            message["id"] = message_id
        return json.dumps({"type": kind, "message": message, **extra})

    use = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}, "caller": {}}
    use2 = {"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}
    result2 = {"type": "tool_result", "tool_use_id": "t2", "content": "ok"}
    stray = {"type": "tool_result", "tool_use_id": "zz", "content": [{"type": "text", "text": "s"}]}
    thinking = {"type": "thinking", "thinking": "hm", "signature": "sig"}
    lines = [
        json.dumps({"type": "file-history-snapshot", "snapshot": {}}),
        line("assistant", [{"type": "text", "text": "hello"}], "m0"),
        line("user", "first", isSidechain=True),
        line("assistant", [{"type": "text", "text": "\n\n"}], "m1"),
        line("assistant", [thinking], "m1"),
        line("assistant", [use], "m1"),
        line("user", "interrupted"),
        line("user", [stray]),
        line("assistant", [use2], "m2"),
        line("user", [{"type": "text", "text": "note"}]),
        line("user", [result2]),
        line("assistant", [use], "m3"),
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    missing: Message = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": NO_RESULT_TEXT,
        "is_error": True,
    }
    expected = [
        {"role": "user", "content": "[conversation start]"},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}, thinking, use]},
        {
            "role": "user",
            "content": [
                missing,
                {"type": "text", "text": "interrupted"},
                {"type": "text", "text": "[tool result zz] s"},
            ],
        },
        {"role": "assistant", "content": [use2]},
        {"role": "user", "content": [result2, {"type": "text", "text": "note"}]},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [missing]},
    ]
    trace = load_trace(path)
    assert (trace.format, trace.source, trace.name) == ("anthropic", "claude-code", "session")
    assert trace.messages == expected
    # tool_use t1 appears twice in this synthetic file; the structural checks still hold
    assert [m["role"] for m in trace.messages] == ["user", "assistant"] * 3 + ["user"]


def test_claude_code_merges_one_response_across_its_tool_results(tmp_path: Path) -> None:
    use_a = {"type": "tool_use", "id": "a", "name": "Read", "input": {}}
    use_b = {"type": "tool_use", "id": "b", "name": "Read", "input": {}}
    res_a = {"type": "tool_result", "tool_use_id": "a", "content": "A"}
    res_b = {"type": "tool_result", "tool_use_id": "b", "content": "B"}
    rows = [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "message": {"role": "assistant", "id": "m", "content": [use_a]}},
        {"type": "user", "message": {"role": "user", "content": [res_a]}},
        {"type": "assistant", "message": {"role": "assistant", "id": "m", "content": [use_b]}},
        {"type": "user", "message": {"role": "user", "content": [res_b]}},
    ]
    path = tmp_path / "parallel.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    assert load_claude_code(path) == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use_a, use_b]},
        {"role": "user", "content": [res_a, res_b]},
    ]


def test_claude_code_session_keeps_the_task_object_at_a_quarter(data_dir: Path) -> None:
    # regression (bench/quality.py, ae4a77f8 at 25%): the task came back merged with the next
    # user message into a new dict; the Messages API combines adjacent user turns itself, so
    # the caller's task native stays the very object
    from agent_adapter.context import CompressionPolicy, compress_for_sync
    from agent_adapter.context.formats import check, strip_reserved

    path = data_dir / "claude-code-spotter" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    messages = load_trace(path).messages
    target = tokens(messages) // 4
    policy = CompressionPolicy(target_tokens=target, threshold_tokens=target)
    out, report = compress_for_sync(messages, policy, format="anthropic")
    assert report.reached_target
    assert out[0] is messages[0]
    assert check(strip_reserved(out), "anthropic") == []
