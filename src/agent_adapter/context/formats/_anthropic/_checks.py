"""The Anthropic Messages checker.

Sources: Anthropic API reference, *Messages* (https://docs.anthropic.com/en/api/messages), the
tool use guide (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use)
and the extended thinking guide
(https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking).

Rules (``rule`` names):

* ``first_not_user``: the first message uses the ``user`` role.
* ``system_misplaced`` / ``system_not_text``: a mid-conversation ``system`` message (Claude
  Opus 4.8 and later,
  https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages)
  comes right after a user turn and holds text; the turns around it are checked as if it
  were not there.
* ``roles_not_alternating`` (only with ``strict_alternation``): consecutive messages
  with the same role. The Messages API accepts them ("Consecutive user or assistant turns
  in your request will be combined into a single turn", Messages API reference), so by
  default this is no violation; gateways such as Bedrock's Converse API reject them
  (a 400 ``ValidationException``), which ``strict_alternation=True`` checks for.
* ``empty_content``: "all messages must have non-empty content except for the optional
  final assistant message".
* ``empty_text``: "text content blocks must contain non-whitespace text".
* ``block_wrong_role``: ``tool_use`` / ``thinking`` / ``server_tool_use`` blocks in a user
  message, ``tool_result`` in an assistant message.
* ``tool_use_unanswered``: every ``tool_use`` is answered by a ``tool_result`` in the very
  next (user) message ("tool_use ids were found without tool_result blocks immediately
  after").
* ``tool_use_pending_at_end``: the same for the list's last call turn (a tool loop between
  the reply and running the tools).
* ``tool_result_without_use``: a ``tool_result`` answers a ``tool_use`` of the previous
  assistant message, once ("unexpected tool_use_id found in tool_result blocks").
* ``duplicate_call_id``: one assistant message uses a ``tool_use`` id twice.
* ``tool_use_id_duplicate``: a ``tool_use`` id an earlier message already used (API error
  "tool_use ids must be unique": ids are unique in the whole request).
* ``call_id_missing``: a ``tool_use`` without a str ``id``.
* ``tool_result_not_first``: in a user message, ``tool_result`` blocks come before any
  other block (tool use guide, *Handling tool use and tool result content blocks*:
  "tool_result blocks must come FIRST in the content array", "any text must come AFTER
  all tool results"), named by the first misplaced block
  (``messages[2].content[1]``). ``convert()`` and ``compress()`` reject such a message
  with the same words.
* ``thinking_signature``: a ``thinking`` block keeps a non-empty ``signature`` and a
  ``redacted_thinking`` block its ``data`` (extended thinking guide: blocks go back
  complete and unmodified).
* ``thinking_not_first``: with thinking on for the current turn, the turn's opening
  assistant message (the first one after the last user message that is not only tool
  results) starts with a ``thinking`` or ``redacted_thinking`` block. Extended thinking
  guide, *Extended thinking with tool use* / *Preserving thinking blocks*: during tool use
  the final assistant turn must start with its thinking block; the API answers "Expected
  `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final
  `assistant` message must start with a thinking block (preceding the lastmost set of
  `tool_use` and `tool_result` blocks)". A merged, reordered or cut turn breaks it.
  Whether thinking is on is the request's ``thinking`` parameter, which the list does not
  hold: pass ``thinking=True`` (or ``False``) when you know it. Unknown (``None``), it is
  on when an assistant message of the current turn holds a thinking block: the thinking
  guide (*Thinking in tool and multi-turn workflows*) keeps "one thinking configuration
  per assistant turn: a tool-use loop is one assistant turn, so change the configuration
  only between turns". Thinking blocks of earlier turns say nothing about the current
  one, since the configuration may change between turns (Claude Code toggles it per
  prompt: recorded Claude Code sessions go on from turns without thinking after turns
  with it). So a list that lost the current turn's thinking altogether is only caught
  with ``thinking=True``, or by comparing it with the list it was made from:
  :func:`~agent_adapter.context.formats._anthropic.check_thinking_unchanged`
  (``turn_thinking_dropped``).
* ``compaction_block``: a ``compaction`` block (compaction beta) has a ``content`` that is
  ``null`` or a non-empty str, and its ``encrypted_content`` and ``signature``, when there,
  are str or ``null`` (SDK ``BetaCompactionBlockParam``: "When content is None, the block
  represents a failed compaction. The server treats these as no-ops. Empty string content
  is not allowed."; ``encrypted_content`` "Opaque metadata from prior compaction, to be
  round-tripped verbatim"). The block may sit in any message ("On subsequent requests,
  append the response to your messages"); the API drops every block before it.
* ``not_a_message``, ``reserved_key``: see :mod:`agent_adapter.context.formats._check`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_adapter.context._pairing import Pairing, PairingRule
from agent_adapter.context.formats._carrier import split_carrier
from agent_adapter.context.formats._violations import (
    Violation,
    by_index,
    pairing_violations,
    reserved,
)

__all__ = ["check_anthropic"]

_RULES: dict[PairingRule, str] = {
    "tool_without_call": "tool_result_without_use",
    "call_unanswered": "tool_use_unanswered",
    "calls_pending_at_end": "tool_use_pending_at_end",
}
_THINKING = frozenset({"thinking", "redacted_thinking"})
_ASSISTANT_ONLY = frozenset({"tool_use", "thinking", "redacted_thinking", "server_tool_use"})


def check_anthropic(
    messages: Sequence[Any], *, thinking: bool | None = None, strict_alternation: bool = False
) -> list[Violation]:
    """Anthropic Messages rules (API reference, *Messages*; tool use and extended thinking
    guides).

    The rules are listed in the module docstring.

    The pairing rules (``tool_use_unanswered``, ``tool_use_pending_at_end``,
    ``tool_result_without_use`` and ``duplicate_call_id``) are
    :mod:`agent_adapter.context._pairing`'s, fed block by block as
    :func:`~agent_adapter.context.formats.convert` loads them (a user message is its
    ``tool_result`` blocks and the runs of other blocks between them), so this check and
    ``compress()``'s input validation agree.
    """
    out: list[Violation] = []
    base = [split_carrier(raw)[0] for raw in messages]
    n = len(base)
    pairing = Pairing()
    prev_role: str | None = None
    seen_uses: dict[str, int] = {}
    rules = _STRICT_RULES if strict_alternation else _MESSAGE_RULES
    for i, m in enumerate(base):
        out.extend(reserved(messages[i], i))
        if (
            not isinstance(m, Mapping)
            or m.get("role") not in ("user", "assistant", "system")
            or not isinstance(m.get("content"), str | list)
        ):
            out.append(Violation(i, "not_a_message", "not an Anthropic message dict"))
            prev_role = None
            continue
        if m["role"] == "system":
            out.extend(_system_rules(i, m["content"], prev_role))
            continue  # the turns around it alternate as if it were not there
        role, content = m["role"], m["content"]
        for rule in rules:
            if (v := rule(i, n, role, content, prev_role)) is not None:
                out.append(v)
        prev_role = role
        blocks = content if isinstance(content, list) else []
        out.extend(_block_rules(i, role, blocks, seen_uses))
        _feed(pairing, i, role, blocks)
    pairing.end()
    out.extend(pairing_violations(pairing, _RULES, call="tool_use", result="tool_result"))
    out.extend(_thinking_first(base, thinking))
    return by_index(out)


def _system_rules(i: int, content: str | list[Any], prev_role: str | None) -> list[Violation]:
    """``system_misplaced`` and ``system_not_text`` of a mid-conversation system message
    (https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages:
    accepted "immediately after a user turn"; its content is text). Empty content is no
    violation: Claude Code 2.1 sends per-turn controls (``output_config``) on a system message
    with ``content: []``, as Claude's API takes them."""
    out = []
    if prev_role != "user":
        out.append(
            Violation(i, "system_misplaced", "a system message must come right after a user turn")
        )
    blocks = content if isinstance(content, list) else []
    for k, block in enumerate(blocks):
        if not isinstance(block, Mapping) or block.get("type") != "text":
            out.append(
                Violation(i, "system_not_text", f"content[{k}] of a system message is not text")
            )
    return out


