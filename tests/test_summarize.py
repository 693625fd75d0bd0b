"""Summarize with the extractive default: where summaries go, what they keep, what they never do."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_adapter import ConfigError, Message, ToolCall
from agent_adapter.context import (
    CompressionPolicy,
    ContextSummary,
    Summarize,
    SummarizeLongMessage,
    compress,
    estimate_tokens,
)
from agent_adapter.context._steps._extractive import extract_summary
from agent_adapter.context._steps._summary_text import SUMMARY_HEAD, parse, render


def _round(i: int, path: str, command: str, output: str) -> list[Message]:
    calls = (
        ToolCall(f"r{i}", "Read", json.dumps({"file_path": path})),
        ToolCall(f"b{i}", "Bash", json.dumps({"command": command})),
    )
    return [
        Message("assistant", f"I'll fix `parse_config` in {path} because the test fails.", calls),
        Message("tool", f"contents of {path}\n" + "line\n" * 200, tool_call_id=f"r{i}"),
        Message("tool", output, tool_call_id=f"b{i}"),
    ]


def _conversation(rounds: int = 8) -> list[Message]:
    out = [
        Message("system", "You are a coding agent."),
        Message("user", "Fix issue #42 in the config loader. Never push to main."),
    ]
    for i in range(rounds):
        out += _round(
            i,
            f"src/pkg/mod{i}.py",
            f"pytest tests/test_mod{i}.py",
            f"Exit code 1\nE   ValueError: bad key k{i}\n" + "trace\n" * 100,
        )
        out.append(Message("user", f"keep going with step {i}"))
    out.append(Message("assistant", "Done with the loop."))
    out.append(Message("user", "Now update the changelog in docs/CHANGES.md."))
    return out


def _policy(step: object, target: int = 800, **kw: object) -> CompressionPolicy:
    return CompressionPolicy(target_tokens=target, steps=[step], recent_turns=0, **kw)  # type: ignore[list-item]


async def test_the_summary_is_one_user_message_after_the_system_prompt() -> None:
    messages = _conversation()
    out, report = await compress(messages, _policy(Summarize(keep_recent_messages=2)))
    assert report.tokens_after < report.tokens_before
    assert [m.role for m in out].count("system") == 1 and out[0] is messages[0]
    assert out[1].role == "user" and out[1].text.startswith(SUMMARY_HEAD)
    assert sum(m.text.startswith(SUMMARY_HEAD) for m in out) == 1
    # the latest user message and the newest messages are the caller's objects
    assert out[-1] is messages[-1] and out[-2] is messages[-2]
    assert len(messages) == len(_conversation())  # the caller's list is untouched


async def test_the_latest_user_message_is_never_summarized() -> None:
    messages = _conversation()
    # the latest user message is followed by a tool loop; keep nothing else recent
    messages += _round(99, "src/pkg/last.py", "ruff check", "Exit code 0\nok")
    out, _ = await compress(messages, _policy(Summarize(keep_recent_messages=0), target=400))
    latest = next(m for m in reversed(messages) if m.role == "user")
    assert any(m is latest for m in out)


async def test_the_summary_names_the_task_files_commands_errors_and_open_task() -> None:
    messages = _conversation()
    out, _ = await compress(messages, _policy(Summarize(keep_recent_messages=2)))
    text = out[1].text
    assert "Task: Fix issue #42 in the config loader." in text
    assert "Never push to main." in text  # a constraint, word for word
    for i in range(8):
        assert f"src/pkg/mod{i}.py" in text
    assert "pytest tests/test_mod7.py -> exit 1" in text
    assert "ValueError: bad key k7" in text
    assert "parse_config" in text


def _words_of(messages: list[Message]) -> str:
    return "\n".join(
        [m.text for m in messages] + [c.arguments for m in messages for c in m.tool_calls]
    )


async def test_the_extractive_summary_states_nothing_that_is_not_in_the_messages() -> None:
    messages = _conversation()
    summary = extract_summary(messages)
    source = _words_of(messages)
    flat = " ".join(source.split())
    for name in ("files_read", "files_changed", "identifiers", "errors", "constraints"):
        for item in getattr(summary, name):
            assert item.removesuffix("...") in flat or item in source, (name, item)
    for item in summary.commands:
        assert item.split(" -> ")[0] in source
    for sentence in summary.decisions:
        assert sentence.removesuffix("...") in flat


async def test_each_run_between_pinned_messages_gets_its_own_summary_in_place() -> None:
    messages = _conversation()
    pin = messages[14]  # a user message in the middle
    out, _ = await compress(
        messages,
        _policy(Summarize(keep_recent_messages=2), target=600),
        pinned=lambda m: m is pin,
    )
    summaries = [i for i, m in enumerate(out) if m.text.startswith(SUMMARY_HEAD)]
    at = next(i for i, m in enumerate(out) if m is pin)
    assert len(summaries) == 2 and summaries[0] < at < summaries[1]


async def test_a_second_pass_folds_the_earlier_summary_instead_of_stacking() -> None:
    messages = _conversation()
    step = Summarize(keep_recent_messages=2)
    out, _ = await compress(messages, _policy(step))
    first = out[1]
    grown = [*out, *_round(50, "src/pkg/later.py", "pytest -x", "Exit code 0\nok")]
    grown += [Message("assistant", "Later work done."), Message("user", "one more thing")]
    again, _ = await compress(grown, _policy(step, target=500))
    summaries = [m for m in again if m.text.startswith(SUMMARY_HEAD)]
    assert len(summaries) == 1 and summaries[0] is not first
    text = summaries[0].text
    assert "src/pkg/mod0.py" in text and "src/pkg/later.py" in text
    assert "Task: Fix issue #42" in text  # the task of the first span survives the fold
    n = int(re.search(r"\((\d+) messages\)", text).group(1))  # type: ignore[union-attr]
    assert n > int(re.search(r"\((\d+) messages\)", first.text).group(1))  # type: ignore[union-attr]


async def test_a_span_that_is_only_a_summary_is_not_summarized_again() -> None:
    messages = _conversation()
    policy = _policy(Summarize(keep_recent_messages=2), target=50)  # unreachable
    out, report = await compress(messages, policy)
    assert not report.reached_target
    again, report2 = await compress(out, policy, force=True)
    assert all(a is b for a, b in zip(again, out, strict=True))  # nothing changed
    assert not report2.reached_target and report2.steps[0].tokens_saved == 0


async def test_a_summary_never_makes_the_conversation_larger() -> None:
    messages = [
        Message("user", "hi"),
        Message("assistant", "short answer"),
        Message("user", "ok"),
        Message("assistant", "yes"),
        Message("user", "latest"),
    ]
    out, _ = await compress(
        messages, _policy(Summarize(keep_recent_messages=1), target=estimate_tokens(messages) - 1)
    )
    assert estimate_tokens(out) <= estimate_tokens(messages)


async def test_summary_style_compact_and_a_function() -> None:
    messages = _conversation()
    out, _ = await compress(messages, _policy(Summarize(summary_style="compact")))
    assert "\n- " not in out[1].text and "Files read:" in out[1].text

    def style(summary: ContextSummary) -> str:
        return "TASK=" + summary.task

    out, _ = await compress(messages, _policy(Summarize(summary_style=style)))
    assert out[1].text.splitlines()[1].startswith("TASK=Fix issue #42")
    bad = Summarize(summary_style=lambda s: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match="summary_style"):
        await compress(messages, _policy(bad, on_step_error="raise"))


@pytest.mark.parametrize(
    "kw",
    [
        {"keep_recent_messages": -1},
        {"max_summary_tokens": 0},
        {"timeout_s": 0},
        {"summary_style": "poem"},
        {"on_missing": "ignore"},
        {"model": object()},
    ],
)
def test_bad_settings_are_config_errors(kw: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        Summarize(**kw)  # type: ignore[arg-type]


def test_render_and_parse_round_trip() -> None:
    summary = ContextSummary(
        task="Fix it",
        constraints=["never push"],
        files_changed=["a/b.py", "c.py"],
        commands=["pytest -> exit 1"],
        identifiers=["Foo", "bar_baz"],
        open_tasks=["update docs"],
    )
    assert parse(render(summary, 3)) == summary
    short = render(summary, 3, max_chars=120)
    assert len(short) <= 120 and short.startswith(SUMMARY_HEAD)


def test_the_reply_schema_requires_every_field_and_no_other() -> None:
    schema = ContextSummary.json_schema()
    assert set(schema["required"]) == set(ContextSummary.model_fields)
    assert schema["additionalProperties"] is False


# ---------------------------------------------------------------------------------------------
# SummarizeLongMessage


async def test_summarize_long_message_keeps_calls_and_ids() -> None:
    big = "Exit code 1\n" + "noise line\n" * 3000 + "E   KeyError: 'port'\nsrc/app/server.py:12\n"
    messages = [
        Message("user", "run the server"),
        Message("assistant", "", (ToolCall("c1", "Bash", '{"command": "python -m app"}'),)),
        Message("tool", big, tool_call_id="c1"),
        Message("assistant", "It failed."),
        Message("user", "why?"),
    ]
    out, _ = await compress(messages, _policy(SummarizeLongMessage(bigger_than_tokens=1000)))
    tool = out[2]
    assert tool.tool_call_id == "c1" and out[1] is messages[1]
    assert len(tool.text) < len(big)
    assert "KeyError: 'port'" in tool.text and "src/app/server.py" in tool.text


async def test_summarize_long_message_changes_only_reference_blocks_of_the_system_prompt() -> None:
    reference = "\n".join(f"API item {i}: see docs/api_{i}.md" for i in range(2000))
    system = (
        "You are a careful agent.\nRule 1: never delete files.\n"
        f"<reference>{reference}</reference>\nRule 2: ask before pushing."
    )
    messages = [Message("system", system), Message("user", "go"), Message("assistant", "ok")]
    messages.append(Message("user", "continue"))
    step = SummarizeLongMessage(bigger_than_tokens=500, include_system_prompt=True)
    out, _ = await compress(messages, _policy(step, target=2000))
    text = out[0].text
    assert len(text) < len(system)
    outside = re.sub(r"<reference>.*?</reference>", "", text, flags=re.S)
    assert outside == re.sub(r"<reference>.*?</reference>", "", system, flags=re.S)
    # a pinned system prompt stays as it is
    pinned, _ = await compress(
        messages, _policy(step, target=2000), pinned=lambda m: m.role == "system"
    )
    assert pinned[0] is messages[0]


# ---------------------------------------------------------------------------------------------
# a real Claude Code session


def _session(data_dir: Path) -> tuple[list[Message], str]:
    from agent_adapter.cli._claude_code import load_claude_code
    from agent_adapter.context.formats import convert

    path = data_dir / "claude-code-spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    messages = convert(load_claude_code(path), "anthropic").messages
    at = next(i for i, m in enumerate(messages) if m.text.startswith("This session is being"))
    return messages[:at], messages[at].text


async def test_a_real_claude_code_session_compacts_with_its_files_and_latest_request(
    data_dir: Path,
) -> None:
    history, _ = _session(data_dir)
    policy = _policy(Summarize(keep_recent_messages=0, max_summary_tokens=3500), target=6000)
    out, report = await compress(history, policy)
    assert report.reached_target and not report.failures
    latest = next(m for m in reversed(history) if m.role == "user")
    assert any(m is latest for m in out)
    text = "\n".join(m.text for m in out if m.text.startswith(SUMMARY_HEAD))
    edited = {
        json.loads(c.arguments)["file_path"].rsplit("/", 1)[-1]
        for m in history
        for c in m.tool_calls
        if c.name in ("Edit", "Write")
    }
    assert edited and all(name in text for name in edited)
    assert "Implement spotter-gqc" in text


async def test_a_run_inside_the_current_tool_loop_is_summarized_before_its_thinking_opener() -> (
    None
):
    """Extended thinking: nothing may be added inside the turn that opened on thinking, so the
    summary of the rounds after the opener stands right before the opener."""
    from agent_adapter import ThinkingPart

    opener_call = ToolCall("t0", "Read", '{"file_path": "src/a.py"}')
    messages = [
        Message("user", "Fix the parser in src/a.py."),
        Message("assistant", (ThinkingPart("plan", signature="sig"),), (opener_call,)),
        Message("tool", "a.py contents", tool_call_id="t0"),
    ]
    for i in range(1, 8):
        messages += _round(i, f"src/pkg/mod{i}.py", f"pytest -k t{i}", "Exit code 1\nE   Boom")
    out, report = await compress(messages, _policy(Summarize(keep_recent_messages=3), target=700))
    assert report.tokens_after < report.tokens_before
    at = next(i for i, m in enumerate(out) if m.text.startswith(SUMMARY_HEAD))
    assert out[at - 1] is messages[0] and out[at + 1] is messages[1]  # before the opener
    assert "src/pkg/mod1.py" in out[at].text
