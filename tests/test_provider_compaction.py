"""Provider-native compaction state passes through (issue 35, item 4).

Anthropic's compaction beta returns a signed ``compaction`` block ("On subsequent requests,
append the response to your messages. The API automatically drops all message blocks prior to
the compaction block"; SDK ``BetaCompactionBlockParam``: ``content`` null or a non-empty str,
``encrypted_content`` "to be round-tripped verbatim", ``signature`` "to be sent back
verbatim"). OpenAI Responses returns a ``compaction`` item with an opaque, required
``encrypted_content``, and takes a ``compaction_trigger`` input item ("Must be the final input
item"). Every converter gives them back as the very objects, ``check`` knows their rules, and
no step cuts, changes or drops them.

What Anthropic drops costs nothing: the messages before the last compaction block count 0 in
the meter every step, the engine and the report use (a request over the threshold only by
them is not compacted again), and they are protected (``"before_compaction"``), sent back as
the same objects so the provider's cached prefix holds. OpenAI's guide only lets the client
drop the items before a ``compaction`` item ("you can drop items that came before the most
recent compaction item to keep requests smaller"): they count as any item.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agent_adapter import Message, ModelRequest, OpaquePart, TextPart
from agent_adapter.context import (
    CompressingModel,
    CompressionPolicy,
    Protection,
    TokenMeter,
    enforce_invariants,
    estimate_tokens,
)
from agent_adapter.context.formats import check, compress_for_sync, convert, detect_format
from agent_adapter.testing import ProviderServer, Reply, prompt_tokens

BIG = "line of a long tool log\n" * 400

#: A compaction block as the compaction beta returns it (SDK ``BetaCompactionBlock``), with a
#: cache breakpoint the client put on it (the docs: "you can add a cache_control breakpoint
#: on compaction blocks").
ANTHROPIC_BLOCK: dict[str, Any] = {
    "type": "compaction",
    "content": "<summary>We fixed src/app/db.py; test_db.py::test_pool still fails.</summary>",
    "encrypted_content": "RW5jcnlwdGVkQ29tcGFjdGlvbk1ldGFkYXRh",
    "signature": "EqQBCkgIARABGAIiQL2pZsaW2n",
    "cache_control": {"type": "ephemeral"},
}
#: A Responses compaction item (API reference ``ResponseCompactionItem``).
OPENAI_ITEM: dict[str, Any] = {
    "type": "compaction",
    "id": "cmp_0123456789abcdef",
    "encrypted_content": "gAAAAABoXyZ" + "k" * 400,
}
TRIGGER: dict[str, Any] = {"type": "compaction_trigger"}


def _anthropic() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Fix the failing database tests."},
        {"role": "assistant", "content": [{"type": "text", "text": "Reading. " + BIG}]},
        {"role": "user", "content": "go on " + BIG},
        {
            "role": "assistant",
            "content": [ANTHROPIC_BLOCK, {"type": "text", "text": "Continuing from the summary."}],
        },
        {"role": "user", "content": "and the pool test? " + BIG},
        {"role": "assistant", "content": [{"type": "text", "text": "Looking. " + BIG}]},
        {"role": "user", "content": "what now?"},
    ]


def _responses(trigger: bool = True) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": "Fix the failing database tests."},
        {"type": "message", "role": "user", "content": "go on " + BIG},
        OPENAI_ITEM,
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Continuing. " + BIG}],
        },
        {"type": "message", "role": "user", "content": "and the pool test? " + BIG},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Looking. " + BIG}],
        },
        {"type": "message", "role": "user", "content": "what now?"},
    ]
    return [*items, TRIGGER] if trigger else items


TIGHT = CompressionPolicy(threshold_tokens=600)


def _same_objects(out: list[Any], natives: list[Any], *wanted: int) -> None:
    for i in wanted:
        assert any(o is natives[i] for o in out), f"natives[{i}] is not sent as the same object"


def test_anthropic_compaction_block_round_trips_and_is_never_cut() -> None:
    natives = _anthropic()
    before = copy.deepcopy(natives)
    assert detect_format(natives) == "anthropic"  # the block alone makes the list sure
    conversion = convert(natives)
    assert all(a is b for a, b in zip(conversion.back(conversion.messages), natives, strict=True))
    part = conversion.messages[3].parts[0]
    assert isinstance(part, OpaquePart) and part.is_compaction and part.data is ANTHROPIC_BLOCK
    assert Protection(conversion.messages).reason(conversion.messages[3]) == "compaction"
    assert check(natives) == []

    out, report = compress_for_sync(natives, TIGHT)
    assert report.tokens_after < report.tokens_before  # something else went
    _same_objects(out, natives, 3, 6)
    assert natives == before  # the caller's list and dicts untouched
    assert check(out) == []


@pytest.mark.parametrize(
    ("block", "rule_text"),
    [
        ({**ANTHROPIC_BLOCK, "content": ""}, "content"),
        ({**ANTHROPIC_BLOCK, "encrypted_content": 7}, "encrypted_content"),
        ({**ANTHROPIC_BLOCK, "signature": ["x"]}, "signature"),
    ],
)
def test_anthropic_checker_knows_the_compaction_block(
    block: dict[str, Any], rule_text: str
) -> None:
    natives = _anthropic()
    natives[3] = {"role": "assistant", "content": [block]}
    found = [v for v in check(natives) if v.rule == "compaction_block"]
    assert [v.index for v in found] == [3] and rule_text in found[0].message
    # a failed compaction (content null) is a valid no-op block, sent back as it is
    natives[3] = {"role": "assistant", "content": [{**ANTHROPIC_BLOCK, "content": None}]}
    assert check(natives) == []


def test_responses_compaction_item_and_trigger_round_trip_and_are_never_cut() -> None:
    items = _responses()
    assert detect_format(items) == "openai"
    conversion = convert(items)
    assert all(a is b for a, b in zip(conversion.back(conversion.messages), items, strict=True))
    messages = conversion.messages
    protection = Protection(messages)
    assert protection.reason(messages[2]) == "compaction"
    assert messages[-1].role == "user" and protection.is_protected(messages[-1])
    # the trigger is the client's but not the user's message: "what now?" stays the latest
    assert protection.reason(messages[-2]) == "latest_user"
    assert check(items) == []

    out, report = compress_for_sync(items, TIGHT)
    assert report.tokens_after < report.tokens_before
    _same_objects(out, items, 2, 6, 7)
    assert out[-1] is TRIGGER
    assert check(out) == []


def test_responses_checker_knows_compaction_items() -> None:
    items = _responses(trigger=False)
    items[2] = {"type": "compaction", "id": "cmp_1"}
    assert [(v.index, v.rule) for v in check(items)] == [(2, "compaction_item")]
    items = _responses(trigger=False)
    items.insert(3, TRIGGER)
    assert [(v.index, v.rule) for v in check(items)] == [(3, "compaction_trigger_not_last")]


def test_langchain_message_with_a_compaction_block_is_never_cut() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage, HumanMessage

    compacted = AIMessage(content=[ANTHROPIC_BLOCK, {"type": "text", "text": "Continuing."}])
    history = [
        HumanMessage("Fix the failing database tests."),
        AIMessage("Reading. " + BIG),
        compacted,
        HumanMessage("and the pool test? " + BIG),
        AIMessage("Looking. " + BIG),
        HumanMessage("what now?"),
    ]
    out, report = compress_for_sync(history, TIGHT)
    assert report.tokens_after < report.tokens_before
    assert any(m is compacted for m in out)


def test_agent_adapter_messages_with_compaction_parts_are_protected() -> None:
    messages = [
        Message("user", "task"),
        Message("assistant", (OpaquePart("anthropic", ANTHROPIC_BLOCK),)),
        Message("user", "next " + BIG),
        Message("assistant", "ok " + BIG),
        Message("user", "now?"),
    ]
    out, _ = compress_for_sync(messages, TIGHT)
    assert any(m is messages[1] for m in out)
    # an opaque part of another type is no compaction state
    assert not OpaquePart("anthropic", {"type": "web_search_tool_result"}).is_compaction
    assert not OpaquePart("pydantic_ai", object()).is_compaction


def test_wire_server_returns_and_accepts_anthropic_compaction() -> None:
    anthropic = pytest.importorskip("anthropic")
    with ProviderServer() as server:
        server.add(Reply(text="Continuing.", compaction="We fixed db.py.", input_tokens=None))
        server.add(Reply(text="Done.", input_tokens=None))
        client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0)
        history: list[dict[str, Any]] = [
            {"role": "user", "content": "task " + BIG},
            {"role": "assistant", "content": [{"type": "text", "text": "ok " + BIG}]},
            {"role": "user", "content": "go on"},
        ]
        reply = client.beta.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=64,
            messages=history,  # type: ignore[arg-type]
        )
        blocks = [b.model_dump(exclude_none=True) for b in reply.content]
        assert blocks[0]["type"] == "compaction" and blocks[0]["content"] == "We fixed db.py."
        assert blocks[0]["signature"] and blocks[0]["encrypted_content"]
        history.append({"role": "assistant", "content": blocks})
        history.append({"role": "user", "content": "and now?"})
        out, _ = compress_for_sync(history, CompressionPolicy(threshold_tokens=200))
        assert any(m is history[3] for m in out)
        client.beta.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=64,
            messages=out,  # type: ignore[arg-type]
        )
        sent = server.requests[-1].body["messages"]
        assert blocks[0] in [
            b for m in sent if isinstance(m["content"], list) for b in m["content"]
        ]
        # the server counts as the API does: what came before the block is dropped
        body = server.requests[-1].body
        without_past = {**body, "messages": sent[[m is history[3] for m in out].index(True) :]}
        assert prompt_tokens("anthropic", body) == prompt_tokens("anthropic", without_past)


def test_wire_server_streams_anthropic_compaction() -> None:
    anthropic = pytest.importorskip("anthropic")
    with ProviderServer() as server:
        server.add(Reply(text="Continuing.", compaction="We fixed db.py."))
        client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0)
        with client.beta.messages.stream(
            model="claude-sonnet-4-6",
            max_tokens=64,
            messages=[{"role": "user", "content": "go on"}],
        ) as stream:
            final = stream.get_final_message()
        first = final.content[0].model_dump(exclude_none=True)
        assert first["type"] == "compaction" and first["content"] == "We fixed db.py."


def test_wire_server_returns_and_accepts_responses_compaction() -> None:
    openai = pytest.importorskip("openai")
    with ProviderServer() as server:
        server.add(Reply(text="Continuing.", compaction="We fixed db.py."))
        server.add(Reply(text="Done."))
        client = openai.OpenAI(base_url=server.openai_url, api_key="test", max_retries=0)
        items: list[Any] = [{"type": "message", "role": "user", "content": "task " + BIG}]
        response = client.responses.create(model="gpt-5", input=items)  # type: ignore[arg-type]
        output = [o.model_dump(exclude_none=True) for o in response.output]
        assert output[0]["type"] == "compaction" and output[0]["encrypted_content"]
        items += output
        items.append({"type": "message", "role": "user", "content": "and now?"})
        items.append(TRIGGER)
        assert check(items) == []
        out, _ = compress_for_sync(items, CompressionPolicy(threshold_tokens=100))
        assert any(o is items[1] for o in out) and out[-1] is TRIGGER
        client.responses.create(model="gpt-5", input=out)  # type: ignore[arg-type]
        sent = server.requests[-1].body["input"]
        assert output[0] in sent and sent[-1] == TRIGGER


@pytest.mark.parametrize("kind", [[], {}, ["compaction"], None, 3])
def test_a_part_whose_type_is_no_string_is_no_compaction_state(kind: Any) -> None:
    """Regression (hypothesis, tests/test_reliability_input.py): a Responses message part
    ``{"type": [], ...}`` raised ``TypeError: unhashable type: 'list'`` out of
    ``OpaquePart.is_compaction`` instead of a clean result or ConfigError."""
    assert not OpaquePart(provider="openai", data={"type": kind, "text": "x"}).is_compaction
    items: list[Any] = [
        {"role": "user", "content": "list the files"},
        {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "line\n" * 400},
        {"type": "message", "role": "assistant", "content": [{"type": kind, "text": "200"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "now?"}]},
        {"role": "assistant", "content": "done"},
    ]
    policy = CompressionPolicy(threshold_tokens=100, target_tokens=50)
    out, _ = compress_for_sync(items, policy, format="openai")
    assert out[0] is items[0] and out[-1] is items[-1]


# -- what Anthropic drops before its compaction block counts nothing ----------------------

#: The compacted message as the API returns it: the block first, then the reply's text.
COMPACTED = {
    "role": "assistant",
    "content": [ANTHROPIC_BLOCK, {"type": "text", "text": "Continuing from the summary."}],
}


def _late_compaction(after: int = 0) -> list[dict[str, Any]]:
    """Anthropic natives: a long past (about 9,600 tokens), the compacted message at index 5,
    then ``after`` rounds of about 4,800 tokens and the question."""
    natives: list[dict[str, Any]] = [
        {"role": "user", "content": "Fix the failing database tests."},
        {"role": "assistant", "content": [{"type": "text", "text": "Reading. " + BIG}]},
        {"role": "user", "content": "go on " + BIG},
        {"role": "assistant", "content": [{"type": "text", "text": "More. " + BIG}]},
        {"role": "user", "content": "and? " + BIG},
        COMPACTED,
    ]
    for i in range(after):
        natives.append({"role": "user", "content": f"round {i}: " + BIG})
        natives.append({"role": "assistant", "content": [{"type": "text", "text": BIG}]})
    natives.append({"role": "user", "content": "what now?"})
    return natives


def test_what_precedes_an_anthropic_compaction_block_counts_nothing() -> None:
    natives = _late_compaction()
    messages = convert(natives).messages
    read = estimate_tokens(messages[5:])  # what the API reads: the block on
    assert estimate_tokens(messages) > read + 9_000
    assert TokenMeter().total(messages) == read
    # over the threshold only by what the API drops: nothing is compacted again
    out, report = compress_for_sync(natives, CompressionPolicy(threshold_tokens=3_000))
    assert report.skipped == "under_threshold" and report.tokens_before == read
    assert len(out) == len(natives) and all(a is b for a, b in zip(out, natives, strict=True))
    # the system prompt is no message block: it stays, and counts
    system = Message("system", "You are a coding agent. " * 20)
    assert TokenMeter().total([system, *messages]) == read + estimate_tokens([system])
    # a block after other blocks of its message: those are dropped too
    prefilled = Message("assistant", (TextPart("prefill " + BIG), *messages[5].parts))
    assert TokenMeter().total([*messages[:5], prefilled, messages[6]]) == read
    # a meter bound to the list counts what is dropped 0 one by one too: sums agree
    meter = TokenMeter()
    assert meter.bind(messages) == read == sum(meter.of(m) for m in messages)
    assert TokenMeter().of(messages[1]) > 2_000  # an unbound meter cannot see its place


def test_a_compaction_after_the_block_touches_only_what_follows_it() -> None:
    natives = _late_compaction(after=2)
    messages = convert(natives).messages
    protection = Protection(messages)
    assert [protection.reason(m) for m in messages[:6]] == [
        *["before_compaction"] * 5,
        "compaction",
    ]
    policy = CompressionPolicy(threshold_tokens=6_000)
    out, report = compress_for_sync(natives, policy)
    assert report.tokens_before == estimate_tokens(messages[5:])
    assert report.tokens_after <= 6_000 < report.tokens_before
    assert all(out[i] is natives[i] for i in range(6))  # the past and the block, as they came
    assert len(out) < len(natives) or any(o is not n for o, n in zip(out, natives, strict=False))
    assert out[-1] is natives[-1]
    assert ("before_compaction", 0) in report.protected_by
    assert check(natives) == [] and check(out) == []
    # the size is what the provider reads of what goes out, by the same meter
    assert report.tokens_after == TokenMeter().total(convert(out).messages)


@pytest.mark.parametrize("still", ["cut", "keep"])
def test_the_dropped_past_is_never_cut_even_as_the_last_resort(still: Any) -> None:
    natives = _late_compaction(after=1)
    out, report = compress_for_sync(
        natives, CompressionPolicy(threshold_tokens=300, if_still_too_long=still)
    )
    assert report.tokens_after < report.tokens_before
    assert all(out[i] is natives[i] for i in range(6))
    assert check(out) == []


def test_no_step_adds_a_message_where_anthropic_drops_it() -> None:
    messages = convert(_late_compaction(after=1)).messages
    protection = Protection(messages)
    note = Message("user", "[a note of what went]")
    early = enforce_invariants(
        messages, [*messages[:3], note, *messages[3:]], protection, step="mine"
    )
    assert note not in early and len(early) == len(messages)
    late = enforce_invariants(
        messages, [*messages[:6], note, *messages[6:]], protection, step="mine"
    )
    assert late[6] is note


def test_inspect_counts_what_the_provider_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("agent_adapter.cli")
    from agent_adapter.cli import main

    natives = _late_compaction()
    path = tmp_path / "compacted.json"
    path.write_text(json.dumps(natives), encoding="utf-8")
    assert main(["inspect", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tokens"] == estimate_tokens(convert(natives).messages[5:])
    assert data["protected"]["before_compaction"]["tokens"] == 0


def test_responses_items_before_a_compaction_item_count_as_any_item() -> None:
    # OpenAI's guide leaves them to the client ("you can drop items that came before the
    # most recent compaction item to keep requests smaller"): the API reads what is sent
    items = _responses()
    messages = convert(items).messages
    assert TokenMeter().total(messages) == estimate_tokens(messages)
    protection = Protection(messages)
    assert "before_compaction" not in {protection.reason(m) for m in messages}
    _, report = compress_for_sync(items, TIGHT)
    assert report.tokens_before == estimate_tokens(messages)


async def test_wire_replay_our_count_follows_the_servers_across_a_compaction() -> None:
    """A CompressingModel over the real Anthropic provider on the local wire server, whose
    third reply compacts: before and after the block our count of each request stays the
    server's (the server drops what precedes the block, as the API does), so nothing is
    compacted again and every request after the block starts with the same bytes."""
    pytest.importorskip("anthropic")
    from agent_adapter.providers import AnthropicModel

    log = "line of a shorter tool log\n" * 100  # about 700 tokens
    with ProviderServer() as server:
        port = AnthropicModel(
            "claude-sonnet-4-6", base_url=server.url, api_key="test", max_retries=0
        )
        model = CompressingModel(port, CompressionPolicy(threshold_tokens=8_000))
        server.add(Reply(text="Reading. " + BIG, input_tokens=None))
        server.add(Reply(text="More. " + BIG, input_tokens=None))
        server.add(Reply(text="Continuing.", compaction="db.py fixed", input_tokens=None))
        server.add(*[Reply(text="Looking. " + BIG, input_tokens=None)] * 3)
        messages = [Message("system", "You are a coding agent."), Message("user", "go " + log)]
        ratios, served, counted = [], [], []
        for turn in range(6):
            reply = await model.generate(ModelRequest(messages=messages))
            assert reply.usage is not None
            served.append(reply.usage.input_tokens)
            counted.append(estimate_tokens(messages))  # the counter alone: everything
            ratios.append(model.ratio)  # the server's count over ours, for what was sent
            messages = [*messages, reply.message, Message("user", f"next {turn}: " + log)]
        await port.aclose()
        bodies = [r.body["messages"] for r in server.requests]
    # nothing was compressed: each request is the conversation as it was, the past unchanged
    assert [len(b) for b in bodies] == [1, 3, 5, 7, 9, 11]
    assert all(b[:7] == bodies[3] for b in bodies[4:])
    # the server dropped the past once the block came: it reads less than was sent, and
    # counting everything would have compacted the last two requests again
    assert served[3] < served[2] < counted[3]
    assert counted[4] > 8_000 and counted[5] > 8_000 > served[5]
    # our count of what was sent follows the server's, before the block and after it
    assert all(0.9 <= r <= 1.2 for r in ratios), ratios


def test_one_message_sent_before_and_after_the_block_counts_where_it_is_read() -> None:
    # found by a break test: an agent resending one Message object (a nudge) before and
    # after an Anthropic compaction block. Known by identity as "before the block", its
    # copies after it counted 0 and were protected: 4,879 tokens read by the API against a
    # threshold of 4,379 went out as nothing_to_compress
    big = "line of a long tool log\n" * 400
    nudge = Message("user", "Please continue. Reminder of the rules: " + big)
    block = convert(
        [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "compaction",
                        "content": "<summary>s</summary>",
                        "encrypted_content": "RW5j",
                        "signature": "EqQB",
                    },
                    {"type": "text", "text": "Continuing."},
                ],
            },
        ],
        "anthropic",
    ).messages[1]
    messages = [
        Message("user", "Fix the tests."), Message("assistant", "a0 " + big), nudge,
        Message("assistant", "a1"), Message("user", "go on"), block,
        nudge, Message("assistant", "a2"), nudge, Message("assistant", "a3"),
        Message("user", "what now?"),
    ]  # fmt: skip
    read = estimate_tokens(messages[5:])
    meter = TokenMeter()
    assert meter.bind(messages) == read
    assert meter.of(messages[6]) == estimate_tokens([nudge])  # counted where it is read
    assert Protection(messages).reason(messages[6]) != "before_compaction"
    out, report = compress_for_sync(
        messages, CompressionPolicy(threshold_tokens=read - 500), format="agent_adapter"
    )
    assert report.steps and estimate_tokens(out[5:]) <= read - 500
    assert all(a is b for a, b in zip(out[:2], messages[:2], strict=True))  # the past stays
