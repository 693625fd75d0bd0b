"""Soak: does memory stay flat over thousands of conversations once every cache is full?

Replays ``--conversations`` short conversations (default 3,000) through ``compress_for_sync``,
each a few calls an agent makes: the history so far is compressed, a round (an assistant tool
call and its result) is appended, and the grown history is compressed again, against a small
threshold so the later calls compress. Even conversations are OpenAI Chat Completions dicts
(with a system message), odd ones Anthropic Messages dicts; every second conversation sends
what the last call returned plus the new round (the agent kept the compressed list), the
others their full history. The texts are real (tau-bench user turns and tool outputs, Claude
Code tool results from ``../shared/data``; a synthetic pool when the data is missing), each
made a new string for each conversation (as an agent's texts are).

Each state mode runs in its own process (module caches start empty):

* ``states``: a ``CompactionStates(max_conversations=--max-conversations)`` passed explicitly;
* ``compactor``: a ``Compactor`` per conversation, held while it runs;
* ``off``: ``states=False``.

At each checkpoint (after ``gc.collect()``): traced memory (``tracemalloc``: what Python
objects hold, steady from run to run) and the process's resident set (RSS, from
``/proc/self/statm``). The last column of the summary is the growth over the last third of the
run, when every cache is full: it must be near zero.

    python bench/soak.py                 # 3,000 conversations, three modes: ~5 min on 2 cores
    python bench/soak.py --conversations 1200 --modes states
    python bench/soak.py --no-tracemalloc   # RSS only (faster)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent_adapter.context import (
    CompactionStates,
    Compactor,
    CompressionPolicy,
    compress_for_sync,
)

REPO = Path(__file__).resolve().parents[1]
#: Every conversation's policy: small, so about a third of the calls compress.
POLICY = CompressionPolicy(threshold_tokens=1000, target_tokens=650)
#: Rounds (an assistant call and its result) a conversation has before its first call, and
#: calls after it (one round appended before each).
OPENING_ROUNDS = 2
CALLS = 5
#: Longest text taken from the data (a few Claude Code results are ~100k characters).
MAX_TEXT = 6000

Send = Callable[[list[Any], str], list[Any]]


# ----------------------------------------------------------------------------- texts


def text_pool(data: Path | None) -> dict[str, list[str]]:
    """``user`` and ``tool`` texts: tau-bench's user turns and tool outputs, Claude Code's
    tool results (cut at :data:`MAX_TEXT`); a synthetic pool when the data is missing."""
    user: list[str] = []
    tool: list[str] = []
    if data is not None and (data / "tau-bench" / "gpt-4o-airline.json").is_file():
        for dialog in json.loads((data / "tau-bench" / "gpt-4o-airline.json").read_text())[:60]:
            for m in dialog["traj"]:
                content = m.get("content")
                if isinstance(content, str) and content:
                    (user if m["role"] == "user" else tool if m["role"] == "tool" else []).append(
                        content[:MAX_TEXT]
                    )
        for path in sorted((data / "claude-code-spotter").glob("*.jsonl"))[:2]:
            for line in path.read_text().splitlines():
                entry = json.loads(line)
                content = entry.get("message", {}).get("content") if entry.get("type") else None
                for block in content if isinstance(content, list) else ():
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        text = block.get("content")
                        if isinstance(text, list):
                            text = "".join(b.get("text", "") for b in text if isinstance(b, dict))
                        if isinstance(text, str) and text:
                            tool.append(text[:MAX_TEXT])
    if not user or not tool:
        rng = random.Random(7)
        words = [
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
            for _ in range(2000)
        ]
        user = [" ".join(rng.choices(words, k=rng.randint(8, 60))) for _ in range(200)]
        tool = [" ".join(rng.choices(words, k=rng.randint(40, 300))) for _ in range(400)]
    return {"user": user, "tool": tool}


# ----------------------------------------------------------------------------- conversations


def _round(fmt: str, i: int, k: int, rng: random.Random, pool: dict[str, list[str]]) -> list[Any]:
    """Round ``k`` of conversation ``i``: an assistant tool call and its result, then a user
    turn, as new dicts holding new strings."""
    call_id = f"call_{i}_{k}"
    result = f"{rng.choice(pool['tool'])}\n(conversation {i}, round {k})"
    user = f"{rng.choice(pool['user'])} ({i}.{k})"
    args = json.dumps({"query": f"item {i}-{k}"})
    if fmt == "openai":
        return [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "lookup", "arguments": args},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": result},
            {"role": "assistant", "content": f"Found it ({i}.{k})."},
            {"role": "user", "content": user},
        ]
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Looking it up ({i}.{k})."},
                {"type": "tool_use", "id": call_id, "name": "lookup", "input": json.loads(args)},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": result},
                {"type": "text", "text": user},
            ],
        },
    ]


def conversation(i: int, pool: dict[str, list[str]], send: Send) -> None:
    """One conversation: the opening, then :data:`CALLS` calls of ``send(history, key)``, a
    round appended before each after the first. Even ``i``: OpenAI Chat dicts; odd: Anthropic
    dicts. Every second conversation keeps what ``send`` returned (the compressed list) as its
    history, the others their full history."""
    rng = random.Random(i)
    fmt = "openai" if i % 2 == 0 else "anthropic"
    opening = f"{rng.choice(pool['user'])} (conversation {i})"
    history: list[Any] = (
        [
            {"role": "system", "content": f"You are support agent #{i}. Be brief."},
            {"role": "user", "content": opening},
        ]
        if fmt == "openai"
        else [{"role": "user", "content": opening}]
    )
    for k in range(OPENING_ROUNDS):
        history += _round(fmt, i, k, rng, pool)
    keep_sent = i % 4 >= 2
    for call in range(CALLS):
        if call:
            history = history + _round(fmt, i, OPENING_ROUNDS + call, rng, pool)
        sent = send(history, f"soak-{i}")
        if keep_sent:
            history = list(sent)


def sender(mode: str, max_conversations: int) -> Send:
    """What one call is, for a state mode (see the module doc)."""
    if mode == "states":
        states = CompactionStates(max_conversations=max_conversations)

        def send(history: list[Any], key: str) -> list[Any]:
            return compress_for_sync(history, POLICY, states=states, conversation=key)[0]

    elif mode == "compactor":
        held: dict[str, Compactor] = {}  # the live conversation's, as a caller holds it

        def send(history: list[Any], key: str) -> list[Any]:
            if key not in held:
                held.clear()  # the conversation before has ended: its object goes
                held[key] = Compactor(POLICY, conversation=key)
            return held[key].compress_sync(history)[0]

    else:

        def send(history: list[Any], key: str) -> list[Any]:
            return compress_for_sync(history, POLICY, states=False)[0]

    return send


# ----------------------------------------------------------------------------- measuring


def rss_mb() -> float:
    """The process's resident set now (MB); its peak where /proc is missing."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def soak(
    conversations: int,
    checkpoints: int,
    send: Send,
    pool: dict[str, list[str]],
    *,
    trace: bool = True,
) -> list[tuple[int, float, float, float]]:
    """Run ``conversations`` conversations; at ``checkpoints`` evenly spaced points (and at
    0), ``(conversations done, traced MB or nan, RSS MB, seconds)``."""
    if trace:
        tracemalloc.start()
    marks = {round(conversations * (c + 1) / checkpoints) for c in range(checkpoints)}
    out: list[tuple[int, float, float, float]] = []
    start = time.perf_counter()

    def mark(n: int) -> None:
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] / 2**20 if trace else float("nan")
        out.append((n, traced, rss_mb(), time.perf_counter() - start))

    mark(0)
    for i in range(conversations):
        conversation(i, pool, send)
        if i + 1 in marks:
            mark(i + 1)
    if trace:
        tracemalloc.stop()
    return out


