"""The engine: run a policy's steps over a message list, under the invariant guard."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from agent_adapter.context._text import fit_message
from agent_adapter.context.invariants import _guard, align
from agent_adapter.context.policy import CompressionPolicy
from agent_adapter.context.report import CompressionReport, SkipReason, StepFailure, StepReport
from agent_adapter.context.steps._base import StepContext
from agent_adapter.context.tokens import TokenMeter
from agent_adapter.context.units import Protection
from agent_adapter.errors import ConfigError, ModelContextOverflow
from agent_adapter.messages import Message

__all__ = ["compress", "compress_for", "compress_for_sync", "validate_messages"]

_T = TypeVar("_T")

#: A protected text cut by if_still_too_long="cut" keeps at least this many tokens.
_MIN_CUT_TOKENS = 200


def validate_messages(messages: object) -> list[Message]:
    """``messages`` checked as a conversation; a new list of the same objects.

    Rules (the ones every provider enforces, OpenAI Chat Completions and Anthropic Messages
    alike): a tool result answers a call that an earlier assistant message made and that no
    earlier result answered; every call is answered before the next user message. Only the
    newest round may still wait for results (a pending call at the end). A reused call id
    answers the latest call that made it.

    Raises:
        ConfigError: not a list; an item that is not a Message (naming its index); a tool
            result answering no open call (naming index and ``tool_call_id``); a call left
            without its result (naming the assistant message's index and the call id).
    """
    if not isinstance(messages, list | tuple):
        raise ConfigError(f"messages must be a list of Message, got {type(messages).__name__}")
    open_calls: dict[str, int] = {}  # call id -> index of the assistant message making it
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            raise ConfigError(f"messages[{i}] is {type(m).__name__}, not a Message")
        if m.role == "tool":
            if open_calls.pop(m.tool_call_id or "", None) is None:
                raise ConfigError(
                    f"messages[{i}].tool_call_id {m.tool_call_id!r} answers no open tool call "
                    "(no earlier call makes it, or an earlier result already answered it)"
                )
            continue
        if m.role == "user" and open_calls:
            _unanswered(open_calls, before=i)
        for call in m.tool_calls:
            open_calls[call.id] = i
    if open_calls:
        last_call = max(open_calls.values())
        if any(m.role != "tool" for m in messages[last_call + 1 :]) or any(
            j != last_call for j in open_calls.values()
        ):
            _unanswered(open_calls, before=len(messages))
    return list(messages)


def _unanswered(open_calls: dict[str, int], *, before: int) -> None:
    call_id, j = min(open_calls.items(), key=lambda kv: kv[1])
    where = f"messages[{before}]" if before >= 0 else "the end"
    raise ConfigError(
        f"messages[{j}].tool_calls: call {call_id!r} has no tool result before {where}; every "
        "call must be answered (only the newest round may be pending)"
    )


def _latest_user(messages: Sequence[Message]) -> Message | None:
    return next((m for m in reversed(messages) if m.role == "user"), None)


def _cut_protected(
    messages: list[Message], context: StepContext, total: int
) -> tuple[list[Message], int]:
    """if_still_too_long="cut": the biggest protected tool results and assistant texts cut
    head-and-tail (never system messages, the latest user message, calls or ids)."""
    latest = _latest_user(messages)
    out = list(messages)
    order = sorted(
        (
            i
            for i, m in enumerate(out)
            if m.role in ("tool", "assistant") and m is not latest and m.text
        ),
        key=lambda i: -context.message_tokens(out[i]),
    )
    for i in order:
        if context.under_target(total):
            break
        m = out[i]
        before = context.message_tokens(m)
        goal = max(_MIN_CUT_TOKENS, before - (total - context.target_tokens))
        if goal >= before:
            continue
        cut = fit_message(m, goal, context.message_tokens, "both")
        out[i] = cut
        total += context.message_tokens(cut) - before
    return out, total


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
    if not isinstance(policy, CompressionPolicy):
        raise ConfigError(f"policy must be a CompressionPolicy, got {type(policy).__name__}")
    started = time.perf_counter()
    current = validate_messages(messages)
    original = current
    limits = policy.limits(model_max_tokens)
    meter = TokenMeter(policy.token_counter)
    tokens_before = meter.total(current)
    n_before = len(current)

    def untouched(skipped: SkipReason, **kw: Any) -> tuple[list[Message], CompressionReport]:
        same = messages if isinstance(messages, list) else current
        return same, CompressionReport(
            tokens_before=tokens_before,
            tokens_after=tokens_before,
            threshold_tokens=limits.threshold_tokens,
            target_tokens=limits.target_tokens,
            messages_before=n_before,
            messages_after=n_before,
            skipped=skipped,
            seconds=time.perf_counter() - started,
            **kw,
        )

    if tokens_before <= limits.threshold_tokens and not force:
        return untouched("under_threshold")
    if tokens_before <= limits.target_tokens:
        return untouched("under_target")
    protection = Protection(current, pinned)
    protected_tokens = sum(meter.of(m) for m in protection.protected(current))
    context = StepContext(
        target_tokens=limits.target_tokens,
        threshold_tokens=limits.threshold_tokens,
        protection=protection,
        meter=meter,
        ctx=ctx,
    )
    if protected_tokens >= tokens_before and policy.if_still_too_long == "keep":
        return untouched(
            "nothing_to_compress", protected_tokens=protected_tokens, if_still_too_long="keep"
        )
    step_reports: list[StepReport] = []
    failures: list[StepFailure] = []
    total = tokens_before
    for step in policy.resolved_steps():
        if context.under_target(total):
            break
        name = str(getattr(step, "name", type(step).__name__))
        t0 = time.perf_counter()
        try:
            candidate = await step.apply(list(current), context)
            result, stats = _guard(
                current,
                candidate,
                protection,
                step=name,
                allow_system_prompt_shortening=bool(getattr(step, "include_system_prompt", False)),
            )
        except Exception as exc:  # a step's bug or outage never kills the run in "skip"
            if policy.on_step_error == "raise":
                raise
            failures.append(StepFailure(name, type(exc).__name__))
            continue
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

    action = ""
    if not context.under_target(total):
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
        else:
            action = f"step:{getattr(still, 'name', type(still).__name__)}"
            latest = _latest_user(current)
            relaxed = Protection(current, lambda m: m is latest, protect_newest_turn=False)
            relaxed_context = StepContext(
                target_tokens=limits.target_tokens,
                threshold_tokens=limits.threshold_tokens,
                protection=relaxed,
                meter=meter,
                ctx=ctx,
            )
            try:
                candidate = await still.apply(list(current), relaxed_context)
                current, _ = _guard(current, candidate, relaxed, step=action)
            except Exception as exc:
                if policy.on_step_error == "raise":
                    raise
                failures.append(StepFailure(action[5:], type(exc).__name__))
            total = meter.total(current)
            context.summary_cost_usd += relaxed_context.summary_cost_usd

    slot, added = align(original, current)
    n_removed = sum(m is None for m in slot)
    n_changed = sum(m is not None and m is not o for m, o in zip(slot, original, strict=True))
    return current, CompressionReport(
        tokens_before=tokens_before,
        tokens_after=total,
        threshold_tokens=limits.threshold_tokens,
        target_tokens=limits.target_tokens,
        messages_before=n_before,
        messages_after=len(current),
        messages_removed=n_removed,
        messages_changed=n_changed,
        messages_added=sum(len(v) for v in added.values()),
        protected_tokens=protected_tokens,
        steps=tuple(step_reports),
        failures=tuple(failures),
        if_still_too_long=action,
        summary_cost_usd=context.summary_cost_usd,
        seconds=time.perf_counter() - started,
    )


async def compress_for(
    messages: Sequence[Any],
    policy: CompressionPolicy,
    *,
    format: str = "auto",
    pinned: Callable[[Any], bool] | None = None,
    model_max_tokens: int | None = None,
    ctx: Any = None,
) -> tuple[list[Any], CompressionReport]:
    """compress() for any message format: the compressed list in that format, and a report.

    Messages kept as they were come back as the same objects; nothing calls the main model.
    Under the threshold the caller's own list object comes back. ``pinned(native)`` marks
    natives no step may change or remove (for ``agent_adapter``, ``pinned(message)``).

    Raises:
        ConfigError: as compress and convert.
        MissingDependency: as convert.
    """
    from agent_adapter.context.formats._registry import convert, detect_format

    name = detect_format(messages) if format == "auto" else format
    if name == "agent_adapter":
        return await compress(
            messages, policy, pinned=pinned, model_max_tokens=model_max_tokens, ctx=ctx
        )
    conversion = convert(messages, name, pinned=pinned)
    result, report = await compress(
        conversion.messages,
        policy,
        pinned=conversion.is_pinned if pinned is not None else None,
        model_max_tokens=model_max_tokens,
        ctx=ctx,
    )
    return conversion.back(result), report


def compress_for_sync(
    messages: Sequence[Any],
    policy: CompressionPolicy,
    *,
    format: str = "auto",
    pinned: Callable[[Any], bool] | None = None,
    model_max_tokens: int | None = None,
    ctx: Any = None,
) -> tuple[list[Any], CompressionReport]:
    """compress_for for sync code (Flask, Celery, scripts, a sync LangGraph node).

    With no event loop running in this thread it uses ``asyncio.run``; inside a running loop
    (a notebook, an async framework calling sync code) it runs in a worker thread with its
    own loop, so it never deadlocks.

    Raises:
        ConfigError: as compress_for.
        MissingDependency: as compress_for.
    """

    async def main() -> tuple[list[Any], CompressionReport]:
        # a closure without arguments: asyncio formats the task's coroutine (and so its
        # arguments, the whole message list) in debug paths; this keeps that cheap
        return await compress_for(
            messages,
            policy,
            format=format,
            pinned=pinned,
            model_max_tokens=model_max_tokens,
            ctx=ctx,
        )

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_to_end(main())
    context = contextvars.copy_context()  # the caller's context variables (tracing, ids)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, _run_to_end, main()).result()


def _run_to_end(coro: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(coro)`` without its SIGINT handler, whose setup formats the running task
    (a few hundred microseconds a call); leftover tasks, async generators and the default
    executor are shut down the same way."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        try:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()
