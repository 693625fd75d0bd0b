"""Linear in length (issue 33, item 6): one compression of a conversation twice as long does
at most about twice the work.

Work is counted, never timed (speed is measured by ``bench/scaling.py``): the library's
Python function calls during one compression (``sys.setprofile``) and the messages its token
counter is given, at N and 2N tiny support-bot messages. A pass that walks the list once per
removed unit, a full-list total per step inside a loop, or a list copy per dropped message
would make them grow about four times.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import agent_adapter
from agent_adapter import Message
from agent_adapter.context import (
    CompressionPolicy,
    _lru,
    _pairing,
    _tokens,
    _units,
    compress,
    compress_for_sync,
    estimate_tokens,
)
from agent_adapter.context._digest import clear_memos
from agent_adapter.context.formats import _conversion, convert

_ROOT = str(Path(agent_adapter.__file__).parent)
N = 1_000


def _conversation(n: int) -> list[dict[str, Any]]:
    """A support bot's conversation of ``n`` tiny OpenAI chat dicts: a system prompt, short
    user / assistant turns, a tool round every 25 turns, some replies said again and again."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a support bot."}]
    turn = 0
    while len(out) < n:
        order = 1000 + turn % 97
        if turn % 25 == 24 and len(out) + 4 <= n:
            call = f"call_{turn}"
            fn = {"name": "order_status", "arguments": f'{{"order": {order}}}'}
            out += [
                {"role": "user", "content": f"Where is order {order}?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": call, "type": "function", "function": fn}
                ]},
                {"role": "tool", "tool_call_id": call, "content": "shipped, 2 days"},
                {"role": "assistant", "content": f"Order {order} arrives in 2 days."},
            ]  # fmt: skip
        else:
            asks = ("Hi, order {o} has not arrived.", "Thanks!", "Can you check order {o}?")
            says = ("Let me look into order {o}.", "You're welcome!", "Anything else?")
            out.append({"role": "user", "content": asks[turn % 3].format(o=order)})
            out.append({"role": "assistant", "content": says[turn % 3].format(o=order)})
        turn += 1
    return out[:n]


def _cold() -> None:
    """Forget what the memos hold: each run is one compression of a list never seen."""
    _lru.clear()
    clear_memos()
    _conversion._REMEMBERED.clear()
    # the lists the pairing check and the token counts hold (a few each, bounded): left to
    # the run, an earlier test's messages died inside it when new lists took their places
    _pairing._VALIDATED.lists.clear()
    for counts in list(_tokens._SHARED.values()):
        counts.memos = []


class _CountingCounter:
    """estimate_tokens, counting the calls and the messages it is given."""

    def __init__(self) -> None:
        self.calls = 0
        self.messages = 0

    def __call__(self, messages: Sequence[Message]) -> int:
        self.calls += 1
        self.messages += len(messages)
        return estimate_tokens(messages)


def _run(kind: str, n: int, counter: _CountingCounter | None = None) -> Callable[[], Any]:
    policy = CompressionPolicy(threshold_tokens=4_000, target_tokens=3_000, token_counter=counter)
    natives = _conversation(n)
    if kind == "compress_for":
        return lambda: compress_for_sync(natives, policy, format="openai")
    messages = convert(natives, "openai").messages
    return lambda: asyncio.run(compress(messages, policy))


#: Weak-reference callbacks: they run when an object dies, which an earlier test's objects
#: (held by the memos until a new list takes their place) may do inside the profiled call,
#: with or without the collector (78 -> 1717 calls of ``_units._forget`` on a loaded CI
#: machine): the interpreter's timing, not the algorithm's calls.
_FINALIZERS = {_units._forget.__code__}


def _calls(kind: str, n: int) -> Counter[str]:
    """The library's Python function calls, by function, in one cold compression."""
    run = _run(kind, n)
    _cold()
    # what earlier runs left dies now, and the collector stays off during the profiled call:
    # weak-reference callbacks such as _units._forget ran there whenever a collection found
    # earlier garbage (18 -> 941, 208 -> 1901 under xdist), counts of the collector's timing,
    # not of the algorithm (objects freed by their last reference still count)
    gc.collect()
    calls: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if (
            event == "call"
            and frame.f_code.co_filename.startswith(_ROOT)
            and frame.f_code not in _FINALIZERS
        ):
            calls[f"{frame.f_code.co_filename}:{frame.f_code.co_name}"] += 1

    gc.disable()
    sys.setprofile(profile)
    try:
        _, report = run()
    finally:
        sys.setprofile(None)
        gc.enable()
    assert report.messages_removed > n // 2  # it did compress
    return calls


@pytest.mark.parametrize("kind", ["compress_for", "compress"])
def test_twice_the_messages_make_at_most_about_twice_the_calls(kind: str) -> None:
    small, big = _calls(kind, N), _calls(kind, 2 * N)
    assert sum(big.values()) <= 2.2 * sum(small.values())
    # no single function grows like a quadratic one (about 4x) either
    grown = {f: (small[f], c) for f, c in big.items() if c >= 500 and c > 3 * small[f]}
    assert not grown


@pytest.mark.parametrize("kind", ["compress_for", "compress"])
def test_the_token_counter_is_given_each_message_a_bounded_number_of_times(kind: str) -> None:
    seen = []
    for n in (N, 2 * N):
        counter = _CountingCounter()
        run = _run(kind, n, counter)
        _cold()
        run()
        assert counter.messages <= 4 * n
        seen.append(counter.messages)
    assert seen[1] <= 2.2 * seen[0]