def _first_not_user(
    i: int, n: int, role: str, content: str | list[Any], prev_role: str | None
) -> Violation | None:
    if i == 0 and role != "user":
        return Violation(i, "first_not_user", "the first message must use the user role")
    return None


def _roles_not_alternating(
    i: int, n: int, role: str, content: str | list[Any], prev_role: str | None
) -> Violation | None:
    if role == prev_role:
        return Violation(i, "roles_not_alternating", f"two {role} messages in a row")
    return None


def _empty_content(
    i: int, n: int, role: str, content: str | list[Any], prev_role: str | None
) -> Violation | None:
    if not content and not (i == n - 1 and role == "assistant"):
        return Violation(i, "empty_content", "empty content")
    return None


def _whitespace_text(
    i: int, n: int, role: str, content: str | list[Any], prev_role: str | None
) -> Violation | None:
    if isinstance(content, str) and content and not content.strip():
        return Violation(i, "empty_text", "whitespace-only text")
    return None


_MessageRule = Callable[[int, int, str, str | list[Any], str | None], Violation | None]
#: The rules of one message dict (of ``n``) and the role before it, in the order reported.
_MESSAGE_RULES: tuple[_MessageRule, ...] = (_first_not_user, _empty_content, _whitespace_text)
_STRICT_RULES: tuple[_MessageRule, ...] = (
    _first_not_user,
    _roles_not_alternating,
    _empty_content,
    _whitespace_text,
)


