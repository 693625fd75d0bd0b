"""The steady state of compress_for on provider formats: a conversation sent again one round
longer loads, detects and validates only its new natives, and still decides exactly as a
fresh conversion does (counted by calls, never timed).

Real traces (a Claude Code session in Anthropic format, a mini-swe-agent run as Chat
Completions dicts) replayed round by round, and the same conversation written as Responses
items, Gemini contents and LangChain messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_adapter import Message
from agent_adapter.cli._loaders import load_trace
from agent_adapter.context import CompressionPolicy, compress_for, estimate_tokens
from agent_adapter.context.formats import AnthropicConverter, convert, detect_format
from agent_adapter.context.formats._gemini import GeminiConverter
from agent_adapter.context.formats._langchain import LangChainConverter
from agent_adapter.context.formats._memo import _TAIL, disabled, load_messages
from agent_adapter.context.formats._openai import ChatConverter, ResponsesConverter
from agent_adapter.context.formats._registry import _CONVERTERS

CLAUDE_CODE = "claude-code-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
MINI_SWE = "mini-swe-agent-gemini3pro/trajs/pytest-dev__pytest-6197.traj.json"
FORMATS = ("anthropic", "openai-chat", "openai-responses", "gemini", "langchain")
UNDER = CompressionPolicy(threshold_tokens=10**9)
SHORT = 4  # lists shorter than this are loaded in full (cheaper than a look-up)
TAIL = _TAIL  # the newest natives of a list, loaded again every call (edited in place)


def _dumper(fmt: str) -> Callable[[list[Message]], list[Any]]:
    return {
        "anthropic": AnthropicConverter().dump_all,
        "openai-chat": ChatConverter().dump_all,
        "openai-responses": ResponsesConverter().dump_all,
        "gemini": GeminiConverter(objects=False).dump_all,
        "langchain": LangChainConverter().dump_all,
    }[fmt]


def _rounds(messages: list[Message]) -> Iterator[list[Message]]:
    """The conversation cut where an agent calls the model: before each assistant turn that
    follows a user or tool message."""
    start = 0
    for j in range(1, len(messages)):
        if messages[j].role == "assistant" and messages[j - 1].role in ("user", "tool"):
            yield messages[start:j]
            start = j
    yield messages[start:]


def _grown(messages: list[Message], fmt: str, limit: int = 40) -> Iterator[list[Any]]:
    """The natives an agent sends, one round more each call (the same objects each time)."""
    dump = _dumper(fmt)
    natives: list[Any] = []
    for k, chunk in enumerate(_rounds(messages)):
        if k == limit:
            return
        natives.extend(dump(chunk))
        yield list(natives)


@pytest.fixture(scope="module")
def claude_code(data_dir: Path) -> list[Message]:
    trace = load_trace(data_dir / CLAUDE_CODE)
    return convert(trace.messages, trace.format).messages[:160]


def _fresh(natives: list[Any], fmt: str) -> list[Message]:
    with disabled():
        return convert(natives, _name(fmt)).messages


def _name(fmt: str) -> str:
    return "openai" if fmt.startswith("openai") else fmt


def _converter(fmt: str) -> Any:
    return _CONVERTERS[_name(fmt)]


class Counting:
    """Counts the natives a method is called for (wrapping it on its class), outside
    :func:`disabled` blocks (the fresh conversions compared with) and leaving out gemini's
    own probes (index -1, when it writes a native)."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, cls: type, name: str, *, many: bool = False
    ) -> None:
        self.calls = 0
        original = getattr(cls, name)

        def wrapper(this: Any, *args: Any, **kw: Any) -> Any:
            from agent_adapter.context.formats import _memo

            probe = len(args) > 1 and args[1] == -1
            if _memo._enabled and not probe:
                self.calls += len(args[0]) if many else 1
            return original(this, *args, **kw)

        monkeypatch.setattr(cls, name, wrapper)


def _load_counter(monkeypatch: pytest.MonkeyPatch, fmt: str) -> list[Counting]:
    """What loads natives of ``fmt`` (an openai list loads as Chat dicts until it holds a
    Responses item)."""
    if fmt.startswith("openai"):
        return [
            # (_load: what load and load_classified, for a native classified before, share)
            Counting(monkeypatch, ChatConverter, "_load"),
            Counting(monkeypatch, ResponsesConverter, "load_grouped", many=True),
        ]
    if fmt == "gemini":
        return [Counting(monkeypatch, GeminiConverter, "_load")]
    cls = AnthropicConverter if fmt == "anthropic" else LangChainConverter
    return [Counting(monkeypatch, cls, "load")]


