"""The Gemini checker: rules a ``contents`` list must follow to be accepted.

Each rule names its source: the Gemini API function-calling and thought-signature guides
(https://ai.google.dev/gemini-api/docs/function-calling,
https://ai.google.dev/gemini-api/docs/thought-signatures) and the ``400 INVALID_ARGUMENT``
messages the API returns when a rule is broken (quoted in each rule's description). Contents
may be dicts (snake_case or camelCase keys) or ``google.genai.types.Content`` objects; nothing
here imports google.genai.

Rules (``rule`` names):

* ``role``: a turn's role is ``"user"`` or ``"model"`` (``"function"`` is accepted as the
  legacy role of a function response turn). Source: the ``Content`` reference ("Must be
  either 'user' or 'model'").
* ``empty_turn``: a turn has at least one part. Source: the API error "contents.parts must
  not be empty".
* ``first_turn``: the first turn is a user turn that is not a function response. Source:
  the function-calling guide (a conversation starts with the user's prompt) and the API
  error "Please ensure that function call turn comes immediately after a user turn or
  after a function response turn" for a history opening on a model call.
* ``call_position``: a model turn with function calls comes right after a user turn or a
  function response turn. Source: the same error message.
* ``response_position``: a turn with function responses comes right after the model turn
  whose calls it answers. Source: the API error "Please ensure that function response
  turn comes immediately after a function call turn".
* ``response_count``: that turn answers every call of the model turn, one response each.
  A response answers the call whose ``id`` is its own ``id``; one without an id, or whose
  id names no call of the turn, answers the first unanswered call *without* id that has
  its ``name`` (a call with an id is only answered by that id). Source: the API reference,
  ``FunctionCall.id`` ("If populated, the client to execute the functionCall and return
  the response with the matching id"), ``FunctionResponse.id`` ("Populated by the client
  to match the corresponding function call id") and ``FunctionResponse.name``
  ("Required. The name of the function to call. Matches [FunctionDeclaration.name] and
  [FunctionCall.name]"); the API error "Please ensure that the number of function
  response parts is equal to the number of function call parts of the function call
  turn"; the function-calling guide (parallel calls: send every result back in the next
  turn). :class:`~agent_adapter.context.formats._gemini.GeminiConverter` matches
  responses to calls by the same rule, so ``compress()`` agrees.
* ``response_not_first``: a user turn's function responses come before its other parts.
  Not an API error message: ``compress()`` reads a turn's parts in order (as
  :func:`~agent_adapter.context.formats.convert` loads them), so a text before a response
  stands between the call and its response and the list is rejected there too; the
  function-calling guide sends a function response turn as the responses alone.
* ``calls_pending_at_end``: the list ends in a turn holding some of the last round's
  responses (the API wants them all in that turn, see ``response_count``; as in every
  format the last round may still wait for the rest, so ``compress()`` accepts it).
* ``unanswered_call``: a model turn with calls that is not the last turn is followed by
  its function responses. Source: the function-calling guide (the application sends the
  function's result back before the conversation goes on). The last turn's calls may wait
  for their responses (a tool loop between the reply and running the tools).
* ``duplicate_call_id``: one model turn uses a call id twice.
* ``reserved_key``: no content or part holds the reserved carrier key ``"_agent_adapter"``
  (:meth:`GeminiConverter.dump <agent_adapter.context.formats._gemini.GeminiConverter.dump>`
  adds it to keep a round trip lossless). Source: the ``Content`` / ``Part`` schemas have
  no such field; the SDK rejects it ("Extra inputs are not permitted") and the REST API
  answers "Invalid JSON payload received. Unknown name". Build sendable dicts with
  ``GeminiConverter.dump_all(..., carry=False)``.
* ``thought_signature`` (only with ``before``): see :func:`check_thought_signatures`.

* ``responses_split``: function responses in a turn right after a turn of function
  responses only (a round's responses split over two turns). Source: the API errors
  "Please ensure that function response turn comes immediately after a function call
  turn" and "... the number of function response parts is equal to the number of
  function call parts of the function call turn". Like Anthropic's
  ``roles_not_alternating`` this is a rule of the provider only: the converted messages
  of a split round still pair, so ``compress()`` accepts them.

The pairing (``response_position``, ``response_count``, ``unanswered_call``,
``duplicate_call_id``) is :mod:`agent_adapter.context._pairing`'s, fed as
:func:`~agent_adapter.context.formats.convert` loads the contents (a model turn is one
call turn; a user turn its function responses and the runs of other parts between them),
so this check and ``compress()``'s input validation agree. A last turn holding some of
its round's responses is a round still waiting for the rest, as in every format.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter.context._pairing import Pairing, PairingProblem
from agent_adapter.context.formats._carrier import RESERVED_KEY
from agent_adapter.context.formats._gemini._fields import fields_of as _fields
from agent_adapter.context.formats._gemini._fields import sig_bytes
from agent_adapter.context.formats._violations import Violation, by_index, reported_problems

__all__ = ["check_gemini", "check_thought_signatures"]

#: Prefix of the pairing key of a call or response without an id (matched by name).
_BY_NAME = "\x00"


def _signature(value: Any) -> bytes | None:
    """A thought signature as bytes: bytes as they are, canonical base64 text decoded, other
    text as its UTF-8 bytes."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    text = str(value)
    raw = sig_bytes(text)
    return raw if raw is not None else text.encode("utf-8")


