"""The recorded-session loaders (agent_adapter.cli._loaders) on the real data in
../shared/data: mini-swe-agent, SWE-agent and tau-bench (OpenAI chat).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from _trace_cases import (
    Message,
    _load_tmp_json,
    assert_openai_valid,
    mini_files,
    swe_agent_files,
    tau_bench_file,
    tokens,
)
from agent_adapter.cli._loaders import (
    load_mini_swe_agent,
    load_swe_agent,
    load_tau_bench,
    load_trace,
)

BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)


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
