#!/usr/bin/env python
"""Scaling: one compression of N tiny chat messages, against N, next to ``trim_messages``.

A support bot's conversation of N OpenAI chat dicts (a system prompt, short alternating
user / assistant turns, now and then a tool round: an assistant call and its result, and a
few repeated replies such as "Thanks!") goes through

* ``compress_for_sync(msgs, CompressionPolicy(threshold_tokens=4000, target_tokens=3000))``
  (default steps: convert, compress, back to the native dicts), column **compress_for**;
* ``compress(messages, policy)`` on the same conversation as ``agent_adapter`` Messages
  (converted outside the timing), column **compress**;
* LangChain's ``trim_messages(max_tokens=3000, strategy="last", start_on="human",
  include_system=True, token_counter=<chars/4 + 4 a message>)`` on the same conversation
  converted by ``langchain_core.messages.convert_to_messages`` (outside the timing), column
  **trim_messages**.

Each cell runs in a fresh subprocess; every call is cold (the library's memos cleared, the
input made anew outside the timing: one compression of a list never seen): the min of
``--repeat`` wall and CPU times (the machines are shared: CPU time is the steadier one; the
load average is printed with the table), the ``tracemalloc`` peak of one more call, and RSS
growth (peak RSS of the process over its RSS just before the first timed call).

**What the memory columns measure.** ``peak`` is the figure issue 33's "<= 60 MB at 100,000
messages" is judged by: the ``tracemalloc`` peak of one cold call, started after the input
list was made, so it counts the call's own Python allocations alive at its worst moment
(the messages converted, the steps' working lists, what the library's memos keep from the
call), not the caller's input. ``rss`` is shown beside it, honestly larger or smaller: the
process's peak RSS over its RSS before the first timed call, which also counts allocator
arenas and the interpreter's free lists, and is 0 when the first call fits in memory an
earlier phase (making the input) already grew to. Timings never run under ``tracemalloc``.

    python bench/scaling.py                          # N = 12,500 / 25,000 / 50,000 / 100,000
    python bench/scaling.py --sizes 1000,2000 --repeat 1
    python bench/scaling.py --digest 12500,25000     # sha256 of json.dumps(outputs), to
                                                     # compare a refactor's before / after
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

SIZES = (12_500, 25_000, 50_000, 100_000)
KINDS = ("compress_for", "compress", "trim_messages")
THRESHOLD, TARGET = 4_000, 3_000

_QUESTIONS = (
    "Hi, my order {n} has not arrived yet.",
    "Can you check the status of order {n}?",
    "I was charged twice for order {n}.",
    "How do I change the address on order {n}?",
    "Is there a discount for order {n}?",
    "Thanks!",
    "ok",
)
_ANSWERS = (
    "Sorry about that, let me look into order {n}.",
    "Order {n} shipped yesterday and should arrive in two days.",
    "I have refunded the duplicate charge on order {n}.",
    "You're welcome!",
    "Anything else I can help with?",
)


def conversation(n: int) -> list[dict[str, Any]]:
    """A support bot's conversation of exactly ``n`` tiny OpenAI chat dicts."""
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a friendly support bot for an online shop."}
    ]
    turn = 0
    while len(out) < n:
        order = 1000 + turn % 997
        if turn % 25 == 24 and len(out) + 4 <= n:  # a tool round
            call = f"call_{turn}"
            args = json.dumps({"order": order})
            out.append({"role": "user", "content": f"Where is order {order}?"})
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call,
                            "type": "function",
                            "function": {"name": "order_status", "arguments": args},
                        }
                    ],
                }
            )
            out.append({"role": "tool", "tool_call_id": call, "content": "shipped, 2 days"})
            out.append({"role": "assistant", "content": f"Order {order} arrives in 2 days."})
        else:
            out.append(
                {"role": "user", "content": _QUESTIONS[turn % len(_QUESTIONS)].format(n=order)}
            )
            if len(out) < n:
                answer = _ANSWERS[turn % len(_ANSWERS)].format(n=order)
                out.append({"role": "assistant", "content": answer})
        turn += 1
    return out[:n]