@dataclass(frozen=True, slots=True)
class _Turn:
    role: str
    n_parts: int
    calls: tuple[tuple[str | None, str, Any, bytes | None], ...]  # id, name, args, signature
    responses: tuple[tuple[str | None, str], ...]  # id, name
    reserved: bool  # the content or one of its parts holds the reserved carrier key
    #: per part, in order: True for a function response (how convert() splits a user turn)
    order: tuple[bool, ...] = ()


def _has_reserved(value: Any) -> bool:
    return isinstance(value, Mapping) and RESERVED_KEY in value


def _turn(content: Any) -> _Turn:
    cf = _fields(content)
    parts = cf.get("parts", [])
    parts = parts if isinstance(parts, list | tuple) else []
    calls: list[tuple[str | None, str, Any, bytes | None]] = []
    responses: list[tuple[str | None, str]] = []
    order: list[bool] = []
    for part in parts:
        pf = _fields(part)
        order.append("function_response" in pf)
        if "function_call" in pf:
            fc = _fields(pf["function_call"])
            sig = _signature(pf.get("thought_signature"))
            calls.append((fc.get("id") or None, str(fc.get("name", "")), fc.get("args", {}), sig))
        if "function_response" in pf:
            fr = _fields(pf["function_response"])
            responses.append((fr.get("id") or None, str(fr.get("name", ""))))
    reserved = _has_reserved(content) or any(_has_reserved(p) for p in parts)
    role = str(cf.get("role", "user"))
    return _Turn(role, len(parts), tuple(calls), tuple(responses), reserved, tuple(order))


def _call_keys(turn: _Turn) -> list[str]:
    """The pairing keys of a turn's calls: the id, else the name and its count so far."""
    keys: list[str] = []
    for cid, name, _, _ in turn.calls:
        keys.append(
            cid or f"{_BY_NAME}{name}#{sum(k.startswith(_BY_NAME + name + '#') for k in keys)}"
        )
    return keys


def _response_keys(turn: _Turn, call_ids: set[str]) -> list[str]:
    """The pairing keys of a turn's responses: the id when a call of the turn they answer has
    it, else the name and its count so far (a response answers an id-less call by name)."""
    keys: list[str] = []
    for rid, name in turn.responses:
        prefix = f"{_BY_NAME}{name}#"
        keys.append(
            rid if rid in call_ids else f"{prefix}{sum(k.startswith(prefix) for k in keys)}"
        )
    return keys


def _label(key: str | None) -> str:
    """A pairing key as the caller knows it: the id, or the name of an id-less call."""
    if key is not None and key.startswith(_BY_NAME):
        return key[len(_BY_NAME) :].rsplit("#", 1)[0]
    return str(key)


