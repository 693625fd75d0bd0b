"""Outputs of the library on real traces, as digests: to prove a refactor changes nothing.

Compresses real traces from ``../shared/data`` (mini-swe-agent runs, SWE-agent runs, Claude
Code sessions, tau-bench dialogs) in the OpenAI, Anthropic and Gemini formats at three budgets
each, and replays two of them call by call through a ``Compactor``; prints one JSON object
``{case: sha256 of the outputs and reports' counts}``. Run before and after, compare:

    python tools/fingerprint.py > /tmp/before.json
    ... refactor ...
    python tools/fingerprint.py > /tmp/after.json && cmp /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from agent_adapter.cli import load_trace
from agent_adapter.context import Compactor, CompressionPolicy, compress_for_sync
from agent_adapter.context.formats import convert, strip_reserved

_DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DATA = Path(os.environ.get("AGENT_ADAPTER_DATA", _DEFAULT_DATA))


def _digest(natives: list[Any], report: Any) -> str:
    body = json.dumps(strip_reserved(list(natives)), sort_keys=True, default=repr)
    counts = [
        report.tokens_before,
        report.tokens_after,
        report.messages_removed,
        report.messages_changed,
        report.messages_added,
        report.skipped,
        [s.step for s in report.steps],
    ]
    return hashlib.sha256((body + json.dumps(counts)).encode()).hexdigest()[:16]


def _traces() -> list[tuple[str, list[Any]]]:
    out = []
    for path in sorted((DATA / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"))[:12]:
        out.append((path.name.split(".")[0], load_trace(path).messages))
    for path in sorted((DATA / "claude-code-spotter").glob("*.jsonl"))[:3]:
        out.append((path.stem[:8], load_trace(path).messages))
    swe = sorted((DATA / "swe-agent").rglob("*.traj"))[:3]
    for path in swe:
        out.append((path.stem[:24], load_trace(path).messages))
    tau = DATA / "tau-bench" / "gpt-4o-airline.json"
    for index in range(3):
        out.append((f"tau{index}", load_trace(tau, index=index).messages))
    return out


def main() -> int:
    result: dict[str, str] = {}
    for name, natives in _traces():
        messages = convert(natives, "openai").messages
        for fmt in ("openai", "anthropic", "gemini"):
            seed = {
                "openai": [{"role": "user", "content": "s"}],
                "anthropic": [{"role": "user", "content": "s"}],
                "gemini": [{"role": "user", "parts": [{"text": "s"}]}],
            }[fmt]
            try:
                items = natives if fmt == "openai" else convert(seed, fmt).back(messages)
            except Exception as exc:  # a format that cannot carry this trace
                result[f"{name}/{fmt}"] = f"error:{type(exc).__name__}"
                continue
            for target in (4_000, 16_000, 32_000):
                policy = CompressionPolicy(threshold_tokens=target + 1, target_tokens=target)
                try:
                    out, report = compress_for_sync(items, policy, format=fmt)
                    result[f"{name}/{fmt}/{target}"] = _digest(out, report)
                except Exception as exc:
                    result[f"{name}/{fmt}/{target}"] = f"error:{type(exc).__name__}"
    for name, natives in _traces()[:2]:
        compactor = Compactor(CompressionPolicy(threshold_tokens=12_000, target_tokens=8_000))
        digests = []
        for cut in range(2, len(natives) + 1, 3):
            out, report = compactor.compress_sync(natives[:cut])
            digests.append(_digest(out, report))
        result[f"{name}/replay"] = hashlib.sha256("".join(digests).encode()).hexdigest()[:16]
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
