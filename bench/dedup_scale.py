"""RemoveDuplicates at scale: seconds against conversation length, exact and similar.

A synthetic coding-agent conversation of N messages (tool rounds: files read and read again
after a one-line edit, tests run again with another count and timing line, ``git status`` /
``ls`` / ``git diff --stat`` over and over, questions asked again with a word added, "ok"
and "go on" replies; prose and code from a Zipf-weighted vocabulary of ``--words`` made-up
words) goes through ``compress_for_sync(natives, CompressionPolicy(target_tokens=T,
steps=[RemoveDuplicates(...)]), format="openai")``: ``match="exact"``, then
``match="similar"`` with ``BM25Scorer()`` (the zero-model scorer) at 0.9. T is a tenth of the
conversation, so the step walks every copy it may drop (in both of the engine's passes).
Columns: N (messages), seconds of one call (median of ``--repeat``), messages dropped.

``--before DIR`` times the library under ``DIR`` too (the ``src`` folder of another checkout,
e.g. ``git worktree add --detach /tmp/aa-head HEAD``), in a subprocess, up to
``--before-max`` messages (the old similar match took minutes past 10,000). The "after"
columns are the library this interpreter imports (this checkout, or ``PYTHONPATH``).

    python bench/dedup_scale.py                       # N = 2,000 / 10,000 / 50,000
    git worktree add --detach /tmp/aa-head HEAD
    python bench/dedup_scale.py --sizes 2000,5000,10000,50000 --before /tmp/aa-head/src
    python bench/dedup_scale.py --words 300           # texts all alike: the index's worst case
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Syllables of the made-up vocabulary: real text draws its words from thousands, a few of
#: them often (Zipf's law), so most messages hold a word few others do.
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


class Vocabulary:
    """``size`` made-up words drawn with Zipf weights (the r-th most common ~ 1/r)."""

    def __init__(self, rng: random.Random, size: int) -> None:
        self.rng = rng
        self.words = sorted(
            {
                "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4)))
                for _ in range(size * 2)
            }
        )[:size]
        rng.shuffle(self.words)
        weights = [1 / r for r in range(1, len(self.words) + 1)]
        total = 0.0
        self.cumulative = []
        for w in weights:
            total += w
            self.cumulative.append(total)

    def sample(self, n: int) -> str:
        """n words, space-separated."""
        return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=n))

    def one(self) -> str:
        return self.sample(1)


def _file(vocab: Vocabulary, lines: int) -> list[str]:
    out = []
    for i in range(lines):
        name = f"{vocab.one()}_{vocab.one()}"
        out.append(f"def {name}_{i}(self, {vocab.one()}):")
        out.append(f"    return self.{vocab.one()}({vocab.one()}, {i})")
    return out


def conversation(n: int, seed: int = 0, words: int = 20_000) -> list[dict[str, Any]]:
    """n OpenAI chat messages (dicts) of a synthetic coding session, deterministic per seed;
    its prose and code draw on a vocabulary of ``words`` made-up words."""
    rng = random.Random(seed)
    vocab = Vocabulary(rng, words)
    files: dict[str, list[str]] = {}
    tests: list[str] = []
    questions: list[str] = []
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    calls = 0

    def round_(command: str, output: str, text: str = "") -> None:
        nonlocal calls
        calls += 1
        cid = f"call_{calls}"
        args = json.dumps({"command": command})
        msgs.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {"id": cid, "type": "function", "function": {"name": "bash", "arguments": args}}
                ],
            }
        )
        msgs.append({"role": "tool", "tool_call_id": cid, "content": output})

    while len(msgs) < n:
        roll = rng.random()
        if roll < 0.08 or not files:  # a new task: a question, maybe one asked before
            if questions and rng.random() < 0.3:
                q = rng.choice(questions) + " " + rng.choice(("please", "again", "now"))
            else:
                q = f"Why does {vocab.sample(3)} fail when {vocab.sample(8)}?"
                questions.append(q)
            msgs.append({"role": "user", "content": q})
            msgs.append({"role": "assistant", "content": f"Let me look. {vocab.sample(12)}"})
            if len(files) < max(8, n // 60) or rng.random() < 0.2:
                path = f"src/pkg/mod_{len(files)}.py"
                files[path] = _file(vocab, rng.randint(10, 60))
        elif roll < 0.35:  # read a file (often one read before)
            path = rng.choice(list(files))
            round_(f"cat {path}", "\n".join(files[path]))
        elif roll < 0.45:  # edit it: the next read is a near-copy
            path = rng.choice(list(files))
            body = files[path]
            at = rng.randrange(len(body))
            body[at] = body[at] + f"  # {vocab.sample(2)}"
            round_(f"sed -i '{at + 1}s/$/ # fix/' {path}", "", f"Fixing {vocab.sample(4)}.")
        elif roll < 0.6:  # run the tests again: a new timing line
            if not tests or rng.random() < 0.15:
                tests.append(f"tests/test_{len(tests)}.py")
            test = rng.choice(tests)
            passed = rng.randint(1, 40)
            head = "".join(f"{test}::test_{i} PASSED\n" for i in range(passed))
            round_(f"pytest -q {test}", f"{head}{passed} passed in {rng.random():.2f}s")
        elif roll < 0.7:  # the same status and listing commands over and over
            cmd = rng.choice(("git status", "ls src/pkg", "git diff --stat"))
            changed = rng.sample(list(files), min(len(files), rng.randint(1, 4)))
            round_(cmd, "\n".join(f" M {p}" for p in sorted(changed)))
        elif roll < 0.85:
            msgs.append({"role": "assistant", "content": f"{vocab.sample(rng.randint(5, 40))}."})
        else:
            msgs.append({"role": "user", "content": rng.choice(("ok", "go on", "thanks", "and?"))})
    while msgs[-1]["role"] != "user":
        msgs.append({"role": "user", "content": "go on"})
    return msgs


def measure(sizes: Sequence[int], repeat: int, words: int = 20_000) -> list[dict[str, Any]]:
    """Rows of N, match and seconds for the library on sys.path."""
    from agent_adapter.context import (
        BM25Scorer,
        CompressionPolicy,
        RemoveDuplicates,
        compress_for_sync,
        estimate_tokens,
    )
    from agent_adapter.context.formats import convert

    rows = []
    for n in sizes:
        natives = conversation(n, words=words)
        tokens = estimate_tokens(convert(natives, "openai").messages)
        for match in ("exact", "similar"):
            step = (
                RemoveDuplicates()
                if match == "exact"
                else RemoveDuplicates(match="similar", scorer=BM25Scorer())
            )
            policy = CompressionPolicy(
                target_tokens=tokens // 10, steps=[step], on_step_error="raise"
            )
            times = []
            out: list[Any] = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                out, _report = compress_for_sync(natives, policy, format="openai")
                times.append(time.perf_counter() - t0)
            rows.append(
                {
                    "n": len(natives),
                    "match": match,
                    "seconds": statistics.median(times),
                    "dropped": len(natives) - len(out),
                }
            )
            print(f"  {match:7} N={len(natives):6}: {rows[-1]['seconds']:.2f}s", file=sys.stderr)
    return rows


def _before(src: str, sizes: Sequence[int], repeat: int, words: int) -> list[dict[str, Any]]:
    """measure() for the library under src, in a subprocess (its own imports)."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[2]);"
        "import dedup_scale as d;"
        "print(json.dumps(d.measure(json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))))"
    )
    bench = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", code, src, bench, json.dumps(list(sizes)), str(repeat), str(words)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="2000,10000,50000")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--before", help="the src/ folder of another checkout to compare")
    parser.add_argument("--before-max", type=int, default=10_000)
    parser.add_argument(
        "--words",
        type=int,
        default=20_000,
        help="vocabulary size (a few hundred: texts all alike, the index's worst case)",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    before: dict[tuple[int, str], dict[str, Any]] = {}
    if args.before:
        print(f"before: {args.before}", file=sys.stderr)
        kept = [n for n in sizes if n <= args.before_max]
        rows = _before(args.before, kept, args.repeat, args.words)
        before = {(r["n"], r["match"]): r for r in rows}
    import agent_adapter

    print(f"after: {Path(agent_adapter.__file__).parents[1]}", file=sys.stderr)
    rows = measure(sizes, args.repeat, args.words)
    head = ("N", "match", "before s", "after s", "before dropped", "after dropped")
    print("| " + " | ".join(head) + " |\n|" + "---:|" * len(head))
    for r in rows:
        old = before.get((r["n"], r["match"]))
        was = (f"{old['seconds']:.2f}", str(old["dropped"])) if old else ("-", "-")
        cells = (f"{r['n']:,}", r["match"], was[0], f"{r['seconds']:.2f}", was[1], r["dropped"])
        print("| " + " | ".join(map(str, cells)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