def check_gemini(
    contents: Sequence[Any], *, before: Sequence[Any] | None = None
) -> list[Violation]:
    """Every rule ``contents`` breaks, as ``Violation(index, rule, message)``; ``[]`` if none.

    The rules are listed in the module docstring.

    Args:
        contents: the list to check.
        before: the list ``contents`` was made from (e.g. before compression), to check that
            thought signatures were kept.

    Returns:
        Violations in order of ``index`` (the content's position in ``contents``).
    """
    out: list[Violation] = []
    turns = [_turn(c) for c in contents]
    pairing = Pairing()
    call_ids: set[str] = set()  # ids of the calls of the nearest call turn
    for i, turn in enumerate(turns):
        out.extend(_turn_rules(turns, i))
        _feed(pairing, i, turn, _response_keys(turn, call_ids))
        if turn.calls:
            call_ids = {c[0] for c in turn.calls if c[0]}
    pairing.end()
    out.extend(_pairing_rules(turns, reported_problems(pairing)))
    if before is not None:
        out.extend(check_thought_signatures(before, contents))
    return by_index(out)


def _feed(pairing: Pairing, i: int, turn: _Turn, keys: Sequence[str]) -> None:
    """Turn ``i`` into ``pairing`` as convert() loads it: a model turn is one call turn (its
    misplaced responses first); a user turn its function responses and the runs of other
    parts between them (turns without calls), in order, so a turn of responses only is no
    turn of its own (its round may still wait for the rest when it ends the list)."""
    if turn.role == "model":
        for key in keys:
            pairing.result(i, key)
        pairing.turn(i, _call_keys(turn))
        return
    answered = iter(keys)
    run = False
    for is_response in turn.order:
        if not is_response:
            run = True
            continue
        if run:
            pairing.turn(i, [])
            run = False
        pairing.result(i, next(answered))
    if run or not turn.responses:
        pairing.turn(i, [])


def _only_responses(turn: _Turn) -> bool:
    """True for a user turn of function responses and nothing else."""
    return turn.role != "model" and bool(turn.order) and all(turn.order)


def _role(turns: Sequence[_Turn], i: int) -> Violation | None:
    role = turns[i].role
    if role in ("user", "model", "function"):
        return None
    return Violation(i, "role", f"role {role!r} is not 'user' or 'model'")


def _reserved(turns: Sequence[_Turn], i: int) -> Violation | None:
    if not turns[i].reserved:
        return None
    return Violation(i, "reserved_key", f"holds {RESERVED_KEY!r}, an unknown field")


def _empty_turn(turns: Sequence[_Turn], i: int) -> Violation | None:
    if turns[i].n_parts != 0:
        return None
    return Violation(i, "empty_turn", "a turn needs at least one part")


def _first_turn(turns: Sequence[_Turn], i: int) -> Violation | None:
    turn = turns[i]
    is_model = turn.role == "model"
    if i != 0 or not (is_model or turn.responses):
        return None
    what = "a model turn" if is_model else "a function response turn"
    return Violation(i, "first_turn", f"the history opens on {what}, not a user turn")


def _call_position(turns: Sequence[_Turn], i: int) -> Violation | None:
    turn = turns[i]
    if not (turn.role == "model" and turn.calls and i > 0 and turns[i - 1].role == "model"):
        return None
    return Violation(
        i,
        "call_position",
        "a function call turn follows a model turn, not a user or function response turn",
    )


def _response_not_first(turns: Sequence[_Turn], i: int) -> Violation | None:
    order = turns[i].order
    late = next((k for k, r in enumerate(order) if r and not all(order[:k])), None)
    if late is None or turns[i].role == "model":
        return None
    return Violation(
        i,
        "response_not_first",
        f"parts[{late}]: a function_response after another part of its turn; send a "
        "turn's function responses first (compress() reads the parts in order, so the "
        "other part stands between the call and its response)",
    )


def _responses_split(turns: Sequence[_Turn], i: int) -> Violation | None:
    turn = turns[i]
    if not (turn.responses and turn.role != "model" and i > 0 and _only_responses(turns[i - 1])):
        return None
    return Violation(
        i,
        "responses_split",
        "function responses right after another turn of function responses: a "
        "round's responses go in the one turn right after its function call turn",
    )


def _response_position(turns: Sequence[_Turn], i: int) -> Violation | None:
    if not (turns[i].responses and turns[i].role == "model"):
        return None
    return Violation(
        i,
        "response_position",
        "function responses sit in a model turn; they belong in a user turn",
    )