def growth(rows: Sequence[tuple[int, float, float, float]], part: float) -> tuple[float, float]:
    """(traced, RSS) growth in MB over the last ``part`` of the run (from the checkpoint at or
    before its start)."""
    n = rows[-1][0]
    base = max((r for r in rows if r[0] <= n * (1 - part)), key=lambda r: r[0])
    return rows[-1][1] - base[1], rows[-1][2] - base[2]


# ----------------------------------------------------------------------------- main


def cache_fill() -> dict[str, str]:
    """How full the library's process-level memos are: entries / bound (and characters held
    / bound), for the caches still filling when growth is not yet flat."""
    from agent_adapter.context import _lru
    from agent_adapter.context.formats import _conversion, _memo

    out = {
        f"memo {m.entries}/{m.chars}": f"{len(m.items)} entries, {m.held} chars" for m in _lru._ALL
    }
    for name, each in (("anthropic", _memo._ANTHROPIC_EACH), ("chat", _memo._CHAT_EACH)):
        out[f"natives {name}"] = f"{len(each.natives.entries)}/{each.natives.size}"
    out["loads"] = f"{len(_conversion._REMEMBERED.entries)}/{_conversion._REMEMBERED.size}"
    return out


def _child(args: argparse.Namespace, mode: str) -> None:
    pool = text_pool(None if args.synthetic else _data(args.data))
    rows = soak(
        args.conversations,
        args.checkpoints,
        sender(mode, args.max_conversations),
        pool,
        trace=not args.no_tracemalloc,
    )
    print(json.dumps([rows, cache_fill()]))


def _data(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("AGENT_ADAPTER_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=3000)
    parser.add_argument("--checkpoints", type=int, default=12)
    parser.add_argument("--max-conversations", type=int, default=256)
    parser.add_argument("--modes", default="states,compactor,off")
    parser.add_argument("--last", type=float, default=1 / 3, help="the part growth is over")
    parser.add_argument("--data", default=None)
    parser.add_argument("--synthetic", action="store_true", help="no data: a synthetic pool")
    parser.add_argument("--no-tracemalloc", action="store_true")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args, args.child)
        return
    modes = [m for m in args.modes.split(",") if m]
    summary = []
    for mode in modes:
        argv = [a for a in sys.argv[1:] if not a.startswith("--child")]
        out = subprocess.run(
            [sys.executable, __file__, *argv, "--child", mode],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rows, fill = json.loads(out.strip().splitlines()[-1])
        label = {
            "states": f"CompactionStates(max_conversations={args.max_conversations})",
            "compactor": "a Compactor per conversation",
            "off": "states=False",
        }[mode]
        print(f"\n{label}: {args.conversations} conversations x {CALLS} calls")
        print(f"{'conversations':>13} {'traced MB':>10} {'RSS MB':>8} {'seconds':>8}")
        for n, traced, rss, secs in rows:
            print(f"{n:>13} {traced:>10.1f} {rss:>8.1f} {secs:>8.1f}")
        print("caches at the end: " + "; ".join(f"{k}: {v}" for k, v in fill.items()))
        summary.append((label, *growth(rows, args.last)))
    lo = round(args.conversations * (1 - args.last))
    print(f"\ngrowth over the last {args.conversations - lo} conversations ({lo} -> end):")
    print(f"{'mode':<42} {'traced MB':>10} {'RSS MB':>8}")
    for label, traced, rss in summary:
        print(f"{label:<42} {traced:>+10.1f} {rss:>+8.1f}")


if __name__ == "__main__":
    main()
