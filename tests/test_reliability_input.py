"""The reliability suite, bad input: hypothesis-made malformed messages in every format.

A valid conversation of each format (OpenAI chat, OpenAI Responses items, Anthropic, Gemini,
LangChain, agent_adapter) gets one random defect: an item replaced by junk, an item dropped
(orphaning a call or a result), a field set to junk or a key deleted, anywhere in a message.
``compress_for`` then either raises :class:`ConfigError` naming ``messages[<index>]``, or
(the defect left a valid conversation) returns a valid one; never another exception type,
never a partial result, and the caller's list is never changed.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agent_adapter import Message, ToolCall
from agent_adapter._errors import ConfigError
from agent_adapter.context import (
    CompressionPolicy,
    MemoryStore,
    RemoveOldMessages,
    ShrinkToolResults,
    compress_for,
)
from agent_adapter.context.formats import check

BIG = "tool output line\n" * 200
POLICY = CompressionPolicy(
    target_tokens=60,
    steps=[
        ShrinkToolResults(bigger_than_tokens=50, older_than_turns=1, save_to=MemoryStore()),
        RemoveOldMessages(keep_first=1, keep_last=2),
    ],
)
#: the caller's list by its name: ``messages[i]``, or ``input[i]`` for Responses items
INDEX = re.compile(r"(messages|input)\[\d+\]")

JUNK = st.sampled_from(
    [None, 0, -1, 1.5, float("nan"), True, "", "x", [], {}, [None], {"x": 1}, b"bytes", ("t",)]
)


def _openai_chat() -> list[Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": BIG},
        {"role": "assistant", "content": "there are 200 lines"},
        {"role": "user", "content": [{"type": "text", "text": "and now?"}]},
        {"role": "assistant", "content": "done"},
    ]


def _openai_responses() -> list[Any]:
    return [
        {"role": "user", "content": "list the files"},
        {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": BIG},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "there are 200 lines"}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "now?"}]},
        {"role": "assistant", "content": "done"},
    ]


def _anthropic() -> list[Any]:
    return [
        {"role": "user", "content": "list the files"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "listing"},
                {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": BIG}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "there are 200 lines"}]},
        {"role": "user", "content": "and now?"},
        {"role": "assistant", "content": "done"},
    ]


def _gemini() -> list[Any]:
    return [
        {"role": "user", "parts": [{"text": "list the files"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {"path": "."}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "ls", "response": {"output": BIG}}}],
        },
        {"role": "model", "parts": [{"text": "there are 200 lines"}]},
        {"role": "user", "parts": [{"text": "and now?"}]},
        {"role": "model", "parts": [{"text": "done"}]},
    ]


def _langchain() -> list[Any]:
    return [
        SystemMessage("You are a coding agent."),
        HumanMessage("list the files"),
        AIMessage("", tool_calls=[{"id": "call_1", "name": "ls", "args": {}}]),
        ToolMessage(BIG, tool_call_id="call_1"),
        AIMessage("there are 200 lines"),
        HumanMessage("and now?"),
        AIMessage("done"),
    ]


def _agent_adapter() -> list[Any]:
    return [
        Message("user", "list the files"),
        Message("assistant", "", tool_calls=(ToolCall("call_1", "ls", "{}"),)),
        Message("tool", BIG, tool_call_id="call_1"),
        Message("assistant", "there are 200 lines"),
        Message("user", "and now?"),
        Message("assistant", "done"),
    ]


BASES = {
    "openai": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "langchain": _langchain,
    "agent_adapter": _agent_adapter,
}
LANGCHAIN_FIELDS = ["content", "tool_calls", "tool_call_id", "name", "additional_kwargs", "id"]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key / index path inside a JSON-like value (the value itself excluded)."""
    out: list[tuple[Any, ...]] = []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in items:
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


@st.composite
def _malformed(draw: st.DrawFn, fmt: str) -> list[Any]:
    messages = BASES[fmt]()
    i = draw(st.integers(0, len(messages) - 1))
    kind = draw(st.sampled_from(["junk_item", "drop", "set", "delete"]))
    if kind == "junk_item":
        messages[i] = draw(JUNK)
    elif kind == "drop":
        del messages[i]
    elif fmt == "langchain":
        field = draw(st.sampled_from(LANGCHAIN_FIELDS))
        messages[i] = messages[i].model_copy(update={field: draw(JUNK)})
    elif fmt == "agent_adapter":
        messages.insert(i, draw(JUNK))
    else:
        path = draw(st.sampled_from(_paths(messages[i])))
        parent = messages[i]
        for key in path[:-1]:
            parent = parent[key]
        if kind == "set":
            parent[path[-1]] = draw(JUNK)
        else:
            del parent[path[-1]]
    return messages


def _frozen(messages: list[Any]) -> Any:
    return copy.deepcopy(messages)  # compared with ==: dicts by value, LangChain by fields


async def _outcome(messages: list[Any], fmt: str) -> None:
    snapshot = _frozen(messages)
    name = "openai" if fmt == "openai-responses" else fmt
    for format in (name, "auto"):
        try:
            out, _ = await compress_for(messages, POLICY, format=format)
        except ConfigError as exc:
            assert INDEX.search(str(exc)), str(exc)  # names the index (and field)
        else:
            if name != "langchain" and check(messages, name) == []:
                assert check(out, name) == []  # a valid input gives a valid result
        assert _frozen(messages) == snapshot  # the caller's list and messages untouched


@pytest.mark.parametrize("fmt", list(BASES))
def test_every_base_conversation_is_valid_and_compresses(fmt: str) -> None:
    import asyncio

    messages = BASES[fmt]()
    name = "openai" if fmt == "openai-responses" else fmt
    if name != "langchain":
        assert check(messages, name) == []
    out, report = asyncio.run(compress_for(messages, POLICY, format=name))
    assert report.steps and len(out) < len(messages)


@pytest.mark.parametrize("fmt", list(BASES))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
async def test_malformed_messages_give_config_error_or_a_valid_result(
    fmt: str, data: st.DataObject
) -> None:
    await _outcome(data.draw(_malformed(fmt)), fmt)
