"""The gateway's body reader: the same values as json.loads, an earlier request's items reused
only when their text is the same, and the changed body written as the client's own bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_adapter.cli import load_trace
from agent_adapter.gateway._body import BodyReader

SESSION = "claude-code-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@pytest.fixture(scope="module")
def session(data_dir: Path) -> list[dict[str, object]]:
    return json.loads(json.dumps(list(load_trace(data_dir / SESSION).messages)))


def _body(messages: list[object], **dumps: object) -> bytes:
    data = {"model": "claude-sonnet-4-5", "messages": messages, "system": "s", "max_tokens": 9}
    return json.dumps(data, **dumps).encode()  # type: ignore[arg-type]


def test_a_growing_conversation_reuses_its_items(session: list[dict[str, object]]) -> None:
    reader = BodyReader()
    first = reader.read(_body(session[:100]), "messages")
    assert first.data == json.loads(_body(session[:100])) and first.reused == 0
    second = reader.read(_body(session[:120]), "messages")
    assert second.data == json.loads(_body(session[:120]))
    assert second.reused == 100
    assert all(a is b for a, b in zip(second.items or [], first.items or [], strict=False))


def test_an_edited_item_is_parsed_again(session: list[dict[str, object]]) -> None:
    reader = BodyReader()
    first = reader.read(_body(session[:50]), "messages")
    edited = json.loads(json.dumps(session[:60]))
    edited[40]["content"] = [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]
    second = reader.read(_body(edited), "messages")
    assert second.data == json.loads(_body(edited))
    assert second.reused == 40
    assert second.items is not None and first.items is not None
    assert second.items[40] is not first.items[40]


@pytest.mark.parametrize(
    "dumps",
    [{}, {"indent": 2}, {"ensure_ascii": False}, {"separators": (",", ":")}],
    ids=["default", "indented", "utf8", "compact"],
)
def test_the_values_are_json_loads_and_write_keeps_the_clients_bytes(
    session: list[dict[str, object]], dumps: dict[str, object]
) -> None:
    reader = BodyReader()
    reader.read(_body(session[:30], **dumps), "messages")
    raw = _body(session[:40], **dumps)
    body = reader.read(raw, "messages")
    assert body.data == json.loads(raw)
    items = body.items or []
    same = body.write("messages", items)
    assert json.loads(same) == json.loads(raw)
    if dumps == {"separators": (",", ":")}:
        assert same == raw  # the items' own text, joined as a compact client joins them
    note = {"role": "user", "content": "[12 earlier messages removed]"}
    out = [items[0], note, *items[13:]]
    written = body.write("messages", out)
    assert json.loads(written) == {**json.loads(raw), "messages": out}
    start = raw.index(b"[")
    assert written.startswith(raw[: start + 1])  # everything before the array: client's bytes


@pytest.mark.parametrize(
    "raw",
    [b"[1, 2]", b'{"messages": 3}', b'{"a": 1, "a": 2}', b"\xff\xfe{}", b'{"messages": []} x'],
)
def test_anything_else_is_what_json_loads_says(raw: bytes) -> None:
    try:
        expected: object = json.loads(raw)
    except ValueError:
        with pytest.raises(ValueError):
            BodyReader().read(raw, "messages")
        return
    assert BodyReader().read(raw, "messages").data == expected


def test_the_memo_is_bounded(session: list[dict[str, object]]) -> None:
    reader = BodyReader(max_chars=200_000)
    for i in range(30):
        reader.read(_body([{"role": "user", "content": f"{i} " * 3000}]), "messages")
    assert reader._chars <= 200_000
