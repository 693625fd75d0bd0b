#!/usr/bin/env python
"""Report: real conversations in every built-in format: round trips, cross-format, compression.

For each target format (openai-chat, openai-responses, anthropic, gemini-dicts, gemini-objects,
langchain) and each real conversation (tau-bench, SWE-agent, Claude Code, mini-swe-agent):

* the target natives: the conversation's own natives when it already is in that format, else
  its Messages dumped with that format's converter (Gemini: ``dump_all``, so the results of
  one turn share a ``user`` turn; dicts with the reserved carrier, Content objects without);
* round trip: ``convert`` then ``back`` of the unchanged messages gives the very same objects;
* cross-format (conversations from another format): loading the target natives gives Messages
  equal to the source's, and the source conversion's ``back`` of those gives natives equal to
  the source natives;
* ``check`` of the target natives, as built (with the carrier) and after ``strip_reserved``;
* ``compress_for`` with six step lists at 70%, 40% and 10% of the conversation's tokens, and
  ``check`` of every output (only rules the input did not already break count), plus
  thinking blocks and signatures compared with the input's.

Usage::

    python bench/roundtrip_report.py [--data DIR] [--quick] [--workers N]

The data directory is ``--data``, else ``$AGENT_ADAPTER_DATA``, else ``<repo>/../shared/data``.
See bench/README.md for what every column means.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import copy
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, ThinkingPart
from agent_adapter.cli._loaders import (
    load_claude_code,
    load_mini_swe_agent,
    load_swe_agent,
    load_tau_bench,
)
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
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.context.formats._checks import check_thinking_unchanged, check_thought_signatures
from agent_adapter.context.formats._gemini import GeminiConverter
from agent_adapter.context.formats._langchain import LangChainConverter
from agent_adapter.context.formats._openai import OpenAIChatConverter

REPO = Path(__file__).resolve().parents[1]

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

TAU_QUICK = 20
QUICK_CLAUDE = (
    "short",
    "tool_heavy",
    "subagent",
    "258c7280-ae70-4798-800f-63464d01a85d",
    "agent-a2898e3",
)

METHOD = (
    "no sampling: every conversation listed is round-tripped, checked and compressed for "
    "every target",
    "target natives: the conversation's own for its format, else its Messages dumped: "
    "converter.dump_all (openai-chat; openai-responses with the openai converter bound "
    "to a Responses list; anthropic; langchain), GeminiConverter(objects=False).dump_all "
    "(gemini-dicts, with the reserved carrier) and GeminiConverter(objects=True).dump_all "
    "(gemini-objects, no carrier possible)",
    "round-trip identical: convert(natives).back(messages) is natives, and back(list(messages))"
    " gives the very same objects",
    "cross-format exact: convert(target natives).messages == the source Messages, and the "
    "source conversion's back() of them == the source natives; gemini-objects also compared "
    "with the same Messages dumped as carry=False dicts (what a sendable dict list loses)",
    "compressions: compress_for with each of the step lists "
    + "; ".join(label for label, _ in STEP_SETS)
    + " at "
    + ", ".join(f"{r:.0%}" for r in RATIOS)
    + " of the natives' estimate_tokens, on the natives as built and, when they hold the "
    "carrier, again on strip_reserved(natives) (unless compress_for refuses that input)",
    "violations: check(natives, format) as built (carrier) and after strip_reserved (stripped);"
    " outputs of the as-built run are checked as they are (carrier) and after strip_reserved "
    "(stripped), outputs of the stripped run as they are (stripped). An output violation "
    "counts only if its rule is not among the rules the same mode's check finds on that "
    "conversation's input (rule names compared); the rest are listed as not counted, with "
    "those that match no input violation (same native object, or same ids named) shown apart",
    "thinking/sig changes: anthropic and openai-responses outputs through "
    "check_thinking_unchanged(input, output); gemini outputs through "
    "check_thought_signatures(input, output); every output loaded again and each thinking part,"
    " tool-call thought_signature and reasoning_details compared with the input's",
)

HYPOTHESIS_FILES = (
    "tests/test_formats_openai.py",
    "tests/test_formats_anthropic.py",
    "tests/test_check.py",
    "tests/test_formats_gemini.py",
    "tests/test_formats_langchain.py",
    "tests/test_engine_properties.py",
)
HYPOTHESIS_DEFAULT_EXAMPLES = 100


# ----------------------------------------------------------------------------------------------
# the conversations


@dataclass
class Conversation:
    source: str
    name: str
    format: str  # "openai" (Chat Completions) or "anthropic"
    natives: list[Any]


def data_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("AGENT_ADAPTER_DATA")
    if env:
        return Path(env)
    return REPO.parent / "shared" / "data"


def _has_real_tool_calls(path: Path) -> bool:
    data = json.loads(path.read_text(encoding="utf-8"))
    return any(m.get("tool_calls") for m in data.get("history", []) if isinstance(m, dict))


def _swe_name(path: Path, duplicate: bool) -> str:
    if not duplicate:
        return path.name.removesuffix(".traj")
    parts = path.parent.name.split("__")
    config = parts[3] if len(parts) > 3 else path.parent.name
    return f"{path.name.removesuffix('.traj').split('__')[-1]} ({config})"


def _reasoning_details(raw: dict[str, Any]) -> list[Any] | None:
    """The OpenRouter ``reasoning_details`` of a raw mini-swe-agent message, when they hold a
    Gemini thought signature (``reasoning.encrypted``)."""
    response = (raw.get("extra") or {}).get("response") or {}
    choices = response.get("choices") or [{}]
    details = (choices[0].get("message") or {}).get("reasoning_details") or []
    if any(isinstance(d, dict) and d.get("type") == "reasoning.encrypted" for d in details):
        return list(details)
    return None


def load_mini(path: Path) -> tuple[list[dict[str, Any]], int]:
    """A mini-swe-agent run as chat dicts; assistant messages whose OpenRouter response carried
    a Gemini 3 thought signature get its ``reasoning_details`` back (the key OpenRouter takes
    to pass reasoning and signatures back to the model). Returns the dicts and how many."""
    natives = load_mini_swe_agent(path)
    raw = json.loads(path.read_text(encoding="utf-8"))["messages"]
    by_call = {
        c["id"]: k for k, m in enumerate(natives) for c in m.get("tool_calls") or () if "id" in c
    }
    signed = 0
    for i, message in enumerate(raw):
        details = _reasoning_details(message)
        k = by_call.get(f"call_{i}")
        if details is not None and k is not None:
            natives[k] = {**natives[k], "reasoning_details": details}
            signed += 1
    return natives, signed


def load_conversations(data: Path, quick: bool) -> tuple[list[Conversation], list[str]]:
    notes: list[str] = []
    out: list[Conversation] = []

    tau = load_tau_bench(data / "tau-bench" / "gpt-4o-airline.json")
    if quick:
        tau = tau[:TAU_QUICK]
    for i, natives in enumerate(tau):
        out.append(Conversation("tau-bench", f"gpt-4o-airline[{i}]", "openai", natives))
    notes.append(f"tau-bench: dialogs 0..{len(tau) - 1} of gpt-4o-airline.json (OpenAI chat)")

    swe = sorted((data / "swe-agent").rglob("*.traj"))
    if quick:
        swe = [p for p in swe if _has_real_tool_calls(p)]
    stems = Counter(p.name for p in swe)
    for path in swe:
        name = _swe_name(path, stems[path.name] > 1)
        out.append(Conversation("swe-agent", name, "openai", load_swe_agent(path)))
    notes.append(
        f"swe-agent: {len(swe)} .traj runs (OpenAI chat"
        + ("; the 5 with real tool_calls)" if quick else ")")
    )

    claude = sorted((data / "claude-code-spotter").rglob("*.jsonl"))
    if quick:
        claude = [p for p in claude if p.stem in QUICK_CLAUDE]
    for path in claude:
        name = path.stem if path.parent.name != "subagents" else f"{path.parts[-3][:8]}/{path.stem}"
        out.append(Conversation("claude-code", name, "anthropic", load_claude_code(path)))
    notes.append(
        f"claude-code: {len(claude)} transcripts (Anthropic"
        + (f": {', '.join(QUICK_CLAUDE)})" if quick else ", top-level sessions and subagents)")
    )

    if not quick:
        runs = sorted((data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"))
        signed = 0
        for path in runs:
            natives, n = load_mini(path)
            signed += n
            out.append(
                Conversation(
                    "mini-swe-agent", path.name.removesuffix(".traj.json"), "openai", natives
                )
            )
        notes.append(
            f"mini-swe-agent: {len(runs)} runs (OpenAI chat); {signed} assistant messages carry "
            "the Gemini 3 thought signature of their OpenRouter response as reasoning_details"
        )
    else:
        notes.append("mini-swe-agent: not in --quick")
    if not out:
        sys.exit(f"no conversations found under {data}")
    return out, notes


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
                out, _ = await compress_for(natives, policy, format=fmt)
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


# ----------------------------------------------------------------------------------------------
# output


def render(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def _ratio(good: int, total: int) -> str:
    return f"{good}/{total}" if total else "-"


def _exact_cell(rs: list[TargetResult]) -> str:
    cross = [r for r in rs if r.exact is not None]
    cell = _ratio(sum(bool(r.exact) for r in cross), len(cross))
    like = [r for r in cross if r.like_uncarried is not None]
    if like:
        cell += f" ({sum(bool(r.like_uncarried) for r in like)}/{len(like)} as carry=False dicts)"
    return cell


def main_table(results: list[TargetResult]) -> str:
    header = [
        "target",
        "real convs",
        "messages",
        "round-trip identical",
        "cross-format exact",
        "compressions",
        "in viol. carrier/stripped",
        "out viol. carrier/stripped",
        "thinking/sig changes",
    ]
    rows = []
    for target in TARGETS:
        rs = [r for r in results if r.target == target]
        rows.append(
            [
                target,
                str(len(rs)),
                f"{sum(r.messages for r in rs):,}",
                _ratio(sum(r.identical for r in rs), len(rs)),
                _exact_cell(rs),
                f"{sum(r.compressions for r in rs):,}",
                " / ".join(f"{sum(len(r.inputs.get(m, [])) for r in rs):,}" for m in MODES),
                " / ".join(f"{sum(len(r.outputs.get(m, [])) for r in rs):,}" for m in MODES),
                f"{sum(len(r.thinking) for r in rs):,}",
            ]
        )
    return render(header, rows)


def source_table(results: list[TargetResult]) -> str:
    """Cross-format exact and new output violations (carrier/stripped) by source."""
    sources = list(dict.fromkeys(r.source for r in results))
    header = ["source \\ target", *TARGETS]
    rows = []
    for source in sources:
        cells = [source]
        for target in TARGETS:
            rs = [r for r in results if r.source == source and r.target == target]
            cross = [r for r in rs if r.exact is not None]
            exact = _ratio(sum(bool(r.exact) for r in cross), len(cross)) if cross else "own"
            out = "/".join(str(sum(len(r.outputs.get(m, [])) for r in rs)) for m in MODES)
            cells.append(f"{exact}, {out}")
        rows.append(cells)
    return render(header, rows)


def _examples(
    results: list[TargetResult], pick: Callable[[TargetResult], list[Found]]
) -> list[str]:
    """Per target and rule: count, conversations, and the first example."""
    out: list[str] = []
    for target in TARGETS:
        by_rule: dict[str, list[tuple[TargetResult, Found]]] = {}
        for r in results:
            if r.target == target:
                for f in pick(r):
                    by_rule.setdefault(f[0], []).append((r, f))
        for rule, hits in sorted(by_rule.items()):
            convs = len({(r.source, r.name) for r, _ in hits})
            r, (_, index, message, where) = hits[0]
            at = f" after {where}" if where else ""
            out.append(
                f"{target}: {rule} x{len(hits):,} in {convs} conversation(s); first: "
                f"{r.source}/{r.name}{at}: [{index}] {message}"
            )
    return out


def notes(results: list[TargetResult]) -> list[str]:
    lines: list[str] = []
    for mode in MODES:
        found = _examples(results, lambda r, m=mode: r.inputs.get(m, []))
        lines.append(f"Input violations ({mode}):" + ("" if found else " none"))
        lines += [f"  - {f}" for f in found]
    for mode in MODES:
        found = _examples(results, lambda r, m=mode: r.outputs.get(m, []))
        lines.append(f"New output violations ({mode}):" + ("" if found else " none"))
        lines += [f"  - {f}" for f in found]
    ignored: Counter[str] = Counter()
    for r in results:
        ignored.update({f"{r.target} {k}": v for k, v in r.ignored.items()})
    if ignored:
        lines.append(
            "Output violations not counted (their rule is already broken by the input): "
            + ", ".join(f"{k} x{v:,}" for k, v in sorted(ignored.items()))
        )
    for mode in MODES:
        found = _examples(
            results,
            lambda r, m=mode: [f for k, f in r.elsewhere if k == m],
        )
        lines.append(
            f"  of those, neither at an input native that breaks the rule nor naming the same "
            f"ids as an input violation (reserved_key left out: rebuilt carried natives keep "
            f"it) ({mode}):" + ("" if found else " none")
        )
        lines += [f"    - {f}" for f in found]
    lines.append("Cross-format round trips that are not exact:")
    any_inexact = False
    for target in TARGETS:
        bad = [r for r in results if r.target == target and r.exact is False]
        if not bad:
            continue
        any_inexact = True
        counts: Counter[str] = Counter()
        for r in bad:
            counts.update(r.exact_fields)
        first = bad[0]
        lines.append(
            f"  - {target}: {len(bad)} conversation(s); differing message fields: "
            + ", ".join(f"{k} x{v:,}" for k, v in counts.most_common())
            + f"; first: {first.source}/{first.name}: {first.exact_problem}"
        )
    if not any_inexact:
        lines[-1] += " none"
    unlike = [r for r in results if r.like_uncarried is False]
    if unlike:
        counts = Counter()
        for r in unlike:
            counts.update(r.like_uncarried_fields)
        lines.append(
            f"  - gemini-objects vs the same messages dumped as carry=False dicts: "
            f"{len(unlike)} conversation(s) load differently; fields: "
            + ", ".join(f"{k} x{v:,}" for k, v in counts.most_common())
            + f"; first: {unlike[0].source}/{unlike[0].name}"
        )
    signed: Counter[str] = Counter()
    for r in results:
        if r.target.startswith("gemini"):
            signed[f"{r.target} from {r.source}"] += r.signed_calls
    lines.append(
        "Gemini function_call parts with a thought_signature in the sendable natives: "
        + ", ".join(f"{k} {v:,}" for k, v in signed.items())
    )
    kinds: Counter[str] = Counter()
    firsts: dict[str, str] = {}
    for r in results:
        for kind, what in r.thinking:
            key = f"{r.target} {kind}"
            kinds[key] += 1
            firsts.setdefault(key, f"{r.source}/{r.name} {what}")
    lines.append("Thinking/signature changes:" + ("" if kinds else " none"))
    lines += [f"  - {k} x{v:,}; first: {firsts[k]}" for k, v in sorted(kinds.items())]
    rejected = [(r, e) for r in results for e in r.rejected]
    lines.append(
        "Inputs compress_for refuses (validate_messages raises; not compressed): "
        + (
            f"{len(rejected)}: "
            + ", ".join(f"{t} x{n}" for t, n in Counter(f"{r.target}" for r, _ in rejected).items())
            + f"; first: {rejected[0][0].source}/{rejected[0][0].name} {rejected[0][1]}"
            if rejected
            else "none"
        )
    )
    groups: dict[str, list[tuple[TargetResult, tuple[str, str, str]]]] = {}
    for r in results:
        for e in r.errors:
            groups.setdefault(f"{r.target}: {e[0]} raised {e[2].split(':')[0]}", []).append((r, e))
    lines.append("Exceptions:" + ("" if groups else " none"))
    for key, hits in groups.items():
        r, (_, where, error) = hits[0]
        convs = len({(x.source, x.name) for x, _ in hits})
        at = f" after {where}" if where else ""
        lines.append(
            f"  - {key} x{len(hits):,} in {convs} conversation(s); first: "
            f"{r.source}/{r.name}{at}: {error}"
        )
    copies = [(r, c) for r in results for c in r.copies]
    lines.append(
        "Kept natives that came back as equal copies, not the same objects: "
        + (
            f"{len(copies):,}; first: {copies[0][0].target} {copies[0][0].source}/"
            f"{copies[0][0].name} {copies[0][1]}"
            if copies
            else "none"
        )
    )
    mutated = [r for r in results if r.mutated]
    lines.append(
        "Inputs mutated: "
        + (", ".join(f"{r.target} {r.source}/{r.name}" for r in mutated[:10]) or "none")
    )
    return lines


# ----------------------------------------------------------------------------------------------
# the hypothesis tests (read, not run)


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _max_examples(call: ast.Call) -> int | None:
    for kw in call.keywords:
        if kw.arg == "max_examples" and isinstance(kw.value, ast.Constant):
            return int(kw.value.value)
    return None


def hypothesis_tests(root: Path) -> list[tuple[str, str, int | None]]:
    """(file, test, max_examples) of every ``@given`` test; ``None`` when no settings say."""
    out: list[tuple[str, str, int | None]] = []
    for rel in HYPOTHESIS_FILES:
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        named: dict[str, int | None] = {}
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and _call_name(node.value) == "settings"
            ):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        named[t.id] = _max_examples(node.value)
        found = False
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            decorators = node.decorator_list
            if not any(_call_name(d) == "given" for d in decorators):
                continue
            n: int | None = None
            for d in decorators:
                if isinstance(d, ast.Call) and _call_name(d) == "settings":
                    n = _max_examples(d)
                elif isinstance(d, ast.Name) and d.id in named:
                    n = named[d.id]
            out.append((rel, node.name, n))
            found = True
        if not found:
            out.append((rel, "(no hypothesis test)", 0))
    return out


def hypothesis_table(root: Path) -> str:
    rows = []
    total = 0
    for rel, name, n in hypothesis_tests(root):
        count = HYPOTHESIS_DEFAULT_EXAMPLES if n is None else n
        total += count
        shown = "-" if name.startswith("(") else f"{count}" + (" (default)" if n is None else "")
        rows.append([Path(rel).name, name, shown])
    rows.append(["total", "", f"{total:,}"])
    return render(["file", "hypothesis test", "max_examples"], rows, left=2)


# ----------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--data", help="data dir (default $AGENT_ADAPTER_DATA or ../shared/data)")
    p.add_argument("--quick", action="store_true", help="20 tau-bench, 5 SWE-agent, 5 Claude Code")
    p.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="processes (default: min(2, CPUs))",
    )
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    args = parse_args(argv)
    data = data_dir(args.data)
    if not data.is_dir():
        sys.exit(f"data directory not found: {data} (use --data or AGENT_ADAPTER_DATA)")
    conversations, source_notes = load_conversations(data, args.quick)
    # biggest first, so the workers finish together
    order = sorted(
        range(len(conversations)),
        key=lambda i: (
            -len(conversations[i].natives) * (conversations[i].format == "anthropic")
            - len(conversations[i].natives)
        ),
    )
    by_index: dict[int, list[TargetResult]] = {}
    if args.workers == 1:
        for i in order:
            by_index[i] = process(conversations[i])
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            jobs = [(i, pool.submit(process, conversations[i])) for i in order]
            for i, job in jobs:
                by_index[i] = job.result()
    results = [r for i in range(len(conversations)) for r in by_index[i]]

    print("Round trips and compressions of real conversations, per target format")
    print()
    print(main_table(results))
    print()
    print("By source (cross-format exact, new output violations carrier/stripped):")
    print()
    print(source_table(results))
    print()
    print("Conversations and method:")
    for n in source_notes:
        print(f"- {n}")
    for n in METHOD:
        print(f"- {n}")
    print()
    for line in notes(results):
        print(line)
    print()
    print("Generated conversations (hypothesis property tests; not run here), run with:")
    print()
    print("    pytest -q " + " ".join(HYPOTHESIS_FILES))
    print()
    print(hypothesis_table(REPO))
    print()
    print(
        f"{len(conversations)} conversations x {len(TARGETS)} targets; Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.workers} worker(s); "
        f"wall time {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
