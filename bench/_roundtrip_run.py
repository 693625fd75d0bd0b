"""One conversation, every target format: round trip, cross-format, ``check`` and
``compress_for`` of ``roundtrip_report.py``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from _roundtrip_data import Conversation
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ThinkingPart
from agent_adapter.context import (
    CompressionPolicy,
    CutLongMessages,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    compress_for,
    estimate_tokens,
)
from agent_adapter.context._pairing import validate_messages
from agent_adapter.context.formats import Violation, check, convert, strip_reserved
from agent_adapter.context.formats._anthropic import AnthropicConverter, check_thinking_unchanged
from agent_adapter.context.formats._gemini import GeminiConverter, check_thought_signatures
from agent_adapter.context.formats._langchain import LangChainConverter
from agent_adapter.context.formats._openai import OpenAIChatConverter

OPENAI = OpenAIChatConverter()
#: The openai converter bound to a Responses list: it writes Responses items.
RESPONSES = OPENAI.bind([{"type": "message", "role": "user", "content": "x"}])
ANTHROPIC = AnthropicConverter()
GEMINI_DICTS = GeminiConverter(objects=False)
GEMINI_OBJECTS = GeminiConverter(objects=True)
LANGCHAIN = LangChainConverter()

Build = Callable[[Sequence[Message]], list[Any]]
#: target -> (format name for convert / check / compress_for, how natives are built)
TARGETS: dict[str, tuple[str, Build]] = {
    "openai-chat": ("openai", lambda ms: OPENAI.dump_all(ms)),
    "openai-responses": ("openai", lambda ms: RESPONSES.dump_all(ms)),
    "anthropic": ("anthropic", lambda ms: ANTHROPIC.dump_all(ms)),
    "gemini-dicts": ("gemini", lambda ms: GEMINI_DICTS.dump_all(ms)),
    "gemini-objects": ("gemini", lambda ms: GEMINI_OBJECTS.dump_all(ms)),
    "langchain": ("langchain", lambda ms: LANGCHAIN.dump_all(ms)),
}
#: source format -> the target whose natives are the conversation's own
OWN_TARGET = {"openai": "openai-chat", "anthropic": "anthropic"}

STEP_SETS: list[tuple[str, list[Any] | None]] = [
    ("RemoveDuplicates()", [RemoveDuplicates()]),
    (
        "ShrinkToolResults(bigger_than_tokens=50, older_than_turns=1)",
        [ShrinkToolResults(bigger_than_tokens=50, older_than_turns=1)],
    ),
    ("CutLongMessages(max_tokens_per_message=100)", [CutLongMessages(max_tokens_per_message=100)]),
    ("RemoveOldMessages()", [RemoveOldMessages()]),
    (
        "RemoveOldMessages(keep_first=0, keep_last=0)",
        [RemoveOldMessages(keep_first=0, keep_last=0)],
    ),
    ("default policy", None),
]
RATIOS = (0.7, 0.4, 0.1)
#: check modes: the natives as built (with the reserved carrier), and after strip_reserved
MODES = ("carrier", "stripped")


# ----------------------------------------------------------------------------------------------
# one conversation, every target


Found = tuple[str, int, str, str]  # (rule, index, message, where)


@dataclass
class TargetResult:
    target: str
    source: str
    name: str
    own: bool  # the conversation's own natives
    messages: int = 0
    identical: bool = False
    exact: bool | None = None
    exact_problem: str = ""
    exact_fields: Counter[str] = field(default_factory=Counter)
    like_uncarried: bool | None = None  # gemini-objects: loads as carry=False dicts do
    like_uncarried_fields: Counter[str] = field(default_factory=Counter)
    signed_calls: int = 0  # gemini: function_call parts with a thought_signature, sendable
    inputs: dict[str, list[Found]] = field(default_factory=dict)  # mode -> violations
    compressions: int = 0
    outputs: dict[str, list[Found]] = field(default_factory=dict)  # mode -> new violations
    ignored: Counter[str] = field(default_factory=Counter)  # "mode:rule" already in the input
    elsewhere: list[tuple[str, Found]] = field(default_factory=list)  # (mode, violation)
    thinking: list[tuple[str, str]] = field(default_factory=list)  # (kind, where + what)
    copies: list[str] = field(default_factory=list)  # kept natives that came back as copies
    rejected: list[str] = field(default_factory=list)  # inputs compress refuses (not compressed)
    mutated: bool = False
    errors: list[tuple[str, str, str]] = field(default_factory=list)  # (phase, where, error)


def _found(violations: Sequence[Violation], where: str = "") -> list[Found]:
    return [(v.rule, v.index, v.message, where) for v in violations]


def _short(value: Any, limit: int = 90) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _message_diff(want: Sequence[Message], got: Sequence[Message]) -> tuple[str, Counter[str]]:
    """The first difference and a count of differing (role, field) pairs."""
    counts: Counter[str] = Counter()
    first = "" if len(want) == len(got) else f"{len(got)} messages instead of {len(want)}"
    for i, (a, b) in enumerate(zip(want, got, strict=False)):
        for f in fields(Message):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if x != y:
                counts[f"{a.role}.{f.name}"] += 1
                if not first:
                    first = f"message {i} ({a.role}) {f.name}: {_short(x)} -> {_short(y)}"
    return first, counts


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _native_key(native: Any) -> str:
    return _json(native) if isinstance(native, dict) else f"{type(native).__name__}{native!r}"


def _unindexed(message: str) -> str:
    """A violation message without list positions (ids stay)."""
    return re.sub(r"\[\d+\]", "[#]", message)


def _thinking_key(part: ThinkingPart) -> str:
    return _json([part.text, part.signature, part.redacted, dict(part.extras)])


@dataclass
class Inventory:
    """The thinking of a message list: thinking parts, call signatures, reasoning_details."""

    parts: set[str]
    signatures: dict[str, Any]
    details: set[str]

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Inventory:
        return cls(
            {_thinking_key(p) for m in messages for p in m.parts if isinstance(p, ThinkingPart)},
            {c.id: c.extras.get("thought_signature") for m in messages for c in m.tool_calls},
            {_json(m.extras[DETAILS]) for m in messages if DETAILS in m.extras},
        )

    def changes(self, messages: Sequence[Message]) -> list[str]:
        out: list[str] = []
        for i, m in enumerate(messages):
            for p in m.parts:
                if isinstance(p, ThinkingPart) and _thinking_key(p) not in self.parts:
                    out.append(f"message {i}: a thinking part that is not in the input")
            for c in m.tool_calls:
                sig = c.extras.get("thought_signature")
                if c.id in self.signatures and sig != self.signatures[c.id]:
                    out.append(f"message {i}: the thought_signature of call {c.id} changed")
            if DETAILS in m.extras and _json(m.extras[DETAILS]) not in self.details:
                out.append(f"message {i}: reasoning_details changed")
        return out


DETAILS = "reasoning_details"


def _signed_calls(contents: Sequence[Any]) -> int:
    n = 0
    for content in contents:
        parts = content["parts"] if isinstance(content, dict) else content.parts or []
        for part in parts:
            get = part.get if isinstance(part, dict) else lambda k, p=part: getattr(p, k, None)
            n += bool(get("function_call") and get("thought_signature"))
    return n


async def _one_target(conv: Conversation, source: Any, target: str, result: TargetResult) -> None:
    fmt, build = TARGETS[target]
    natives = conv.natives if result.own else build(source.messages)
    snapshot = copy.deepcopy(natives)
    tconv = convert(natives, fmt)
    messages = tconv.messages
    result.messages = len(messages)
    same = tconv.back(messages)
    copied = tconv.back(list(messages))
    result.identical = same is natives and (
        len(copied) == len(natives) and all(a is b for a, b in zip(copied, natives, strict=True))
    )
    if not result.own:
        loaded_ok = messages == source.messages
        back = source.back(messages)
        back_ok = back == conv.natives
        result.exact = loaded_ok and back_ok
        if not loaded_ok:
            result.exact_problem, result.exact_fields = _message_diff(source.messages, messages)
        elif not back_ok:
            k = next(
                (i for i, (a, b) in enumerate(zip(back, conv.natives, strict=False)) if a != b),
                min(len(back), len(conv.natives)),
            )
            result.exact_problem = f"back to {conv.format}: natives[{k}] differ"
            result.exact_fields["back"] += 1
    sendable = strip_reserved(natives)
    if target == "gemini-objects":
        plain = convert(GEMINI_DICTS.dump_all(source.messages, carry=False), fmt).messages
        result.like_uncarried = messages == plain
        result.like_uncarried_fields = _message_diff(plain, messages)[1]
    if fmt == "gemini":
        result.signed_calls = _signed_calls(sendable)
    result.inputs = {
        "carrier": _found(check(natives, fmt)),
        "stripped": _found(check(sendable, fmt)),
    }
    result.outputs = {mode: [] for mode in MODES}
    await _compressions(natives, fmt, target, messages, result, MODES)
    if any(a is not b for a, b in zip(sendable, natives, strict=True)):
        stripped = convert(sendable, fmt).messages
        try:
            validate_messages(stripped)
        except ConfigError as exc:  # compress_for would raise this for every policy
            result.rejected.append(f"stripped input: {exc}")
        else:
            await _compressions(sendable, fmt, target, stripped, result, ("stripped",))
    result.mutated = natives != snapshot


async def _compressions(
    natives: list[Any],
    fmt: str,
    target: str,
    messages: list[Message],
    result: TargetResult,
    modes: tuple[str, ...],
) -> None:
    """Every step list at every ratio on ``natives``; outputs checked as they are (carrier
    mode, when ``natives`` are the natives as built) and after strip_reserved."""
    broken = {mode: {f[0] for f in found} for mode, found in result.inputs.items()}
    at = {mode: {(f[0], f[1]) for f in found} for mode, found in result.inputs.items()}
    said = {
        mode: {(f[0], _unindexed(f[2])) for f in found} for mode, found in result.inputs.items()
    }
    pos = {id(n): j for j, n in enumerate(natives)}
    inventory = Inventory.of(messages)
    keys = {_native_key(n) for n in natives}
    ids = {id(n) for n in natives}
    total = estimate_tokens(messages)
    variant = "as built" if "carrier" in modes else "stripped input"
    for label, steps in STEP_SETS:
        for ratio in RATIOS:
            goal = max(1, int(total * ratio))
            where = f"{label} at {ratio:.0%} ({goal:,} of {total:,} tokens, {variant})"
            policy = CompressionPolicy(target_tokens=goal, steps=steps)
            result.compressions += 1
            try:
                out, _ = await compress_for(natives, policy, format=fmt, states=False)
            except Exception as exc:
                result.errors.append(("compress_for", where, f"{type(exc).__name__}: {exc}"))
                continue
            # as built: the output as is, and stripped; a stripped input: the output as is
            # (a carrier in it was added by the compression)
            checked = {"carrier": out, "stripped": strip_reserved(out) if modes == MODES else out}
            for mode in modes:
                for v in check(checked[mode], fmt):
                    found = (v.rule, v.index, v.message, where)
                    if v.rule not in broken[mode]:
                        result.outputs[mode].append(found)
                        continue
                    result.ignored[f"{mode}:{v.rule}"] += 1
                    j = pos.get(id(out[v.index])) if 0 <= v.index < len(out) else None
                    inherited = (v.rule, j) in at[mode] or (
                        "'" in v.message and (v.rule, _unindexed(v.message)) in said[mode]
                    )
                    if not inherited and v.rule != "reserved_key":
                        result.elsewhere.append((mode, found))
            for k, native in enumerate(out):
                if id(native) not in ids and _native_key(native) in keys:
                    result.copies.append(f"{where}: out[{k}] equals an input native")
            if target in ("anthropic", "openai-responses"):
                for v in check_thinking_unchanged(natives, out):
                    result.thinking.append((v.rule, f"{where}: out[{v.index}] {v.message}"))
            if fmt == "gemini":
                for v in check_thought_signatures(natives, out):
                    result.thinking.append((v.rule, f"{where}: out[{v.index}] {v.message}"))
            try:
                again = convert(out, fmt).messages
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                result.errors.append(("convert(compress_for output)", where, error))
                continue
            for problem in inventory.changes(again):
                result.thinking.append(("message_level", f"{where}: {problem}"))


async def _process(conv: Conversation) -> list[TargetResult]:
    source = convert(conv.natives, conv.format)
    snapshot = copy.deepcopy(conv.natives)
    results: list[TargetResult] = []
    for target in TARGETS:
        result = TargetResult(target, conv.source, conv.name, OWN_TARGET[conv.format] == target)
        try:
            await _one_target(conv, source, target, result)
        except Exception as exc:
            result.errors.append((f"target {target}", "", f"{type(exc).__name__}: {exc}"))
        results.append(result)
    if conv.natives != snapshot:
        results[0].mutated = True
    return results


def process(conv: Conversation) -> list[TargetResult]:
    return asyncio.run(_process(conv))
