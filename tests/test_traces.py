"""The recorded-session loaders (agent_adapter.cli._loaders) on the real data in ../shared/data."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_adapter.cli._loaders import (
    NO_RESULT_TEXT,
    Trace,
    load_claude_code,
    load_mini_swe_agent,
    load_swe_agent,
    load_tau_bench,
    load_trace,
)
from agent_adapter.cli._openai_runs import _repair_openai
from agent_adapter.context._pairing import Pairing

Message = dict[str, Any]

OPENAI_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}
BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)


def tokens(messages: list[Message]) -> int:
    """Rough token count used across the project's data notes: len(json.dumps) / 4."""
    return len(json.dumps(messages)) // 4


# ------------------------------------------------------------------------------------------
# provider validity checks


def assert_openai_valid(messages: list[Message], where: str) -> None:
    """Chat Completions shape, and the library's one pairing rule (``_pairing.Pairing``) on
    the native messages: a pending round only as the very last message, unique ids per
    message."""
    assert messages, f"{where}: no messages"
    pairing = Pairing()
    for i, m in enumerate(messages):
        at = f"{where}: message {i}"
        assert set(m) <= OPENAI_KEYS, f"{at}: non-OpenAI keys {set(m) - OPENAI_KEYS}"
        assert m["role"] in ("system", "user", "assistant", "tool"), at
        content = m.get("content")
        assert content is None or isinstance(content, str | list), at
        if isinstance(content, list):
            assert all(p.get("type") == "text" and isinstance(p["text"], str) for p in content), at
        if m["role"] == "tool":
            pairing.result(i, m["tool_call_id"])
            continue
        for call in m.get("tool_calls") or []:
            assert call["type"] == "function", at
            assert isinstance(call["function"]["name"], str), at
            json.loads(call["function"]["arguments"])
        # ids are unique within one message only: tau-bench and SWE-agent reuse them later
        pairing.turn(i, [call["id"] for call in m.get("tool_calls") or []])
    pairing.end()
    problems = [
        p
        for p in pairing.problems
        if not (p.rule == "calls_pending_at_end" and p.index == len(messages) - 1)
    ]
    assert not problems, f"{where}: {problems}"


def assert_anthropic_valid(messages: list[Message], where: str) -> None:
    """Messages API: only role/content, alternating roles from user, non-blank content, and
    the one pairing rule (``_pairing.Pairing``) fed block by block, so every tool_use is
    answered by the leading tool_result blocks of the very next user message."""
    assert messages, f"{where}: no messages"
    assert messages[0]["role"] == "user", f"{where}: first message is not user"
    pairing = Pairing()
    item_message: list[int] = []  # Pairing item -> message index
    all_use_ids: set[str] = set()
    for i, m in enumerate(messages):
        at = f"{where}: message {i}"
        assert set(m) == {"role", "content"}, f"{at}: keys {set(m)}"
        assert m["role"] == ("user" if i % 2 == 0 else "assistant"), f"{at}: roles do not alternate"
        content = m["content"]
        if isinstance(content, str):
            assert content.strip(), f"{at}: blank string content"
            blocks: list[Message] = [{"type": "text", "text": content}]
        else:
            assert content, f"{at}: empty content list"
            blocks = content
        for block in blocks:
            if block["type"] == "text":
                assert block["text"].strip(), f"{at}: whitespace-only text block"
        if m["role"] == "assistant":
            assert all(b["type"] != "tool_result" for b in blocks), f"{at}: tool_result"
            use_ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
            assert not all_use_ids & set(use_ids), f"{at}: duplicate tool_use id"
            all_use_ids.update(use_ids)
            pairing.turn(len(item_message), use_ids)
            item_message.append(i)
            continue
        for block in blocks:
            if block["type"] == "tool_result":
                pairing.result(len(item_message), block["tool_use_id"])
            else:  # anything before a result ends the round: results come first
                pairing.turn(len(item_message), [])
            item_message.append(i)
    pairing.end()
    assert not pairing.problems, f"{where}: " + ", ".join(
        f"message {item_message[p.index]}: {p.rule} {list(p.call_ids)}" for p in pairing.problems
    )


# ------------------------------------------------------------------------------------------
# dataset file lists


def mini_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"))


def swe_agent_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "swe-agent").rglob("*.traj"))


def claude_code_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "claude-code-spotter").rglob("*.jsonl"))


