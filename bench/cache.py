"""Prompt cache: what compression costs an agent once the provider's prompt cache is counted.

Real sessions from ``../shared/data`` (the five long Claude Code sessions, the ten longest
mini-swe-agent runs, tau-bench dialogs) are replayed as an agent sends them: call k sends the
history up to the k-th assistant turn. Each call goes through one contender:

* ``none``: the history as it is (no compression);
* ``stateless``: ``compress_for_sync(history, policy, states=False)``, the full history
  compressed again on every call over the threshold (the library before the compaction
  state);
* ``append``: a reference outside the library: keep the last request, append the new
  messages until that is over the threshold, then compress that (stateless);
* ``ours``: one :class:`~agent_adapter.context.Compactor` for the conversation;
* ``model``: ``CompressingModel`` around a model that echoes, on the trace as ``Message`` s,
  with ``RunContext(thread_id=...)``.

Cache accounting as the providers do it: a request's cached part is its longest prefix of
natives equal to the previous request's (the same objects or equal content); cost is in units
of one fresh input token, cache reads 0.1x and cache writes 1.25x (Anthropic's 5-minute
cache), and in dollars at Anthropic's Claude Sonnet 4.5 prices (3 / 0.30 / 3.75 USD a million
input, cache-read, cache-write tokens) and OpenAI's GPT-5 prices (1.25 / 0.125 USD a million
input and cached input; no write surcharge). Tokens are chars/4 of each native's JSON.

Also per trace: the average overhead of ``ours`` a call next to one LangChain
``trim_messages`` call on the final history, and the quality measures of ``bench/quality.py``
(newest three turns verbatim, paths and error lines still named, every request valid) on the
final request, ours against stateless.

    python bench/cache.py             # all traces (~3 min on 2 cores)
    python bench/cache.py --quick     # one trace of each kind
    python bench/cache.py --depth     # how deep to compact: cost and names vs the reference
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _compress_cases import data_dir
from agent_adapter import CallableModel, Message, ModelRequest, ModelResponse, RunContext
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import (
    Compactor,
    CompressingModel,
    CompressionPolicy,
    compress_for_sync,
)
from agent_adapter.context.formats import check, convert, strip_reserved

READ, WRITE = 0.1, 1.25
PRICES = {  # USD a million tokens: input, cache read, cache write
    "anthropic": (3.0, 0.30, 3.75),
    "openai": (1.25, 0.125, 1.25),
}


@dataclass
class Trace:
    name: str
    natives: list[Any]
    threshold: int
    target: int


def _tokens(native: Any) -> int:
    if isinstance(native, Message):
        return len(native.text) // 4 + 4
    return len(json.dumps(native, default=str)) // 4 + 4


@dataclass
class Tally:
    calls: int = 0
    compressing: int = 0
    tokens: int = 0
    read: int = 0
    sizes: dict[int, int] = field(default_factory=dict)
    prev: list[Any] = field(default_factory=list)
    seconds: float = 0.0
    last: list[Any] = field(default_factory=list)
    invalid: int = 0

    def sent(self, request: Sequence[Any], compressed: bool, fmt: str | None) -> None:
        size = [self.sizes.setdefault(id(n), _tokens(n)) for n in request]
        shared = 0
        for a, b in zip(self.prev, request, strict=False):
            if a is not b and a != b:
                break
            shared += 1
        self.calls += 1
        self.compressing += compressed
        self.tokens += sum(size)
        self.read += sum(size[:shared])
        self.prev = list(request)
        self.last = list(request)
        if fmt is not None and check(strip_reserved(list(request)), fmt):
            self.invalid += 1

    @property
    def units(self) -> float:
        return READ * self.read + WRITE * (self.tokens - self.read)

    def usd(self, vendor: str) -> float:
        _, read, write = PRICES[vendor]
        return (read * self.read + write * (self.tokens - self.read)) / 1e6

    @property
    def share(self) -> float:
        return self.read / self.tokens if self.tokens else 0.0


def _calls(natives: list[Any]) -> list[int]:
    cuts = []
    for i in range(1, len(natives)):
        native = natives[i]
        role = native.get("role") if isinstance(native, dict) else None
        if role == "assistant":
            cuts.append(i)
    return [*cuts, len(natives)]


def _replay(trace: Trace, fmt: str) -> dict[str, Tally]:
    policy = CompressionPolicy(threshold_tokens=trace.threshold, target_tokens=trace.target)
    cuts = _calls(trace.natives)
    out: dict[str, Tally] = {k: Tally() for k in ("none", "stateless", "append", "ours")}
    compactor = Compactor(policy, conversation=trace.name)
    last: list[Any] = []
    seen = 0
    for cut in cuts:
        history = trace.natives[:cut]
        out["none"].sent(history, False, None)
        sent, report = compress_for_sync(history, policy, states=False)
        out["stateless"].sent(sent, bool(report.steps), None)
        # append: the last request plus what is new, compressed only when over the threshold
        candidate = [*last, *history[seen:]]
        seen = cut
        sent, report = compress_for_sync(candidate, policy, states=False)
        last = sent
        out["append"].sent(sent, bool(report.steps), None)
        t0 = time.perf_counter()
        sent, report = compactor.compress_sync(history)
        out["ours"].seconds += time.perf_counter() - t0
        out["ours"].sent(sent, bool(report.steps), fmt)
    return out


def _quality(trace: Trace, fmt: str, tallies: dict[str, Tally]) -> str:
    """bench/quality.py's measures of the final request, stateless -> ours: the newest three
    turns verbatim, the share of paths and of error lines still named."""
    from quality import facts, score

    messages = convert(trace.natives, fmt).messages
    before = facts(messages, trace.natives, fmt, sum(map(_tokens, trace.natives)))
    cells = []
    for k in ("stateless", "ours"):
        out = strip_reserved(tallies[k].last)
        got = score(before, convert(out, fmt).messages, out, fmt, 0, trace.target, 0.0)
        paths = "-" if got.paths is None else f"{got.paths:.0%}"
        errors = "-" if got.errors is None else f"{got.errors:.0%}"
        cells.append(f"{'yes' if got.last_turns else 'no'} {paths} {errors}")
    return " -> ".join(cells)


def _replay_model(trace: Trace, fmt: str) -> Tally:
    """The same replay through CompressingModel on the trace's messages."""
    messages = convert(trace.natives, fmt).messages
    starts = convert(trace.natives, fmt)._ranges
    policy = CompressionPolicy(threshold_tokens=trace.threshold, target_tokens=trace.target)
    seen: list[list[Message]] = []

    def echo(request: ModelRequest) -> ModelResponse:
        seen.append(list(request.messages))
        return ModelResponse(message=Message("assistant", "ok"))

    model = CompressingModel(CallableModel(echo), policy)
    ctx = RunContext(thread_id=f"model-{trace.name}")
    tally = Tally()
    import asyncio

    async def run() -> None:
        for cut in _calls(trace.natives):
            k = starts[cut - 1][1] if cut - 1 < len(starts) else len(messages)
            before = len(seen)
            await model.generate(ModelRequest(messages=messages[:k], ctx=ctx))
            sent = seen[before]
            tally.sent(sent, sent is not messages and len(sent) < k, None)

    asyncio.run(run())
    return tally