def _use_id(
    i: int, role: str, k: int, b: Mapping[str, Any], seen_uses: dict[str, int]
) -> Violation | None:
    use_id = b.get("id")
    if not (isinstance(use_id, str) and use_id):
        return Violation(i, "call_id_missing", f"content[{k}] tool_use has no id")
    if seen_uses.setdefault(use_id, i) != i:
        return Violation(
            i,
            "tool_use_id_duplicate",
            f"tool_use id {use_id!r} is already used by message [{seen_uses[use_id]}]",
        )
    return None


def _empty_text(
    i: int, role: str, k: int, b: Mapping[str, Any], seen_uses: dict[str, int]
) -> Violation | None:
    if isinstance(b.get("text"), str) and b["text"].strip():
        return None
    return Violation(i, "empty_text", f"content[{k}] has no non-whitespace text")


def _signed(
    i: int, role: str, k: int, b: Mapping[str, Any], seen_uses: dict[str, int]
) -> Violation | None:
    if isinstance(b.get("signature"), str) and b["signature"]:
        return None
    return Violation(i, "thinking_signature", f"content[{k}] has no signature")


def _redacted_data(
    i: int, role: str, k: int, b: Mapping[str, Any], seen_uses: dict[str, int]
) -> Violation | None:
    if isinstance(b.get("data"), str) and b["data"]:
        return None
    return Violation(i, "thinking_signature", f"content[{k}] has no data")


def _wrong_role(
    i: int, role: str, k: int, b: Mapping[str, Any], seen_uses: dict[str, int]
) -> Violation | None:
    kind = b["type"]
    if (role == "user" and kind in _ASSISTANT_ONLY) or (
        role == "assistant" and kind == "tool_result"
    ):
        return Violation(i, "block_wrong_role", f"a {kind} block in a {role} message")
    return None


def _compaction(
    i: int, role: str, k: int, b: Mapping[str, Any], seen_uses: dict[str, int]
) -> Violation | None:
    content = b.get("content")
    if content is not None and not (isinstance(content, str) and content):
        return Violation(
            i, "compaction_block", f"content[{k}] compaction content is not null or a non-empty str"
        )
    for key in ("encrypted_content", "signature"):
        if not isinstance(b.get(key), str | None):
            return Violation(i, "compaction_block", f"content[{k}] compaction {key} is not a str")
    return None


_BlockRule = Callable[[int, str, int, Mapping[str, Any], dict[str, int]], Violation | None]
#: The rules of each block type, in the order they are reported (any other type: its role).
_BLOCK_RULES: dict[str, tuple[_BlockRule, ...]] = {
    "tool_use": (_use_id, _wrong_role),
    "text": (_empty_text, _wrong_role),
    "thinking": (_wrong_role, _signed),
    "redacted_thinking": (_wrong_role, _redacted_data),
    "compaction": (_compaction,),
}
_ROLE_ONLY: tuple[_BlockRule, ...] = (_wrong_role,)


