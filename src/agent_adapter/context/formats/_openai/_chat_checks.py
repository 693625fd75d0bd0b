"""The OpenAI Chat Completions checker, and the ``"openai"`` checker that picks it or the
Responses one by item shape.

Source: OpenAI API reference, *Create chat completion*, ``messages``
(https://platform.openai.com/docs/api-reference/chat/create).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_adapter.context._pairing import Pairing
from agent_adapter.context.formats._carrier import split_carrier
from agent_adapter.context.formats._openai._items import classify
from agent_adapter.context.formats._openai._responses_checks import check_responses
from agent_adapter.context.formats._violations import (
    Violation,
    by_index,
    pairing_violations,
    reserved,
)

__all__ = ["check_openai", "check_openai_chat"]


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
