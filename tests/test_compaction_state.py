"""Compact once, then append (issue 20): a conversation's compaction state keeps the request's
prefix byte-identical between compactions, in every format; a branch, a rewind or a lost
state compress fresh; the output is the same in every process."""

from __future__ import annotations

import copy
import itertools
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _replay import FORMATS, format_name, natives
from agent_adapter import RunContext
from agent_adapter._messages import Message, ToolCall
from agent_adapter.context import (
    CompactionStates,
    CompressionPolicy,
    CutLongMessages,
    compress_for_sync,
)

THRESHOLD, TARGET = 6_000, 4_000


def _conversation(rounds: int) -> list[Message]:
    out = [Message("system", "You are a coding agent."), Message("user", "fix the bug")]
    for n in range(rounds):
        cid = f"call_{n}"
        args = json.dumps({"command": f"cat src/m{n}.py"})
        out.append(Message("assistant", f"step {n}", tool_calls=(ToolCall(cid, "bash", args),)))
        out.append(
            Message("tool", f"src/m{n}.py\n" + "x = 1\n" * (40 + 30 * (n % 4)), tool_call_id=cid)
        )
    return out


def _calls(items: list[Any], fmt: str) -> list[list[Any]]:
    """The list an agent sends on each call: everything before each assistant turn, plus
    the whole list at the end."""
    from _replay import messages_of

    cuts = []
    for i in range(1, len(items)):
        loaded = messages_of(fmt, [items[i]])
        if loaded and loaded[0].role == "assistant":
            cuts.append(i)
    return [items[:i] for i in cuts] + [items]


def _dumps(items: list[Any]) -> str:
    return json.dumps([_plain(n) for n in items], sort_keys=True, default=repr)


def _plain(native: Any) -> Any:
    dump = getattr(native, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(native, Message):
        return [native.role, native.text, [c.id for c in native.tool_calls], native.tool_call_id]
    return native


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_replay_keeps_the_prefix_byte_identical_between_compactions(fmt: str) -> None:
    items = natives(fmt, _conversation(60))
    policy = CompressionPolicy(threshold_tokens=THRESHOLD, target_tokens=TARGET)
    states = CompactionStates()
    ctx = RunContext(thread_id=f"replay-{fmt}")
    prev: list[Any] | None = None
    compactions = 0
    grown = 0
    for history in _calls(items, fmt):
        out, report = compress_for_sync(
            history, policy, format=format_name(fmt), ctx=ctx, states=states
        )
        assert report.tokens_after <= max(THRESHOLD, report.tokens_before)
        if report.steps:
            compactions += 1
        elif prev is not None:
            # between compactions: the previous request, byte for byte, then the new messages
            assert all(a is b for a, b in zip(prev, out, strict=False)), "the prefix moved"
            assert _dumps(out[: len(prev)]) == _dumps(prev)
            assert report.prefix_tokens > 0
        prev = out
    _, whole = compress_for_sync(
        items, CompressionPolicy(threshold_tokens=10**9), states=False, format=format_name(fmt)
    )
    grown = whole.tokens_before
    assert compactions >= 1
    assert compactions <= math.ceil(grown / (THRESHOLD - TARGET)) + 1


def test_without_the_state_every_call_over_the_threshold_compresses_again() -> None:
    items = natives("openai", _conversation(60))
    policy = CompressionPolicy(threshold_tokens=THRESHOLD, target_tokens=TARGET)
    stateless = sum(
        bool(compress_for_sync(h, policy, states=False)[1].steps) for h in _calls(items, "openai")
    )
    states = CompactionStates()
    stateful = sum(
        bool(compress_for_sync(h, policy, states=states, conversation="c")[1].steps)
        for h in _calls(items, "openai")
    )
    assert stateful * 3 < stateless, (stateful, stateless)


def _compacted(states: CompactionStates) -> tuple[list[Any], CompressionPolicy]:
    items = natives("openai", _conversation(40))
    policy = CompressionPolicy(threshold_tokens=THRESHOLD, target_tokens=TARGET)
    _, report = compress_for_sync(items, policy, states=states, conversation="c")
    assert report.steps
    return items, policy


@pytest.mark.parametrize("how", ["edited", "rewound", "branched"])
def test_a_history_that_does_not_extend_the_remembered_one_is_compressed_fresh(how: str) -> None:
    states = CompactionStates()
    items, policy = _compacted(states)
    if how == "edited":
        other = [
            *items[:5],
            {**items[5], "content": "edited " + str(items[5]["content"])},
            *items[6:],
        ]
    elif how == "rewound":
        other = items[: len(items) - 10]
    else:
        other = [*items[:30], {"role": "user", "content": "actually, do something else"}]
    out, report = compress_for_sync(other, policy, states=states, conversation="c")
    want, want_report = compress_for_sync(other, policy, states=False)
    assert _dumps(out) == _dumps(want)
    assert report.tokens_after == want_report.tokens_after


def test_losing_the_state_costs_one_fresh_compression_never_a_wrong_request() -> None:
    states = CompactionStates()
    items, policy = _compacted(states)
    grown = [*items, *natives("openai", _conversation(44)[len(_conversation(40)) :])]
    states.forget()
    out, _ = compress_for_sync(grown, policy, states=states, conversation="c")
    want, _ = compress_for_sync(grown, policy, states=False)
    assert _dumps(out) == _dumps(want)


def test_the_same_history_and_policy_give_the_same_output_in_every_process(
    tmp_path: Path,
) -> None:
    items = natives("openai", _conversation(40))
    path = tmp_path / "history.json"
    path.write_text(json.dumps(items))
    script = (
        "import json, sys\n"
        "from agent_adapter.context import CompressionPolicy, compress_for_sync\n"
        "items = json.load(open(sys.argv[1]))\n"
        f"policy = CompressionPolicy(threshold_tokens={THRESHOLD}, target_tokens={TARGET})\n"
        "out, _ = compress_for_sync(items, policy)\n"
        "print(json.dumps(out, sort_keys=True))\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script, str(path)],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": "/usr/bin:/bin"},
        ).stdout
        for seed in (1, 2)
    ]
    here, _ = compress_for_sync(
        json.loads(path.read_text()),
        CompressionPolicy(threshold_tokens=THRESHOLD, target_tokens=TARGET),
        states=False,
    )
    assert runs[0] == runs[1] == json.dumps(here, sort_keys=True) + "\n"


