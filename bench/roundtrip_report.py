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
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from _compress_cases import data_dir
from _roundtrip_data import REPO, load_conversations
from _roundtrip_hypothesis import HYPOTHESIS_FILES, hypothesis_table
from _roundtrip_output import main_table, notes, source_table
from _roundtrip_run import RATIOS, STEP_SETS, TARGETS, TargetResult, process

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
