"""The loaders (agent_adapter.cli._loaders) on plain message files and malformed input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from _trace_cases import _load_tmp_json
from agent_adapter.cli._loaders import (
    load_claude_code,
    load_mini_swe_agent,
    load_swe_agent,
    load_tau_bench,
    load_trace,
)

# ------------------------------------------------------------------------------------------
# plain message files and malformed input


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
        ("[1, 2, 3]", "item 0 is an int"),
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
