"""The ``gemini`` format on real data: messages of every format dump and load back, and
compress to valid Gemini with signatures byte identical.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from google.genai import types

from _gemini_cases import DICTS, OBJECTS, _run
from agent_adapter._messages import Message, TextPart, ThinkingPart
from agent_adapter.cli._loaders import load_claude_code, load_mini_swe_agent, load_tau_bench
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress,
    compress_for,
    estimate_tokens,
)
from agent_adapter.context.formats import check, convert, strip_reserved
from agent_adapter.context.formats._carrier import RESERVED_KEY
from agent_adapter.context.formats._gemini import check_gemini
from agent_adapter.context.formats._gemini._fields import fields_of as _fields
from agent_adapter.context.formats._registry import _CONVERTERS

# ------------------------------------------------------------------------------------ real data


@functools.cache
def _real(data_dir: Path) -> dict[str, list[list[Message]]]:
    tau = load_tau_bench(data_dir / "tau-bench" / "gpt-4o-airline.json")
    sessions = [
        load_claude_code(p) for p in sorted((data_dir / "claude-code-spotter").glob("*.jsonl"))
    ]
    return {
        "openai": [convert(d, "openai").messages for d in tau],
        "anthropic": [convert(s, "anthropic").messages for s in sessions],
    }


def _real_gemini(data_dir: Path) -> list[list[Message]]:
    """mini-swe-agent runs of Gemini 3 Pro with their real thought signatures: each call
    carries the run's ``reasoning.encrypted`` signature, each turn its thought summary."""
    runs = sorted((data_dir / "mini-swe-agent-gemini3pro" / "trajs").rglob("*.traj.json"))
    out: list[list[Message]] = []
    for path in sorted(runs, key=lambda p: p.stat().st_size)[:6]:
        raw = json.loads(path.read_text())["messages"]
        msgs: list[Message] = []
        for m in convert(load_mini_swe_agent(path), "openai").messages:
            if m.role == "system":
                continue
            if m.tool_calls:
                i = int(m.tool_calls[0].id.split("_")[1])
                details = raw[i]["extra"]["response"]["choices"][0]["message"]
                details = details.get("reasoning_details") or []
                thought = "".join(
                    d.get("text", "") for d in details if d["type"] == "reasoning.text"
                )
                sig = next((d["data"] for d in details if d["type"] == "reasoning.encrypted"), None)
                if sig is not None:
                    signed = replace(m.tool_calls[0], extras={"thought_signature": sig})
                    m = replace(m, tool_calls=(signed,))
                parts = (ThinkingPart(thought), *m.parts) if thought else m.parts
                m = replace(m, content=parts)
            msgs.append(m)
        out.append(msgs)
    return out


def test_dump_then_load_is_identity_for_messages_of_every_format(data_dir: Path) -> None:
    real = _real(data_dir)
    gem = [convert(DICTS.dump_all(m), "gemini").messages for m in _real_gemini(data_dir)]
    lc = _CONVERTERS["langchain"]
    via_lc = [lc.load_all([lc.dump(m) for m in msgs])[0] for msgs in real["openai"][:20]]
    n = 0
    for msgs in [*real["openai"], *real["anthropic"], *gem, *via_lc]:
        for m in msgs:
            assert DICTS.load(DICTS.dump(m), 7) == [m]
            n += 1
    assert n > 7000
    # objects are lossless for what Gemini itself produces
    for msgs in gem:
        for m in convert(OBJECTS.dump_all(msgs), "gemini").messages:
            assert OBJECTS.load(OBJECTS.dump(m), 0) == [m]


def _policies(total: int) -> list[CompressionPolicy]:
    steps: list[Any] = [
        [RemoveDuplicates()],
        [ShrinkToolResults(bigger_than_tokens=40, older_than_turns=1, keep_chars=80)],
        [CutLongMessages(max_tokens_per_message=60)],
        [RemoveOldMessages()],
        [RemoveOldMessages(keep_first=0, keep_last=2)],
        None,  # the default steps
    ]
    return [
        CompressionPolicy(target_tokens=max(1, int(total * ratio)), steps=s)
        for s in steps
        for ratio in (0.7, 0.3, 0.05)
    ]


def _parts(content: Any) -> list[Any]:
    return list(content.parts if isinstance(content, types.Content) else content["parts"])


def _shape(m: Message) -> tuple[Any, ...]:
    return (m.role, m.text, m.tool_calls, m.tool_call_id, m.name)


def _ranges(contents: Sequence[Any]) -> list[tuple[int, int]]:
    return DICTS.load_all(contents)[1]


