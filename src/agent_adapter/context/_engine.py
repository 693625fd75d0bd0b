"""The engine: run a policy's steps over a message list, under the invariant guard."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Container, Sequence
from typing import Any

from agent_adapter._errors import ConfigError, ModelContextOverflow
from agent_adapter._messages import Message
from agent_adapter.context._depth import Depth, cost_depth
from agent_adapter.context._invariants import GuardStats, _guard
from agent_adapter.context._own import is_own
from agent_adapter.context._pairing import validate_messages
from agent_adapter.context._policy import CompressionLimits, CompressionPolicy, check_window
from agent_adapter.context._provenance import same_objects, trace
from agent_adapter.context._report import (
    CompressionReport,
    SkipReason,
    StepFailure,
    StepReport,
    protected_by,
    untouched_report,
)
from agent_adapter.context._steps._base import CompressionStep, StepContext
from agent_adapter.context._steps._continuation import Continuation
from agent_adapter.context._steps._drop_note import NOTE_HEAD_TOKENS, names_room_tokens
from agent_adapter.context._steps.drop import RemoveOldMessages
from agent_adapter.context._stores._commit import commit_saves, open_saves
from agent_adapter.context._text import fit_message
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context._units import Protection

__all__ = ["compress"]

#: A protected text cut by if_still_too_long="cut" keeps at least this many tokens.
_MIN_CUT_TOKENS = 200


def _cut_protected(
    messages: list[Message],
    context: StepContext,
    total: int,
    *,
    protected_goal: int = -1,
    goal: int | None = None,
) -> tuple[list[Message], int]:
    """if_still_too_long="cut": the biggest tool results and assistant texts cut head-and-tail
    (never system messages, the latest user message, pinned messages, a message holding a
    provider's compaction state or one its provider drops before it, calls or ids) until the
    list is under the target (``goal``: that many tokens); with ``protected_goal``, only
    protected ones, until the protected part is at or under that many tokens."""
    limit = context.target_tokens if goal is None else goal
    out = list(messages)
    prot = context.protection
    protected = sum(context.message_tokens(m) for m in out if prot.is_protected(m))
    order = sorted(
        (
            i
            for i, m in enumerate(out)
            if m.role in ("tool", "assistant")
            and m.text
            and not prot.is_pinned(m)
            # a provider's compaction state, and what its provider drops, go back whole
            and prot.reason(m) not in ("compaction", "before_compaction")
            and (protected_goal < 0 or prot.is_protected(m))
        ),
        key=lambda i: -context.message_tokens(out[i]),
    )
    for i in order:
        over = protected - protected_goal if protected_goal >= 0 else total - limit
        if over <= 0:
            break
        m = out[i]
        before = context.message_tokens(m)
        goal = max(_MIN_CUT_TOKENS, before - over)
        if goal >= before:
            continue
        cut = fit_message(m, goal, context.message_tokens, "both")
        out[i] = cut
        context.mark_shortened(cut)
        delta = context.message_tokens(cut) - before
        total += delta
        if prot.is_protected(m):
            protected += delta
    return out, total


def _goal(
    policy: CompressionPolicy,
    limits: CompressionLimits,
    protected_tokens: int,
    window: int | None,
    tokens: int,
) -> int:
    """What the steps compress to: the target when the protected part leaves room for it, or
    when ``if_still_too_long`` makes room (a cut, a last-resort step). Else, with ``"keep"``,
    the threshold (the window when that is smaller) less the gap between threshold and target
    below the request's ``tokens``: old rounds go only as far as needed to free that gap (so
    the next compaction is a gap of growth away, never on the next call), never all of them
    for a target that no removal can reach."""
    if protected_tokens <= limits.target_tokens or policy.if_still_too_long != "keep":
        return limits.target_tokens
    fit = limits.threshold_tokens if window is None else min(window, limits.threshold_tokens)
    gap = limits.threshold_tokens - limits.target_tokens
    return max(limits.target_tokens, min(fit, tokens - gap))


def _recent_window(
    messages: Sequence[Message], turns: int, protection: Protection
) -> set[int] | None:
    """Origins of the recency window: everything from the ``turns``-th newest assistant
    message on (from the first one when there are fewer); ``None`` when no older turn may
    go (the window would hold all of the conversation's turns).

    An older turn is an assistant message before the window, or a note or summary of ours
    (it stands for turns an earlier call dropped: its names go before anything in the
    window does), that ``protection`` lets go. An older user message alone (the task) makes
    no window: a conversation of fewer turns than ``turns`` and no note of ours is
    compressed in one pass, as a step of the caller's written for that list expects."""
    if turns <= 0:
        return None
    starts = [j for j, m in enumerate(messages) if m.role == "assistant"][-turns:]
    if not starts or not any(
        (m.role == "assistant" or is_own(m)) and not protection.is_protected(m)
        for m in messages[: starts[0]]
    ):
        return None
    return {m.origin for m in messages[starts[0] :]}


def _relaxed(messages: list[Message], context: StepContext) -> StepContext:
    """The context of a last-resort step (``if_still_too_long`` given a step): only system
    messages, pinned messages, approval rounds, a provider's compaction state and what its
    provider drops before it, the caller's latest user message and the current turn's
    thinking opener (a provider requirement, not a preference) stay protected.
    Both are known from the compression's input, never recomputed on a list a step changed.
    Summary costs go to the same total."""
    pins = context.protection

    def keep(m: Message) -> bool:
        return pins.is_pinned(m) or pins.reason(m) in ("latest_user", "thinking_opener")

    relaxed = Protection(messages, keep, protect_newest_turn=False, reason_of=pins.reason)
    return _SharedCostContext(context, relaxed)


class _SharedCostContext(StepContext):
    """A StepContext with other protection whose summary costs land on ``parent``."""

    def __init__(self, parent: StepContext, protection: Protection) -> None:
        super().__init__(
            target_tokens=parent.target_tokens,
            threshold_tokens=parent.threshold_tokens,
            protection=protection,
            meter=parent.meter,
            ctx=parent.ctx,
            continuation=parent.continuation,
            names_target_tokens=parent.names_target_tokens,
        )
        self._parent = parent

    def add_summary_cost(self, usd: float) -> None:
        """Record the cost on the compression's own context."""
        self._parent.add_summary_cost(usd)

    def add_summary_probes(self, probes: int, found: int) -> None:
        """Record a summary's probes on the compression's own context (the report's
        ``summary_coverage``)."""
        self._parent.add_summary_probes(probes, found)

    def add_invalid_summary(self) -> None:
        """Record an invalid summary reply on the compression's own context."""
        self._parent.add_invalid_summary()


async def _run_step(
    step: CompressionStep,
    name: str,
    current: list[Message],
    context: StepContext,
    policy: CompressionPolicy,
    failures: list[StepFailure],
    insertable: Callable[[Message], bool] | None,
    added_here: Callable[[Message], bool] | None = None,
) -> tuple[list[Message], GuardStats] | None:
    """One step's output through the guard, or ``None`` when it failed and was skipped.
    ``added_here``: what an earlier step of this compression added (never changed again)."""
    try:
        candidate = await step.apply(list(current), context)
        return _guard(
            current,
            candidate,
            context.protection,
            step=name,
            allow_system_prompt_shortening=bool(getattr(step, "include_system_prompt", False)),
            insertable=insertable,
            added_here=added_here,
        )
    except Exception as exc:  # a step's bug or outage never kills the run in "skip"
        if policy.on_step_error == "raise":
            raise
        failures.append(StepFailure(name, type(exc).__name__))
        return None


class _WouldCompress(Exception):
    """``_compress(..., probe=True)`` reached the steps: the list is over the threshold
    (``tokens``: its count)."""

    def __init__(self, tokens: int = 0) -> None:
        super().__init__(tokens)
        self.tokens = tokens


async def compress(
    messages: Sequence[Message],
    policy: CompressionPolicy,
    *,
    pinned: Callable[[Message], bool] | None = None,
    model_max_tokens: int | None = None,
    ctx: Any = None,
    force: bool = False,
) -> tuple[list[Message], CompressionReport]:
    """Compress ``messages`` with ``policy``: the new list and a report.

    At or under the threshold nothing runs and the very same list comes back. Above it, each
    step runs in order until the list is at or under the target; each step's output passes
    :func:`enforce_invariants`. Kept messages are the same objects; the caller's list and
    messages are never mutated. Nothing calls the main model.

    Args:
        messages: the conversation, oldest first.
        policy: when, how far and how.
        pinned: ``pinned(message) -> bool`` marks messages no step may change or remove.
        model_max_tokens: the context window, for a policy in percents.
        ctx: the run context (ids for stores, events); passed to steps as ``context.ctx``.
        force: run even at or under the threshold (down to the target), as after a
            provider's context-overflow error.

    Raises:
        ConfigError: bad messages (naming index and field), a bad policy, or a step output
            that is not a list of Message. With ``on_step_error="raise"`` a failing step's
            own exception propagates (e.g. ModelError from a summarizer).
        ModelContextOverflow: still over the target with ``if_still_too_long="raise"``.
    """
    return await _compress(
        messages, policy, pinned=pinned, model_max_tokens=model_max_tokens, ctx=ctx, force=force
    )


@dataclasses.dataclass
class _Input:
    """One compression's input, validated and counted: what every phase reads, and what an
    untouched report is made of."""

    given: Sequence[Message]
    original: list[Message]
    policy: CompressionPolicy
    limits: CompressionLimits
    meter: TokenMeter
    tokens_before: int
    model_window: int | None
    started: float
    depth: Depth | None = None
    #: with a cost-aware depth: the fixed depth's target, the notes' room of names is
    #: scaled from (``StepContext.names_target_tokens``)
    names_target: int | None = None

    def untouched(
        self, skipped: SkipReason, current: list[Message], **kw: Any
    ) -> tuple[list[Message], CompressionReport]:
        """The input as it came (the caller's own list when it was one) and a report that
        says nothing ran: ``skipped`` and ``kw`` (what ran, but changed nothing)."""
        same = self.given if isinstance(self.given, list) else current
        return same, untouched_report(
            self.tokens_before,
            self.limits.threshold_tokens,
            self.limits.target_tokens,
            len(self.original),
            skipped,
            seconds=time.perf_counter() - self.started,
            **self.depth_fields(),
            **kw,
        )

    def depth_fields(self) -> dict[str, Any]:
        """The report's fields of a cost-aware depth (none for a fixed one)."""
        d = self.depth
        if d is None:
            return {}
        return {
            "depth": "cost",
            "growth_tokens": d.growth,
            "calls": d.calls,
            "expected_calls": d.expected,
            "payback_calls": d.payback,
        }


@dataclasses.dataclass
class _Run:
    """One compression past its threshold checks: the input, the protection, the list the
    phases hand on (``current``, of ``total`` tokens) and what the report gathers."""

    input: _Input
    protection: Protection
    protected_tokens: int
    context: StepContext
    steps: list[CompressionStep]
    insertable: Callable[[Message], bool] | None
    inputs: Container[int]
    current: list[Message]
    total: int
    action: str = ""
    step_reports: list[StepReport] = dataclasses.field(default_factory=list)
    failures: list[StepFailure] = dataclasses.field(default_factory=list)

    def added_here(self, m: Message) -> bool:
        """An earlier step's addition: no later step changes it."""
        return m.origin not in self.inputs

    async def step(
        self,
        step: CompressionStep,
        name: str,
        context: StepContext,
        *,
        added_here: bool = True,
    ) -> tuple[list[Message], GuardStats] | None:
        """:func:`_run_step` on ``current``."""
        return await _run_step(
            step,
            name,
            self.current,
            context,
            self.input.policy,
            self.failures,
            self.insertable,
            self.added_here if added_here else None,
        )

    def record(
        self, name: str, ran: tuple[list[Message], GuardStats], after: int, t0: float
    ) -> None:
        """A step's output (``after`` tokens) becomes ``current``; its report goes into the
        report."""
        result, stats = ran
        self.step_reports.append(_step_report(name, self.total, after, stats, t0))
        self.current, self.total = result, after


def _step_report(name: str, before: int, after: int, stats: GuardStats, t0: float) -> StepReport:
    """The report of a step that ran from ``t0``, from ``before`` to ``after`` tokens."""
    return StepReport(
        step=name,
        tokens_before=before,
        tokens_after=after,
        messages_removed=stats.removed,
        messages_changed=stats.changed,
        messages_added=stats.added,
        changes_reverted=stats.reverted,
        seconds=time.perf_counter() - t0,
    )


async def _compress(
    messages: Sequence[Message],
    policy: CompressionPolicy,
    *,
    pinned: Callable[[Message], bool] | None = None,
    model_max_tokens: int | None = None,
    ctx: Any = None,
    force: bool = False,
    insertable: Callable[[Message], bool] | None = None,
    probe: bool = False,
    turn_thinking: bool = True,
    hold_until: int = 0,
    growth: Callable[[], tuple[int, int]] | None = None,
    continuation: Continuation | None = None,
) -> tuple[list[Message], CompressionReport]:
    """:func:`compress`, and ``insertable(message)``: may an added message stand right
    before ``message``? (a format whose natives hold several messages says where a native
    starts). With ``probe``, :class:`_WouldCompress` is raised where steps would run (the
    caller, compress_for on remembered messages, compresses its own conversion instead).
    ``turn_thinking``: the format may carry Anthropic thinking (``Protection``'s).
    ``hold_until``: a conversation's hold (see ``StateEntry.hold_until``): up to that many
    tokens nothing runs, over the threshold or not (``"held"``), unless ``force``.
    ``continuation``: the conversation's own request, which a summary request may continue
    (the steps get it over this compression's input as ``StepContext.continuation``).
    ``growth``: the conversation's ``(tokens, calls)``, given by its compaction state only
    when its depth is derived (:func:`~agent_adapter.context._policy.conversation_depth`
    is ``"cost"``, ``depth="auto"`` included): its presence makes the depth derived; a
    ``depth="cost"`` policy without it reads the growth off the messages.

    The phases, in order: prepare, protect, run the passes of steps, guard the size, commit
    the stores' saves, report."""
    given = _prepare(messages, policy, pinned, model_max_tokens)
    skipped = _skip_reason(given, force=force, hold_until=hold_until)
    if skipped is None and (policy.depth == "cost" or growth is not None):
        skipped = _cost_depth(given, force=force, growth=growth)
    if skipped is not None:
        return given.untouched(skipped, given.original)
    if probe:
        raise _WouldCompress(given.tokens_before)
    run = _prepare_run(given, pinned, ctx, insertable, turn_thinking, continuation)
    if isinstance(run, tuple):
        return run  # nothing may go, and it fits
    passes = _protect(run, turn_thinking)
    await _run_passes(run, passes)
    await _guard_size(run)
    await _commit(run)
    return _report(run)


def _prepare(
    messages: Sequence[Message],
    policy: CompressionPolicy,
    pinned: Callable[[Message], bool] | None,
    model_max_tokens: int | None,
) -> _Input:
    """Prepare, first half: the arguments and messages validated, the limits and the
    input's tokens counted."""
    if not isinstance(policy, CompressionPolicy):
        raise ConfigError(f"policy must be a CompressionPolicy, got {type(policy).__name__}")
    if pinned is not None and not callable(pinned):
        raise ConfigError("pinned must be callable: pinned(message) -> bool")
    check_window(model_max_tokens)
    started = time.perf_counter()
    current = validate_messages(messages)
    limits = policy.limits(model_max_tokens)
    meter = TokenMeter(policy.token_counter)
    window = policy.model_max_tokens or model_max_tokens
    if window is not None and limits.threshold_tokens > window:
        # a budget over the window known at the call (a model's profile; a policy holding
        # both is a ConfigError when made) is the window: a request over it is one the
        # provider rejects
        limits = CompressionLimits(window, min(limits.target_tokens, window))
    # bound to the input: what the provider drops counts 0 in the steps' running totals too
    return _Input(messages, current, policy, limits, meter, meter.bind(current), window, started)


def _skip_reason(given: _Input, *, force: bool, hold_until: int) -> SkipReason | None:
    """Why nothing runs (under the threshold, held, under the target), or ``None``."""
    tokens, limits = given.tokens_before, given.limits
    if tokens <= limits.threshold_tokens and not force:
        return "under_threshold"
    if tokens <= hold_until and not force:
        return "held"
    if tokens <= limits.target_tokens:
        return "under_target"
    return None


def _cost_depth(
    given: _Input, *, force: bool, growth: Callable[[], tuple[int, int]] | None
) -> SkipReason | None:
    """``depth="cost"``: the derived target goes into ``given.limits`` (see
    :mod:`~agent_adapter.context._depth`); ``"deferred"`` when the compaction cannot pay for
    itself in time (never with ``force``: the provider said it is over its window)."""
    if growth is not None:
        tokens, calls = growth()
    else:
        tokens = given.tokens_before
        calls = sum(1 for m in given.original if m.role == "assistant")
    limits, policy, current = given.limits, given.policy, given.original
    # the opening a compaction keeps unchanged: up to the first assistant turn, or to the first
    # note or summary of ours (an earlier compaction's, rewritten when this one folds it)
    first = next(
        (i for i, m in enumerate(current) if m.role == "assistant" or is_own(m)),
        len(current),
    )
    depth = cost_depth(
        threshold=limits.threshold_tokens,
        tokens=given.tokens_before,
        growth=tokens / calls if calls else float(tokens),
        calls=calls,
        window=given.model_window,
        price=policy.cache_price,
        cached=sum(given.meter.of(m) for m in current[:first]),
    )
    given.depth = depth
    given.names_target = limits.target_tokens  # the fixed depth's (no target is given)
    given.limits = CompressionLimits(limits.threshold_tokens, depth.target)
    if depth.defer and not force:
        return "deferred"
    return "under_target" if given.tokens_before <= depth.target else None


def _names_floor(given: _Input, protection: Protection) -> CompressionLimits:
    """``depth="cost"``: the derived target raised, when it is below it, to what the compaction
    reaches keeping what loss-follows-age keeps: the opening (the messages before the first
    assistant turn: system prompt and task, which ``RemoveOldMessages`` keeps), the protected
    messages and the recency window (``policy.recent_turns``), plus one note's room of names
    at the fixed depth (never above the fixed depth's target). Below that floor a deeper
    target frees nothing more of the old history: it only squeezes the notes to fit
    (``RemoveOldMessages`` shortens its notes, then lists no names, when nothing more may go)
    and sends the recency window's turns after the history: that is where the deeper
    compactions lost names (issue 35: file paths and error names, ``bench/cache.py
    --depth``)."""
    limits, policy, meter, current = given.limits, given.policy, given.meter, given.original
    names_target = given.names_target
    if names_target is None or limits.target_tokens >= names_target:
        return limits
    protected = {id(m) for m in protection.protected(current)}
    window = _recent_window(current, policy.recent_turns, protection) or set()
    first = next((i for i, m in enumerate(current) if m.role == "assistant"), len(current))
    kept = sum(
        meter.of(m)
        for i, m in enumerate(current)
        if i < first or id(m) in protected or m.origin in window
    )
    # one note: its head and its room of names (a floor without the head left the note no
    # room for it: its names were the first thing cut to fit, then the note was bared)
    note = NOTE_HEAD_TOKENS + names_room_tokens(limits.target_tokens, names_target)
    floor = min(names_target, kept + note)
    if floor <= limits.target_tokens:
        return limits
    return CompressionLimits(limits.threshold_tokens, floor)


def _prepare_run(
    given: _Input,
    pinned: Callable[[Message], bool] | None,
    ctx: Any,
    insertable: Callable[[Message], bool] | None,
    turn_thinking: bool,
    continuation: Continuation | None = None,
) -> _Run | tuple[list[Message], CompressionReport]:
    """Prepare, second half: the protection and what it holds, and the steps' context; the
    untouched input instead when nothing may go and it fits the window (or no window is
    known) with ``if_still_too_long="keep"``."""
    policy, limits, meter, current = given.policy, given.limits, given.meter, given.original
    protection = Protection(current, pinned, turn_thinking=turn_thinking)
    protected_tokens = sum(meter.of(m) for m in protection.protected(current))
    if (
        policy.if_still_too_long == "keep"
        and protected_tokens >= given.tokens_before
        and (given.model_window is None or given.tokens_before <= given.model_window)
    ):
        return given.untouched(
            "nothing_to_compress",
            current,
            protected_tokens=protected_tokens,
            if_still_too_long="keep",
            protected_by=protected_by(current, protection, meter.of),
        )
    if given.names_target is not None:
        limits = given.limits = _names_floor(given, protection)
    goal = _goal(policy, limits, protected_tokens, given.model_window, given.tokens_before)
    context = StepContext(
        target_tokens=goal,
        threshold_tokens=limits.threshold_tokens,
        protection=protection,
        meter=meter,
        ctx=ctx,
        continuation=None if continuation is None else continuation.over(current),
        names_target_tokens=given.names_target,
    )
    context.set_originals(current)  # what a saving step saves: the caller's own texts
    open_saves(context)  # ShrinkToolResults stages its saves; commit_saves writes them
    return _Run(
        given,
        protection,
        protected_tokens,
        context,
        policy.resolved_steps(),
        insertable,
        context._input_origins(),
        current,
        given.tokens_before,
    )


def _protect(run: _Run, turn_thinking: bool) -> list[StepContext]:
    """Protect: the contexts the steps run under, in order. With ``if_still_too_long="cut"``
    and protected content over the target, the biggest protected content is first cut to
    half the target (only as much as needed, so the steps remove history only as far as
    still needed). Loss follows age: when older turns may go, a first pass protects the
    recency window (``policy.recent_turns``), then a pass runs under the protection alone."""
    policy, limits, context = run.input.policy, run.input.limits, run.context
    if policy.if_still_too_long == "cut" and run.protected_tokens > limits.target_tokens:
        run.current, run.total = _cut_protected(
            run.current, context, run.total, protected_goal=limits.target_tokens // 2
        )
        run.action = "cut"
    window = _recent_window(run.current, policy.recent_turns, run.protection)
    if not window:
        return [context]
    pins = run.protection

    def in_window(m: Message) -> bool:
        return m.origin in window or pins.is_pinned(m)

    first = Protection(run.current, in_window, turn_thinking=turn_thinking)
    return [_SharedCostContext(context, first), context]


async def _run_passes(run: _Run, passes: list[StepContext]) -> None:
    """Run passes: each pass runs the steps in order, each under the guard, until the list
    is at or under the target; a failed step is skipped (``on_step_error="skip"``)."""
    for pass_context in passes:
        for step in run.steps:
            if run.context.under_target(run.total):
                break
            name = str(getattr(step, "name", type(step).__name__))
            t0 = time.perf_counter()
            ran = await run.step(step, name, pass_context)
            if ran is not None:
                run.record(name, ran, run.input.meter.total(ran[0]), t0)


async def _guard_size(run: _Run) -> None:
    """Guard: ``if_still_too_long`` when the steps left the list over the target; never
    bigger than the input (what the steps added, a note or a marker, costs at least what
    they removed: the input stays); then never over the threshold while something that may
    go is still there (:func:`_under_threshold`)."""
    if run.total > run.input.limits.target_tokens:
        await _if_still_too_long(run)
    if run.total >= run.input.tokens_before:
        run.current, run.total = run.input.original, run.input.tokens_before
    await _under_threshold(run)
    if run.action == "keep" and run.total <= run.input.limits.target_tokens:
        # the threshold guard brought it under the target after all: nothing was kept over
        # it (the report said "returned over the target" of a result under it)
        run.action = ""


async def _if_still_too_long(run: _Run) -> None:
    """The policy's ``if_still_too_long`` on a list the steps left over the target: raise,
    cut, keep (cut to the model's window when over it: the window is a hard limit), or run
    a last-resort step under relaxed protection (:func:`_relaxed`)."""
    limits, context, total = run.input.limits, run.context, run.total
    still = run.input.policy.if_still_too_long
    if still == "raise":
        raise ModelContextOverflow(
            f"compressed to {total} tokens, still over the target {limits.target_tokens}; "
            f"protected messages alone are {run.protected_tokens} tokens",
            tokens=total,
            limit=limits.target_tokens,
        )
    if still == "cut":
        run.current, run.total = _cut_protected(run.current, context, total)
        run.action = "cut"
    elif still == "keep":
        run.action = "keep"
        window = run.input.model_window
        if window is not None and total > window:
            # the window is a hard limit: the newest content is cut, as the last resort
            goal = min(window, limits.threshold_tokens)
            run.current, run.total = _cut_protected(run.current, context, total, goal=goal)
            run.action = "cut"
    else:
        name = str(getattr(still, "name", type(still).__name__))
        run.action = f"step:{name}"
        ran = await run.step(still, name, _relaxed(run.current, context))
        if ran is not None:
            run.current = ran[0]
            run.total = run.input.meter.total(run.current)


async def _commit(run: _Run) -> None:
    """Commit: write the saved tool results that the final list still names (and only
    those)."""
    run.current, run.total = await commit_saves(
        run.context, run.input.original, run.current, run.total, run.input.policy, run.failures
    )


def _report(run: _Run) -> tuple[list[Message], CompressionReport]:
    """Report: the final list and its report; the input as it came, with a report that
    does not say otherwise, when nothing shrank."""
    given, context, original = run.input, run.context, run.input.original
    by = protected_by(original, run.protection, given.meter.of)
    if same_objects(run.current, original):
        return given.untouched(
            "nothing_to_compress",
            run.current,
            protected_tokens=run.protected_tokens,
            protected_by=by,
            steps=tuple(run.step_reports),
            failures=tuple(run.failures),
            if_still_too_long=run.action,
            summary_cost_usd=context.summary_cost_usd,
            summary_probes=context.summary_probes,
            summary_probes_found=context.summary_probes_found,
            summary_invalid_replies=context.summary_invalid_replies,
        )
    traced = trace(original, run.current)
    return run.current, CompressionReport(
        tokens_before=given.tokens_before,
        tokens_after=run.total,
        threshold_tokens=given.limits.threshold_tokens,
        target_tokens=given.limits.target_tokens,
        messages_before=len(original),
        messages_after=len(run.current),
        messages_removed=traced.removed,
        messages_changed=traced.changed(original),
        messages_added=traced.n_added,
        protected_tokens=run.protected_tokens,
        protected_by=by,
        steps=tuple(run.step_reports),
        failures=tuple(run.failures),
        if_still_too_long=run.action,
        summary_cost_usd=context.summary_cost_usd,
        seconds=time.perf_counter() - given.started,
        summary_probes=context.summary_probes,
        summary_probes_found=context.summary_probes_found,
        summary_invalid_replies=context.summary_invalid_replies,
        **given.depth_fields(),
    )


async def _under_threshold(run: _Run) -> None:
    """The final guard: never over the threshold while something that may go is still there.

    When the steps (and ``if_still_too_long``) left ``current`` over the threshold with a
    unit of the caller's that the compression's protection lets go still in it (a tool round
    ``RemoveOldMessages`` kept for its ``keep_last`` or on that edge, a unit of the recency
    window), the pipeline's own ``RemoveOldMessages`` runs once more with ``keep_last=0`` and
    the threshold as its target: the oldest unprotected units go, only as many as needed,
    each run leaving its note (an earlier note next to a run is folded into it). What stays:
    the protected messages, the task (the step's ``keep_first``: pin what else must stay) and
    the notes. It is kept only when it is smaller (a note costing more than the units it
    stands for is no gain). A pipeline without ``RemoveOldMessages`` was chosen not to drop
    history: nothing goes here. The run is reported as a step of its own."""
    threshold, context = run.input.limits.threshold_tokens, run.context
    if run.total <= threshold:
        return
    drop = next((s for s in run.steps if isinstance(s, RemoveOldMessages)), None)
    if drop is None or not any(
        not u.protected and not all(is_own(m) for m in u.messages)
        for u in context.units(run.current)
    ):
        return
    guard = _SharedCostContext(context, context.protection)
    guard.target_tokens = threshold
    t0 = time.perf_counter()
    step = dataclasses.replace(drop, keep_last=0)
    ran = await run.step(step, drop.name, guard, added_here=False)
    if ran is None:
        return
    after = context.meter.total(ran[0])
    if after < run.total:
        run.record(drop.name, ran, after, t0)
