"""Regressions of check(): each on the exact input a tester found it with, and check() and
compress() agreeing on Gemini pairing (ids, names, the order of a turn's parts)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_adapter._errors import ConfigError
from agent_adapter.context import CompressionPolicy, compress_for_sync
from agent_adapter.context.formats import check, convert
from agent_adapter.context.formats._anthropic import check_anthropic, check_thinking_unchanged
from agent_adapter.context.formats._gemini import GeminiConverter
from test_check import AGREE, _rounds, compress_accepts, rules

# --------------------------------------------------------------------------------------------
# B. Gemini: a response answers the call with its id, else the first id-less call of its name


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _call(name: str, id_: str | None = None) -> dict[str, Any]:
    fc: dict[str, Any] = {"name": name, "args": {}}
    if id_ is not None:
        fc["id"] = id_
    return {"function_call": fc}


def _response(name: str, id_: str | None = None) -> dict[str, Any]:
    fr: dict[str, Any] = {"name": name, "response": {"output": "r"}}
    if id_ is not None:
        fr["id"] = id_
    return {"function_response": fr}


def _round(call: dict[str, Any], response: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        _user("u"),
        {"role": "model", "parts": [call]},
        {"role": "user", "parts": [response]},
        {"role": "model", "parts": [{"text": "ok"}]},
    ]


def test_gemini_response_named_otherwise_answers_no_id_less_call_in_both() -> None:
    contents = _round(_call("f"), _response("g"))
    assert rules(check(contents, "gemini")) == [(2, "response_count")]
    with pytest.raises(ConfigError, match=r"messages\[2\]\.function_response .*'g'"):
        compress_for_sync(contents, CompressionPolicy(target_tokens=1))


def test_gemini_response_id_for_an_id_less_call_answers_it_by_name_in_both() -> None:
    contents = _round(_call("f"), _response("f", "B"))
    assert check(contents, "gemini") == []
    assert compress_accepts(contents, "gemini")
    tool = convert(contents, "gemini").messages[2]
    assert tool.tool_call_id == "gemini_call_1_0"
    assert tool.extras["gemini_response_id"] == "B"
    # written again (a new native), the response keeps its own id
    conversion = convert(contents, "gemini")
    again = conversion.back([*conversion.messages[:2], tool.with_text("x"), conversion.messages[3]])
    assert again[2]["parts"][0]["function_response"]["id"] == "B"
    dumped = GeminiConverter().dump_all([tool], carry=False)
    assert dumped[0]["parts"][0]["function_response"]["id"] == "B"


def test_gemini_call_with_an_id_is_only_answered_by_that_id_in_both() -> None:
    contents = _round(_call("f", "A"), _response("f"))
    assert rules(check(contents, "gemini")) == [(2, "response_count")]
    assert not compress_accepts(contents, "gemini")


def test_gemini_text_before_a_response_is_reported_where_compress_rejects_it() -> None:
    contents = _round(_call("f", "A"), _response("f", "A"))
    contents[2] = {"role": "user", "parts": [{"text": "t"}, _response("f", "A")]}
    assert rules(check(contents, "gemini")) == [(2, "response_not_first"), (2, "response_count")]
    assert "parts[1]" in check(contents, "gemini")[0].message
    assert not compress_accepts(contents, "gemini")
    contents[2] = {"role": "user", "parts": [_response("f", "A"), {"text": "t"}]}  # after: fine
    assert check(contents, "gemini") == [] and compress_accepts(contents, "gemini")


GEMINI_PAIRING = {"response_position", "response_count", "unanswered_call", "duplicate_call_id"}
# a response moved into the first turn: the pairing's tool_without_call, said as first_turn
GEMINI_PAIRING.add("first_turn")

_NAMES = st.sampled_from(["f", "g"])
_GEMINI_MUTATIONS = ("drop", "move", "dup", "text", "pending", "rename", "stray", "noid")


def _parts_with(contents: list[dict[str, Any]], key: str) -> list[tuple[int, int]]:
    return [
        (k, p)
        for k, c in enumerate(contents)
        for p, part in enumerate(c["parts"])
        if key in part and c["role"] == ("model" if key == "function_call" else "user")
    ]


@st.composite
def gemini_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Gemini contents, valid or with broken pairing: calls with or without ids, responses
    matched by id or by name, text after (or, moved, before) the responses."""
    out: list[dict[str, Any]] = [_user("q")]
    for ids, results in draw(_rounds()):
        if not ids:
            out += [{"role": "model", "parts": [{"text": "x"}]}, _user("y")]
            continue
        names = {i: draw(_NAMES) for i in ids}
        with_ids = draw(st.booleans())
        calls = [_call(names[i], i if with_ids else None) for i in ids]
        out.append({"role": "model", "parts": calls})
        tail = [{"text": "t"}] if draw(st.booleans()) else []
        responses = [_response(names[r], r if with_ids else None) for r in results]
        out.append({"role": "user", "parts": [*responses, *tail]})
    for mutation in draw(st.lists(st.sampled_from(_GEMINI_MUTATIONS), max_size=2)):
        responses_at = _parts_with(out, "function_response")
        calls_at = _parts_with(out, "function_call")
        users = [k for k, c in enumerate(out) if c["role"] == "user"]
        callers = sorted({k for k, _ in calls_at})
        if mutation in ("drop", "move") and responses_at:
            k, p = draw(st.sampled_from(responses_at))
            part = out[k]["parts"][p]
            out[k] = {**out[k], "parts": [x for x in out[k]["parts"] if x is not part]}
            if mutation == "move":
                to = draw(st.sampled_from(users))
                at = draw(st.integers(0, len(out[to]["parts"])))
                out[to] = {
                    **out[to],
                    "parts": [*out[to]["parts"][:at], part, *out[to]["parts"][at:]],
                }
        elif mutation in ("rename", "stray", "noid") and responses_at:
            k, p = draw(st.sampled_from(responses_at))
            fr = dict(out[k]["parts"][p]["function_response"])
            if mutation == "rename":
                fr["name"] = "h"
            elif mutation == "stray":
                fr["id"] = "zz"
            else:
                fr.pop("id", None)
            parts = list(out[k]["parts"])
            parts[p] = {"function_response": fr}
            out[k] = {**out[k], "parts": parts}
        elif mutation == "dup" and callers:
            k = draw(st.sampled_from(callers))
            out[k] = {**out[k], "parts": [*out[k]["parts"], out[k]["parts"][0]]}
        elif mutation == "text" and callers:
            k = draw(st.sampled_from(callers)) + 1
            out[k:k] = [{"role": "model", "parts": [{"text": "t"}]}, _user("t")]
        elif mutation == "pending" and callers:
            del out[callers[-1] + 1 :]
    return out


