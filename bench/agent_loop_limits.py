"""Agent-loop limits: what the default policy sends in two cases that broke it (issue 19).

1. **Reasoning loops** (items 4): one user prompt, then tool rounds that each open on
   reasoning (OpenAI Responses ``reasoning`` items, as the OpenAI Agents SDK's default model and
   pydantic-ai's Responses model send them; Gemini thought parts, as Google ADK sends them with
   ``include_thoughts``). The first round reads a big file (a 23k-token result), the next
   ones read small ones. The list grows one round a call to ~130k tokens through
   ``compress_for_sync`` with a 24k-token threshold (target 18k); each call sends what the
   previous call sent plus the new round (the caller keeps our output). Reported: the
   biggest request sent, and calls over the threshold.
2. **A newest round over the threshold** (item 5): 60k tokens of old rounds and a newest
   round of 105k tokens in a 128k window (``CompressionPolicy(model_max_tokens=128_000)``:
   80% / 60%, ``if_still_too_long="keep"``), and the same with the README's 3,000 / 2,000
   token policy and one 3,500-token result. Reported: tokens sent, and whether the window holds.

Only the public API is used, so the same script measures an older checkout:

    python bench/agent_loop_limits.py                       # this checkout
    PYTHONPATH=/path/to/old/src python bench/agent_loop_limits.py
"""

from __future__ import annotations

import json
from typing import Any

from agent_adapter import Message, ToolCall
from agent_adapter.context import CompressionPolicy, compress_for_sync

RESULT = "y = compute(x)  # a line of the file\n" * 90  # ~800 tokens a result


def _result(n: int) -> str:
    return RESULT * 29 if n == 0 else RESULT


def _responses_round(n: int) -> list[dict[str, Any]]:
    return [
        {"type": "reasoning", "id": f"rs_{n}", "summary": [], "encrypted_content": "e" * 400},
        {
            "type": "function_call",
            "call_id": f"call_{n}",
            "name": "bash",
            "arguments": json.dumps({"command": f"cat src/m{n}.py"}),
        },
        {"type": "function_call_output", "call_id": f"call_{n}", "output": _result(n)},
    ]


def _gemini_round(n: int) -> list[dict[str, Any]]:
    return [
        {
            "role": "model",
            "parts": [
                {"text": "thinking about the next file " * 20, "thought": True},
                {
                    "function_call": {"name": "bash", "args": {"n": n}, "id": f"c{n}"},
                    "thought_signature": "c2lnbmF0dXJl",
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "function_response": {
                        "name": "bash",
                        "id": f"c{n}",
                        "response": {"output": _result(n)},
                    }
                }
            ],
        },
    ]


def _loop(first: Any, round_of: Any, rounds: int) -> tuple[int, int, int, int]:
    """(calls, calls over the threshold, biggest request, raw size at the end)."""
    policy = CompressionPolicy(threshold_tokens=24_000, target_tokens=18_000)
    sent: list[Any] = [first]
    raw = [first]
    biggest = over = 0
    for n in range(rounds):
        new = round_of(n)
        raw += new
        out, report = compress_for_sync([*sent, *new], policy)
        biggest = max(biggest, report.tokens_after)
        over += report.tokens_after > 24_000
        sent = out
    _, whole = compress_for_sync(raw, CompressionPolicy(threshold_tokens=10**9))
    return rounds, over, biggest, whole.tokens_before


def _big_newest(old_rounds: int, newest_chars: int) -> list[Message]:
    out = [Message("system", "You are a coding agent."), Message("user", "fix it")]
    for n in range(old_rounds):
        out.append(Message("assistant", "", tool_calls=(ToolCall(f"c{n}", "bash", "{}"),)))
        out.append(Message("tool", RESULT[: 4 * 300], tool_call_id=f"c{n}"))
    out.append(Message("assistant", "", tool_calls=(ToolCall("big", "bash", "{}"),)))
    out.append(Message("tool", "z" * newest_chars, tool_call_id="big"))
    return out


def main() -> None:
    print("## Reasoning loops, 24k threshold (caller keeps our output)\n")
    print("| loop | calls | calls sent over 24k | biggest request | whole list at the end |")
    print("|---|---|---|---|---|")
    prompt_r = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "go"}],
    }
    prompt_g = {"role": "user", "parts": [{"text": "go"}]}
    for label, first, fn in (
        ("Responses reasoning items", prompt_r, _responses_round),
        ("Gemini thought parts", prompt_g, _gemini_round),
    ):
        calls, over, biggest, whole = _loop(first, fn, 130)
        print(f"| {label} | {calls} | {over} | {biggest:,} | {whole:,} |")
    print("\n## A newest round over the threshold\n")
    print("| case | tokens in | tokens sent | window | within the window |")
    print("|---|---|---|---|---|")
    cases = (
        ("60k old + 105k newest, 128k window", 200, 4 * 105_000, 128_000),
        ("README 3,000 / 2,000, 3,500-token result", 30, 4 * 3_500, None),
    )
    for label, old, newest, window in cases:
        messages = _big_newest(old, newest)
        if window is None:
            policy = CompressionPolicy(threshold_tokens=3_000, target_tokens=2_000)
        else:
            policy = CompressionPolicy(model_max_tokens=window)
        _, report = compress_for_sync(messages, policy)
        fits = "n/a" if window is None else ("yes" if report.tokens_after <= window else "NO")
        shown = "-" if window is None else f"{window:,}"
        print(
            f"| {label} | {report.tokens_before:,} | {report.tokens_after:,} | {shown} | {fits} |"
        )


if __name__ == "__main__":
    main()
