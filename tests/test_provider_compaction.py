"""Provider-native compaction state passes through (issue 35, item 4).

Anthropic's compaction beta returns a signed ``compaction`` block ("On subsequent requests,
append the response to your messages. The API automatically drops all message blocks prior to
the compaction block"; SDK ``BetaCompactionBlockParam``: ``content`` null or a non-empty str,
``encrypted_content`` "to be round-tripped verbatim", ``signature`` "to be sent back
verbatim"). OpenAI Responses returns a ``compaction`` item with an opaque, required
``encrypted_content``, and takes a ``compaction_trigger`` input item ("Must be the final input
item"). Every converter gives them back as the very objects, ``check`` knows their rules, and
no step cuts, changes or drops them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_adapter import Message, OpaquePart
from agent_adapter.context import CompressionPolicy, Protection
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