def _cold() -> None:
    """Forget what the library's memos hold: each timed call is one compression of a list
    never seen (the steady state of an agent loop is ``bench/steady_state.py``'s)."""
    from agent_adapter.context import _lru
    from agent_adapter.context._digest import clear_memos
    from agent_adapter.context.formats import _conversion

    _lru.clear()
    clear_memos()
    _conversion._REMEMBERED.clear()


def _runner(kind: str, n: int) -> tuple[Callable[[], Callable[[], Any]], Callable[[Any], Any]]:
    """(a maker of the call to measure, with its input made fresh: nothing counted or
    converted before; the output as JSON-able data)."""
    import asyncio

    from agent_adapter.context import CompressionPolicy, compress, compress_for_sync
    from agent_adapter.context.formats import convert

    policy = CompressionPolicy(threshold_tokens=THRESHOLD, target_tokens=TARGET)
    if kind == "compress_for":

        def make() -> Callable[[], Any]:
            natives = conversation(n)
            return lambda: compress_for_sync(natives, policy, format="openai")[0]

        return make, lambda out: out
    if kind == "compress":

        def make() -> Callable[[], Any]:
            messages = convert(conversation(n), "openai").messages
            return lambda: asyncio.run(compress(messages, policy))[0]

        return make, lambda out: [repr(m) for m in out]
    from langchain_core.messages import convert_to_messages, trim_messages

    from _compress_langchain import lc_token_counter

    def make_lc() -> Callable[[], Any]:
        lc = convert_to_messages(conversation(n))
        return lambda: trim_messages(
            lc,
            max_tokens=TARGET,
            token_counter=lc_token_counter,
            strategy="last",
            start_on="human",
            include_system=True,
        )

    return make_lc, lambda out: [m.model_dump() for m in out]


def _rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def _cell(kind: str, n: int, repeat: int) -> dict[str, Any]:
    """Measured in this process (a fresh one per cell): each call cold, on a fresh input."""
    make, _ = _runner(kind, n)
    walls, cpus = [], []
    rss_growth = 0
    for _ in range(repeat):
        run = make()
        _cold()
        gc.collect()
        rss0 = _rss_kb()
        wall, cpu = time.perf_counter(), time.process_time()
        out = run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        if not rss_growth:  # the first call: peak RSS over RSS before it
            rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0
        del out, run
    run = make()
    _cold()
    gc.collect()
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"s": min(walls), "cpu": min(cpus), "peak_mb": peak / 2**20, "rss_mb": rss_growth / 1024}


def _digest(kind: str, n: int) -> str:
    make, data = _runner(kind, n)
    run = make()
    _cold()
    body = json.dumps(data(run()), sort_keys=True, default=repr)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def _sub(args: list[str]) -> Any:
    done = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=False
    )
    if done.returncode:
        sys.exit(done.stderr)
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--digest", help="sizes: print digests of the outputs instead")
    parser.add_argument("--cell", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--digest-cell", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        print(json.dumps(_cell(args.cell[0], int(args.cell[1]), args.repeat)))
        return 0
    if args.digest_cell:
        print(json.dumps(_digest(args.digest_cell[0], int(args.digest_cell[1]))))
        return 0
    kinds = args.kinds.split(",")
    if args.digest:
        for n in map(int, args.digest.split(",")):
            for kind in kinds:
                print(f"{kind:>14} {n:>7}  {_sub(['--digest-cell', kind, str(n)])}")
        return 0
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs;")
    print(
        f"s / cpu = wall / CPU seconds of one cold call, min of {args.repeat}; "
        "peak = tracemalloc peak, rss = RSS growth of the first call, MB"
    )
    head = "".join(f" | {k:>33}" for k in kinds)
    print(f"{'N':>8}{head}")
    print(f"{'':>8}" + " | {:>7} {:>7} {:>8} {:>8}".format("s", "cpu", "peak", "rss") * len(kinds))
    for n in map(int, args.sizes.split(",")):
        cells = [_sub(["--cell", kind, str(n), "--repeat", str(args.repeat)]) for kind in kinds]
        row = "".join(
            f" | {c['s']:>7.3f} {c['cpu']:>7.3f} {c['peak_mb']:>8.1f} {c['rss_mb']:>8.1f}"
            for c in cells
        )
        print(f"{n:>8}{row}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
