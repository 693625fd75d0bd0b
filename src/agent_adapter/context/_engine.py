"""The engine: run a policy's steps over a message list, under the invariant guard."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from agent_adapter._errors import ConfigError, ModelContextOverflow
from agent_adapter._messages import Message
from agent_adapter.context._invariants import GuardStats, _guard
from agent_adapter.context._own import is_own
from agent_adapter.context._pairing import validate_messages
from agent_adapter.context._policy import CompressionLimits, CompressionPolicy
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
    (never system messages, the latest user message, pinned messages, calls or ids) until the
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
    messages, pinned messages, approval rounds, the caller's latest user message and the
    current turn's thinking opener (a provider requirement, not a preference) stay protected.
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
    """``_compress(..., probe=True)`` reached the steps: the list is over the threshold."""


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
) -> tuple[list[Message], CompressionReport]:
    """:func:`compress`, and ``insertable(message)``: may an added message stand right
    before ``message``? (a format whose natives hold several messages says where a native
    starts). With ``probe``, :class:`_WouldCompress` is raised where steps would run (the
    caller, compress_for on remembered messages, compresses its own conversion instead).
    ``turn_thinking``: the format may carry Anthropic thinking (``Protection``'s).
    ``hold_until``: a conversation's hold (see ``StateEntry.hold_until``): up to that many
    tokens nothing runs, over the threshold or not (``"held"``), unless ``force``."""
    if not isinstance(policy, CompressionPolicy):
        raise ConfigError(f"policy must be a CompressionPolicy, got {type(policy).__name__}")
    if pinned is not None and not callable(pinned):
        raise ConfigError("pinned must be callable: pinned(message) -> bool")
    started = time.perf_counter()
    current = validate_messages(messages)
    original = current
    limits = policy.limits(model_max_tokens)
    meter = TokenMeter(policy.token_counter)
    tokens_before = meter.total(current)
    n_before = len(current)

    def untouched(skipped: SkipReason, **kw: Any) -> tuple[list[Message], CompressionReport]:
        same = messages if isinstance(messages, list) else current
        return same, untouched_report(
            tokens_before,
            limits.threshold_tokens,
            limits.target_tokens,
            n_before,
            skipped,
            seconds=time.perf_counter() - started,
            **kw,
        )

    if tokens_before <= limits.threshold_tokens and not force:
        return untouched("under_threshold")
    if tokens_before <= hold_until and not force:
        return untouched("held")
    if tokens_before <= limits.target_tokens:
        return untouched("under_target")
    if probe:
        raise _WouldCompress
    protection = Protection(current, pinned, turn_thinking=turn_thinking)
    protected_tokens = sum(meter.of(m) for m in protection.protected(current))
    model_window = policy.model_max_tokens or model_max_tokens
    if (
        policy.if_still_too_long == "keep"
        and protected_tokens >= tokens_before
        and (model_window is None or tokens_before <= model_window)
    ):
        # nothing may go, and it fits the window (or no window is known): remove nothing
        return untouched(
            "nothing_to_compress",
            protected_tokens=protected_tokens,
            if_still_too_long="keep",
            protected_by=protected_by(current, protection, meter.of),
        )
    context = StepContext(
        target_tokens=_goal(policy, limits, protected_tokens, model_window, tokens_before),
        threshold_tokens=limits.threshold_tokens,
        protection=protection,
        meter=meter,
        ctx=ctx,
    )
    context.set_originals(original)  # what a saving step saves: the caller's own texts
    open_saves(context)  # ShrinkToolResults stages its saves; commit_saves writes them
    steps = policy.resolved_steps()
    inputs = frozenset(m.origin for m in original)

    def added_here(m: Message) -> bool:  # an earlier step's addition: no later step changes it
        return m.origin not in inputs

    step_reports: list[StepReport] = []
    failures: list[StepFailure] = []
    total = tokens_before
    action = ""
    if policy.if_still_too_long == "cut" and protected_tokens > limits.target_tokens:
        # only as much as needed: the biggest protected content is cut first, to half the
        # target, so the steps remove history only as far as still needed
        current, total = _cut_protected(
            current, context, total, protected_goal=limits.target_tokens // 2
        )
        action = "cut"
    passes = [context]
    window = _recent_window(current, policy.recent_turns, protection)
    if window:  # loss follows age: first with the recency window protected
        pins = protection

        def in_window(m: Message) -> bool:
            return m.origin in window or pins.is_pinned(m)

        passes.insert(
            0,
            _SharedCostContext(
                context, Protection(current, in_window, turn_thinking=turn_thinking)
            ),
        )
    for pass_context in passes:
        for step in steps:
            if context.under_target(total):
                break
            name = str(getattr(step, "name", type(step).__name__))
            t0 = time.perf_counter()
            ran = await _run_step(
                step, name, current, pass_context, policy, failures, insertable, added_here
            )
            if ran is None:
                continue
            result, stats = ran
            after = meter.total(result)
            step_reports.append(
                StepReport(
                    step=name,
                    tokens_before=total,
                    tokens_after=after,
                    messages_removed=stats.removed,
                    messages_changed=stats.changed,
                    messages_added=stats.added,
                    changes_reverted=stats.reverted,
                    seconds=time.perf_counter() - t0,
                )
            )
            current, total = result, after

    if total > limits.target_tokens:
        still = policy.if_still_too_long
        if still == "raise":
            raise ModelContextOverflow(
                f"compressed to {total} tokens, still over the target {limits.target_tokens}; "
                f"protected messages alone are {protected_tokens} tokens",
                tokens=total,
                limit=limits.target_tokens,
            )
        if still == "cut":
            current, total = _cut_protected(current, context, total)
            action = "cut"
        elif still == "keep":
            action = "keep"
            if model_window is not None and total > model_window:
                # the window is a hard limit: the newest content is cut, as the last resort
                current, total = _cut_protected(
                    current, context, total, goal=min(model_window, limits.threshold_tokens)
                )
                action = "cut"
        else:
            name = str(getattr(still, "name", type(still).__name__))
            action = f"step:{name}"
            last = _relaxed(current, context)
            ran = await _run_step(
                still, name, current, last, policy, failures, insertable, added_here
            )
            if ran is not None:
                current = ran[0]
                total = meter.total(current)

    if total >= tokens_before:
        # never bigger, and never changed for nothing: what the steps added (a note, a
        # marker) costs at least what they removed
        current, total = original, tokens_before
    current, total = await _under_threshold(
        current,
        total,
        limits.threshold_tokens,
        steps,
        context,
        policy,
        failures,
        insertable,
        step_reports,
    )
    # write the saved tool results that the final list still names (and only those)
    current, total = await commit_saves(context, original, current, total, policy, failures)
    if same_objects(current, original):
        # nothing shrank: the input goes as it came, and the report does not say otherwise
        return untouched(
            "nothing_to_compress",
            protected_tokens=protected_tokens,
            protected_by=protected_by(original, protection, meter.of),
            steps=tuple(step_reports),
            failures=tuple(failures),
            if_still_too_long=action,
            summary_cost_usd=context.summary_cost_usd,
            summary_probes=context.summary_probes,
            summary_probes_found=context.summary_probes_found,
            summary_invalid_replies=context.summary_invalid_replies,
        )
    traced = trace(original, current)
    return current, CompressionReport(
        tokens_before=tokens_before,
        tokens_after=total,
        threshold_tokens=limits.threshold_tokens,
        target_tokens=limits.target_tokens,
        messages_before=n_before,
        messages_after=len(current),
        messages_removed=traced.removed,
        messages_changed=traced.changed(original),
        messages_added=traced.n_added,
        protected_tokens=protected_tokens,
        protected_by=protected_by(original, protection, meter.of),
        steps=tuple(step_reports),
        failures=tuple(failures),
        if_still_too_long=action,
        summary_cost_usd=context.summary_cost_usd,
        seconds=time.perf_counter() - started,
        summary_probes=context.summary_probes,
        summary_probes_found=context.summary_probes_found,
        summary_invalid_replies=context.summary_invalid_replies,
    )


async def _under_threshold(
    current: list[Message],
    total: int,
    threshold: int,
    steps: Sequence[CompressionStep],
    context: StepContext,
    policy: CompressionPolicy,
    failures: list[StepFailure],
    insertable: Callable[[Message], bool] | None,
    step_reports: list[StepReport],
) -> tuple[list[Message], int]:
    """The final guard: never over the threshold while something that may go is still there.

    When the steps (and ``if_still_too_long``) left ``current`` over ``threshold`` with a
    unit of the caller's that the compression's protection lets go still in it (a tool round
    ``RemoveOldMessages`` kept for its ``keep_last`` or on that edge, a unit of the recency
    window), the pipeline's own ``RemoveOldMessages`` runs once more with ``keep_last=0`` and
    the threshold as its target: the oldest unprotected units go, only as many as needed,
    each run leaving its note (an earlier note next to a run is folded into it). What stays:
    the protected messages, the task (the step's ``keep_first``: pin what else must stay) and
    the notes. It is kept only when it is smaller (a note costing more than the units it
    stands for is no gain). A pipeline without ``RemoveOldMessages`` was chosen not to drop
    history: nothing goes here. The run is reported as a step of its own."""
    if total <= threshold:
        return current, total
    drop = next((s for s in steps if isinstance(s, RemoveOldMessages)), None)
    if drop is None or not any(
        not u.protected and not all(is_own(m) for m in u.messages) for u in context.units(current)
    ):
        return current, total
    guard = _SharedCostContext(context, context.protection)
    guard.target_tokens = threshold
    t0 = time.perf_counter()
    step = dataclasses.replace(drop, keep_last=0)
    ran = await _run_step(step, drop.name, current, guard, policy, failures, insertable)
    if ran is None:
        return current, total
    result, stats = ran
    after = context.meter.total(result)
    if after >= total:
        return current, total
    step_reports.append(
        StepReport(
            step=drop.name,
            tokens_before=total,
            tokens_after=after,
            messages_removed=stats.removed,
            messages_changed=stats.changed,
            messages_added=stats.added,
            changes_reverted=stats.reverted,
            seconds=time.perf_counter() - t0,
        )
    )
    return result, after