def test_a_policy_holding_a_shared_store_has_the_same_key_in_every_process(
    tmp_path: Path,
) -> None:
    # a step's store is named by its file (or server), not its address, so workers that
    # share a state also find it under the same policy
    script = (
        "import sys\n"
        "from agent_adapter.context import CompressionPolicy, ShrinkToolResults, SQLiteStore\n"
        "from agent_adapter.context._stateful import _policy_key\n"
        "step = ShrinkToolResults(save_to=SQLiteStore(sys.argv[1]))\n"
        "print(_policy_key(CompressionPolicy(target_tokens=4000, steps=[step]), None))\n"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / "r.sqlite3")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for _ in range(2)
    }
    assert len(keys) == 1 and next(iter(keys)).strip()


# --- found by a new-user trial: each its exact input ------------------------------------------


def _tool_history(big_first: bool = True) -> list[dict[str, Any]]:
    big = "line of output xyz\n" * 1000
    h: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task: fix bug"},
    ]
    for i in range(4):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "run", "arguments": "{}"}}
        h.append({"role": "assistant", "content": None, "tool_calls": [call]})
        h.append({"role": "tool", "tool_call_id": f"c{i}", "content": big if i == 0 else "ok"})
    h.append({"role": "user", "content": "continue"})
    return h


def test_an_older_message_edited_in_place_is_sent_as_edited() -> None:
    policy = CompressionPolicy(threshold_tokens=3000, target_tokens=2000)
    states = CompactionStates()
    h = _tool_history()
    compress_for_sync(h, policy, states=states, conversation="t1")  # shortens h[3]
    h[3]["content"] = "REDACTED"  # the caller redacts the old tool output in place
    h += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "thanks"}]
    out, _ = compress_for_sync(h, policy, states=states, conversation="t1")
    assert out[3]["content"] == "REDACTED"


def test_the_last_turn_grown_in_place_is_counted_and_compressed() -> None:
    policy = CompressionPolicy(threshold_tokens=3000, target_tokens=2000)
    states = CompactionStates()
    h = _tool_history()
    h[-1] = {"role": "user", "content": [{"type": "text", "text": "go on"}]}
    compress_for_sync(h, policy, states=states, conversation="t2")
    h[-1]["content"].append({"type": "text", "text": "pasted log\n" * 1500})  # in place
    out, report = compress_for_sync(h, policy, states=states, conversation="t2")
    want, _ = compress_for_sync(h, policy, states=False)
    assert _dumps(out) == _dumps(want)
    assert report.tokens_after == estimate(out)


def estimate(items: list[Any]) -> int:
    from agent_adapter.context import estimate_tokens
    from agent_adapter.context.formats import convert

    return estimate_tokens(convert(items, "openai").messages)


