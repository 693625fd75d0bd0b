"""The one tool-pairing rule: which result answers which call, and what is broken.

Every provider pairs tool calls with their results the same way at the level this library
works on, and every place that needs the rule uses this module: input validation
(:func:`validate_messages`), units, the provider checkers, the recorded-session loaders, tests
and benchmarks. So ``compress()`` and ``check()`` cannot disagree.

The rule (OpenAI Chat Completions, API reference, *Create chat completion*: "messages with role
'tool' must be a response to a preceding message with 'tool_calls'" and "An assistant message
with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'";
Anthropic Messages: "Each tool_use block must have a corresponding tool_result block in the
next message"; Gemini: a function response turn follows its function call turn):

* a result answers an unanswered call of the *nearest preceding* message with calls (so a call
  id reused later in a conversation, as tau-bench does, answers its own round);
* every call is answered before the next message that is not a result of it;
* within one message the call ids are unique;
* only the list's last call turn may still wait for results (a tool loop between the model's
  reply and running the tools): ``calls_pending_at_end``, which validation accepts.

Feed a :class:`Pairing` the items in order (:meth:`Pairing.turn` for anything that is not a
result, :meth:`Pairing.result` for a result) and call :meth:`Pairing.end`; or call
:func:`pair_messages` on a list of :class:`~agent_adapter._messages.Message`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message

__all__ = [
    "Pairing",
    "PairingProblem",
    "PairingRule",
    "pair_messages",
    "validate_messages",
]

PairingRule: TypeAlias = Literal[
    "tool_without_call", "call_unanswered", "calls_pending_at_end", "duplicate_call_id"
]


@dataclass(frozen=True, slots=True)
class PairingProblem:
    """One broken pairing rule.

    Attributes:
        index: the offending item: the result (``tool_without_call``), the call turn
            (``call_unanswered``, ``calls_pending_at_end``, ``duplicate_call_id``).
        rule: which rule.
        call_ids: the ids concerned, sorted.
        before: for ``call_unanswered``, the item the results were due before.
    """

    index: int
    rule: PairingRule
    call_ids: tuple[str | None, ...]
    before: int | None = None


@dataclass(slots=True)
class Pairing:
    """A streaming tracker of the pairing rule; see the module docstring.

    Attributes:
        problems: what was found so far, in order.
        answers: result index -> index of the call turn it answers.
        last_result: call turn index -> index of its last result.
    """

    problems: list[PairingProblem] = field(default_factory=list)
    answers: dict[int, int] = field(default_factory=dict)
    last_result: dict[int, int] = field(default_factory=dict)
    _pending: dict[str, bool] = field(default_factory=dict)
    _open: int = 0  # how many calls of the open turn are still unanswered
    _opener: int = -1

    def result(self, index: int, call_id: str | None) -> None:
        """Item ``index`` is a tool result answering ``call_id``."""
        if call_id is not None and self._pending.get(call_id) is False:
            self._pending[call_id] = True
            self._open -= 1
            self.answers[index] = self._opener
            self.last_result[self._opener] = index
            return
        self.problems.append(PairingProblem(index, "tool_without_call", (call_id,)))

    def turn(self, index: int, call_ids: Sequence[str]) -> None:
        """Item ``index`` is not a tool result; it makes ``call_ids`` (often none)."""
        if self._open:
            self.problems.append(
                PairingProblem(self._opener, "call_unanswered", self._missing(), before=index)
            )
        if not call_ids:  # the common case: a text message, no round open
            if self._pending:
                self._pending = {}
                self._open = 0
            return
        self._pending = dict.fromkeys(call_ids, False)
        self._open = len(self._pending)
        if self._open < len(call_ids):
            seen: set[str] = set()
            dups = sorted({c for c in call_ids if c in seen or seen.add(c)})  # type: ignore[func-returns-value]
            self.problems.append(PairingProblem(index, "duplicate_call_id", tuple(dups)))
        self._opener = index

    def end(self) -> None:
        """The list ended."""
        if self._open:
            self.problems.append(
                PairingProblem(self._opener, "calls_pending_at_end", self._missing())
            )

    def _missing(self) -> tuple[str, ...]:
        return tuple(sorted(k for k, done in self._pending.items() if not done))


def pair_messages(messages: Sequence[Message]) -> Pairing:
    """The pairing of a list of :class:`Message` (tool messages are the results)."""
    pairing = Pairing()
    result, turn = pairing.result, pairing.turn
    for i, m in enumerate(messages):
        if m.role == "tool":
            result(i, m.tool_call_id)
        else:
            turn(i, [c.id for c in m.tool_calls] if m.tool_calls else ())
    pairing.end()
    return pairing


def describe(
    problem: PairingProblem,
    *,
    call: str = "tool_calls",
    result: str = "tool_call_id",
    name: Callable[[str], str] = repr,
    at: Callable[[int], str] = lambda i: f"messages[{i}]",
) -> str:
    """``problem`` as one line in the caller's own terms: ``at`` names an item by its index in
    the caller's list, ``call`` and ``result`` the fields (or items) holding calls and results,
    ``name`` a call id as the caller knows it. Ids only, never message text."""
    ids = ", ".join(name(c) if c is not None else "no id" for c in problem.call_ids)
    where = at(problem.index)

    def field(term: str) -> str:  # messages[3].tool_call_id, or messages[3] (a tool message)
        return f"{where}.{term}" if term.isidentifier() else f"{where} ({term})"

    if problem.rule == "tool_without_call":
        return (
            f"{field(result)} {ids} answers no open tool call (no unanswered call of the "
            "nearest preceding message with calls has that id, or an earlier result already "
            "answered it)"
        )
    if problem.rule == "duplicate_call_id":
        return f"{field(call)}: call id {ids} appears more than once in one message"
    due = at(problem.before) if problem.before is not None else "the end"
    if problem.rule == "call_unanswered":
        return (
            f"{field(call)}: call {ids} has no tool result before {due}; every call is "
            "answered right after the message making it (only the newest round may be pending)"
        )
    return f"{field(call)}: call {ids} of the last call turn has no result yet"


def _kind(item: object) -> str:
    """What ``item`` is, for the error: its class and module (``HumanMessage from
    langchain_core.messages.human``), or the builtin type."""
    cls = type(item)
    module = cls.__module__
    return cls.__name__ if module == "builtins" else f"{cls.__name__} from {module}"


def validate_messages(messages: object) -> list[Message]:
    """``messages`` checked as a conversation; a new list of the same objects.

    The pairing rule of this module, with the newest call turn allowed to wait for results.
    A list that extends one validated before (the same message objects first) is checked
    from where that one ended (see :class:`_Validated`), so a grown conversation costs only
    its new messages.

    Raises:
        ConfigError: not a list; an item that is not a Message (naming its index); a broken
            pairing rule (naming the index and the call ids). The error is a
            :class:`PairingError` whose ``problem`` holds the :class:`PairingProblem`, so
            callers can restate it for their own items.
    """
    if not isinstance(messages, list | tuple):
        raise ConfigError(f"messages must be a list of Message, got {type(messages).__name__}")
    held = tuple(messages) if len(messages) >= _VALIDATED_MIN else None
    start, pairing = _VALIDATED.resume(held) if held is not None else (0, Pairing())
    for i in range(start, len(messages)):
        m = messages[i]
        if not isinstance(m, Message):
            raise ConfigError(
                f"messages[{i}] is {type(m).__name__}, not a Message: compress() and the "
                "Compactor of Messages take agent_adapter.Message objects; for a framework's "
                f"or a provider's own messages ({_kind(m)}) use compress_for(messages, "
                "policy), which converts them and gives them back in their own format"
            )
    result, turn = pairing.result, pairing.turn
    for i in range(start, len(messages)):
        m = messages[i]
        if m.role == "tool":
            result(i, m.tool_call_id)
        else:
            turn(i, [c.id for c in m.tool_calls] if m.tool_calls else ())
    for problem in pairing.problems:  # end() would only add calls_pending_at_end
        raise PairingError(problem, describe(problem))
    if held is not None and start < len(held):
        _VALIDATED.remember(held, pairing)
    return list(messages)


#: Validated lists remembered, and the shortest worth remembering.
_VALIDATED_LISTS = 4
_VALIDATED_MIN = 16


class _Validated:
    """The last few lists :func:`validate_messages` accepted, by the identity of their
    messages (held, so an id is not reused while remembered; messages are immutable), with
    the pairing state after their last message. A list that starts with one of them is
    validated from there on: an agent's conversation one round longer costs its new
    messages. The state is what the rule needs to go on: the open turn and its calls."""

    def __init__(self) -> None:
        self.lists: list[tuple[tuple[Message, ...], Pairing]] = []
        self.lock = threading.Lock()

    def resume(self, held: tuple[Message, ...]) -> tuple[int, Pairing]:
        """(k, a pairing in the state after ``held[:k]``) for the longest remembered prefix
        of ``held`` (compared by identity; an equal message validates the same), or (0, a
        new pairing)."""
        n = len(held)
        k, state = 0, None
        for seen, memo in self.lists:
            m = len(seen)
            if k < m <= n and held[m - 1] is seen[-1] and held[0] is seen[0] and held[:m] == seen:
                k, state = m, memo
        if state is None:
            return 0, Pairing()
        return k, Pairing(_pending=dict(state._pending), _open=state._open, _opener=state._opener)

    def remember(self, held: tuple[Message, ...], pairing: Pairing) -> None:
        state = Pairing(
            _pending=dict(pairing._pending), _open=pairing._open, _opener=pairing._opener
        )
        n = len(held)
        with self.lock:
            kept = [
                x
                for x in self.lists
                if len(x[0]) != n
                or x[0][-1] is not held[-1]
                or x[0][0] is not held[0]
                or x[0] != held
            ]
            self.lists = [(held, state), *kept][:_VALIDATED_LISTS]


_VALIDATED = _Validated()


class PairingError(ConfigError):
    """A :class:`ConfigError` for a broken pairing rule, with the problem attached."""

    def __init__(self, problem: PairingProblem, message: str) -> None:
        super().__init__(message)
        self.problem = problem
