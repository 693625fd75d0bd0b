"""Provider acceptance checks: would the provider accept this message list?

:func:`check` returns the :class:`Violation` s of a native list (empty when the provider would
accept it, as far as message structure goes). Each rule names its source; the checks are
structural (pairing, order, required fields), never about content or model limits.

Rules common to every dict format:

* ``reserved_key``: a native holds the reserved carrier key ``"_agent_adapter"`` (see
  :mod:`agent_adapter.context.formats.openai`); OpenAI rejects unknown parameters ("Unknown
  parameter") and Anthropic unknown fields ("Extra inputs are not permitted"). Remove it with
  :func:`strip_reserved`.
* ``not_a_message`` / ``not_an_item``: an item the API reference does not describe.
* ``mixed_formats``: Chat Completions dicts and Responses items in one list.

Formats other than ``openai`` and ``anthropic`` are checked by the checker in ``_CHECKERS``
(``gemini`` comes from ``formats/_check_gemini.py`` when that module exists), else by the
tool-pairing rules of :func:`check_messages` on the converted messages.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter.context.formats._carrier import RESERVED_KEY, split_carrier
from agent_adapter.context.formats.responses import (
    classify,
    is_call,
    output_call_id,
)
from agent_adapter.errors import ConfigError
from agent_adapter.messages import Message

__all__ = [
    "Violation",
    "check",
    "check_anthropic",
    "check_messages",
    "check_openai_chat",
    "check_responses",
    "check_thinking_unchanged",
    "strip_reserved",
]


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule.

    Attributes:
        index: the offending item's index in the checked list (for a missing answer, the item
            that waits for it).
        rule: the rule's name, e.g. ``"tool_without_call"``.
        message: what is wrong, naming ids; never message text.
    """

    index: int
    rule: str
    message: str


Checker = Callable[[Sequence[Any]], list[Violation]]


def strip_reserved(natives: Sequence[Any]) -> list[Any]:
    """``natives`` without the reserved carrier key; natives without it are the same objects."""
    return [split_carrier(n)[0] for n in natives]


def _reserved(item: Any, index: int) -> list[Violation]:
    if isinstance(item, Mapping) and RESERVED_KEY in item:
        return [
            Violation(
                index,
                "reserved_key",
                f"holds {RESERVED_KEY!r}, which providers reject as an unknown field "
                "(remove it with strip_reserved)",
            )
        ]
    return []


