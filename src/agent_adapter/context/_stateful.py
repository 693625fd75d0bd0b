"""compress_for with a conversation's compaction state (:class:`CompactionStates`): the
state found by its key and what it remembers, the call started from the request sent before
(compact once, then append), the hold after a compaction that stopped over the target, the
compaction prepared in the background swapped in, and what was sent remembered. The one list's
compression itself is :mod:`._compress_one`'s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._run import emit_event
from agent_adapter.context._background import PreparedCompaction, writes_with_model
from agent_adapter.context._compress_one import (
    _compress_list,
    _detected,
    _format_key,
    _messages_of,
    _Options,
)
from agent_adapter.context._engine import _WouldCompress, compress
from agent_adapter.context._policy import CompressionPolicy, aimed_at, conversation_depth
from agent_adapter.context._report import CompressionReport, untouched_report
from agent_adapter.context._state import (
    CompactionStates,
    Found,
    StateEntry,
    conversation_key,
    shapes_of,
)
from agent_adapter.context._steps._base import _json_safe
from agent_adapter.context._steps._continuation import Continuation
from agent_adapter.context._tokens import TokenMeter
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._memo import snapshot

__all__ = ["stateful_compress"]


async def stateful_compress(
    messages: Sequence[Any],
    policy: CompressionPolicy,
    *,
    format: str | Converter[Any] = "auto",
    pinned: Callable[[Any], bool] | None = None,
    model_max_tokens: int | None = None,
    ctx: Any = None,
    conversation: str | None = None,
    states: CompactionStates | Literal[False] | None = None,
    force: bool = False,
    turn_thinking: bool | None = None,
    key_policy: CompressionPolicy | None = None,
    continuation: Continuation | None = None,
    background: bool = False,
) -> tuple[list[Any], CompressionReport]:
    """:func:`compress_for`, and what ``CompressingModel`` needs besides: ``force`` (compress
    even at or under the threshold, after a provider's overflow error) and ``turn_thinking``
    (whether Anthropic's thinking rule applies to ``agent_adapter`` messages; ``None``: the
    format's own, Anthropic's for ``agent_adapter``) and ``key_policy`` (the policy the
    state is kept under, when ``policy`` is a per-call copy of it: a calibrated counter) and
    ``continuation`` (the conversation's own request, which a summary request may continue:
    :mod:`agent_adapter.context._steps._continuation`) and ``background`` (the caller's loop
    outlives the call: a compaction may be prepared in the background, see
    :mod:`agent_adapter.context._background`).

    The phases: the arguments checked, the format detected, the conversation's state found
    and where this call starts from (:func:`_start`), the list compressed under its hold,
    and what was sent remembered (:func:`_remember_as_sent`, :func:`_remember_compressed`)."""
    store = _store_of(states, conversation)
    auto = isinstance(format, str) and format == "auto"
    if auto and isinstance(messages, list | tuple) and not messages:
        return await compress(messages, policy, model_max_tokens=model_max_tokens, ctx=ctx)
    name, snap, native = _detected(messages, format, auto=auto)
    fmt = _format_key(name)
    opts = _Options(pinned, model_max_tokens, ctx, force, turn_thinking, continuation=continuation)
    if store is None or not isinstance(messages, list | tuple) or not messages:
        return await _compress_list(messages, policy, name, snap, opts)
    key = _state_key(messages, fmt, key_policy or policy, opts, conversation)
    found = store.find(key, messages, fmt)
    entry = None if found is None else found.entry
    start = _start(store, key, found, messages, snap, native=native)
    if start.again is not None and entry is not None:
        # the same history again: the same request (a compression is not run again on its
        # own output, which could only move its cuts)
        return start.again, _again(entry, start.again, name, policy, model_max_tokens)
    hold = 0 if entry is None else entry.hold_until
    growth = _growth(messages, name, policy) if conversation_depth(policy) == "cost" else None
    continuation = opts.continuation
    if continuation is not None and start.previous:  # "the last request", as remembered
        if name == "agent_adapter":
            continuation = continuation.after_sent(start.previous)
        elif not continuation.sent_natives:  # the owner's own word on it comes first
            continuation = continuation.after_sent_natives(start.previous)
    call = dataclasses.replace(opts, hold_until=hold, growth=growth, continuation=continuation)
    slot = None if found is None else found.slot
    prepared = None
    if background and not force and store.prepare_at is not None and writes_with_model(policy):
        prepared = _Background(store, key, slot, fmt, messages, start, entry, name, policy, call)
        done = await prepared.swap()
        if done is not None:
            return done
    out, report = await _compress_list(start.base, policy, name, start.snap, call)
    if report.tokens_before > report.threshold_tokens and report.skipped not in (
        "held",
        "deferred",
    ):
        # a compaction was due: judged by where it left the request (see _hold)
        hold = _hold(report, policy.model_max_tokens or model_max_tokens)
    memory = _Memory(store, key, slot, fmt, messages, hold)
    if out is start.base or (start.base is messages and out is messages):
        report = _remember_as_sent(memory, start, entry, report, name, policy)
    else:
        report = _remember_compressed(memory, out, start.previous, report, name, policy)
    if prepared is not None:
        await prepared.start(out, report)
    return out, report


def _growth(
    messages: Sequence[Any], name: str | Converter[Any], policy: CompressionPolicy
) -> Callable[[], tuple[int, int]]:
    """For ``depth="cost"``: ``() -> (tokens, calls)`` of the caller's whole history (the
    conversation's own record of growth: what it sent, not the compacted request), counted
    only when a compaction is due."""

    def count() -> tuple[int, int]:
        loaded = _messages_of(messages, len(messages), name)
        calls = sum(1 for m in loaded if m.role == "assistant")
        return TokenMeter(policy.token_counter).total(loaded), calls

    return count


class _Background:
    """A conversation's compaction prepared in the background, at one call (see
    :mod:`agent_adapter.context._background`): :meth:`swap` before the call's own
    compression, :meth:`start` after it."""

    def __init__(
        self,
        store: CompactionStates,
        key: str,
        slot: int | None,
        fmt: str,
        messages: Sequence[Any],
        start: _Start,
        entry: StateEntry | None,
        name: str | Converter[Any],
        policy: CompressionPolicy,
        opts: _Options,
    ) -> None:
        self.store, self.key, self.slot, self.fmt = store, key, slot, fmt
        self.messages, self.start_, self.entry = messages, start, entry
        self.name, self.policy, self.opts = name, policy, opts
        self.window = policy.model_max_tokens or opts.model_max_tokens
        self.limits = policy.limits(self.window)

    async def _emit(self, event: str, **data: Any) -> None:
        await emit_event(self.opts.ctx, f"compaction.{event}", **data)

    async def _drop(self, job: PreparedCompaction, reason: str) -> None:
        self.store.drop_prepared(self.key, job)
        await self._emit("discard", reason=reason, messages=len(job.snapshot))

    async def _probe(self, base: Sequence[Any], snap: Any) -> tuple[bool, int]:
        """Whether a compaction of ``base`` is due now (over the threshold, not held), and
        its tokens."""
        probe = dataclasses.replace(self.opts, probe=True, continuation=None)
        try:
            _, report = await _compress_list(base, self.policy, self.name, snap, probe)
        except _WouldCompress as due:
            return True, due.tokens
        return False, report.tokens_before

    async def swap(self) -> tuple[list[Any], CompressionReport] | None:
        """The request with the prepared compaction swapped in for the snapshot's prefix,
        or the request as it is while the compaction is not ready (under the window);
        ``None``: the call compresses as usual (nothing prepared, nothing due, or the
        prepared compaction discarded)."""
        job = self.store.prepared(self.key)
        if job is None:
            return None
        base = self.start_.base
        if not job.on_this_loop():
            await self._drop(job, "loop")
            return None
        if not job.extended_by(base):
            await self._drop(job, "diverged")
            return None
        due, tokens = await self._probe(base, self.start_.snap)
        if not due:
            return None
        result = job.result()
        if result is None and not job.task.done():
            if self.window is not None and tokens <= self.window:
                return await self._as_it_is(tokens)
            result = await job.wait()
        if result is None:
            await self._drop(job, "failed")
            return None
        compacted, prepared = result
        if len(compacted) == len(job.snapshot) and all(
            a is b for a, b in zip(compacted, job.snapshot, strict=True)
        ):
            await self._drop(job, "empty")
            return None
        tail = list(base[len(job.snapshot) :])
        out = [*compacted, *tail]
        _, after = await self._probe(out, None)
        if after > self.limits.threshold_tokens:  # the tail grew too long for the swap to help
            await self._drop(job, "tail")
            return None
        self.store.drop_prepared(self.key, job)
        report = dataclasses.replace(
            prepared,
            tokens_before=tokens,
            tokens_after=after,
            threshold_tokens=self.limits.threshold_tokens,
            target_tokens=self.limits.target_tokens,
            messages_before=len(base),
            messages_after=len(out),
        )
        memory = _Memory(
            self.store, self.key, self.slot, self.fmt, self.messages, _hold(report, self.window)
        )
        report = _remember_compressed(
            memory, out, self.start_.previous, report, self.name, self.policy
        )
        await self._emit("swap", snapshot=len(job.snapshot), tail=len(tail), tokens=after)
        return out, report

    async def _as_it_is(self, tokens: int) -> tuple[list[Any], CompressionReport]:
        """The request as it is (the prepared compaction is not ready; under the window)."""
        base = self.start_.base
        held = dataclasses.replace(self.opts, hold_until=tokens, continuation=None)
        _, report = await _compress_list(base, self.policy, self.name, self.start_.snap, held)
        report = dataclasses.replace(report, skipped="preparing")
        hold = self.entry.hold_until if self.entry is not None else 0
        memory = _Memory(self.store, self.key, self.slot, self.fmt, self.messages, hold)
        report = _remember_as_sent(memory, self.start_, self.entry, report, self.name, self.policy)
        out = base if isinstance(base, list) else list(base)
        return out, report

    async def start(self, sent: list[Any], report: CompressionReport) -> None:
        """Start preparing the next compaction of ``sent`` (this call's request) when it is
        at ``prepare_at`` of the threshold or more, under it, and none is prepared yet. A
        request held after a compaction that stopped over the target (what no step may
        touch was over it) prepares nothing: what its next compaction can free depends on
        turns that are still the newest, so it compacts at the hold's end as usual."""
        share = self.store.prepare_at
        if (
            share is None
            or report.skipped != "under_threshold"
            or report.tokens_before < share * report.threshold_tokens
            or self.store.prepared(self.key) is not None
        ):
            return
        gap = max(report.threshold_tokens - report.target_tokens, 1)
        goal = max(1, report.tokens_before - gap)
        policy = aimed_at(self.policy, goal)
        shot = tuple(sent)
        snap = snapshot(shot) if shot and not isinstance(shot[0], Message) else None
        opts = dataclasses.replace(self.opts, force=True, hold_until=0)

        async def prepare() -> tuple[list[Any], CompressionReport]:
            done = await _compress_list(list(shot), policy, self.name, snap, opts)
            await self._emit("ready", messages=len(shot), tokens=done[1].tokens_after)
            return done

        loop = asyncio.get_running_loop()
        task = loop.create_task(prepare())
        job = PreparedCompaction(shot, report.tokens_before, task, loop)
        self.store.keep_prepared(self.key, job)
        task.add_done_callback(_quiet)
        await self._emit("prepare", messages=len(shot), tokens=report.tokens_before)


def _quiet(task: asyncio.Task[Any]) -> None:
    """A background compaction's failure is read when it is used (and then discarded), never
    logged as an unretrieved exception."""
    if not task.cancelled():
        task.exception()


def _store_of(
    states: CompactionStates | Literal[False] | None, conversation: str | None
) -> CompactionStates | None:
    """The store a call's state is kept in (``None``: no memory), its arguments checked."""
    if states is None or states is False:
        store = None
    elif isinstance(states, CompactionStates):
        store = states
    else:
        raise ConfigError(
            f"compress_for: states must be a CompactionStates or False, got {type(states).__name__}"
        )
    if conversation is not None and (not isinstance(conversation, str) or not conversation):
        raise ConfigError(
            f"compress_for: conversation must be a non-empty str, got {conversation!r}"
        )
    return store


def _state_key(
    messages: Sequence[Any],
    fmt: str,
    policy: CompressionPolicy,
    opts: _Options,
    conversation: str | None,
) -> str:
    """The key a conversation's state is kept under: the conversation, the format, the
    policy's settings and, since what may go depends on it, ``pinned`` (by identity)."""
    key = conversation_key(messages, fmt, opts.ctx, conversation)
    key = f"{key}|{_policy_key(policy, opts.model_max_tokens)}"
    if opts.pinned is not None:  # what may go depends on it: its own state (by identity)
        key = f"{key}|pinned:{_json_safe(opts.pinned)}"
    return key


@dataclasses.dataclass(frozen=True, slots=True)
class _Start:
    """Where a call with a conversation's state starts from.

    Attributes:
        base: the list compressed: the caller's, or the remembered request and what was
            appended to it.
        base_from: for each of ``base``'s natives, its index in the caller's list (``-1``:
            one of ours); ``None`` when not known yet.
        previous: the previous request, as this call's objects (``()``: none known).
        snap: ``base``'s snapshot for the memo.
        again: the remembered request, to send again for the very same history.
    """

    base: Sequence[Any]
    base_from: list[int] | None
    previous: Sequence[Any]
    snap: Any
    again: list[Any] | None = None


def _start(
    store: CompactionStates,
    key: str,
    found: Found | None,
    messages: Sequence[Any],
    snap: Any,
    *,
    native: bool,
) -> _Start:
    """Where this call starts from (see :class:`_Start`): a history that extends the one
    remembered, one that holds what was sent (the caller kept our request as its history),
    or a new, edited, rewound or branched one, compressed fresh."""
    entry = None if found is None else found.entry
    everything = list(range(len(messages)))
    if found is not None and entry is not None and found.how == "extends":
        request, request_from = entry.request(messages)
        previous = request[: len(entry.sent)]
        if entry.compacted and len(messages) == len(entry.original):
            return _Start(messages, None, previous, snap, again=request)
        if entry.compacted:
            return _Start(request, request_from, previous, snapshot(request) if native else None)
        return _Start(messages, everything, previous, snap)  # sent as it came: the caller's
    if entry is not None:
        # the caller kept what we sent as its history (pydantic-ai, cliver_core): it is sent
        # as it is, and the previous request is its prefix
        return _Start(messages, everything, messages[: len(entry.sent)], snap)
    last = store.get(key)
    return _Start(messages, None, () if last is None else _previous_request(last), snap)


@dataclasses.dataclass(frozen=True, slots=True)
class _Memory:
    """Where a call's state goes: the store, its key and branch slot, and what the state
    holds besides what was sent."""

    store: CompactionStates
    key: str
    slot: int | None
    fmt: str
    messages: Sequence[Any]
    hold: int

    def put(self, sent: Sequence[Any], sent_from: Sequence[int], tokens: int) -> None:
        """Remember ``sent`` (``sent_from``: each native's index in the caller's list, ``-1``
        for ours) as the request for the caller's ``messages``."""
        state = StateEntry(
            self.fmt,
            tuple(self.messages),
            tuple(sent),
            tuple(sent_from),
            tokens,
            shapes=shapes_of(self.messages),
            hold_until=self.hold,
        )
        self.store.put(self.key, state, slot=self.slot)


def _remember_as_sent(
    memory: _Memory,
    start: _Start,
    entry: StateEntry | None,
    report: CompressionReport,
    name: str | Converter[Any],
    policy: CompressionPolicy,
) -> CompressionReport:
    """The base was sent as it came: remembered so the next call appends to it; the
    report counts the prefix it shares with the previous request."""
    messages = memory.messages
    base_from = list(range(len(messages))) if start.base_from is None else start.base_from
    if entry is not None:
        prefix = _prefix_tokens(report.tokens_before, start.base, len(entry.sent), name, policy)
        report = dataclasses.replace(report, prefix_tokens=prefix)
    memory.put(start.base, base_from, report.tokens_after)
    return report


def _remember_compressed(
    memory: _Memory,
    out: list[Any],
    previous: Sequence[Any],
    report: CompressionReport,
    name: str | Converter[Any],
    policy: CompressionPolicy,
) -> CompressionReport:
    """The list was compressed: ``out`` remembered as the request; the report counts the
    prefix it shares with the previous request."""
    where = {id(m): j for j, m in enumerate(memory.messages)}
    memory.put(out, [where.get(id(n), -1) for n in out], report.tokens_after)
    if previous:
        shared = _shared_prefix(previous, out)
        prefix = _prefix_tokens(None, out, shared, name, policy)
        report = dataclasses.replace(report, prefix_tokens=prefix)
    return report


def _hold(report: CompressionReport, window: int | None) -> int:
    """The hold a compaction leaves (see ``StateEntry.hold_until``): none when it reached
    the target (the threshold is then at least the gap away); else the request may grow by
    the gap between threshold and target (with a derived depth, at most the fixed depth's
    quarter of the threshold) before the next compaction (never past the window,
    when known), whether it freed the gap or not: a compaction that stopped just under the
    threshold, or over it, never makes the next call compact again. Judged by what the
    request is after it (``tokens_after``, in the policy's counter: for ``CompressingModel``
    calibrated to what the provider reported), not by what the steps meant to do."""
    if report.tokens_after <= report.target_tokens:
        return 0
    gap = report.threshold_tokens - report.target_tokens
    if report.depth == "cost":
        # a derived target (down to a tenth of the threshold) would let the request grow
        # to almost twice the threshold before the next compaction (a break test:
        # pylint-7080 at 10,000 held 21 calls up to 18,931 tokens): the fixed depth's gap
        # (the threshold less its 3/4 target) bounds the hold, as it does at that depth
        gap = min(gap, report.threshold_tokens // 4)
    hold = report.tokens_after + max(gap, 1)
    return hold if window is None else min(hold, window)


def _previous_request(entry: StateEntry) -> list[Any]:
    """The request ``entry`` remembers, as the objects that were sent (``[]`` when the
    caller's natives of it are not known here: a state read from a shared store)."""
    known = entry.matched()
    if len(known) != len(entry.original):
        return []
    return [
        known[j] if j >= 0 else native
        for native, j in zip(entry.sent, entry.sent_from, strict=True)
    ]


def _again(
    entry: StateEntry,
    request: list[Any],
    name: str | Converter[Any],
    policy: CompressionPolicy,
    model_max_tokens: int | None,
) -> CompressionReport:
    """The report of sending a remembered request again for the very same history: nothing
    ran, all of it is the previous request's prefix, and it says so (``"sent_again"``, as
    ``CompressionReport.skipped`` documents: not "under the threshold", which would call the
    caller's own history, the list that was compressed, unchanged)."""
    limits = policy.limits(model_max_tokens)
    n = len(_messages_of(request, len(request), name))
    tokens = entry.tokens
    return untouched_report(
        tokens,
        limits.threshold_tokens,
        limits.target_tokens,
        n,
        "sent_again",
        prefix_tokens=tokens,
    )


#: The keys of the last policies seen (by identity; the policies are held so an id is never
#: reused while remembered): a key costs the steps' config() and a hash.
_POLICY_KEYS: dict[tuple[int, int | None], tuple[CompressionPolicy, str]] = {}
_POLICY_KEYS_MAX = 64


def _policy_key(policy: CompressionPolicy, model_max_tokens: int | None) -> str:
    """What of the policy a remembered request depends on: its limits, its steps' settings
    (objects, such as a step's store, by identity), counter and fallbacks; a state made
    under one policy is never used under another."""
    if not isinstance(policy, CompressionPolicy):
        return "?"
    at = (id(policy), model_max_tokens)
    hit = _POLICY_KEYS.get(at)
    if hit is not None and hit[0] is policy:
        return hit[1]
    key = _policy_digest(policy, model_max_tokens)
    if len(_POLICY_KEYS) >= _POLICY_KEYS_MAX:
        _POLICY_KEYS.pop(next(iter(_POLICY_KEYS)), None)
    _POLICY_KEYS[at] = (policy, key)
    return key


def _policy_digest(policy: CompressionPolicy, model_max_tokens: int | None) -> str:
    """:func:`_policy_key`, computed."""
    try:
        limits = policy.limits(model_max_tokens)
    except ConfigError:
        return "?"
    parts: list[Any] = [limits.threshold_tokens, limits.target_tokens, policy.recent_turns]
    depth = conversation_depth(policy)
    if depth != "fixed":  # a fixed depth keys as before (the states stay valid)
        parts.append([depth, repr(policy.cache_price)])
    for step in [*policy.resolved_steps(), policy.if_still_too_long]:
        config = getattr(step, "config", None)
        parts.append(config() if callable(config) else _json_safe(step))
    parts.append(_json_safe(policy.token_counter))
    text = json.dumps(parts, sort_keys=True, default=repr)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def _shared_prefix(before: Sequence[Any], after: Sequence[Any]) -> int:
    """How many natives ``after`` opens with that are ``before``'s, in place."""
    n = 0
    for a, b in zip(before, after, strict=False):
        if a is not b:
            break
        n += 1
    return n


def _prefix_tokens(
    total: int | None,
    natives: Sequence[Any],
    n: int,
    name: str | Converter[Any],
    policy: CompressionPolicy,
) -> int:
    """Tokens of ``natives[:n]`` with the policy's counter (``total`` when that is all)."""
    if n <= 0:
        return 0
    if total is not None and n >= len(natives):
        return total
    return TokenMeter(policy.token_counter).total(_messages_of(natives, n, name))
