"""Shared by the ``test_traces*`` modules: provider validity checks on native messages, the
dataset file lists of ../shared/data, and loading a JSON file written to a tmp path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_adapter.cli._loaders import Trace, load_trace
from agent_adapter.context._pairing import Pairing

Message = dict[str, Any]

OPENAI_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}


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


def _load_tmp_json(tmp_path: Path, data: Any) -> Trace:
    path = tmp_path / "sample.json"
    path.write_text(json.dumps(data))
    return load_trace(path)
