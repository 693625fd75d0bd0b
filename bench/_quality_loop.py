"""The agent-loop case of ``quality.py``: several compressions in a row.

An agent sends its whole history every call; ``compress_for`` remembers what it sent
(``states``) and, when the history extends it, compresses that request plus the new round
again instead of the full history. :func:`replay` plays a real trace so: the history up to
each assistant message (one round more each call) goes through ``compress_for_sync`` with
one ``CompactionStates`` of its own and ``threshold_tokens = target_tokens = T``, the same
T as the one-shot run (a share of the *whole* trace's tokens), so every call over T
compresses the previous request plus one new round. The last call's output is what is
scored, against the whole trace.
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter.context import CompactionStates, CompressionPolicy, compress_for_sync


@dataclass
class Replay:
    """One replay: the last call's output, how many calls compressed, their milliseconds."""

    out: list[Any]
    calls: int
    compressions: int
    ms: list[float]


def _role(native: Any) -> Any:
    if isinstance(native, dict):
        return native.get("role")
    return getattr(native, "role", None)


def round_ends(natives: Sequence[Any]) -> list[int]:
    """Where each call's history ends: before every assistant native after the first user
    one (the history then ends on a user turn or a tool result, as an agent sends it), and
    the whole trace last."""
    first_user = next((i for i, n in enumerate(natives) if _role(n) == "user"), 0)
    ends = [
        i for i, n in enumerate(natives) if i > first_user and _role(n) in ("assistant", "model")
    ]
    return [*ends, len(natives)]


def replay(natives: Sequence[Any], fmt: str, target: int, conversation: str) -> Replay:
    """``natives`` sent as an agent loop sends them (see the module), compressed at ``target``."""

    policy = CompressionPolicy(target_tokens=target, threshold_tokens=target)
    states = CompactionStates(max_conversations=4)
    out: list[Any] = list(natives)
    ms: list[float] = []
    ends = round_ends(natives)
    compressions = 0
    for end in ends:
        t0 = time.perf_counter()
        out, report = compress_for_sync(
            natives[:end], policy, format=fmt, states=states, conversation=conversation
        )
        elapsed = (time.perf_counter() - t0) * 1e3
        if report.tokens_before > report.threshold_tokens:
            compressions += 1
            ms.append(elapsed)
    return Replay(out, len(ends), compressions, ms)