#: The rules of one turn and its predecessor but the pairing, in the order they are reported.
_TURN_RULES: tuple[Callable[[Sequence[_Turn], int], Violation | None], ...] = (
    _role,
    _reserved,
    _empty_turn,
    _first_turn,
    _call_position,
    _response_not_first,
    _responses_split,
    _response_position,
)


def _turn_rules(turns: Sequence[_Turn], i: int) -> list[Violation]:
    """The rules of turn ``i`` and its predecessor but the pairing."""
    return [v for rule in _TURN_RULES if (v := rule(turns, i)) is not None]


def _answering(turns: Sequence[_Turn], i: int) -> int | None:
    """The index of the user turn of function responses right after call turn ``i``."""
    nxt = i + 1
    if nxt < len(turns) and turns[nxt].role != "model" and turns[nxt].responses:
        return nxt
    return None


def _pairing_rules(turns: Sequence[_Turn], problems: Sequence[PairingProblem]) -> list[Violation]:
    """The pairing problems as Gemini rules, one violation per turn and rule."""
    out: dict[tuple[int, str], Violation] = {}
    for p in problems:
        names = ", ".join(repr(_label(c)) for c in p.call_ids)
        i = p.index
        if p.rule == "tool_without_call":
            prev = turns[i - 1] if i > 0 else None
            if i == 0 or turns[i].role == "model":
                continue  # first_turn / response_position say it
            if prev is None or prev.role != "model" or not prev.calls:
                v = Violation(
                    i,
                    "response_position",
                    "function responses do not follow a model turn with function calls",
                )
            else:
                v = Violation(
                    i,
                    "response_count",
                    f"the response {names} answers no call of the previous turn",
                )
        elif p.rule == "call_unanswered" and (nxt := _answering(turns, p.index)) is not None:
            i = nxt
            n_calls, n_resp = len(turns[p.index].calls), len(turns[i].responses)
            v = Violation(
                i,
                "response_count",
                f"{n_resp} function responses for {n_calls} function calls; none for {names}",
            )
        elif p.rule == "call_unanswered":
            v = Violation(
                i, "unanswered_call", f"calls ({names}) are not answered in the next turn"
            )
        elif p.rule == "duplicate_call_id":
            v = Violation(i, "duplicate_call_id", f"call id {names} appears twice in one turn")
        elif (nxt := _answering(turns, p.index)) is not None:  # the last round, partly answered
            i = nxt
            v = Violation(
                i,
                "calls_pending_at_end",
                f"{len(turns[i].responses)} function responses for {len(turns[p.index].calls)} "
                f"function calls, and the list ends before the responses for {names}",
            )
        else:  # calls_pending_at_end: the last turn's calls may wait for their responses
            continue
        out.setdefault((v.index, v.rule), v)
    return list(out.values())


def check_thought_signatures(before: Sequence[Any], after: Sequence[Any]) -> list[Violation]:
    """Function calls in ``after`` whose ``thought_signature`` is not the one they had before.

    A call is found in ``before`` by its ``id``, else by its name and arguments; its signature
    in ``after`` must be byte-identical to one of the signatures that call had (none included
    only if it had none). Bytes and base64 text count as the same signature. Source: the
    thought-signatures guide ("pass it back exactly as received"; Gemini 3 rejects a function
    call of the current turn without its signature with a 4xx error).

    Returns:
        ``Violation(index, "thought_signature", message)`` for each such call (``index`` in
        ``after``).
    """
    seen: dict[tuple[str, ...], set[bytes | None]] = {}
    for content in before:
        for cid, name, args, sig in _turn(content).calls:
            seen.setdefault(_call_key(cid, name, args), set()).add(sig)
    out: list[Violation] = []
    for i, content in enumerate(after):
        for cid, name, args, sig in _turn(content).calls:
            known = seen.get(_call_key(cid, name, args))
            if known is not None and sig not in known:
                state = "lost" if sig is None else "changed"
                out.append(
                    Violation(
                        i, "thought_signature", f"the thought signature of call {name!r} {state}"
                    )
                )
    return out


def _call_key(call_id: str | None, name: str, args: Any) -> tuple[str, ...]:
    if call_id:
        return ("id", call_id)
    return ("call", name, json.dumps(args, sort_keys=True, default=str))