# ----------------------------------------------------------------------------- exactness


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_grown_list_loads_exactly_as_a_fresh_conversion(
    claude_code: list[Message], fmt: str
) -> None:
    converter = _converter(fmt)
    for natives in _grown(claude_code, fmt):
        loaded = load_messages(natives, converter)
        assert loaded is not None
        assert loaded == _fresh(natives, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_compress_for_reports_as_without_the_memo_under_and_over_the_threshold(
    claude_code: list[Message], fmt: str
) -> None:
    lists = list(_grown(claude_code, fmt, limit=30))
    middle = estimate_tokens(_fresh(lists[len(lists) // 2], fmt))
    policy = CompressionPolicy(threshold_tokens=middle)
    kinds = set()
    for natives in lists:  # the memo alone: no compaction state (states=False)
        out, report = await compress_for(natives, policy, format=_name(fmt), states=False)
        with disabled():
            want_out, want = await compress_for(natives, policy, format=_name(fmt), states=False)
        assert out == want_out
        assert (out is natives) == (want_out is natives)
        assert report.skipped == want.skipped
        assert report.tokens_before == want.tokens_before
        assert report.tokens_after == want.tokens_after
        assert report.messages_before == want.messages_before
        kinds.add(report.skipped)
    assert {"under_threshold", ""} <= kinds  # both paths were taken


# ----------------------------------------------------------------------------- O(new)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_grown_list_loads_only_its_new_natives(
    claude_code: list[Message], fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = _load_counter(monkeypatch, fmt)
    before = 0
    switched = 0  # an openai list loaded as Chat dicts is loaded again when it turns Responses
    for natives in _grown(claude_code, fmt):
        for c in counting:
            c.calls = 0
        out, report = await compress_for(natives, UNDER, format=_name(fmt))
        assert out is natives and report.skipped == "under_threshold"
        new = len(natives) - before
        calls = sum(c.calls for c in counting)
        if before >= SHORT and calls == len(natives) and fmt == "openai-responses":
            switched += 1
        elif before >= SHORT:
            # the last TAIL natives are loaded again; Responses reloads the trailing call
            # items before them too (a group may grow), gemini the natives between
            most = {"openai-responses": new + TAIL + 4, "gemini": new + TAIL}
            assert new <= calls <= most.get(fmt, max(new, TAIL))
        before = len(natives)
    assert switched <= 1


def test_detection_scans_only_new_items(
    claude_code: list[Message], monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = Counting(monkeypatch, AnthropicConverter, "kind")
    before = 0
    found = set()
    for natives in _grown(claude_code, "anthropic"):
        with disabled():
            want = detect_format(natives)
        counting.calls = 0
        got = detect_format(natives)
        assert got == want
        found.add(got)
        if before >= SHORT:  # the new items and the remembered list's last TAIL again
            assert counting.calls == len(natives) - before + TAIL
        before = len(natives)
    assert "anthropic" in found


async def test_a_grown_message_list_is_validated_only_for_its_new_messages(
    claude_code: list[Message], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_adapter.context._pairing import Pairing

    turns = Counting(monkeypatch, Pairing, "turn")
    results = Counting(monkeypatch, Pairing, "result")
    before = 0
    for k in range(20, len(claude_code)):
        if claude_code[k - 1].role not in ("user", "tool"):
            continue
        turns.calls = results.calls = 0
        messages = claude_code[:k]
        out, report = await compress_for(messages, UNDER)
        assert out is messages and report.skipped == "under_threshold"
        assert turns.calls + results.calls == k - before
        before = k


async def test_mini_swe_agent_chat_dicts_load_only_new_rounds(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = load_trace(data_dir / MINI_SWE)
    natives = trace.messages
    counting = Counting(monkeypatch, ChatConverter, "_load")  # (load and load_classified)
    await compress_for(natives[:20], UNDER)
    counting.calls = 0
    for k in range(21, len(natives) + 1):
        await compress_for(natives[:k], UNDER)
    assert counting.calls == (len(natives) - 20) * TAIL  # one new native, TAIL loaded again


# ----------------------------------------------------------------------------- re-read


def _chat_list(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for i in range(n):
        out.append({"role": "user", "content": f"question {i} " * 5})
        out.append({"role": "assistant", "content": f"answer {i} " * 5})
    return out


async def test_a_native_set_anew_in_place_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    natives = _chat_list(10)
    _, first = await compress_for(natives, UNDER)
    counting = Counting(monkeypatch, ChatConverter, "_load")  # (load and load_classified)
    natives[3]["content"] = "a much longer text " * 50  # mutated in place
    _, report = await compress_for(natives, UNDER)
    assert counting.calls == 1 + TAIL  # only the changed native and the newest ones
    with disabled():
        _, want = await compress_for(natives, UNDER)
    assert report.tokens_before == want.tokens_before > first.tokens_before
    natives[5]["name"] = "bob"  # a field added
    counting.calls = 0
    loaded = load_messages(natives, _CONVERTERS["openai"])
    assert counting.calls == 1 + TAIL and loaded == _fresh(natives, "openai")
    del natives[5]["name"]  # and removed
    counting.calls = 0
    assert load_messages(natives, _CONVERTERS["openai"]) == _fresh(natives, "openai")
    assert counting.calls == 1 + TAIL


async def test_a_replaced_native_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    natives = _chat_list(10)
    await compress_for(natives, UNDER)
    counting = Counting(monkeypatch, ChatConverter, "_load")  # (load and load_classified)
    replaced = [*natives[:4], {"role": "user", "content": "other"}, *natives[5:]]
    assert load_messages(replaced, _CONVERTERS["openai"]) == _fresh(replaced, "openai")
    assert counting.calls == 1 + TAIL


async def test_a_list_the_agent_cut_reuses_the_natives_it_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    natives = _chat_list(30)
    await compress_for(natives, UNDER)
    counting = Counting(monkeypatch, ChatConverter, "_load")  # (load and load_classified)
    kept = [natives[0], {"role": "user", "content": "summary"}, *natives[40:]]
    assert load_messages(kept, _CONVERTERS["openai"]) == _fresh(kept, "openai")
    assert counting.calls == 1 + TAIL  # the summary and the newest; the rest from the memo


def test_a_langchain_call_without_id_moved_to_another_index_gets_its_new_made_up_id() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    def round_(i: int) -> list[Any]:
        call = {"name": "ls", "args": {"i": i}, "id": None, "type": "tool_call"}
        ai = AIMessage(content="", tool_calls=[call])
        ai.tool_calls[0]["id"] = None  # a call without id (as some providers send it)
        return [HumanMessage(f"q {i}"), ai, ToolMessage(f"r {i}", tool_call_id=f"lc_call_{2}_0")]

    natives = [m for i in range(3) for m in round_(i)]
    converter = _CONVERTERS["langchain"]
    assert load_messages(natives, converter) == _fresh(natives, "langchain")
    shifted = natives[1:]  # every native one index earlier
    assert load_messages(shifted, converter) == _fresh(shifted, "langchain")


# ----------------------------------------------------------------------------- formats


def test_responses_calls_at_the_end_join_the_call_items_after_them() -> None:
    def call(i: int) -> dict[str, Any]:
        return {"type": "function_call", "call_id": f"c{i}", "name": "ls", "arguments": "{}"}

    def output(i: int) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": f"c{i}", "output": f"out {i}"}

    natives: list[Any] = [{"role": "user", "content": f"go {i}"} for i in range(4)]
    natives.append(call(0))
    converter = _CONVERTERS["openai"]
    assert load_messages(natives, converter) == _fresh(natives, "openai")
    natives = [*natives, call(1)]  # parallel calls: one message with two calls
    loaded = load_messages(natives, converter)
    assert loaded == _fresh(natives, "openai") and len(loaded[-1].tool_calls) == 2
    natives = [*natives, output(0), output(1), {"role": "user", "content": "more"}]
    assert load_messages(natives, converter) == _fresh(natives, "openai")


def test_an_openai_list_turning_into_responses_items_loads_as_responses() -> None:
    natives: list[Any] = [{"role": "user", "content": f"go {i}"} for i in range(6)]
    converter = _CONVERTERS["openai"]
    assert load_messages(natives, converter) == _fresh(natives, "openai")
    natives = [*natives, {"type": "message", "role": "assistant", "content": "ok"}]
    assert load_messages(natives, converter) == _fresh(natives, "openai")


def test_gemini_results_without_ids_answer_the_calls_of_the_remembered_prefix() -> None:
    natives: list[Any] = [{"role": "user", "parts": [{"text": f"go {i}"}]} for i in range(4)]
    natives.append(
        {"role": "model", "parts": [{"function_call": {"name": "ls", "args": {}}}]}
    )  # no id: made up from its index
    converter = _CONVERTERS["gemini"]
    assert load_messages(natives, converter) == _fresh(natives, "gemini")
    natives = [
        *natives,
        {"role": "user", "parts": [{"function_response": {"name": "ls", "response": {"r": 1}}}]},
    ]
    loaded = load_messages(natives, converter)
    assert loaded == _fresh(natives, "gemini")
    assert loaded[-1].tool_call_id == loaded[-2].tool_calls[0].id


# ----------------------------------------------------------------------------- errors


async def test_errors_in_new_natives_read_as_without_the_memo() -> None:
    natives: list[Any] = _chat_list(10)
    await compress_for(natives, UNDER)
    cases = [
        [*natives, {"role": "tool", "tool_call_id": "nope", "content": "x"}],  # pairing
        [*natives, {"role": "user", "content": 3}],  # a bad field
        [*natives, {"type": "function_call_output", "call_id": "x", "output": "y"}],  # a mix
    ]
    for bad in cases:
        with pytest.raises(Exception) as got:
            await compress_for(bad, UNDER)
        with disabled(), pytest.raises(Exception) as want:
            await compress_for(bad, UNDER)
        assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


# ----------------------------------------------------------------------------- bounds


def test_the_memos_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_adapter.context import _pairing
    from agent_adapter.context.formats import _memo

    monkeypatch.setattr(_memo._CHAT_EACH.natives, "size", 50)
    converter = _CONVERTERS["openai"]
    for i in range(30):
        natives = [{"role": "user", "content": f"conversation {i} message {j}"} for j in range(20)]
        assert load_messages(natives, converter) == _fresh(natives, "openai")
    assert len(_memo._CHAT_EACH.natives.entries) <= 50
    assert len(_memo._LISTS_MEMO.seen) <= _memo._LISTS
    for i in range(10):
        _pairing.validate_messages([Message("user", f"{i} {j}") for j in range(20)])
    assert len(_pairing._VALIDATED.lists) <= _pairing._VALIDATED_LISTS


# ----------------------------------------------------------------------------- edited in place


async def _as_fresh(natives: list[Any], fmt: str, policy: CompressionPolicy = UNDER) -> Any:
    """compress_for's report on ``natives`` after asserting it is the memo-less one."""
    out, report = await compress_for(natives, policy, format=fmt)
    with disabled():
        want_out, want = await compress_for(natives, policy, format=fmt)
    assert out == want_out
    assert (report.skipped, report.tokens_before, report.messages_before) == (
        want.skipped,
        want.tokens_before,
        want.messages_before,
    )
    assert load_messages(natives, _CONVERTERS[fmt]) == _fresh(natives, fmt)
    return report


def test_tool_results_appended_in_place_to_the_last_anthropic_turn_are_counted() -> None:
    """The tester's repro: the tool_result turn built block by block, sent after each block."""
    from agent_adapter.context import compress_for_sync

    pol = CompressionPolicy(threshold_tokens=2000, target_tokens=1500)
    msgs: list[Any] = [
        {"role": "user", "content": "Fix the bug"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {}},
                {"type": "tool_use", "id": "t2", "name": "bash", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "short"}],
        },
    ]
    compress_for_sync(msgs, pol, format="anthropic")
    msgs[-1]["content"].append({"type": "tool_result", "tool_use_id": "t2", "content": "y" * 40000})
    _, rep = compress_for_sync(msgs, pol, format="anthropic")
    with disabled():
        _, want = compress_for_sync(msgs, pol, format="anthropic")
    assert rep.skipped != "under_threshold" and rep.tokens_before > 2000
    assert (rep.skipped, rep.tokens_before) == (want.skipped, want.tokens_before)


def _anthropic_rounds(n: int) -> list[Any]:
    out: list[Any] = [{"role": "user", "content": "Fix the bug"}]
    for i in range(n):
        call = {"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {"cmd": "ls"}}
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"out {i}"}
        out.append({"role": "assistant", "content": [call]})
        out.append({"role": "user", "content": [result]})
    return out


async def test_the_newest_anthropic_turns_edited_in_place_are_read_again() -> None:
    natives = _anthropic_rounds(10)  # long enough for the list memo
    await _as_fresh(natives, "anthropic")
    natives[-1]["content"].append({"type": "text", "text": "and more " * 500})  # appended
    grown = await _as_fresh(natives, "anthropic")
    natives[-1]["content"][0]["content"] = "z " * 3000  # nested, same length
    assert (await _as_fresh(natives, "anthropic")).tokens_before > grown.tokens_before
    # the streamed assistant turn: its text block grows, then a new turn follows it
    natives = [*natives, {"role": "assistant", "content": [{"type": "text", "text": "I"}]}]
    await _as_fresh(natives, "anthropic")
    natives[-1]["content"][0]["text"] = "I will look " * 400
    natives = [*natives, {"role": "user", "content": "go on"}]
    await _as_fresh(natives, "anthropic")


@pytest.mark.parametrize("n", [1, 10])
async def test_an_openai_chat_content_list_grown_in_place_is_read_again(n: int) -> None:
    natives: list[Any] = _chat_list(n)
    natives.append({"role": "user", "content": [{"type": "text", "text": "look"}]})
    await _as_fresh(natives, "openai")
    natives[-1]["content"].append({"type": "text", "text": "at this " * 800})
    assert (await _as_fresh(natives, "openai")).tokens_before > 1000


async def test_an_openai_responses_content_list_grown_in_place_is_read_again() -> None:
    natives: list[Any] = [{"role": "user", "content": f"go {i}"} for i in range(4)]
    natives.append(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]}
    )
    await _as_fresh(natives, "openai")
    natives[-1]["content"].append({"type": "input_text", "text": "at this " * 800})
    assert (await _as_fresh(natives, "openai")).tokens_before > 1000


@pytest.mark.parametrize("n", [1, 6])
async def test_gemini_parts_grown_in_place_are_read_again(n: int) -> None:
    natives: list[Any] = [{"role": "user", "parts": [{"text": f"go {i}"}]} for i in range(n)]
    natives.append({"role": "model", "parts": [{"text": "ok"}]})
    natives.append({"role": "user", "parts": [{"text": "x"}]})
    await _as_fresh(natives, "gemini")
    natives[-1]["parts"].append({"text": "at this " * 800})
    natives[-2]["parts"].append({"text": "and " * 100})
    assert (await _as_fresh(natives, "gemini")).tokens_before > 1000


@pytest.mark.parametrize("n", [1, 6])
async def test_a_langchain_content_list_grown_in_place_is_read_again(n: int) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    natives: list[Any] = []
    for i in range(n):
        natives += [HumanMessage(f"q {i}"), AIMessage(f"a {i}")]
    natives.append(HumanMessage(content=[{"type": "text", "text": "look"}]))
    await _as_fresh(natives, "langchain")
    natives[-1].content.append({"type": "text", "text": "at this " * 800})
    assert (await _as_fresh(natives, "langchain")).tokens_before > 1000


async def test_an_older_native_whose_content_list_grew_is_read_again_on_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A native looked up on its own (the list is not an extension of one remembered) is read
    again when a top-level list changed length, anywhere in the list."""
    natives = _anthropic_rounds(10)
    await _as_fresh(natives, "anthropic")
    natives[4]["content"].append({"type": "text", "text": "more " * 800})
    kept = [natives[0], *natives[3:]]  # a list the agent cut: no remembered prefix
    counting = Counting(monkeypatch, AnthropicConverter, "load")
    assert (await _as_fresh(kept, "anthropic")).tokens_before > 800
    assert counting.calls >= 1


def test_a_format_made_sure_in_place_by_the_newest_native_is_detected() -> None:
    natives: list[Any] = []
    for i in range(4):  # plain text turns: Chat and Anthropic alike (detected as openai)
        natives += [{"role": "user", "content": f"q {i}"}, {"role": "assistant", "content": "a"}]
    natives[-1]["content"] = [{"type": "text", "text": "I will run it"}]  # still both
    assert detect_format(natives) == "openai"
    natives[-1]["content"].append({"type": "tool_use", "id": "t1", "name": "ls", "input": {}})
    with disabled():
        want = detect_format(natives)
    assert detect_format(natives) == want == "anthropic"