def _compress_and_check(contents: list[Any]) -> int:
    """Every policy over ``contents``: valid Gemini, kept natives the same objects, changed
    ones keep their calls, thoughts and signatures. Returns the number of runs."""
    assert check_gemini(contents) == []
    snapshot = copy.deepcopy(contents)
    ranges = _ranges(contents)
    all_parts = {id(p) for c in contents for p in _parts(c)}
    runs = 0
    for policy in _policies(estimate_tokens(convert(contents, "gemini").messages)):
        conv = convert(contents, "gemini")
        result, _ = _run(compress(conv.messages, policy))
        out = conv.back(result)
        runs += 1
        assert check_gemini(out, before=contents) == [], policy
        again = convert(out, "gemini").messages  # back() then load: what was compressed
        assert [_shape(m) for m in again] == [_shape(m) for m in result]
        kept = {id(m) for m in result}
        for native, (start, stop) in zip(contents, ranges, strict=True):
            if all(id(m) in kept for m in conv.messages[start:stop]):
                assert any(o is native for o in out)
        for native in out:
            if any(native is c for c in contents):
                continue
            for part in _parts(native):
                fields = _fields(part)
                if "function_response" in fields or (
                    "text" in fields and not fields.get("thought")
                ):
                    continue
                assert id(part) in all_parts  # calls, thoughts, images: the very same parts
    for policy in _policies(estimate_tokens(convert(contents, "gemini").messages))[-3:]:
        plain, _ = _run(compress_for(contents, policy))  # the one-call API, default steps
        assert check_gemini(plain, before=contents) == []
    assert contents == snapshot
    return runs


def test_real_conversations_compress_to_valid_gemini(data_dir: Path) -> None:
    real = _real(data_dir)
    # a sample: 4 tau-bench dialogs and every other Claude Code session (4 of 8), each under
    # 18 policies in both Gemini forms; bench/roundtrip_report.py sweeps every conversation
    conversations = [
        [m for m in msgs if m.role != "system"]
        for msgs in [*real["openai"][:4], *real["anthropic"][::2]]
    ]
    runs = 0
    for msgs in conversations:
        runs += _compress_and_check(DICTS.dump_all(msgs, carry=False))
        runs += _compress_and_check(OBJECTS.dump_all(msgs))
    assert runs == len(conversations) * 2 * 18


def test_carried_dicts_stay_lossless_through_compression(data_dir: Path) -> None:
    """Dicts dumped from other formats (reserved key on) come back, once compressed and
    loaded again, as exactly the compressed messages: the carrier follows text changes."""
    real = _real(data_dir)
    policy_steps = [  # keep_first=0: the task is cut too, so every run changes a text
        CutLongMessages(max_tokens_per_message=40, include_system_prompt=True, keep_first=0),
        ShrinkToolResults(bigger_than_tokens=30, older_than_turns=1, keep_chars=60),
        RemoveOldMessages(),
    ]
    carried = 0
    for msgs in [*real["openai"][:5], *real["anthropic"][-3:]]:
        contents = DICTS.dump_all(msgs)
        conv = convert(contents, "gemini")
        assert conv.messages == msgs
        total = estimate_tokens(msgs)
        policy = CompressionPolicy(target_tokens=total // 4, steps=policy_steps)
        result, report = _run(compress(conv.messages, policy))
        # every run changes a text, or (a short one the cuts left over the threshold) drops
        # the changed ones to get under it
        assert report.messages_changed > 0 or report.messages_removed > 0
        out = conv.back(result)
        again = convert(out, "gemini").messages
        assert [_norm(m) for m in again] == [_norm(m) for m in result]
        changed = [n for n in out if not any(n is c for c in contents)]
        carried += sum(RESERVED_KEY in n for n in changed)
        assert not any(RESERVED_KEY in p for n in out for p in n["parts"])  # content level only
        assert check(strip_reserved(out), "gemini") == []
    assert carried > 0  # rebuilt natives with a carrier were exercised


def _norm(m: Message) -> tuple[Any, ...]:
    """``m`` up to how its text is split into text parts: a changed text goes back into the
    native's text parts, which keep their place (``patch_text_blocks``), while a step's
    message holds it in one part (``with_text``)."""
    others = tuple(p for p in m.parts if not isinstance(p, TextPart))
    return (m.role, m.text, others, m.tool_calls, m.tool_call_id, m.name, m.extras)


def test_real_gemini_signatures_stay_byte_identical(data_dir: Path) -> None:
    for msgs in _real_gemini(data_dir):
        for contents in (DICTS.dump_all(msgs, carry=False), OBJECTS.dump_all(msgs)):
            signed = [p for c in contents for p in _parts(c) if "thought_signature" in _fields(p)]
            assert signed  # real signatures are there
            _compress_and_check(contents)
