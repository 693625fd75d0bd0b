"""The real conversations of ``roundtrip_report.py`` (tau-bench, SWE-agent, Claude Code,
mini-swe-agent with its Gemini thought signatures put back).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _compress_cases import has_real_tool_calls
from agent_adapter.cli._loaders import (
    load_claude_code,
    load_mini_swe_agent,
    load_swe_agent,
    load_tau_bench,
)

REPO = Path(__file__).resolve().parents[1]


TAU_QUICK = 20
QUICK_CLAUDE = (
    "short",
    "tool_heavy",
    "subagent",
    "258c7280-ae70-4798-800f-63464d01a85d",
    "agent-a2898e3",
)


# ----------------------------------------------------------------------------------------------
# the conversations


@dataclass
class Conversation:
    source: str
    name: str
    format: str  # "openai" (Chat Completions) or "anthropic"
    natives: list[Any]


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
        swe = [p for p in swe if has_real_tool_calls(p)]
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
