"""Deprecated alias of :mod:`agent_adapter.cli._loaders`, the recorded-session loaders.

Kept only for importers not yet moved (tests/test_formats_*.py, tests/test_real_traces.py);
new code imports from ``agent_adapter.cli._loaders``. Remove once nothing imports this.
"""

from agent_adapter.cli._loaders import (
    NO_RESULT_TEXT,
    Trace,
    load_claude_code,
    load_mini_swe_agent,
    load_swe_agent,
    load_tau_bench,
    load_trace,
)

__all__ = [
    "NO_RESULT_TEXT",
    "Trace",
    "load_claude_code",
    "load_mini_swe_agent",
    "load_swe_agent",
    "load_tau_bench",
    "load_trace",
]