@AGREE
@given(gemini_lists())
def test_check_and_compress_agree_on_gemini_pairing(contents: list[dict[str, Any]]) -> None:
    found = {v.rule for v in check(contents, "gemini")}
    assert (not found & GEMINI_PAIRING) == compress_accepts(contents, "gemini"), (
        found,
        convert(contents, "gemini").messages,
    )


# --------------------------------------------------------------------------------------------
# C. Anthropic extended thinking: the current turn's opener starts with thinking


THINKING = {"type": "thinking", "thinking": "t", "signature": "SIG"}


def _use(id_: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": "f", "input": {}}


def _result(id_: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": id_, "content": "r"}


def test_thinking_on_requires_the_turn_opener_to_start_with_thinking() -> None:
    nat = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [THINKING, _use("c1")]},
        {"role": "user", "content": [_result("c1"), {"type": "text", "text": "summary"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "next"}, _use("c2")]},
        {"role": "user", "content": [_result("c2")]},
    ]
    found = check(nat, "anthropic", thinking=True)
    assert rules(found) == [(3, "thinking_not_first")]
    assert "starts with text" in found[0].message
    assert rules(check_anthropic(nat, thinking=True)) == [(3, "thinking_not_first")]
    # unknown: thinking of an earlier turn says nothing (the configuration may change between
    # turns, as recorded Claude Code sessions do); thinking in the current turn does
    assert check(nat, "anthropic") == [] == check(nat, "anthropic", thinking=False)
    later = {"role": "assistant", "content": [{"type": "text", "text": "t"}, THINKING, _use("c3")]}
    in_turn = [*nat, later, {"role": "user", "content": [_result("c3")]}]
    assert rules(check(in_turn, "anthropic")) == [(3, "thinking_not_first")]
    string_opener = [*nat[:3], {"role": "assistant", "content": "next"}]
    assert rules(check(string_opener, "anthropic", thinking=True)) == [(3, "thinking_not_first")]
    with pytest.raises(ConfigError, match="thinking= is for the anthropic format"):
        check([{"role": "user", "content": "q"}], "openai", thinking=True)


