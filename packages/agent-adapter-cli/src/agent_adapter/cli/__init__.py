"""The ``agent-adapter`` command line: compress, inspect and report recorded agent conversations.

Commands:

* ``agent-adapter compress FILE``: compress a conversation with a
  :class:`~agent_adapter.context.CompressionPolicy`, print what each step did, check the
  result against the provider's rules (every tool call still has its result), and write the
  compressed list (``-o``) in the file's own native format.
* ``agent-adapter inspect FILE``: tokens per role, the units a compression works on, and what
  is protected and why (:meth:`~agent_adapter.context.Protection.reason`).
* ``agent-adapter report FILE -o report.html``: one self-contained HTML page of the units by
  tokens and kind, what is protected and why, and (with a policy) before and after side by
  side, each unit marked kept / changed / dropped / added by the step that did it.

FILE may also be a directory: every trace file in it, one row a file (``-o`` a directory), with
a progress bar when stdout and stderr are terminals; ``--json`` prints the figures for scripts.

FILE is a mini-swe-agent or SWE-agent trajectory, a tau-bench file (``--index`` picks the
dialog), a Claude Code transcript, or a plain JSON list / JSONL file of OpenAI, Anthropic or
Gemini messages.

The loaders that read them are public too, for programs (they need neither typer nor rich):
:func:`load_trace` detects the kind of file and returns a :class:`Trace` of native provider
dicts (OpenAI Chat Completions for the agent trajectories, with real ``tool_calls``; Anthropic
Messages for Claude Code); :func:`load_mini_swe_agent`, :func:`load_swe_agent`,
:func:`load_tau_bench` and :func:`load_claude_code` read one kind each::

    from agent_adapter.cli import load_trace

    trace = load_trace("../shared/data/mini-swe-agent-gemini3pro/trajs/"
                       "pytest-dev__pytest-6197.traj.json")
    trace.format, len(trace.messages)   # ("openai", 186)

Exit codes: 0 success; 1 the target was not reached and ``--strict`` was given (or
``--if-still-too-long raise`` raised); 2 bad usage or bad input (one line on stderr, no
traceback).

The command line needs typer and rich: ``pip install "agent-adapter[cli]"``. The library
itself never imports them; only :func:`main` does, when it runs.
"""

from agent_adapter.cli._loaders import (
    Trace,
    load_claude_code,
    load_mini_swe_agent,
    load_swe_agent,
    load_tau_bench,
    load_trace,
)
from agent_adapter.cli._main import main

__all__ = [
    "Trace",
    "load_claude_code",
    "load_mini_swe_agent",
    "load_swe_agent",
    "load_tau_bench",
    "load_trace",
    "main",
]
