"""The stores under faults (issue 32, item 6), on a real Redis and a real SQLite file: a Redis
that loses the id key (evicted, or restarted without persistence), a SQLite file deleted
while it is open, and recall ids no store can encode as strict UTF-8."""

from __future__ import annotations

import re
from typing import Any

import redis

from agent_adapter._messages import Message, ToolCall
from agent_adapter._run import RunContext, owner_scope
from agent_adapter.context import (
    CompressionPolicy,
    RemoveOldMessages,
    ShrinkToolResults,
    compress,
    recall_tool,
)
from agent_adapter.context._stores import (
    RedisStore,
    StoreEntry,
)

ID = re.compile(r"recall_context\(id='([0-9a-f]{32})'\)")
CTX = RunContext(thread_id="faults")
RAW = ("\x00", "agent_adapter.saved_span", '"starts"')
UNREADABLE = "cannot be read: it is a saved span whose seal"


def _conversation() -> list[Message]:
    """A task, eight rounds each reading a big file, the latest ask."""
    out = [Message("system", "You are a coding agent."), Message("user", "fix the parser")]
    for i in range(8):
        args = f'{{"path": "src/mod{i}.py"}}'
        out.append(
            Message("assistant", f"reading mod{i}", tool_calls=(ToolCall(f"c{i}", "read", args),))
        )
        body = f"def f{i}(): return {i * 7}  # magic-{i}\n" * 60
        out.append(Message("tool", body, tool_call_id=f"c{i}", name="read"))
        out.append(Message("assistant", f"mod{i} read"))
    out.append(Message("user", "now run the tests"))
    return out


async def _ids(store: Any) -> list[str]:
    """The recall ids one compression of :func:`_conversation` names (shortened results,
    then the span a removal note stands for)."""
    steps = [
        ShrinkToolResults(bigger_than_tokens=100, older_than_turns=2, save_to=store),
        RemoveOldMessages(save_to=store),
    ]
    policy = CompressionPolicy(threshold_tokens=900, target_tokens=900, steps=steps)
    out, report = await compress(_conversation(), policy, ctx=CTX)
    assert report.failures == ()
    return ID.findall("\n".join(m.text for m in out))


def _span_id(ids: list[str], store: RedisStore) -> str:
    """The id among ``ids`` of a saved span (its record opens with a NUL)."""
    client = redis.Redis.from_url(store.url)
    try:
        return next(
            i for i in ids if (client.get(store.key(owner_scope(CTX), i)) or b"")[:1] == b"\0"
        )
    finally:
        client.close()


# --------------------------------------------------------------------------------------------
# ids and scopes with a lone surrogate


async def test_a_recall_id_with_a_lone_surrogate_gets_the_same_reply_on_every_store(
    store: Any,
) -> None:
    answer = await recall_tool(store)({"id": "abc\ud800"}, CTX)
    assert answer == "No saved result with id 'abc\\ud800' (expired or unknown)."
    assert await store.load("s\udcff", "abc\ud800") is None
    assert store.load_sync("s", "abc\ud800") is None


async def test_ids_and_scopes_with_lone_surrogates_round_trip_on_every_store(
    store: Any,
) -> None:
    scope = owner_scope(CTX)
    entries = [
        StoreEntry(scope, "abc\ud800", "lone high"),
        StoreEntry(scope, "abc\udc00", "lone low"),
        StoreEntry(scope, "abc\ufffd", "replacement"),
        StoreEntry(scope, "abc", "plain"),
        StoreEntry("s\ud800", "abc", "odd scope"),
    ]
    await store.save_many(entries)
    for e in entries:
        assert await store.load(e.scope, e.id) == e.text
        assert store.load_sync(e.scope, e.id) == e.text
    assert await recall_tool(store)({"id": "abc\ud800"}, CTX) == "lone high"
    assert await store.load("s", "abc") is None
    assert sorted(await store.load_all(scope)) == sorted((e.id, e.text) for e in entries[:4])
    assert store.load_all_sync("s\ud800") == [("abc", "odd scope")]
