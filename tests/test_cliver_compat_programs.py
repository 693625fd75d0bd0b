"""Programs written against cliver-core 0.3.0a5 run unchanged on ours.

Each program under ``tests/compat/programs/`` is a plain script using only 0.3.0a5's documented
API; it reads the local servers' URLs from ``$CLIVER_COMPAT_*`` and prints one JSON object
(final content, tool events, usage, trace keys, skill catalog...). The test runs it twice, each
time against a fresh :class:`~agent_adapter.testing.ProviderServer` (and the embeddings /
rerank :class:`compat.aux_server.AuxServer`) scripted with the same replies: once on the 0.3.0a5
wheel (``PYTHONPATH=$CLIVER_REF_DIR``), once on ours; then it compares the program's JSON, its
exit status, what the servers received (path, stream flag and whole JSON body of every
request) and how many replies were left, after :func:`compat.runner.normalize` (ports, temp
folders, uuids). A difference fails the test with the list of differing JSON paths.

What may legitimately differ is in :data:`ALLOWED` (kept tiny, each with its reason).

Without ``CLIVER_REF_DIR`` the tests skip; under ``CI=true`` they fail. With
``CLIVER_COMPAT_OURS_DIR=$CLIVER_REF_DIR`` the wheel stands in for ours too: the suite checks
itself (0.3.0a5 against itself must show no difference: the programs and the normalization
are deterministic).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _cliver_helpers import calls
from agent_adapter.testing import Reply
from compat.runner import ABSENT, Difference, Outcome, differences, format_differences, run_program

#: The tools of ``tool_results``, in the order its model calls them.
TOOL_RESULT_NAMES = (
    "sentence", "one_key", "async_sentence", "forty_two", "empty_text", "ratio", "two_keys",
    "flag", "scalars", "point", "nothing", "zero", "dicts_with_error", "raw", "pair",
)  # fmt: skip

#: The scripted replies of each program, in the order its requests come.
REPLIES: dict[str, list[Reply]] = {
    # two tool calls in one reply (one argument a string to coerce), then a call to a tool
    # that does not exist, a tool that raises and a tool returning two result dicts
    "tool_agent": [
        calls(
            ("call_w", "get_weather", {"city": "Paris"}),
            ("call_a", "add", {"a": 2, "b": "3"}),
            input_tokens=120, output_tokens=30,
        ),
        calls(
            ("call_u", "teleport", {"to": "Mars"}),
            ("call_d", "divide", {"a": 1, "b": 0}),
            ("call_f", "city_facts", {"city": "Paris"}),
            input_tokens=200, output_tokens=25,
        ),
        Reply(text="Paris: 21 degrees, clear. 2 + 3 = 5. 1 / 0 has no value.",
              input_tokens=300, output_tokens=20),
    ],
    # a streamed tool call, then streamed reasoning (DeepSeek's reasoning_content) and text
    "streaming": [
        calls(("call_1", "lookup", {"term": "ReAct"}), input_tokens=40, output_tokens=8),
        Reply(text="ReAct interleaves reasoning steps with tool actions.",
              thinking="The user wants one sentence.", input_tokens=90, output_tokens=14),
    ],
    # run_skill("refund") through its two allowed tools; run_skill(Skill) answering at once;
    # then chat() dispatching: FindSkills, two ActivateSkill in one reply (the second is
    # refused: one skill per run), ReadSkillFile of the bundled reference, the answer
    "skills_folder": [
        calls(("c1", "lookup_order", {"order_id": "12345"})),
        calls(("c2", "issue_refund", {"order_id": "12345", "amount": 59.9})),
        Reply(text="I refunded 59.90 EUR on order 12345."),
        Reply(text="Order 777 arrives tomorrow."),
        calls(("c3", "FindSkills", {"query": "return policy"})),
        calls(("c4", "ActivateSkill", {"name": "policy-lookup"}),
              ("c5", "ActivateSkill", {"name": "refund"})),
        calls(("c6", "ReadSkillFile", {"path": "references/policy.md"})),
        Reply(text="Opened items can be returned within 14 days when they are faulty."),
    ],
    # one chat answer; embeddings and rerank go to the AuxServer
    "second_purpose": [Reply(text="Hi!", input_tokens=12, output_tokens=2)],
    # agent 1: an allowed, a denied and a safe call in one reply; agent 2: an overridden-safe
    # call, and an overridden-ask call whose (raising) callback denies it
    "permissions": [
        calls(("p1", "write_note", {"text": "buy milk"}),
              ("p2", "delete_file", {"path": "/etc/hosts"}),
              ("p3", "list_notes", {})),
        Reply(text="Saved the note; deleting /etc/hosts was not allowed."),
        calls(("q1", "write_note", {"text": "call mom"}), ("q2", "list_notes", {})),
        Reply(text="Saved; listing was refused."),
    ],
    # the program's own Provider answers; the server must see no request
    "custom_provider": [],
    # agent 1: a ping, the answer; agent 2: a ping, and an answer 0.3.0a5 never asks for
    # (its chat() raises the handler's error)
    "event_handler_raises": [
        calls(("e1", "ping", {})),
        Reply(text="The service answered."),
        calls(("e2", "ping", {})),
        Reply(text="The service answered again."),
    ],
    # OpenAI: a reasoning answer, then the continued conversation; Anthropic: a chat and a
    # stream continuing it
    "conversation": [
        Reply(text="Noted: order 12345.", thinking="The user gave an order number."),
        Reply(text="It should arrive tomorrow.", input_tokens=60, output_tokens=6),
        Reply(text="The tracking number is TRK-778.", input_tokens=70, output_tokens=9),
        Reply(text="You are welcome!"),
    ],
    # per OpenAI-protocol binding (GLM, DeepSeek, generic, Ollama; chat, then stream): a
    # tool call with reasoning, the answer with reasoning, the in-process continuation's
    # answer with reasoning, the restored continuation's answer; Anthropic: a tool call with
    # signed thinking, the answer, the restored continuation's; then the None-options calls
    "reasoning": [
        *[
            reply
            for n in range(6)
            for reply in (
                calls((f"r{n}", "lookup_order", {"order_id": "7"}),
                      thinking=f"I should look order 7 up ({n}).", input_tokens=50),
                Reply(text="Order 7 has shipped.", thinking=f"The tool said shipped ({n})."),
                Reply(text="Order 8 is unknown.", thinking=f"No tool for this ({n})."),
                Reply(text="Order 9 is unknown."),
            )
        ],
        calls(("a1", "lookup_order", {"order_id": "7"}), thinking="Look it up.",
              signature="sig-1"),
        Reply(text="Order 7 has shipped.", thinking="It shipped.", signature="sig-2"),
        Reply(text="Order 8 is unknown."),
        Reply(text="Hello."),
        Reply(text="Hello again."),
        Reply(text="Hello from Claude."),
    ],
    # MCP over stdio: the model calls a mutating and a read-only MCP tool, answers; a run
    # offering another server's tools only
    "mcp_stdio": [
        calls(("m1", "mcp__notes__add_note", {"text": "call mom", "tags": ["family"]}),
              ("m2", "mcp__notes__list_notes", {})),
        Reply(text="Added the note; the notes are listed."),
        Reply(text="Nothing to do."),
    ],
    # cliver_core.util's helpers: no model call
    "util_helpers": [],
    # per binding (OpenAI, then Anthropic): one reply calling the 15 tools returning each
    # type of value (a plain str is JSON-quoted, a one-key dict or a number is the error
    # 0.3.0a5 reports; errors interleaved with results, never 5 in a row), then the answer
    "tool_results": [
        reply
        for _ in range(2)
        for reply in (
            calls(*[(f"t{n}", name, {}) for n, name in enumerate(TOOL_RESULT_NAMES)]),
            Reply(text="Every tool answered."),
        )
    ],
}  # fmt: skip


def _sdk_artifact(ref: Any, ours: Any) -> bool:
    return ours is ABSENT and ref in (None, [])


def _same_text_block(ref: Any, ours: Any) -> bool:
    def blocks(v: Any) -> Any:
        return [{"type": "text", "text": v}] if isinstance(v, str) else v

    return blocks(ref) == blocks(ours)


#: What may legitimately differ: (JSON path pattern, ``*`` for any index or key; a test the
#: pair of values must pass; why). Anything else that differs fails.
ALLOWED: list[tuple[str, Callable[[Any, Any], bool], str]] = [
    # a message key null or [] in 0.3.0a5 and absent in ours (the APIs read both alike):
    # 0.3.0a5 replays an OpenAI assistant message as the openai SDK's model_dump() of the
    # parsed response, with the SDK's own empty fields (refusal, annotations, audio,
    # function_call, tool_calls=None; after a stream its accumulator's parsed,
    # parsed_arguments and tool-call index); ours sends the message's wire fields only
    ("requests[*].body.messages[*].*", _sdk_artifact, "openai SDK model_dump() artifacts"),
    (
        "requests[*].body.messages[*].tool_calls[*].function.parsed_arguments",
        _sdk_artifact,
        "openai SDK stream accumulator artifact",
    ),
    (
        "requests[*].body.messages[*].tool_calls[*].index",
        lambda ref, ours: ours is ABSENT,
        "openai SDK stream accumulator artifact (a tool call's index is a delta field)",
    ),
    # likewise the anthropic SDK's citations=None on a replayed text block
    (
        "requests[*].body.messages[*].content[*].citations",
        _sdk_artifact,
        "anthropic SDK model_dump() artifact",
    ),
    # likewise its caller=None / toolset_name=None on a replayed tool_use block
    (
        "requests[*].body.messages[*].content[*].caller",
        _sdk_artifact,
        "anthropic SDK model_dump() artifact",
    ),
    (
        "requests[*].body.messages[*].content[*].toolset_name",
        _sdk_artifact,
        "anthropic SDK model_dump() artifact",
    ),
    # Anthropic Messages: a string content / system is the API's shorthand for one text block
    ("requests[*].body.messages[*].content", _same_text_block, "Anthropic text shorthand"),
    ("requests[*].body.system", _same_text_block, "Anthropic text shorthand"),
    # an assistant message with only tool calls: ours sends content null (as the API returns
    # it), 0.3.0a5 replays the "" of the streamed message the SDK accumulated
    (
        "requests[*].body.messages[*].content",
        lambda ref, ours: ref == "" and ours is None,
        "tool-call-only assistant content: null for an empty string",
    ),
    # the anthropic SDK's citations=None on a text block of the reply's native form
    ("output.*.native.content[*].citations", _sdk_artifact, "anthropic SDK model_dump()"),
    # the stream's last chunk carries the run's usage in ours (None in 0.3.0a5)
    ("output.chunks[*].usage", lambda ref, ours: ref is False, "the last chunk's usage"),
    # ours' Re-Act trace entries carry more keys (run_id, usage_total...); 0.3.0a5's keys
    # and their types are compared
    ("output.trace_keys[*].*", lambda ref, ours: ref is ABSENT, "keys ours adds to the trace"),
    (
        "output.stream_trace_keys[*].*",
        lambda ref, ours: ref is ABSENT,
        "keys ours adds to the trace",
    ),
]


def _matches(pattern: str, path: str) -> bool:
    """``pattern`` against a difference's path: ``[*]`` stands for any index, another ``*``
    for any one key."""
    regex = re.escape(pattern).replace(r"\[\*\]", r"\[\+?\d+\]").replace(r"\*", r"[^.\[\]]+")
    return re.fullmatch(regex, path) is not None


def _allowed(d: Difference) -> bool:
    return any(_matches(pattern, d.path) and test(d.ref, d.ours) for pattern, test, _ in ALLOWED)


def _ref_dir() -> Path:
    value = os.environ.get("CLIVER_REF_DIR")
    if not value:
        message = "CLIVER_REF_DIR is not set (the unzipped cliver-core 0.3.0a5 wheel)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    path = Path(value).resolve()
    if not (path / "cliver_core" / "__init__.py").is_file():
        pytest.fail(f"CLIVER_REF_DIR={value} holds no cliver_core package")
    return path


def _report(name: str, ref: Outcome, ours: Outcome, found: list[Difference]) -> str:
    lines = [
        f"program {name}: {len(found)} difference(s) between 0.3.0a5 and ours",
        f"  0.3.0a5 from {ref.cliver_core} (exit {ref.returncode})",
        f"  ours    from {ours.cliver_core} (exit {ours.returncode})",
        "",
        *(f"  - {line}" for line in format_differences(found)),
    ]
    for outcome in (ref, ours):
        if outcome.returncode != 0:
            lines += ["", f"  stderr of {outcome.which}:", outcome.stderr[-4000:]]
    return "\n".join(lines)


@pytest.mark.parametrize("name", list(REPLIES))
def test_program_runs_unchanged_on_ours(name: str) -> None:
    ref_dir = _ref_dir()
    ref = run_program(name, REPLIES[name], pythonpath=ref_dir, which="0.3.0a5")
    assert Path(ref.cliver_core).resolve().is_relative_to(ref_dir), ref.cliver_core
    assert ref.returncode == 0, f"the program fails on 0.3.0a5 itself:\n{ref.stderr}"
    # CLIVER_COMPAT_OURS_DIR (a folder holding a cliver_core) stands in for ours: with the
    # wheel again it checks the suite itself is deterministic (0.3.0a5 against itself)
    ours_dir = os.environ.get("CLIVER_COMPAT_OURS_DIR")
    ours = run_program(
        name, REPLIES[name], pythonpath=Path(ours_dir) if ours_dir else None, which="ours"
    )
    if not ours_dir:
        assert not Path(ours.cliver_core).resolve().is_relative_to(ref_dir), ours.cliver_core
    found = [d for d in differences(ref.comparable(), ours.comparable()) if not _allowed(d)]
    if found:
        pytest.fail(_report(name, ref, ours, found), pytrace=False)


def test_the_allowances_are_narrow() -> None:
    """ALLOWED lets through the documented cases only."""
    artifact = Difference("requests[1].body.messages[2].refusal", None, ABSENT)
    emptied = Difference("requests[1].body.messages[2].content", "", None)
    changed = Difference("requests[1].body.messages[2].content", "text", None)
    dropped = Difference("requests[1].body.messages[2].reasoning_content", "why", ABSENT)
    rewritten = Difference("requests[1].body.messages[2].reasoning_content", "why", "how")
    shorthand = Difference("requests[0].body.system", "sys", [{"type": "text", "text": "sys"}])
    other_text = Difference("requests[0].body.system", "sys", [{"type": "text", "text": "x"}])
    added_key = Difference("output.trace_keys[0].run_id", ABSENT, "str")
    dropped_key = Difference("output.trace_keys[0].response", "dict", ABSENT)
    allowed = (artifact, shorthand, added_key, emptied)
    assert [_allowed(d) for d in allowed] == [True] * 4
    # reasoning goes back as 0.3.0a5 sends it: neither dropped nor rewritten
    refused = (changed, dropped, rewritten, other_text, dropped_key)
    assert [_allowed(d) for d in refused] == [False] * 5
    found = differences({"a": [1, 2, 3], "b": {"c": 1}}, {"a": [1, 9, 2, 3], "b": {"c": 2}})
    assert found == [Difference("a[+1]", ABSENT, 9), Difference("b.c", 1, 2)]