def _results_not_first(i: int, role: str, blocks: list[Any]) -> Violation | None:
    """``tool_result_not_first``: the first tool_result of a user message after a block of
    another type (named by the type of the first such block)."""
    seen_other: str | None = None  # the type of the first block that is no tool_result
    not_first: int | None = None  # the first tool_result after such a block
    for k, b in enumerate(blocks):
        kind = b.get("type") if isinstance(b, Mapping) else None
        if not isinstance(kind, str):
            continue
        if kind != "tool_result":
            seen_other = seen_other or kind
        elif seen_other is not None and not_first is None:
            not_first = k
    if role != "user" or not_first is None:
        return None
    return Violation(
        i,
        "tool_result_not_first",
        f"messages[{i}].content[{not_first}]: a tool_result block after a {seen_other} "
        "block; tool_result blocks must come first in a user message's content",
    )


def _block_rules(
    i: int, role: str, blocks: list[Any], seen_uses: dict[str, int]
) -> list[Violation]:
    """The rules of one message's blocks (``seen_uses``: tool_use id -> its message)."""
    out: list[Violation | None] = []
    for k, b in enumerate(blocks):
        kind = b.get("type") if isinstance(b, Mapping) else None
        if not isinstance(kind, str):
            out.append(Violation(i, "not_a_message", f"content[{k}] is not a block"))
            continue
        out.extend(rule(i, role, k, b, seen_uses) for rule in _BLOCK_RULES.get(kind, _ROLE_ONLY))
    out.append(_results_not_first(i, role, blocks))
    return [v for v in out if v is not None]


def _feed(pairing: Pairing, i: int, role: str, blocks: list[Any]) -> None:
    """Message ``i`` into ``pairing`` as the converter loads it: an assistant message is one
    call turn; a user message its ``tool_result`` blocks (results) and runs of other blocks
    (turns without calls), in order."""
    if role == "assistant":
        pairing.turn(
            i,
            [
                b["id"]
                for b in blocks
                if isinstance(b, Mapping)
                and b.get("type") == "tool_use"
                and isinstance(b.get("id"), str)
                and b["id"]
            ],
        )
        return
    run = answered = False
    for b in blocks:
        if not (isinstance(b, Mapping) and b.get("type") == "tool_result"):
            run = True
            continue
        if run:
            pairing.turn(i, [])
            run = False
        use_id = b.get("tool_use_id")
        pairing.result(i, use_id if isinstance(use_id, str) and use_id else None)
        answered = True
    if run or not answered:
        pairing.turn(i, [])


def _turn_opener(base: Sequence[Any]) -> int | None:
    """Index of the first assistant message after the last user message that holds more
    than tool results (the current turn's opener), or ``None``."""
    last_user = -1
    for i, m in enumerate(base):
        if not isinstance(m, Mapping) or m.get("role") != "user":
            continue
        content = m.get("content")
        blocks = content if isinstance(content, list) else ()
        if isinstance(content, str) or any(
            not (isinstance(b, Mapping) and b.get("type") == "tool_result") for b in blocks
        ):
            last_user = i
    for i in range(last_user + 1, len(base)):
        m = base[i]
        if isinstance(m, Mapping) and m.get("role") == "assistant":
            return i if m.get("content") else None
    return None


def _has_thinking(message: Any) -> bool:
    content = message.get("content") if isinstance(message, Mapping) else None
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and isinstance(b.get("type"), str) and b.get("type") in _THINKING
        for b in content
    )


def _thinking_first(base: Sequence[Any], thinking: bool | None) -> list[Violation]:
    """``thinking_not_first`` for the current turn's opener (see :func:`check_anthropic`)."""
    opener = _turn_opener(base)
    if opener is None or thinking is False:
        return []
    turn = [m for m in base[opener:] if isinstance(m, Mapping) and m.get("role") == "assistant"]
    if thinking is None and not any(_has_thinking(m) for m in turn):
        return []
    content = base[opener]["content"]
    blocks = content if isinstance(content, list) else [{"type": "text"}]
    kinds = [b.get("type") for b in blocks if isinstance(b, Mapping)]
    if kinds and kinds[0] not in _THINKING:
        why = "thinking is on" if thinking else "the turn holds thinking"
        return [
            Violation(
                opener,
                "thinking_not_first",
                f"the turn's opening assistant message starts with {kinds[0]}, not thinking "
                f"({why}: the API wants the final assistant turn to start with thinking)",
            )
        ]
    return []
