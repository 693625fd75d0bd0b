"""The OpenAI checkers: Chat Completions, Responses, and the ``"openai"`` checker that picks
one of them by item shape.

Sources: OpenAI API reference, *Create chat completion*, ``messages``
(https://platform.openai.com/docs/api-reference/chat/create); *Create a model response*,
``input`` (https://platform.openai.com/docs/api-reference/responses/create), and the
function-calling, reasoning and MCP guides
(https://platform.openai.com/docs/guides/function-calling,
https://platform.openai.com/docs/guides/reasoning,
https://platform.openai.com/docs/guides/tools-remote-mcp).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agent_adapter.context._pairing import Pairing, PairingProblem, PairingRule, describe
from agent_adapter.context.formats._carrier import split_carrier
from agent_adapter.context.formats._openai._items import (
    USER_SIDE,
    classify,
    is_call,
    output_call_id,
)
from agent_adapter.context.formats._violations import (
    Violation,
    by_index,
    pairing_violations,
    reported_problems,
    reserved,
)

__all__ = ["check_openai", "check_openai_chat", "check_responses"]


def check_openai_chat(messages: Sequence[Any]) -> list[Violation]:
    """Chat Completions rules (API reference, *Create chat completion*, ``messages``).

    * ``tool_without_call``: a ``tool`` message must answer a call of the nearest preceding
      assistant message with ``tool_calls`` ("messages with role 'tool' must be a response to
      a preceding message with 'tool_calls'"), once.
    * ``call_unanswered``: every call of an assistant message is answered before the next
      non-tool message ("An assistant message with 'tool_calls' must be followed by tool
      messages responding to each 'tool_call_id'").
    * ``calls_pending_at_end``: the same, for calls of the list's last assistant message with
      no message after its results: a request the API rejects too, but a list a tool loop
      holds between the model's reply and running the tools.
    * ``duplicate_call_id``: one assistant message uses a call id twice (each ``tool_call_id``
      must name one call).
    * ``call_id_missing``: a ``tool_calls`` entry without a str ``id``, or a ``tool`` message
      without a str ``tool_call_id`` (both "Required" in the reference).
    * ``content_missing``: ``content`` is required except on an assistant message with
      ``tool_calls`` (API reference: "content ... Required unless tool_calls or function_call
      is specified"); ``None`` counts as missing.
    * ``mixed_formats``, ``not_a_message``, ``reserved_key``: see
      :mod:`agent_adapter.context.formats._check`.

    The pairing rules are :mod:`agent_adapter.context._pairing`'s, fed one message at a time
    as :func:`~agent_adapter.context.formats.convert` loads them, so this check and
    ``compress()``'s input validation agree.
    """
    out: list[Violation] = []
    pairing = Pairing()
    for i, raw in enumerate(messages):
        out.extend(reserved(raw, i))
        item = split_carrier(raw)[0]
        flavour = classify(item)
        if flavour == "responses":
            out.append(Violation(i, "mixed_formats", "a Responses item in a Chat Completions list"))
            continue
        if flavour is None:
            out.append(Violation(i, "not_a_message", "not a Chat Completions message dict"))
            continue
        role = item["role"]
        if item.get("content") is None and not (
            role == "assistant" and (item.get("tool_calls") or item.get("function_call"))
        ):
            out.append(
                Violation(i, "content_missing", f"a {role} message needs content (str or parts)")
            )
        if role == "tool":
            call_id = item.get("tool_call_id")
            if isinstance(call_id, str) and call_id:
                pairing.result(i, call_id)
            else:
                out.append(Violation(i, "call_id_missing", "a tool message needs a tool_call_id"))
            continue
        calls = item.get("tool_calls") if role == "assistant" else None
        ids: list[str] = []
        for k, c in enumerate(calls if isinstance(calls, list) else ()):
            call_id = c.get("id") if isinstance(c, Mapping) else None
            if isinstance(call_id, str) and call_id:
                ids.append(call_id)
            else:
                out.append(Violation(i, "call_id_missing", f"tool_calls[{k}] has no id"))
        pairing.turn(i, ids)
    pairing.end()
    return by_index(out + pairing_violations(pairing, {}))


def check_openai(messages: Sequence[Any]) -> list[Violation]:
    """Responses rules when any item is a Responses item, else Chat Completions rules."""
    if any(classify(split_carrier(m)[0]) == "responses" for m in messages):
        return check_responses(messages)
    return check_openai_chat(messages)


#: Call items the client answers with an output item, whose ``call_id`` the reference marks
#: "Required" (``function_call``, ``custom_tool_call``, ``computer_call``,
#: ``local_shell_call``); server-side tool calls (``web_search_call``...) have none.
_CALLS_WITH_ID = frozenset(
    {"function_call", "custom_tool_call", "computer_call", "local_shell_call"}
)

_RULES: dict[PairingRule, str] = {"tool_without_call": "output_without_call"}


def _say(problem: PairingProblem) -> str:
    return describe(problem, call="call_id", result="call_id", at=lambda i: f"input[{i}]")


def _is_input(item: Any) -> bool:
    """True for an item the client sends (it ends a response's output)."""
    if not isinstance(item, Mapping):
        return False
    kind = item.get("type")
    if kind is None or kind == "message":
        return item.get("role") in ("user", "system", "developer")
    return str(kind).endswith("_call_output") or kind in USER_SIDE


def _call_id(item: Mapping[str, Any]) -> str | None:
    """The non-empty ``call_id`` of a call item, else ``None``."""
    call_id = item.get("call_id")
    return call_id if is_call(item) and isinstance(call_id, str) and call_id else None


class _Runs:
    """Feeds a :class:`Pairing` the Responses way: the model's output items between two client
    inputs (reasoning, messages, calls: one response) are one call turn, as parallel
    ``function_call`` items are; each call is remembered by its item for the report."""

    def __init__(self) -> None:
        self.pairing = Pairing()
        self.start: int | None = None  # first item of the open run
        self.ids: list[str] = []
        self.where: dict[tuple[int, str], list[int]] = {}  # (run, call id) -> call items

    def output(self, index: int, call_id: str | None) -> None:
        """Item ``index`` is model output (a call when ``call_id`` is given)."""
        if self.start is None:
            self.start, self.ids = index, []
        if call_id is not None:
            self.ids.append(call_id)
            self.where.setdefault((self.start, call_id), []).append(index)

    def close(self) -> None:
        """The open run (if any) ends: it is one call turn."""
        if self.start is not None:
            self.pairing.turn(self.start, self.ids)
            self.start = None

    def violations(self) -> list[Violation]:
        """The pairing violations; a call's at its own item."""
        out: list[Violation] = []
        for p in reported_problems(self.pairing):
            rule = _RULES.get(p.rule, p.rule)
            if p.rule == "tool_without_call":
                out.append(Violation(p.index, rule, _say(p)))
                continue
            for call_id in p.call_ids:
                spots = self.where.get((p.index, call_id or ""), [p.index])
                at = spots[-1] if p.rule == "duplicate_call_id" else spots[0]
                one = replace(p, index=at, call_ids=(call_id,))
                out.append(Violation(at, rule, _say(one)))
        return out


# Over 80 lines, kept whole: one pass over the items, each branch one documented Responses rule
# (quoted in the docstring), sharing the pass's state (open calls, ids seen, the last item).
def check_responses(items: Sequence[Any]) -> list[Violation]:
    """Responses rules (API reference, *Create a model response*, ``input``; function-calling,
    reasoning and MCP guides).

    * ``output_without_call``: a ``*_call_output`` answers a call of the nearest preceding
      response (the output items since the last client input) by ``call_id``, once ("No
      tool call found for function call output with call_id ...").
    * ``call_unanswered``: a call item (``function_call``, ``custom_tool_call``,
      ``computer_call``... with a ``call_id``) gets its output before the client's next input
      or the next response ("No tool output found for function call ...").
    * ``calls_pending_at_end``: the same for the list's last response (a tool loop between
      the reply and running the tools).
    * ``duplicate_call_id``: one response uses a ``call_id`` twice.
    * ``call_id_missing``: a ``function_call`` / ``custom_tool_call`` / ``computer_call`` /
      ``local_shell_call`` or a ``*_call_output`` without a ``call_id`` (the reference marks
      it "Required"; ``local_shell_call_output`` may name its call by ``id``).
    * ``reasoning_not_followed``: a ``reasoning`` item must be followed directly by the output
      item it belongs to (a message, a call...), not by another reasoning item, the client's
      input or the end of the list ("Item 'rs_...' of type 'reasoning' was provided without its
      required following item").
    * ``approval_response_without_request``: an ``mcp_approval_response`` answers an earlier
      ``mcp_approval_request`` by ``approval_request_id`` (the request may also sit in the
      response named by ``previous_response_id``; this check only sees the list).
    * ``compaction_item``: a ``compaction`` item carries its ``encrypted_content`` as a str
      (API reference, ``ResponseCompactionItemParam``: ``encrypted_content`` is required; the
      compaction guide: the item "is opaque", its content goes back as it came).
    * ``compaction_trigger_not_last``: a ``compaction_trigger`` is the list's last item
      ("Compacts the current context. Must be the final input item.", API reference).
    * ``mixed_formats``, ``not_an_item``, ``reserved_key``: see
      :mod:`agent_adapter.context.formats._check`.

    The pairing rules are :mod:`agent_adapter.context._pairing`'s, with one response's output
    items as one call turn.
    """
    out: list[Violation] = []
    base = [split_carrier(raw)[0] for raw in items]
    runs = _Runs()
    requests: set[str] = set()
    for i, item in enumerate(base):
        out.extend(reserved(items[i], i))
        flavour = classify(item)
        if flavour is None:
            out.append(Violation(i, "not_an_item", "not a Responses item"))
            continue
        if flavour == "chat":
            out.append(
                Violation(i, "mixed_formats", "a Chat Completions message in a Responses list")
            )
            continue
        kind = item.get("type")
        if kind == "reasoning":
            out.extend(_reasoning(base, i))
        if kind == "compaction" and not isinstance(item.get("encrypted_content"), str):
            out.append(Violation(i, "compaction_item", "a compaction item needs encrypted_content"))
        if kind == "compaction_trigger" and i != len(base) - 1:
            out.append(
                Violation(
                    i,
                    "compaction_trigger_not_last",
                    "a compaction_trigger must be the final input item",
                )
            )
        if kind in _CALLS_WITH_ID and _call_id(item) is None:
            out.append(Violation(i, "call_id_missing", f"a {kind} item needs a call_id"))
        answered = output_call_id(item)
        if str(kind).endswith("_call_output") and not answered:
            out.append(Violation(i, "call_id_missing", f"a {kind} item needs a call_id"))
        if kind == "mcp_approval_request" and isinstance(item.get("id"), str):
            requests.add(item["id"])
        if kind == "mcp_approval_response" and item.get("approval_request_id") not in requests:
            out.append(
                Violation(
                    i,
                    "approval_response_without_request",
                    f"approval_request_id {item.get('approval_request_id')!r} names no earlier "
                    "mcp_approval_request",
                )
            )
        if _is_input(item):
            runs.close()
            if answered:
                runs.pairing.result(i, answered)
            else:
                runs.pairing.turn(i, [])
        else:
            runs.output(i, _call_id(item))
    runs.close()
    runs.pairing.end()
    return by_index(out + runs.violations())


def _reasoning(base: Sequence[Any], i: int) -> list[Violation]:
    nxt = base[i + 1] if i + 1 < len(base) else None
    if (
        nxt is None
        or classify(nxt) in (None, "chat")
        or _is_input(nxt)
        or nxt.get("type") == "reasoning"
    ):
        what = "the end of the list" if nxt is None else f"items[{i + 1}]"
        return [
            Violation(
                i,
                "reasoning_not_followed",
                f"reasoning item is followed by {what}, not by the item it belongs to",
            )
        ]
    return []
