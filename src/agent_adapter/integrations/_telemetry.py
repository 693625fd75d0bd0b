"""One OpenTelemetry span per compression, when ``opentelemetry-api`` is installed.

The span follows the OpenTelemetry GenAI semantic conventions where they apply
(https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/): its name is
``{gen_ai.operation.name} {framework}``, its kind ``INTERNAL`` (the work runs in process), and
it carries ``gen_ai.operation.name`` (``"compress_context"``: the conventions list no
well-known value for this operation, and allow a custom one), ``gen_ai.agent.name``,
``gen_ai.request.model`` and ``gen_ai.conversation.id`` (the framework's thread or session id
the compaction state is keyed by) when the framework tells them. The conventions define no
attributes for a compression, so its counts go under ``agent_adapter.compression.*``: tokens
before and after, threshold and target, messages before / after / removed / changed / added,
the steps that ran, whether the target was reached, the skip reason, the seconds it took and
``prefix_tokens`` (how many tokens of the request are the previous request of the same
conversation, unchanged: what a provider's prompt cache can serve). Never a
message's text: ``gen_ai.input.messages`` is not set. Without ``opentelemetry-api`` nothing is
recorded; with the API but no SDK configured the span is a no-op, as OpenTelemetry intends.
"""

from __future__ import annotations

import time
from typing import Any

from agent_adapter.context import CompressionReport

__all__ = ["OPERATION", "record_span"]

OPERATION = "compress_context"
_SCOPE = "agent_adapter.integrations"


def _tracer() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer(_SCOPE)


def record_span(
    report: CompressionReport,
    *,
    framework: str,
    started_ns: int,
    agent: str | None = None,
    model: str | None = None,
    conversation: str | None = None,
) -> None:
    """Emit the span of one finished compression (started at ``started_ns``,
    :func:`time.time_ns`), if ``opentelemetry-api`` is installed."""
    tracer = _tracer()
    if tracer is None:
        return
    from opentelemetry.trace import SpanKind

    attributes: dict[str, Any] = {
        "gen_ai.operation.name": OPERATION,
        "agent_adapter.framework": framework,
        "agent_adapter.compression.tokens_before": report.tokens_before,
        "agent_adapter.compression.tokens_after": report.tokens_after,
        "agent_adapter.compression.threshold_tokens": report.threshold_tokens,
        "agent_adapter.compression.target_tokens": report.target_tokens,
        "agent_adapter.compression.messages_before": report.messages_before,
        "agent_adapter.compression.messages_after": report.messages_after,
        "agent_adapter.compression.messages_removed": report.messages_removed,
        "agent_adapter.compression.messages_changed": report.messages_changed,
        "agent_adapter.compression.messages_added": report.messages_added,
        "agent_adapter.compression.steps": [s.step for s in report.steps],
        "agent_adapter.compression.step_failures": len(report.failures),
        "agent_adapter.compression.reached_target": report.reached_target,
        "agent_adapter.compression.skipped": report.skipped,
        "agent_adapter.compression.seconds": report.seconds,
        "agent_adapter.compression.prefix_tokens": report.prefix_tokens,
    }
    if agent:
        attributes["gen_ai.agent.name"] = agent
    if model:
        attributes["gen_ai.request.model"] = model
    if conversation:
        attributes["gen_ai.conversation.id"] = conversation
    span = tracer.start_span(
        f"{OPERATION} {framework}",
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        start_time=started_ns,
    )
    span.end(end_time=time.time_ns())
