"""Each compression an integration runs emits one OpenTelemetry span with the report's counts
and never a message's text (opentelemetry-sdk's in-memory exporter, a real LangChain agent)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from _integration_cases import STEPS, policy, read_file, tool_replies
from agent_adapter.context import CompactionStates, CompressionReport
from agent_adapter.integrations.langchain import CompressionMiddleware
from agent_adapter.testing import ProviderServer

TASK = "Read src/mod_0.py to src/mod_5.py one at a time and tell me the retries setting."


@pytest.fixture(scope="module")
def exporter() -> Any:
    memory = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory


def test_one_span_per_model_call_with_the_report_counts(exporter: Any) -> None:
    exporter.clear()
    reports: list[CompressionReport] = []
    with ProviderServer(tool_replies()) as server:
        model = ChatOpenAI(model="gpt-4o", base_url=server.openai_url, api_key="test")
        agent = create_agent(
            model,
            [tool(read_file)],
            middleware=[CompressionMiddleware(policy(), on_report=reports.append)],
        )
        agent.invoke({"messages": [{"role": "user", "content": TASK}]})
    spans = [s for s in exporter.get_finished_spans() if s.name == "compress_context langchain"]
    assert len(spans) == len(reports) == STEPS + 1
    for span, report in zip(spans, reports, strict=True):
        a = span.attributes
        assert span.kind == trace.SpanKind.INTERNAL
        assert a["gen_ai.operation.name"] == "compress_context"
        assert a["gen_ai.request.model"] == "gpt-4o"
        assert a["agent_adapter.compression.tokens_before"] == report.tokens_before
        assert a["agent_adapter.compression.tokens_after"] == report.tokens_after
        assert a["agent_adapter.compression.messages_removed"] == report.messages_removed
        assert a["agent_adapter.compression.reached_target"] == report.reached_target
        assert list(a["agent_adapter.compression.steps"]) == [s.step for s in report.steps]
        assert a["agent_adapter.compression.prefix_tokens"] == report.prefix_tokens
        assert "gen_ai.conversation.id" not in a  # no thread: no conversation id
        assert span.end_time >= span.start_time
        # counts only: no text of any message
        values = " ".join(str(v) for v in a.values())
        assert "retries" not in values and "src/mod_" not in values
    assert any(s.attributes["agent_adapter.compression.steps"] for s in spans)


def test_the_span_carries_the_thread_and_the_shared_prefix(exporter: Any) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    exporter.clear()
    reports: list[CompressionReport] = []
    with ProviderServer(tool_replies()) as server:
        model = ChatOpenAI(model="gpt-4o", base_url=server.openai_url, api_key="test")
        agent = create_agent(
            model,
            [tool(read_file)],
            middleware=[
                CompressionMiddleware(policy(), on_report=reports.append, states=CompactionStates())
            ],
            checkpointer=InMemorySaver(),
        )
        config = {"configurable": {"thread_id": "otel-thread"}}
        agent.invoke({"messages": [{"role": "user", "content": TASK}]}, config)
    spans = [s for s in exporter.get_finished_spans() if s.name == "compress_context langchain"]
    assert len(spans) == len(reports) == STEPS + 1
    for span, report in zip(spans, reports, strict=True):
        assert span.attributes["gen_ai.conversation.id"] == "otel-thread"
        assert span.attributes["agent_adapter.compression.prefix_tokens"] == report.prefix_tokens
    assert sum(r.prefix_tokens for r in reports) > 0
