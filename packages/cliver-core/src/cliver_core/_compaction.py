"""The context-compactor contract: what a compactor sees, what it may return, and the guard.

A compactor is a sync or async callable taking a :class:`CompactionContext`, invoked once per
loop iteration before the model call (the first iteration included). It returns a
:class:`CompactionPlan` (core builds the new history), a full ``list[CLIverMessage]`` (core
validates it) or ``None`` (no change). Whatever comes back is checked here before it can reach
a provider; every rule broken is a :class:`CompactionError` (a ``ValueError``) naming the
index and what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_adapter import ConfigError, RunContext, Usage
from agent_adapter.context._pairing import Pairing, describe
from agent_adapter.context._steps._continuation import Continuation
from cliver_core._format import expanded
from cliver_core._messages import CLIverMessage, CLIverResponse, UsageInfo

__all__ = [
    "SUMMARY_PREFIX",
    "CompactionContext",
    "CompactionError",
    "CompactionPlan",
    "CompactionSplit",
    "apply_plan",
    "blank_summary",
    "render",
    "validate_history",
]

#: The first line of the one user message a plan's summary becomes.
SUMMARY_PREFIX = "[Compacted earlier context]"


class CompactionError(ConfigError):
    """A compactor's plan or history breaks the contract (a ``ValueError``); raised before the
    model call."""


def _usage(value: Any, where: str) -> UsageInfo | None:
    if value is None:
        return None
    if isinstance(value, UsageInfo):
        return value
    if isinstance(value, Usage):
        return UsageInfo.of(value)
    counts = {k: getattr(value, k, None) for k in ("input_tokens", "output_tokens")}
    if all(isinstance(n, int) and not isinstance(n, bool) for n in counts.values()):
        # a usage object of another library (0.3.0a5's UsageInfo, an SDK's usage): its counts
        cached = getattr(value, "cache_read_input_tokens", None)
        return UsageInfo(
            input_tokens=counts["input_tokens"] or 0,
            output_tokens=counts["output_tokens"] or 0,
            cache_read_input_tokens=cached if isinstance(cached, int) and cached else None,
        )
    raise CompactionError(f"{where} must be a UsageInfo, got {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """What to compact; core materializes ``[summary_message, *messages[keep_from:]]``.

    Attributes:
        keep_from: the index in ``context.messages`` of the first message kept; positive and
            pointing at a ``user`` message.
        summary: text core prepends as one user message beginning with
            ``[Compacted earlier context]``; ``None`` drops the prefix without a summary. A
            blank one (empty or only whitespace: a summarizer that answered nothing, which
            the documented example's ``if not response.message.content`` lets through when
            it is whitespace) leaves the history unchanged, as :class:`LlmCompactor` does
            with an empty summary: nothing is dropped without its summary, and the run goes
            on.
        usage: the summarization call's usage; added to the run's ``usage_total`` once the
            resulting history is accepted (for a blank summary, at once).

    Raises:
        CompactionError: a field has the wrong type.
    """

    keep_from: int
    summary: str | None = None
    usage: UsageInfo | None = None

    def __post_init__(self) -> None:
        if isinstance(self.keep_from, bool) or not isinstance(self.keep_from, int):
            raise CompactionError(
                f"CompactionPlan.keep_from must be an int, got {type(self.keep_from).__name__}"
            )
        if self.summary is not None and not isinstance(self.summary, str):
            raise CompactionError(
                f"CompactionPlan.summary must be a str or None, got {type(self.summary).__name__}"
            )
        object.__setattr__(self, "usage", _usage(self.usage, "CompactionPlan.usage"))


@dataclass(frozen=True, slots=True)
class CompactionSplit:
    """The history split before a user turn: ``older`` (to summarize) and ``recent`` (kept).

    Attributes:
        keep_from: the index of the first kept message (a ``user`` message; 0 when nothing
            would be dropped).
        older: ``messages[:keep_from]``.
        recent: ``messages[keep_from:]``.
    """

    keep_from: int
    older: list[CLIverMessage]
    recent: list[CLIverMessage]

    def plan(
        self, summary: str | None = None, usage: UsageInfo | Usage | None = None
    ) -> CompactionPlan:
        """A plan bound to this split's boundary (it cannot drift from what was summarized).

        Raises:
            CompactionError: the split drops nothing (``keep_from == 0``): check ``older``.
        """
        if self.keep_from == 0:
            raise CompactionError(
                "CompactionSplit.plan: the split drops nothing (keep_from == 0); check "
                "split.older before planning"
            )
        return CompactionPlan(self.keep_from, summary, _usage(usage, "usage"))


def split_at_user_turn(messages: Sequence[CLIverMessage], keep_turns: int) -> CompactionSplit:
    """Split before the ``keep_turns``-th user message from the end.

    Raises:
        CompactionError: ``keep_turns`` is not an int >= 1.
    """
    if isinstance(keep_turns, bool) or not isinstance(keep_turns, int) or keep_turns < 1:
        raise CompactionError(f"keep_turns must be an int >= 1, got {keep_turns!r}")
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    keep_from = users[-keep_turns] if len(users) >= keep_turns else 0
    return CompactionSplit(keep_from, list(messages[:keep_from]), list(messages[keep_from:]))


def _content_text(message: CLIverMessage) -> str:
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    out: list[str] = []
    for block in content:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            out.append(block["text"])
        else:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            out.append(f"[{kind}]")
    return "\n".join(out)


def render(messages: Sequence[CLIverMessage]) -> str:
    """The messages as compact text for a summarizer prompt: one block a message, its role
    first; tool calls as ``name(arguments)``, results after the tool they came from."""
    names: dict[str, str] = {}
    lines: list[str] = []
    for m in (each for message in messages for each in expanded(message)):
        text = _content_text(m).strip()
        if m.role == "tool":
            tool = names.get(m.tool_call_id or "", "tool")
            lines.append(f"[{tool} result] {text}")
            continue
        if text:
            lines.append(f"[{m.role}] {text}")
        for call in m.tool_calls or ():
            names[call.id] = call.name
            args = json.dumps(call.args, ensure_ascii=False, default=str)
            lines.append(f"[{m.role} called] {call.name}({args})")
    return "\n".join(lines)


@dataclass(slots=True)
class CompactionContext:
    """What a compactor sees for one loop iteration.

    Attributes:
        messages: the run history without the core-owned system message; a fresh list
            (treat the messages as read-only).
        iteration: the zero-based iteration about to call the model.
        run_id: the run's correlation id (the same on its events and response).
        model: the model of the run's first llm binding (before any failover of this call).
        last_usage: the previous iteration's usage in this run; ``None`` on the first.
    """

    messages: list[CLIverMessage]
    iteration: int
    run_id: str
    model: str
    last_usage: UsageInfo | None
    _record: Callable[[UsageInfo], None] = field(repr=False, default=lambda usage: None)
    _continue: Callable[[str], Awaitable[CLIverResponse]] | None = field(repr=False, default=None)
    _continuation: Callable[[RunContext], Continuation] | None = field(repr=False, default=None)

    async def continue_run(self, prompt: str) -> CLIverResponse:
        """One model call that continues this run's conversation: the run's last request
        (the same system, tools and messages, byte for byte; on the first iteration the
        request the next call would send) with ``prompt`` appended as a last user message,
        on the model that answered last. The provider reads the conversation from its
        prompt cache, so a summary asked this way costs cache reads instead of a fresh
        prompt (Codex and Claude Code ask for their compaction summaries so). The reply's
        text is ``response.message.content`` (empty when the model called a tool instead);
        its usage is ``response.usage``, not recorded in the run's total: record it (a
        plan's ``usage`` is recorded for you).

        Raises:
            CompactionError: the context was not made by a run (built by hand).
        """
        if self._continue is None:
            raise CompactionError("continue_run: this CompactionContext belongs to no run")
        return await self._continue(prompt)

    def _continuing(self, ctx: RunContext) -> Continuation | None:
        """The run's last request as a summary request of the compression may continue it
        (the machinery of :meth:`continue_run`, for a policy's ``Summarize`` step whose
        model is the run's own: see :class:`~cliver_core.PolicyCompactor`), its calls
        recorded in ``ctx``; ``None`` when the context belongs to no run."""
        if self._continuation is None:
            return None
        return self._continuation(ctx)

    def record_usage(self, usage: UsageInfo | Usage | None) -> None:
        """Fold the usage of a model call the compactor made into the run's ``usage_total``
        (a plan's ``usage`` is folded for you)."""
        info = _usage(usage, "record_usage(usage)")
        if info is not None:
            self._record(info)

    def split_at_user_turn(self, keep_turns: int) -> CompactionSplit:
        """Split :attr:`messages` before the ``keep_turns``-th user turn from the end; the
        boundary is always a user message, so the kept suffix has no broken tool pair.

        Raises:
            CompactionError: ``keep_turns`` is not an int >= 1.
        """
        return split_at_user_turn(self.messages, keep_turns)

    def render(self, messages: Sequence[CLIverMessage]) -> str:
        """``messages`` as compact text for a summarizer prompt (see :func:`render`)."""
        return render(messages)


def validate_history(
    messages: Any,
    where: str = "the compactor's history",
    error: type[ConfigError] = CompactionError,
    *,
    system: bool = False,
) -> list[CLIverMessage]:
    """``messages`` checked as a history a provider may get; a new list of the same objects.

    ``system=True`` lets system messages through: a plan keeps a suffix of the caller's own
    history, whose system messages past the first turn are the caller's (sent as given when
    nothing is compacted); the documented plan checks are the tool pairs and the last role.

    Raises:
        CompactionError: it is empty, contains a system message (unless ``system``), has a
            tool result with no matching assistant tool call, leaves an assistant tool call
            without all of its tool results, or does not end with a ``user`` or ``tool``
            message.
    """
    if not isinstance(messages, list | tuple):
        raise error(f"{where} must be a list of CLIverMessage, got {type(messages)}")
    if not messages:
        raise error(f"{where} is empty: the model needs a turn to answer")
    pairing = Pairing()
    for i, m in enumerate(messages):
        if not isinstance(m, CLIverMessage):
            raise error(f"{where}: messages[{i}] is {type(m).__name__}")
        if m.role == "system" and not system:
            raise error(
                f"{where}: messages[{i}] is a system message; the system message is "
                "core-owned and re-attached by core"
            )
        if m.role == "tool":
            for result in expanded(m):
                pairing.result(i, result.tool_call_id)
        else:
            pairing.turn(i, [c.id for c in m.tool_calls] if m.tool_calls else ())
    pairing.end()
    for problem in pairing.problems:
        if problem.rule == "tool_without_call":
            what = "has a tool result with no matching assistant tool call"
        elif problem.rule == "duplicate_call_id":
            what = "repeats a tool call id"
        else:
            what = "leaves an assistant tool call without all of its tool results"
        raise error(f"{where} {what}: {describe(problem)}")
    last = messages[-1]
    if last.role not in ("user", "tool"):
        raise error(
            f"{where} ends with messages[{len(messages) - 1}] of role {last.role!r}; it must "
            "end with a user or tool message, so the model has a turn to answer"
        )
    return list(messages)


def blank_summary(plan: CompactionPlan) -> bool:
    """True when ``plan`` has a summary that is empty or only whitespace (no summary came
    back: the history is left as it is)."""
    return plan.summary is not None and not plan.summary.strip()


def apply_plan(plan: CompactionPlan, messages: Sequence[CLIverMessage]) -> list[CLIverMessage]:
    """``[summary_message, *messages[plan.keep_from:]]``, validated (``messages`` as they
    are for a blank summary).

    Raises:
        CompactionError: ``keep_from`` is outside the history or not at a user message, or
            the result breaks :func:`validate_history`.
    """
    k = plan.keep_from
    if not 0 < k < len(messages):
        raise CompactionError(
            f"CompactionPlan.keep_from {k} is outside the history: it must be positive and "
            f"below len(context.messages) = {len(messages)}"
        )
    if messages[k].role != "user":
        raise CompactionError(
            f"CompactionPlan.keep_from {k} points at a {messages[k].role!r} message; it must "
            "point at a user message (use context.split_at_user_turn)"
        )
    if blank_summary(plan):
        return list(messages)  # no summary came back: nothing is dropped
    kept = list(messages[k:])
    if plan.summary is not None:
        summary = CLIverMessage(role="user", content=f"{SUMMARY_PREFIX}\n{plan.summary}")
        kept.insert(0, summary)
    return validate_history(kept, "the history a CompactionPlan builds", system=True)
