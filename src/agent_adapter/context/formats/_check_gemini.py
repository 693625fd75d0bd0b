"""Rules a Gemini ``contents`` list must follow to be accepted, checked without a network call.

Each rule names its source: the Gemini API function-calling and thought-signature guides
(https://ai.google.dev/gemini-api/docs/function-calling,
https://ai.google.dev/gemini-api/docs/thought-signatures) and the ``400 INVALID_ARGUMENT``
messages the API returns when a rule is broken (quoted in each rule's description). Contents
may be dicts (snake_case or camelCase keys) or ``google.genai.types.Content`` objects; nothing
here imports google.genai.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter.context.formats.acceptance import Violation
from agent_adapter.context.formats.gemini import RESERVED_KEY, _fields, _sig_bytes

__all__ = ["check_gemini", "check_thought_signatures"]


@dataclass(frozen=True, slots=True)
class _Turn:
    role: str
    n_parts: int
    calls: tuple[tuple[str | None, str, Any, bytes | None], ...]  # id, name, args, signature
    responses: tuple[tuple[str | None, str], ...]  # id, name
    reserved: bool  # the content or one of its parts holds the reserved carrier key


def _signature(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    text = str(value)
    raw = _sig_bytes(text)
    return raw if raw is not None else text.encode("utf-8")


def _turn(content: Any) -> _Turn:
    cf = _fields(content)
    role = cf.get("role", "user")
    parts = cf.get("parts", [])
    parts = parts if isinstance(parts, list | tuple) else []
    calls: list[tuple[str | None, str, Any, bytes | None]] = []
    responses: list[tuple[str | None, str]] = []
    reserved = _has_reserved(content) or any(_has_reserved(p) for p in parts)
    for part in parts:
        pf = _fields(part)
        if "function_call" in pf:
            fc = _fields(pf["function_call"])
            args = fc.get("args", {})
            calls.append(
                (
                    fc.get("id") or None,
                    str(fc.get("name", "")),
                    args,
                    _signature(pf.get("thought_signature")),
                )
            )
        if "function_response" in pf:
            fr = _fields(pf["function_response"])
            responses.append((fr.get("id") or None, str(fr.get("name", ""))))
    return _Turn(str(role), len(parts), tuple(calls), tuple(responses), reserved)


def _has_reserved(value: Any) -> bool:
    return isinstance(value, Mapping) and RESERVED_KEY in value


def check_gemini(
    contents: Sequence[Any], *, before: Sequence[Any] | None = None
) -> list[Violation]:
    """Every rule ``contents`` breaks, as ``Violation(index, rule, message)``; ``[]`` if none.

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
    * ``response_count``: that turn answers every call of the model turn, one response each,
      matching by ``id`` when the call has one, else by name. Source: the API error "Please
      ensure that the number of function response parts is equal to the number of function
      call parts of the function call turn" and the function-calling guide (parallel calls:
      send every result back in the next turn).
    * ``unanswered_call``: a model turn with calls that is not the last turn is followed by
      its function responses. Source: the function-calling guide (the application sends the
      function's result back before the conversation goes on).
    * ``reserved_key``: no content or part holds the reserved carrier key ``"_agent_adapter"``
      (:meth:`GeminiConverter.dump <agent_adapter.context.formats.gemini.GeminiConverter.dump>`
      adds it to keep a round trip lossless). Source: the ``Content`` / ``Part`` schemas have
      no such field; the SDK rejects it ("Extra inputs are not permitted") and the REST API
      answers "Invalid JSON payload received. Unknown name". Build sendable dicts with
      ``GeminiConverter.dump_all(..., carry=False)``.
    * ``thought_signature`` (only with ``before``): see :func:`check_thought_signatures`.

    Args:
        contents: the list to check.
        before: the list ``contents`` was made from (e.g. before compression), to check that
            thought signatures were kept.

    Returns:
        Violations in order of ``index`` (the content's position in ``contents``).
    """
    out: list[Violation] = []
    turns = [_turn(c) for c in contents]
    for i, turn in enumerate(turns):
        prev = turns[i - 1] if i > 0 else None
        if turn.role not in ("user", "model", "function"):
            out.append(Violation(i, "role", f"role {turn.role!r} is not 'user' or 'model'"))
        if turn.reserved:
            out.append(Violation(i, "reserved_key", f"holds {RESERVED_KEY!r}, an unknown field"))
        if turn.n_parts == 0:
            out.append(Violation(i, "empty_turn", "a turn needs at least one part"))
        is_model = turn.role == "model"
        if i == 0 and (is_model or turn.responses):
            what = "a model turn" if is_model else "a function response turn"
            out.append(Violation(i, "first_turn", f"the history opens on {what}, not a user turn"))
        if is_model and turn.calls and prev is not None and prev.role == "model":
            out.append(
                Violation(
                    i,
                    "call_position",
                    "a function call turn follows a model turn, not a user or function "
                    "response turn",
                )
            )
        if turn.responses and is_model:
            out.append(
                Violation(
                    i,
                    "response_position",
                    "function responses sit in a model turn; they belong in a user turn",
                )
            )
        elif turn.responses and i > 0:
            if prev is None or prev.role != "model" or not prev.calls:
                out.append(
                    Violation(
                        i,
                        "response_position",
                        "function responses do not follow a model turn with function calls",
                    )
                )
            else:
                problem = _answer_problem(prev, turn)
                if problem:
                    out.append(Violation(i, "response_count", problem))
        if is_model and turn.calls and i + 1 < len(turns) and not turns[i + 1].responses:
            names = ", ".join(c[1] for c in turn.calls)
            out.append(
                Violation(
                    i, "unanswered_call", f"calls ({names}) are not answered in the next turn"
                )
            )
    if before is not None:
        out.extend(check_thought_signatures(before, contents))
        out.sort(key=lambda v: v.index)
    return out


def _answer_problem(calls_turn: _Turn, responses_turn: _Turn) -> str:
    calls, responses = calls_turn.calls, responses_turn.responses
    if len(calls) != len(responses):
        return f"{len(responses)} function responses for {len(calls)} function calls"
    open_ids = {c[0] for c in calls if c[0]}
    open_names = [c[1] for c in calls if not c[0]]
    for rid, name in responses:
        if rid and rid in open_ids:
            open_ids.discard(rid)
        elif name in open_names:
            open_names.remove(name)
        else:
            return f"the response {rid or name!r} answers no call of the previous turn"
    return ""


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