# --------------------------------------------------------------------------------------------
# OpenAI Chat Completions


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
    * ``content_missing``: ``content`` is required except on an assistant message with
      ``tool_calls`` (API reference: "content ... Required unless tool_calls or function_call
      is specified").
    * ``mixed_formats``, ``not_a_message``, ``reserved_key``: see the module docstring.
    """
    out: list[Violation] = []
    pairing = _Pairing(out)
    for i, raw in enumerate(messages):
        out.extend(_reserved(raw, i))
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
            pairing.result(i, call_id if isinstance(call_id, str) else None)
            continue
        calls = item.get("tool_calls") if role == "assistant" else None
        ids = (
            [
                c["id"]
                for c in calls or ()
                if isinstance(c, Mapping) and isinstance(c.get("id"), str)
            ]
            if isinstance(calls, list)
            else []
        )
        pairing.turn(i, ids)
    pairing.end()
    return out


# --------------------------------------------------------------------------------------------
# OpenAI Responses


def _is_input(item: Any) -> bool:
    """True for an item the client sends (it ends a response's output)."""
    if not isinstance(item, Mapping):
        return False
    kind = item.get("type")
    if kind is None or kind == "message":
        return item.get("role") in ("user", "system", "developer")
    return output_call_id(item) is not None or kind == "mcp_approval_response"


def check_responses(items: Sequence[Any]) -> list[Violation]:
    """Responses rules (API reference, *Create a model response*, ``input``; function-calling,
    reasoning and MCP guides).

    * ``output_without_call``: a ``*_call_output`` needs an earlier call item with its
      ``call_id`` ("No tool call found for function call output with call_id ..."), once.
    * ``call_unanswered``: a ``function_call`` / ``custom_tool_call`` / ``computer_call`` (any
      ``*_call`` with a ``call_id``) needs its output before the client's next input ("No tool
      output found for function call ...").
    * ``calls_pending_at_end``: the same for calls with nothing but model output after them,
      at the end of the list (a tool loop between the reply and running the tools).
    * ``reasoning_not_followed``: a ``reasoning`` item must be followed directly by the output
      item it belongs to (a message, a call...), not by another reasoning item, the client's
      input or the end of the list ("Item 'rs_...' of type 'reasoning' was provided without its
      required following item").
    * ``approval_response_without_request``: an ``mcp_approval_response`` answers an earlier
      ``mcp_approval_request`` by ``approval_request_id`` (the request may also sit in the
      response named by ``previous_response_id``; this check only sees the list).
    * ``mixed_formats``, ``not_an_item``, ``reserved_key``: see the module docstring.
    """
    out: list[Violation] = []
    base = [split_carrier(raw)[0] for raw in items]
    latest: dict[str, int] = {}  # call id -> index of its latest call item
    answered: set[int] = set()
    requests: set[str] = set()
    for i, item in enumerate(base):
        out.extend(_reserved(items[i], i))
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
            nxt = base[i + 1] if i + 1 < len(base) else None
            if (
                nxt is None
                or classify(nxt) in (None, "chat")
                or _is_input(nxt)
                or nxt.get("type") == "reasoning"
            ):
                what = "the end of the list" if nxt is None else f"items[{i + 1}]"
                out.append(
                    Violation(
                        i,
                        "reasoning_not_followed",
                        f"reasoning item is followed by {what}, not by the item it belongs to",
                    )
                )
        if is_call(item):
            latest[item["call_id"]] = i
        call_id = output_call_id(item)
        if call_id is not None:
            j = latest.get(call_id)
            if j is None or j in answered:
                out.append(
                    Violation(
                        i,
                        "output_without_call",
                        f"output for call_id {call_id!r} has no earlier unanswered call",
                    )
                )
            else:
                answered.add(j)
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
    for i, item in enumerate(base):
        if isinstance(item, Mapping) and is_call(item) and i not in answered:
            later_input = any(_is_input(x) for x in base[i + 1 :])
            out.append(
                Violation(
                    i,
                    "call_unanswered" if later_input else "calls_pending_at_end",
                    f"call {item['call_id']!r} has no output"
                    + (" before the next input" if later_input else " yet"),
                )
            )
    return sorted(out, key=lambda v: v.index)


# --------------------------------------------------------------------------------------------
# Anthropic


def _uses(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, Mapping) else None
    if message is None or not isinstance(content, list) or message.get("role") != "assistant":
        return []
    return [
        b["id"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def _turn_opener(base: Sequence[Any]) -> int | None:
    """Index of the first assistant message after the last user message that holds more
    than tool results (the current turn's opener), or ``None``."""
    last_user = -1
    for i, m in enumerate(base):
        if not isinstance(m, Mapping) or m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str) or any(
            not (isinstance(b, Mapping) and b.get("type") == "tool_result") for b in content or ()
        ):
            last_user = i
    for i in range(last_user + 1, len(base)):
        m = base[i]
        if isinstance(m, Mapping) and m.get("role") == "assistant":
            return i if isinstance(m.get("content"), list) and m["content"] else None
    return None


def check_anthropic(messages: Sequence[Any]) -> list[Violation]:
    """Anthropic Messages rules (API reference, *Messages*; tool use and extended thinking
    guides).

    * ``first_not_user``: the first message uses the ``user`` role.
    * ``roles_not_alternating``: consecutive messages with the same role. The API combines
      consecutive same-role turns into one, but this checker is strict: a list that relies on
      it is usually a sign something between was dropped.
    * ``empty_content``: "all messages must have non-empty content except for the optional
      final assistant message".
    * ``empty_text``: "text content blocks must contain non-whitespace text".
    * ``block_wrong_role``: ``tool_use`` / ``thinking`` / ``server_tool_use`` blocks in a user
      message, ``tool_result`` in an assistant message.
    * ``tool_use_unanswered``: every ``tool_use`` is answered by a ``tool_result`` in the very
      next (user) message ("tool_use ids were found without tool_result blocks immediately
      after").
    * ``tool_use_pending_at_end``: the same for the list's last message (a tool loop between
      the reply and running the tools).
    * ``tool_result_without_use``: a ``tool_result`` answers a ``tool_use`` of the previous
      assistant message ("unexpected tool_use_id found in tool_result blocks").
    * ``tool_result_not_first``: in a user message, ``tool_result`` blocks come before any
      other block (tool use guide: "tool result blocks must come first in the content array").
    * ``thinking_signature``: a ``thinking`` block keeps a non-empty ``signature`` and a
      ``redacted_thinking`` block its ``data`` (extended thinking guide: blocks go back
      complete and unmodified).
    * ``thinking_not_first``: the current turn's opening assistant message (the first one
      after the last user message that is not only tool results) starts with its thinking
      block when it has one (extended thinking guide: the final assistant turn must start
      with a thinking block, "Expected `thinking` or `redacted_thinking`, but found `text`";
      a merged or reordered turn breaks it). Earlier turns may interleave thinking freely.
    * ``tool_use_id_duplicate``: ``tool_use`` ids are unique in the whole request (API error
      "tool_use ids must be unique"), and one message answers an id once.
    * ``not_a_message``, ``reserved_key``: see the module docstring.
    """
    out: list[Violation] = []
    base = [split_carrier(raw)[0] for raw in messages]
    n = len(base)
    prev_role: str | None = None
    seen_uses: dict[str, int] = {}
    for i, m in enumerate(base):
        out.extend(_reserved(messages[i], i))
        if (
            not isinstance(m, Mapping)
            or m.get("role") not in ("user", "assistant")
            or not isinstance(m.get("content"), str | list)
        ):
            out.append(Violation(i, "not_a_message", "not an Anthropic message dict"))
            prev_role = None
            continue
        role, content = m["role"], m["content"]
        if i == 0 and role != "user":
            out.append(Violation(i, "first_not_user", "the first message must use the user role"))
        if role == prev_role:
            out.append(Violation(i, "roles_not_alternating", f"two {role} messages in a row"))
        prev_role = role
        if not content and not (i == n - 1 and role == "assistant"):
            out.append(Violation(i, "empty_content", "empty content"))
        if isinstance(content, str) and content and not content.strip():
            out.append(Violation(i, "empty_text", "whitespace-only text"))
        blocks = content if isinstance(content, list) else []
        seen_other = False
        not_first = False
        answered: set[Any] = set()
        for k, b in enumerate(blocks):
            kind = b.get("type") if isinstance(b, Mapping) else None
            if not isinstance(kind, str):
                out.append(Violation(i, "not_a_message", f"content[{k}] is not a block"))
                continue
            if kind == "tool_use":
                use_id = b.get("id")
                if isinstance(use_id, str) and use_id in seen_uses:
                    out.append(
                        Violation(
                            i,
                            "tool_use_id_duplicate",
                            f"tool_use id {use_id!r} is already used by message "
                            f"[{seen_uses[use_id]}]",
                        )
                    )
                elif isinstance(use_id, str):
                    seen_uses[use_id] = i
            if kind == "tool_result":
                use_id = b.get("tool_use_id")
                if use_id in answered:
                    out.append(
                        Violation(
                            i, "tool_use_id_duplicate", f"tool_result for {use_id!r} given twice"
                        )
                    )
                answered.add(use_id)
            if kind == "text" and (not isinstance(b.get("text"), str) or not b["text"].strip()):
                out.append(Violation(i, "empty_text", f"content[{k}] has no non-whitespace text"))
            wrong = (
                role == "user"
                and kind in ("tool_use", "thinking", "redacted_thinking", "server_tool_use")
            ) or (role == "assistant" and kind == "tool_result")
            if wrong:
                out.append(Violation(i, "block_wrong_role", f"a {kind} block in a {role} message"))
            if kind == "thinking" and not (isinstance(b.get("signature"), str) and b["signature"]):
                out.append(Violation(i, "thinking_signature", f"content[{k}] has no signature"))
            if kind == "redacted_thinking" and not (isinstance(b.get("data"), str) and b["data"]):
                out.append(Violation(i, "thinking_signature", f"content[{k}] has no data"))
            if kind == "tool_result":
                not_first = not_first or seen_other
            else:
                seen_other = True
        if role == "user":
            if not_first:
                out.append(
                    Violation(i, "tool_result_not_first", "a tool_result block after another block")
                )
            uses = set(_uses(base[i - 1])) if i > 0 else set()
            for b in blocks:
                if isinstance(b, Mapping) and b.get("type") == "tool_result":
                    use_id = b.get("tool_use_id")
                    if use_id not in uses:
                        out.append(
                            Violation(
                                i,
                                "tool_result_without_use",
                                f"tool_result for {use_id!r} answers no tool_use of the "
                                "previous assistant message",
                            )
                        )
        uses_here = _uses(m)
        if uses_here:
            if i == n - 1:
                out.append(
                    Violation(
                        i, "tool_use_pending_at_end", f"tool_use {uses_here} have no result yet"
                    )
                )
            else:
                nxt = base[i + 1]
                got = set()
                if isinstance(nxt, Mapping) and nxt.get("role") == "user":
                    got = {
                        b.get("tool_use_id")
                        for b in nxt.get("content") or ()
                        if isinstance(b, Mapping) and b.get("type") == "tool_result"
                    }
                missing = [u for u in uses_here if u not in got]
                if missing:
                    out.append(
                        Violation(
                            i,
                            "tool_use_unanswered",
                            f"tool_use {missing} have no tool_result in the next message",
                        )
                    )
    opener = _turn_opener(base)
    if opener is not None:
        blocks = base[opener]["content"]
        kinds = [b.get("type") for b in blocks if isinstance(b, Mapping)]
        thinking = {"thinking", "redacted_thinking"}
        if any(k in thinking for k in kinds) and kinds[0] not in thinking:
            out.append(
                Violation(
                    opener,
                    "thinking_not_first",
                    f"the turn's opening assistant message starts with {kinds[0]}, not thinking",
                )
            )
    return out


def _thinking_blocks(message: Any) -> list[Any]:
    if not isinstance(message, Mapping):
        return []
    if message.get("type") == "reasoning":
        return [message]
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [
        b
        for b in content
        if isinstance(b, Mapping) and b.get("type") in ("thinking", "redacted_thinking")
    ]


def _content_blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _is_real_user(message: Any) -> bool:
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return True
    return any(
        not (isinstance(b, Mapping) and b.get("type") == "tool_result") for b in content or ()
    )


def check_thinking_unchanged(before: Sequence[Any], after: Sequence[Any]) -> list[Violation]:
    """Thinking that went back as it came (Anthropic messages and Responses reasoning items).

    * ``thinking_changed`` (index in ``after``): a ``thinking`` / ``redacted_thinking`` block or
      a ``reasoning`` item that is in no message of ``before``, or a message of ``after`` whose
      thinking blocks are not those of the messages of ``before`` it comes from (the same
      object, or sharing a ``tool_use`` id or a block object: a rebuilt or merged message), in
      order. Extended thinking guide: "you must include the
      complete unmodified block back to the API".
    * ``turn_thinking_dropped`` (index in ``before``): a thinking block of the current
      turn's first assistant message (the first one after the last user message that is not
      only tool results: the turn a tool loop is still in) is missing from ``after``. With
      thinking enabled the API rejects that ("a final assistant message must start with a
      thinking block (preceding the lastmost set of tool_use and tool_result blocks)"); the
      thinking of later messages of the turn and of finished turns may go.
    """
    out: list[Violation] = []
    known = [b for m in before for b in _thinking_blocks(m)]
    by_obj = {id(m): k for k, m in enumerate(before)}
    by_use = {u: k for k, m in enumerate(before) for u in _uses(m)}
    by_block = {id(b): k for k, m in enumerate(before) for b in _content_blocks(m)}
    after_blocks = [b for m in after for b in _thinking_blocks(m)]
    for j, m in enumerate(after):
        blocks = _thinking_blocks(m)
        for b in blocks:
            if not any(b is x or b == x for x in known):
                out.append(Violation(j, "thinking_changed", "a thinking block not in the input"))
        sources = {by_obj[id(m)]} if id(m) in by_obj else set()
        sources.update(by_use[u] for u in _uses(m) if u in by_use)
        sources.update(by_block[id(b)] for b in _content_blocks(m) if id(b) in by_block)
        expected = [b for k in sorted(sources) for b in _thinking_blocks(before[k])]
        if sources and expected != blocks:
            where = ", ".join(f"before[{k}]" for k in sorted(sources))
            out.append(Violation(j, "thinking_changed", f"thinking blocks differ from {where}"))
    last_user = max((k for k, m in enumerate(before) if _is_real_user(m)), default=-1)
    opener = next(
        (
            k
            for k in range(last_user + 1, len(before))
            if isinstance(before[k], Mapping) and before[k].get("role") == "assistant"
        ),
        None,
    )
    if last_user >= 0 and opener is not None:
        for b in _thinking_blocks(before[opener]):
            if not any(b is x or b == x for x in after_blocks):
                out.append(
                    Violation(
                        opener,
                        "turn_thinking_dropped",
                        "a thinking block of the current turn's first assistant message is missing",
                    )
                )
    return out


# --------------------------------------------------------------------------------------------
# Message lists and other formats


def check_messages(messages: Sequence[Message]) -> list[Violation]:
    """Tool pairing of a :class:`~agent_adapter.messages.Message` list, the rules every
    provider shares: ``tool_without_call``, ``call_unanswered`` and ``calls_pending_at_end``
    as in :func:`check_openai_chat`."""
    out: list[Violation] = []
    pairing = _Pairing(out)
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            out.append(Violation(i, "not_a_message", "not a Message"))
        elif m.role == "tool":
            pairing.result(i, m.tool_call_id)
        else:
            pairing.turn(i, [c.id for c in m.tool_calls])
    pairing.end()
    return out


class _Pairing:
    """The tool-pairing rule of Chat Completions (and every provider): a result answers an
    unanswered call of the nearest preceding message with calls; every call is answered
    before the next non-result message. Violations are appended to ``out``."""

    def __init__(self, out: list[Violation]) -> None:
        self.out = out
        self.pending: dict[str, bool] = {}  # call id -> answered, of the nearest call turn
        self.opener = -1

    def result(self, i: int, call_id: str | None) -> None:
        """Message ``i`` is a tool result answering ``call_id``."""
        if call_id is not None and self.pending.get(call_id) is False:
            self.pending[call_id] = True
            return
        self.out.append(
            Violation(
                i,
                "tool_without_call",
                f"tool message answers {call_id!r}, not an unanswered call of the nearest "
                "preceding assistant message with tool calls",
            )
        )

    def turn(self, i: int, call_ids: list[str]) -> None:
        """Message ``i`` is not a tool result; it makes ``call_ids``."""
        missing = self._missing()
        if missing:
            self.out.append(
                Violation(
                    self.opener,
                    "call_unanswered",
                    f"tool calls {missing} get no tool result before message [{i}]",
                )
            )
        self.pending = dict.fromkeys(call_ids, False)
        if call_ids:
            self.opener = i

    def end(self) -> None:
        """The list ended."""
        missing = self._missing()
        if missing:
            self.out.append(
                Violation(
                    self.opener,
                    "calls_pending_at_end",
                    f"tool calls {missing} of the last call turn have no result yet",
                )
            )

    def _missing(self) -> list[str]:
        return sorted(k for k, done in self.pending.items() if not done)


def _check_openai(messages: Sequence[Any]) -> list[Violation]:
    if any(classify(split_carrier(m)[0]) == "responses" for m in messages):
        return check_responses(messages)
    return check_openai_chat(messages)


_CHECKERS: dict[str, Checker] = {
    "openai": _check_openai,
    "anthropic": check_anthropic,
    "agent_adapter": check_messages,
}
#: Checkers other modules provide: format -> (module, function), imported on first use.
_LAZY: dict[str, tuple[str, str]] = {
    "gemini": ("agent_adapter.context.formats._check_gemini", "check_gemini"),
}


def _converted(name: str) -> Checker | None:
    """The Message-level check through the format's converter, indexes mapped to natives."""
    from agent_adapter.context.formats import _registry

    converter = _registry._CONVERTERS.get(name)
    if converter is None and name in _registry._REGISTERED:
        converter = _registry._REGISTERED[name][0]
    if converter is None:
        return None
    conv = converter

    def run(natives: Sequence[Any]) -> list[Violation]:
        messages, ranges = conv.load_all(natives)
        owner = [k for k, (start, stop) in enumerate(ranges) for _ in range(start, stop)]
        return [
            Violation(owner[v.index] if 0 <= v.index < len(owner) else v.index, v.rule, v.message)
            for v in check_messages(messages)
        ]

    return run


def _checker(name: str) -> Checker:
    found = _CHECKERS.get(name)
    if found is not None:
        return found
    if name in _LAZY:
        module_name, attr = _LAZY[name]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
        else:
            fn: Checker = getattr(module, attr)
            _CHECKERS[name] = fn
            return fn
    generic = _converted(name)
    if generic is None:
        raise ConfigError(f"check: unknown format {name!r}")
    return generic


def check(messages: Sequence[Any], format: str = "auto") -> list[Violation]:
    """The rules ``messages`` breaks for its provider; ``[]`` when it would be accepted.

    ``"openai"`` picks the Chat Completions or the Responses rules by item shape
    (:func:`check_openai_chat`, :func:`check_responses`); ``"anthropic"``:
    :func:`check_anthropic`; ``"agent_adapter"``: :func:`check_messages`; ``"auto"`` detects
    the format like :func:`~agent_adapter.context.formats.detect_format`.

    Raises:
        ConfigError: ``messages`` is not a list, the format is unknown, or "auto" cannot
            detect it.
    """
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ConfigError(f"check: messages must be a list, got {type(messages).__name__}")
    name = format
    if name == "auto":
        from agent_adapter.context.formats._registry import detect_format

        name = detect_format(messages)
    return _checker(name)(messages)