def test_a_dropped_opener_thinking_is_found_with_thinking_on_or_by_comparing() -> None:
    after = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [_use("c1")]},
        {"role": "user", "content": [_result("c1")]},
        {"role": "assistant", "content": [_use("c2")]},
        {"role": "user", "content": [_result("c2")]},
    ]
    assert check(after, "anthropic") == []  # the list alone cannot say thinking was on
    assert rules(check(after, "anthropic", thinking=True)) == [(1, "thinking_not_first")]
    before = [after[0], {"role": "assistant", "content": [THINKING, _use("c1")]}, *after[2:]]
    assert rules(check_thinking_unchanged(before, after)) == [
        (1, "thinking_changed"),
        (1, "turn_thinking_dropped"),
    ]
    assert check.__doc__ is not None and "check_thinking_unchanged" in check.__doc__


# --------------------------------------------------------------------------------------------
# D. Anthropic: tool_result blocks first, named by their block


def test_tool_result_after_text_names_its_block() -> None:
    nat = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [_use("c1")]},
        {"role": "user", "content": [{"type": "text", "text": "x"}, _result("c1")]},
    ]
    (v,) = [v for v in check(nat, "anthropic") if v.rule == "tool_result_not_first"]
    assert v.index == 2 and "messages[2].content[1]" in v.message


_CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}
_MALFORMED = [
    ("openai", [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [_CALL]}], 1),
    (
        "anthropic",
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": 7}],
            },
        ],
        2,
    ),
    ("gemini", [{"role": "user", "parts": [{"text": 5}]}], 0),
    # accepted by convert() and check() before: a content part without its type, an image
    # whose source is a URL string, a Gemini function response that is no object
    ("openai", [{"role": "user", "content": [{"text": "a"}]}], 0),
    (
        "anthropic",
        [{"role": "user", "content": [{"type": "image", "source": "https://x/a.png"}]}],
        0,
    ),
    (
        "gemini",
        [
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": "x"}}]},
        ],
        2,
    ),
    # Responses: an output that is no str or list, a text part whose text is None, a
    # reasoning summary that is no list
    (
        "openai",
        [
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": 5},
        ],
        1,
    ),
    (
        "openai",
        [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": None}]}],
        0,
    ),
    ("openai", [{"type": "reasoning", "id": "rs_1", "summary": "oops"}], 0),
]


@pytest.mark.parametrize(("fmt", "natives", "index"), _MALFORMED)
def test_check_reports_what_the_converter_rejects(fmt: str, natives: list[Any], index: int) -> None:
    """Regression: check() said [] (the provider would accept it) for lists convert() itself
    rejects: Chat arguments as an object, an Anthropic tool_result content an int, a Gemini
    text an int."""
    with pytest.raises(ConfigError) as error:
        convert(natives, fmt)
    found = check(natives, fmt)
    assert [(v.index, v.rule) for v in found if v.rule == "malformed"] == [(index, "malformed")]
    assert str(error.value) in {v.message for v in found}