def tau_bench_file(data_dir: Path) -> Path:
    return data_dir / "tau-bench" / "gpt-4o-airline.json"


def jsonl_records(path: Path) -> Iterator[Message]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


# ------------------------------------------------------------------------------------------
# mini-swe-agent


def test_mini_swe_agent_all_files_valid(data_dir: Path) -> None:
    files = mini_files(data_dir)
    assert len(files) == 30
    for path in files:
        source = json.loads(path.read_text(encoding="utf-8"))["messages"]
        messages = load_mini_swe_agent(path)
        assert_openai_valid(messages, path.name)
        assert len(messages) == len(source), path.name
        assert "extra" not in json.dumps([list(m) for m in messages])
        # the system prompt and the task stay as they are
        assert messages[:2] == [{"role": m["role"], "content": m["content"]} for m in source[:2]]
        for i, (out, src) in enumerate(zip(messages, source, strict=True)):
            if out.get("tool_calls"):
                (call,) = out["tool_calls"]
                assert call["id"] == f"call_{i}"
                assert call["function"]["name"] == "bash"
                command = json.loads(call["function"]["arguments"])["command"]
                (body,) = BASH_BLOCK.findall(src["content"])
                assert command == body.strip()
                assert "```bash" not in out["content"]
            elif out["role"] == "assistant":
                # zero or several blocks: mini-swe-agent answered with a format error whose
                # count matches the regex used by the loader
                found = len(BASH_BLOCK.findall(src["content"]))
                assert found != 1
                assert f"found {found} actions" in messages[i + 1]["content"]
                assert messages[i + 1]["role"] == "user"
        # every run ends with the submit command answered by its output
        assert messages[-1]["role"] == "tool", path.name


def test_mini_swe_agent_pytest_6197_size(data_dir: Path) -> None:
    path = data_dir / "mini-swe-agent-gemini3pro" / "trajs" / "pytest-dev__pytest-6197.traj.json"
    trace = load_trace(path)
    assert (trace.format, trace.source, trace.name) == (
        "openai",
        "mini-swe-agent",
        "pytest-dev__pytest-6197",
    )
    assert len(trace.messages) == 186
    assert 40_000 < tokens(trace.messages) < 160_000  # ~88k by len(json)/4
    calls = sum(len(m.get("tool_calls") or []) for m in trace.messages)
    assert calls > 50
    assert sum(m["role"] == "tool" for m in trace.messages) == calls