def _trim_ms(trace: Trace) -> float:
    from _compress_langchain import lc_trim, to_langchain

    lc = to_langchain(load_trace(trace_path[trace.name]))
    lc_trim(lc, trace.target)  # warm (imports, caches)
    t0 = time.perf_counter()
    for _ in range(3):
        lc_trim(lc, trace.target)
    return (time.perf_counter() - t0) / 3 * 1000


trace_path: dict[str, Path] = {}


def _traces(data: Path, quick: bool) -> list[tuple[Trace, str]]:
    out: list[tuple[Trace, str]] = []
    cc = sorted((data / "claude-code-spotter").glob("*.jsonl"), key=lambda p: -p.stat().st_size)
    for path in cc[: 1 if quick else 5]:
        t = load_trace(path)
        trace_path[path.stem[:8]] = path
        out.append((Trace(path.stem[:8], t.messages, 60_000, 40_000), t.format))
    runs = sorted(
        (data / "mini-swe-agent-gemini3pro" / "trajs").glob("*.traj.json"),
        key=lambda p: -p.stat().st_size,
    )
    for path in runs[: 1 if quick else 10]:
        t = load_trace(path)
        name = path.name.split(".")[0][:28]
        trace_path[name] = path
        out.append((Trace(name, t.messages, 40_000, 30_000), t.format))
    tau = data / "tau-bench" / "gpt-4o-airline.json"
    for index in range(1 if quick else 3):
        t = load_trace(tau, index=index)
        name = f"tau-bench #{index}"
        trace_path[name] = tau
        out.append((Trace(name, t.messages, 4_000, 3_000), t.format))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--depth",
        action="store_true",
        help="how deep to compact: the settings of bench/_cache_depth.py against the reference",
    )
    parser.add_argument("--only", default="", help="--depth: the groups whose name holds this")
    args = parser.parse_args(argv)
    if args.depth:
        import _cache_depth
        from quality import PATH_RE

        return _cache_depth.main(data_dir(args.data), args.quick, Tally, PATH_RE, args.only)
    rows: list[list[str]] = []
    for trace, fmt in _traces(data_dir(args.data), args.quick):
        tallies = _replay(trace, fmt)
        model = _replay_model(trace, fmt)
        ours = tallies["ours"]
        per_call = ours.seconds / max(ours.calls, 1) * 1000
        trim = _trim_ms(trace) if trace.name in trace_path else float("nan")
        cells = " / ".join(
            f"{tallies[k].share:.0%}" for k in ("none", "stateless", "append", "ours")
        )
        cost = " / ".join(
            f"{tallies[k].units / 1e6:.2f}M" for k in ("none", "stateless", "append", "ours")
        )
        usd = " / ".join(
            f"${tallies[k].usd('anthropic'):.2f} ${tallies[k].usd('openai'):.2f}"
            for k in ("none", "append", "ours")
        )
        rows.append(
            [
                trace.name,
                f"{trace.threshold // 1000}k -> {trace.target // 1000}k",
                f"{ours.calls} / {tallies['stateless'].compressing} / {ours.compressing}",
                cells,
                f"{model.share:.0%}",
                cost,
                usd,
                f"{per_call:.2f} ms / {trim:.1f} ms",
                str(ours.invalid),
                _quality(trace, fmt, tallies),
            ]
        )
    head = [
        "trace",
        "policy",
        "calls / compressing: stateless / ours",
        "cache reads: none / stateless / append / ours",
        "model",
        "cost: none / stateless / append / ours",
        "USD Anthropic OpenAI: none / append / ours",
        "ours a call / trim_messages",
        "invalid",
        "final request, stateless -> ours: last 3 turns, paths, error lines",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
