"""The one path every integration compresses through: compress_for, the report callback and
the OpenTelemetry span."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter.context import CompressionPolicy, CompressionReport
from agent_adapter.context.formats import compress_for, compress_for_sync
from agent_adapter.integrations._telemetry import record_span

__all__ = ["Compressor", "OnReport"]

OnReport = Callable[[CompressionReport], None]


@dataclass(frozen=True)
class Compressor:
    """A policy bound to one framework's format (what each integration holds).

    Attributes:
        policy: the compression policy.
        format: the message format name of the framework's history.
        framework: the name the span and errors use.
        model_max_tokens: the context window, for a policy in percents (else the policy's).
        on_report: called with each compression's report (also when nothing was compressed).
    """

    policy: CompressionPolicy
    format: str
    framework: str
    model_max_tokens: int | None = None
    on_report: OnReport | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.policy, CompressionPolicy):
            raise ConfigError(
                f"{self.framework}: policy must be a CompressionPolicy, got "
                f"{type(self.policy).__name__}"
            )
        if self.on_report is not None and not callable(self.on_report):
            raise ConfigError(f"{self.framework}: on_report must be callable")
        # a percent policy without a window fails here, not at the first model call
        self.policy.limits(self.model_max_tokens)

    def _done(
        self, report: CompressionReport, started: int, agent: str | None, model: str | None
    ) -> None:
        record_span(report, framework=self.framework, started_ns=started, agent=agent, model=model)
        if self.on_report is not None:
            self.on_report(report)

    async def run(
        self, messages: Sequence[Any], *, agent: str | None = None, model: str | None = None
    ) -> list[Any]:
        """The compressed natives (the caller's list object when nothing changed)."""
        started = time.time_ns()
        result, report = await compress_for(
            messages, self.policy, format=self.format, model_max_tokens=self.model_max_tokens
        )
        self._done(report, started, agent, model)
        return result

    def run_sync(
        self, messages: Sequence[Any], *, agent: str | None = None, model: str | None = None
    ) -> list[Any]:
        """:meth:`run` for sync code (see :func:`compress_for_sync`)."""
        started = time.time_ns()
        result, report = compress_for_sync(
            messages, self.policy, format=self.format, model_max_tokens=self.model_max_tokens
        )
        self._done(report, started, agent, model)
        return result
