"""The errors cliver_core adds to agent_adapter's.

Hierarchy (the ``ValueError`` s are raised before any model call)::

    TimeoutError
    └── RunTimeout                 a run took longer than its run_timeout
    agent_adapter.ConfigError (ValueError)
    └── CompactionError            a compactor's plan or history breaks the contract
    SkillError (Exception, as 0.3.0a5's)  a skill cannot be loaded or run
    └── SkillNotFoundError
    CapabilityNotSupported         no model bound for a purpose

Model failures are agent_adapter's :class:`~agent_adapter.ModelError` family, unchanged.
"""

from __future__ import annotations

__all__ = ["CapabilityNotSupported", "RunTimeout"]


class RunTimeout(TimeoutError):
    """The run's ``run_timeout`` ran out (model calls, compaction and tools included).

    Attributes:
        run_id: the run that timed out.
        timeout_s: its budget in seconds.
    """

    def __init__(self, run_id: str, timeout_s: float) -> None:
        self.run_id = run_id
        self.timeout_s = timeout_s
        super().__init__(f"run {run_id} exceeded its run_timeout of {timeout_s:g}s")


class CapabilityNotSupported(Exception):
    """No model is bound for a purpose, or the bound provider cannot serve it."""