def test_compressing_model_keeps_appending_once_the_provider_reports_usage() -> None:
    import asyncio

    from agent_adapter import ModelRequest, ModelResponse, Usage
    from agent_adapter.context import CompressingModel

    class Port:
        provider, model, context_window = "openai", "gpt-4o", 128_000

        def __init__(self) -> None:
            self.seen: list[list[Message]] = []

        async def generate(self, request: ModelRequest) -> ModelResponse:
            self.seen.append(list(request.messages))
            est = sum(len(m.text) for m in request.messages) // 4
            return ModelResponse(
                message=Message("assistant", "ok"), usage=Usage(input_tokens=int(est * 1.3))
            )

        async def stream(self, request: ModelRequest) -> Any:
            raise NotImplementedError

        def cache_key_fields(self) -> dict[str, Any]:
            return {}

    port = Port()
    model = CompressingModel(port, CompressionPolicy(threshold_tokens=3000, target_tokens=2000))
    ctx = RunContext(thread_id="usage")

    async def run() -> None:
        h = [Message("system", "sys"), Message("user", "task")]
        for i in range(30):
            h.append(Message("assistant", "", tool_calls=(ToolCall(f"c{i}", "run", "{}"),)))
            h.append(Message("tool", f"result {i} " + "x" * 1200, tool_call_id=f"c{i}"))
            await model.generate(ModelRequest(messages=list(h), ctx=ctx))

    asyncio.run(run())
    appended = sum(
        len(b) > len(a) and all(x is y for x, y in zip(a, b, strict=False))
        for a, b in itertools.pairwise(port.seen)
    )
    assert appended >= 18, appended  # a fresh compression on every call past the threshold: 6


def test_pinned_messages_are_kept_whatever_an_earlier_call_remembered() -> None:
    policy = CompressionPolicy(threshold_tokens=3000, target_tokens=2000)
    states = CompactionStates()
    h: list[dict[str, Any]] = [{"role": "system", "content": "s"}, {"role": "user", "content": "t"}]
    for i in range(40):
        h += [{"role": "assistant", "content": f"step {i} " + "y" * 300}]
        h += [{"role": "user", "content": f"more {i}"}]
    h[7] = {"role": "user", "content": "KEEP-2"}
    keep = h[7]
    compress_for_sync(h, policy, states=states, conversation="t4")
    out, _ = compress_for_sync(
        h, policy, states=states, conversation="t4", pinned=lambda m: m is keep
    )
    assert any(n is keep for n in out)


def test_a_fresh_compression_still_reports_the_prefix_it_shares() -> None:
    policy = CompressionPolicy(threshold_tokens=3000, target_tokens=2000)
    states = CompactionStates()
    h = _tool_history()
    compress_for_sync(h, policy, states=states, conversation="t7")
    h[5] = {"role": "tool", "tool_call_id": "c1", "content": "replaced"}
    out, report = compress_for_sync(h, policy, states=states, conversation="t7")
    assert out[0] is h[0] and out[1] is h[1]
    assert report.prefix_tokens > 0


def test_two_agents_of_one_thread_keep_states_of_their_own() -> None:
    policy = CompressionPolicy(threshold_tokens=3000, target_tokens=2000)
    states = CompactionStates()
    ctx = RunContext(thread_id="t")
    a: list[dict[str, Any]] = [
        {"role": "system", "content": "main"},
        {"role": "user", "content": "A"},
    ]
    b: list[dict[str, Any]] = [
        {"role": "system", "content": "sub"},
        {"role": "user", "content": "B"},
    ]
    fresh = 0
    for i in range(40):
        for h in (a, b):
            h += [{"role": "assistant", "content": f"step {i} " + "y" * 300}]
            h += [{"role": "user", "content": f"more {i}"}]
            _, r = compress_for_sync(h, policy, ctx=ctx, states=states)
            fresh += r.tokens_after < r.tokens_before and r.prefix_tokens == 0
    assert fresh == 0


def test_a_history_reloaded_as_equal_copies_appends_to_what_was_sent() -> None:
    # a caller that rebuilds its history every call (from a database: equal dicts, new
    # objects) extends the remembered one by content: the natives an earlier call changed are
    # sent as they were sent then (byte for byte, thinking included), the rest are its own.
    # (Seen first as a Hypothesis flake: an earlier example's equal history was appended to.)

    def think(i: int) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"think {i}", "signature": "sig=="},
                {"type": "text", "text": "word " * 400},
                {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"p": i}},
            ],
        }

    def result(i: int) -> dict[str, Any]:
        return {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 50}],
        }

    history = [{"role": "user", "content": "fix it"}, think(1), result(1), think(2), result(2)]
    history += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "next"}]
    states = CompactionStates()
    step = CutLongMessages(max_tokens_per_message=50)
    policy = CompressionPolicy(
        threshold_tokens=300, target_tokens=300, recent_turns=1, steps=[step]
    )
    first, report = compress_for_sync(history, policy, format="anthropic", states=states)
    assert report.tokens_after < 300 and first[1] is not history[1]
    new = [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "and"}]
    reloaded = [*copy.deepcopy(history), *new]
    again, _ = compress_for_sync(reloaded, policy, format="anthropic", states=states)
    assert json.dumps(again[: len(first)]) == json.dumps(first)
    changed = [n for n, native in enumerate(first) if native is not history[n]]
    assert changed == [1, 3]
    for n, native in enumerate(again):
        assert native is (first[n] if n in changed else reloaded[n])
