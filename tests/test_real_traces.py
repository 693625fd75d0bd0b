"""The issue's acceptance cases on real agent traces from ../shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest

from _convo import pairing_problems
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    CompactionStates,
    CompressionPolicy,
    compress_for,
    tiktoken_counter,
)
from agent_adapter.context.formats import convert

MINI = "mini-swe-agent-gemini3pro/trajs"
CASES = [
    (f"{MINI}/pytest-dev__pytest-6197.traj.json", "openai", 186),
    (f"{MINI}/scikit-learn__scikit-learn-25102.traj.json", "openai", 88),
    ("claude-code-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", "anthropic", None),
]


@pytest.mark.parametrize(("path", "fmt", "n"), CASES)
@pytest.mark.parametrize("exact", [False, True])
async def test_brought_under_32k_with_every_call_paired(
    data_dir: Path, path: str, fmt: str, n: int | None, exact: bool
) -> None:
    trace = load_trace(data_dir / path)
    assert trace.format == fmt
    if n is not None:
        assert len(trace.messages) == n
    policy = CompressionPolicy(
        target_tokens=32_000, token_counter=tiktoken_counter() if exact else None
    )
    out, report = await compress_for(trace.messages, policy)
    assert report.tokens_before > 75_000
    assert report.reached_target and report.tokens_after <= 32_000
    back = convert(out, fmt)
    assert pairing_problems(back.messages) == []
    assert pairing_problems(convert(trace.messages, fmt).messages) == []
    kept = {id(m) for m in trace.messages}
    assert sum(id(m) in kept for m in out) > 0  # kept natives are the caller's own objects
    # the opening message (system or task) stays: the same object, or (anthropic) merged with
    # the next user message when everything between them went
    first = trace.messages[0]
    assert out[0] is first or (fmt == "anthropic" and _opens_with(out[0], first))


def _opens_with(merged: dict[str, object], first: dict[str, object]) -> bool:
    content = merged["content"]
    head = first["content"]
    assert isinstance(content, list)
    if isinstance(head, str):
        return content[0] == {"type": "text", "text": head}
    assert isinstance(head, list)
    return content[: len(head)] == head


async def test_newest_message_over_the_target_is_reported_plainly(data_dir: Path) -> None:
    trace = load_trace(data_dir / f"{MINI}/psf__requests-1142.traj.json")
    # a state of its own: another test may have compressed this trace with this policy in
    # the process-wide default states (its report would then say the request was sent again)
    states = CompactionStates()
    out, report = await compress_for(
        trace.messages, CompressionPolicy(target_tokens=32_000), states=states
    )
    assert not report.reached_target
    assert report.protected_tokens > 200_000
    assert "NOT reached" in report.explain() and "protected" in report.explain()
    assert out[-1] is trace.messages[-1]  # the newest turn is untouched
    cut, report = await compress_for(
        trace.messages,
        CompressionPolicy(target_tokens=32_000, if_still_too_long="cut"),
        states=states,
    )
    assert report.reached_target and report.if_still_too_long == "cut"
    assert cut[-1]["tool_call_id"] == trace.messages[-1]["tool_call_id"]
    assert "characters cut" in cut[-1]["content"]
    assert pairing_problems(convert(cut, "openai").messages) == []