def test_mini_swe_agent_thought_text_kept(tmp_path: Path) -> None:
    data = {
        "trajectory_format": "mini-swe-agent-1",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls -la\n```", "extra": {}},
            {"role": "user", "content": "<returncode>0</returncode><output>x</output>"},
            {"role": "assistant", "content": "```bash\na\n```\n```bash\nb\n```"},
            {"role": "user", "content": "found 2 actions"},
            {"role": "assistant", "content": "```bash\necho done\n```"},
        ],
    }
    assert _load_tmp_json(tmp_path, data).messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "THOUGHT: look",
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls -la"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": "<returncode>0</returncode><output>x</output>",
        },
        {"role": "assistant", "content": "```bash\na\n```\n```bash\nb\n```"},
        {"role": "user", "content": "found 2 actions"},
        # a final block with no observation stays text: no unanswered call is emitted
        {"role": "assistant", "content": "```bash\necho done\n```"},
    ]


# ------------------------------------------------------------------------------------------
# SWE-agent


def test_swe_agent_all_files_valid(data_dir: Path) -> None:
    files = swe_agent_files(data_dir)
    assert len(files) == 22
    function_calling = 0
    for path in files:
        history = json.loads(path.read_text(encoding="utf-8"))["history"]
        messages = load_swe_agent(path)
        assert_openai_valid(messages, str(path.relative_to(data_dir)))
        assert load_trace(path).source == "swe-agent"
        if any(m.get("tool_calls") for m in history):
            function_calling += 1
            # native ids are kept
            source_ids = [c["id"] for m in history for c in m.get("tool_calls") or []]
            assert [c["id"] for m in messages for c in m.get("tool_calls") or []] == source_ids
            assert len(messages) == len(history)
        else:
            # the text command of every answered step becomes a bash call with SWE-agent's
            # own parsed `action`
            for m in messages:
                for call in m.get("tool_calls") or []:
                    i = int(call["id"].removeprefix("call_"))
                    command = json.loads(call["function"]["arguments"])["command"]
                    assert command == history[i]["action"].strip(), path
            # only the final submit (no observation) stays text
            text_only = [m for m in messages if m["role"] == "assistant" and "tool_calls" not in m]
            assert text_only == [messages[-1]], path
    assert function_calling == 5


def test_swe_agent_conversions(tmp_path: Path) -> None:
    history = [
        {"role": "system", "content": "sys", "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": [{"type": "text", "text": "task", "cache_control": {}}]},
        {
            "role": "assistant",
            "content": "run it",
            "thought": "run it",
            "action": "ls",
            "tool_calls": [
                {"function": {"arguments": "{}", "name": "a"}, "id": "x1", "type": "function"},
                {"function": {"arguments": "{}", "name": "b"}, "id": "x2", "type": "function"},
            ],
        },
        {"role": "tool", "content": "both", "tool_call_ids": ["x1", "x2"], "agent": "main"},
    ]
    path = tmp_path / "fc.traj"
    path.write_text(json.dumps({"history": history}))
    assert load_swe_agent(path) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "task"}]},
        {
            "role": "assistant",
            "content": "run it",
            "tool_calls": [
                {"id": "x1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
                {"id": "x2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "x1", "content": "both"},
        {"role": "tool", "tool_call_id": "x2", "content": "both"},
    ]
    text_history = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "Look.\n```\nedit 1:1\n```py\nx\n```\nend_of_edit\n```"},
        {"role": "user", "content": "edited"},
        {"role": "assistant", "content": "Two.\n```\nls\n```\n```\npwd\n```"},
        {"role": "user", "content": "error"},
        {"role": "assistant", "content": "XML <command>\nsubmit\n</command>"},
        {"role": "user", "content": "done"},
    ]
    path.write_text(json.dumps({"history": text_history}))
    messages = load_swe_agent(path)
    assert_openai_valid(messages, "text run")
    assert messages[2]["content"] == "Look."
    command = json.loads(messages[2]["tool_calls"][0]["function"]["arguments"])["command"]
    assert command == "edit 1:1\n```py\nx\n```\nend_of_edit"  # nested fence kept
    assert messages[3] == {"role": "tool", "tool_call_id": "call_2", "content": "edited"}
    assert messages[4:6] == text_history[4:6]  # two blocks: left as text
    assert messages[6]["content"] == "XML"
    assert messages[7] == {"role": "tool", "tool_call_id": "call_6", "content": "done"}


# ------------------------------------------------------------------------------------------
# tau-bench


def test_tau_bench_all_dialogs_valid(data_dir: Path) -> None:
    path = tau_bench_file(data_dir)
    dialogs = load_tau_bench(path)
    assert len(dialogs) == 200
    raw = json.loads(path.read_text(encoding="utf-8"))
    for i, (messages, item) in enumerate(zip(dialogs, raw, strict=True)):
        assert messages == item["traj"]
        assert_openai_valid(messages, f"tau-bench[{i}]")
    assert sum(m["role"] == "tool" for d in dialogs for m in d) > 1000
    # surprising but real: a call id can come back in a later call of the same dialog
    reused = [d for d in dialogs if len(ids := _call_ids(d)) != len(set(ids))]
    assert len(reused) == 49


def _call_ids(messages: list[Message]) -> list[str]:
    return [c["id"] for m in messages for c in m.get("tool_calls") or []]


def test_tau_bench_load_trace_index(data_dir: Path) -> None:
    path = tau_bench_file(data_dir)
    first = load_trace(path)
    last = load_trace(path, index=199)
    assert (first.source, first.format, first.name) == ("tau-bench", "openai", "gpt-4o-airline[0]")
    assert last.name == "gpt-4o-airline[199]"
    assert last.messages == load_tau_bench(path)[199]
    with pytest.raises(ValueError, match="index 200 out of range"):
        load_trace(path, index=200)


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


# ------------------------------------------------------------------------------------------
# plain message files and malformed input


def _load_tmp_json(tmp_path: Path, data: Any) -> Trace:
    path = tmp_path / "sample.json"
    path.write_text(json.dumps(data))
    return load_trace(path)


def test_plain_json_and_jsonl(tmp_path: Path) -> None:
    openai = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    anthropic = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "1", "name": "x", "input": {}}],
        },
    ]
    trace = _load_tmp_json(tmp_path, openai)
    assert (trace.format, trace.source, trace.name, trace.messages) == (
        "openai",
        "json",
        "sample",
        openai,
    )
    assert _load_tmp_json(tmp_path, anthropic).format == "anthropic"
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in anthropic) + "\n")
    trace = load_trace(path)
    assert (trace.format, trace.source, trace.name, trace.messages) == (
        "anthropic",
        "jsonl",
        "chat",
        anthropic,
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a": 1}', "unknown trace shape"),
        ('"just a string"', "unknown trace shape"),
        ("[1, 2, 3]", "item 0 is a int"),
        ("[]", "no messages"),
        ("", "empty"),
        ("  \n\n", "empty"),
        ("{not json", "not valid JSON"),
        ('{"role": "user", "content": "a"}\n{oops', "line 2 is not valid JSON"),
        ('[{"content": "no role"}]', "no string 'role'"),
        ('{"trajectory_format": "mini-swe-agent-1", "messages": 3}', "'messages' is missing"),
        ('{"history": [{"role": "tool", "content": "x"}]}', "without tool_call_ids"),
    ],
)
def test_malformed_input_raises(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(problem)) as info:
        load_trace(path)
    assert str(path) in str(info.value)


def test_specific_loaders_reject_other_kinds(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("[1]")
    for loader in (load_mini_swe_agent, load_swe_agent, load_tau_bench):
        with pytest.raises(ValueError, match=re.escape(str(path))):
            loader(path)
    path.write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_claude_code(path)
    with pytest.raises(ValueError, match="cannot read"):
        load_trace(tmp_path / "missing.json")


def test_plain_gemini_contents_are_detected(tmp_path: Path) -> None:
    contents = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]},
    ]
    trace = _load_tmp_json(tmp_path, contents)
    assert (trace.format, trace.source, trace.messages) == ("gemini", "json", contents)
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps([*contents, {"role": "tool", "tool_call_id": "x", "content": ""}]))
    with pytest.raises(ValueError, match=re.escape(str(path))):
        load_trace(path)


def _tool(call_id: str, content: str = "out") -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _calls(*ids: str) -> Message:
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": "", "tool_calls": calls}


def _placeholder(call_id: str) -> Message:
    return _tool(call_id, NO_RESULT_TEXT)


USER: Message = {"role": "user", "content": "u"}


@pytest.mark.parametrize(
    ("messages", "expected", "stats"),
    [
        pytest.param(  # a call unanswered before the next message: a placeholder after the rest
            [USER, _calls("a", "b"), _tool("a"), USER],
            [USER, _calls("a", "b"), _tool("a"), _placeholder("b"), USER],
            {"missing tool result added": 1},
            id="missing-result",
        ),
        pytest.param(  # a result answering no open call becomes a user message
            [USER, _tool("z", "late")],
            [USER, {"role": "user", "content": "[tool result z] late"}],
            {"orphan tool message -> user": 1},
            id="stray-result",
        ),
        pytest.param(  # a stray result inside a round ends it: the rest of the round too
            [USER, _calls("a", "b"), _tool("z"), _tool("a"), USER],
            [
                USER,
                _calls("a", "b"),
                _placeholder("a"),
                _placeholder("b"),
                {"role": "user", "content": "[tool result z] out"},
                {"role": "user", "content": "[tool result a] out"},
                USER,
            ],
            {"missing tool result added": 2, "orphan tool message -> user": 2},
            id="stray-inside-a-round",
        ),
        pytest.param(  # partly answered at the very end: answered in full
            [USER, _calls("a", "b"), _tool("b")],
            [USER, _calls("a", "b"), _tool("b"), _placeholder("a")],
            {"missing tool result added": 1},
            id="partly-answered-at-end",
        ),
        pytest.param(  # the last message's calls wait for their results: left alone
            [USER, _calls("a")],
            [USER, _calls("a")],
            {},
            id="pending-at-end",
        ),
    ],
)
def test_openai_repair_follows_the_pairing_rule(
    messages: list[Message], expected: list[Message], stats: dict[str, int]
) -> None:
    repaired = json.loads(json.dumps(messages))
    counts: Counter[str] = Counter()
    _repair_openai(repaired, counts)
    assert repaired == expected
    assert dict(counts) == stats
    assert_openai_valid(repaired, "repaired")
