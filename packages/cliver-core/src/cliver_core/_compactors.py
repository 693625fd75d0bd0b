"""Ready compactors: :class:`LlmCompactor` (a summarizer model) and :class:`PolicyCompactor`
(any :class:`agent_adapter.context.CompressionPolicy`). Core installs neither; pass one as
``context_compactor=``.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast, runtime_checkable

from agent_adapter import ConfigError, Ledger, RunContext, Usage
from agent_adapter.context import (
    CompactionStates,
    CompressionPolicy,
    CompressionReport,
)
from agent_adapter.context._background import writes_with_model
from agent_adapter.context._stateful import stateful_compress
from cliver_core._compaction import CompactionContext, CompactionPlan, CompactionSplit
from cliver_core._messages import CLIverMessage, CLIverResponse, UsageInfo

__all__ = ["SUMMARIZE_PROMPT", "LlmCompactor", "PolicyCompactor", "Summarizer"]

#: The instruction LlmCompactor puts before the rendered older turns.
SUMMARIZE_PROMPT = (
    "Summarize the earlier part of this agent run for the same assistant. "
    "Keep facts, decisions, tool results that still matter, and open tasks. "
    "Be compact and do not invent."
)


@runtime_checkable
class Summarizer(Protocol):
    """Anything with an async ``chat(prompt)`` returning a :class:`CLIverResponse` (usually a
    second :class:`~cliver_core.AgentCore` on a cheaper model)."""

    async def chat(self, user_input: str, /) -> CLIverResponse:
        """The summary of ``user_input``."""
        ...


class LlmCompactor:
    """Summarize older turns with a model once the previous call's input reaches a threshold.

    Example::

        summarizer = AgentCore(ModelBindings(llm=presets.deepseek(api_key="...")))
        compactor = LlmCompactor(summarizer, threshold_tokens=60_000, keep_turns=2)
        agent = AgentCore(bindings, context_compactor=compactor)

    It triggers when ``last_usage.input_tokens >= threshold_tokens``; it is silent on the
    first iteration (no usage yet) and whenever the history holds no complete older turn.
    The last ``keep_turns`` user turns stay verbatim; the summarized prefix is exactly
    ``split.older``, rendered with ``context.render``. It returns a plan, so the summarizer's
    ``usage_total`` is recorded in the run's total; an empty or missing summary leaves the
    history unchanged (and its usage is still recorded). The summarizer's run is a separate
    run with its own ``run_id`` and events; its failure propagates (catch it in a compactor
    of your own to fall back).

    **Reusing the conversation's cache** (``continue_run=True``, an option: the documented
    contract renders ``split.older`` for ``summarizer.chat``, so that stays the default).
    The summary is asked of the run's own model as a continuation of the run's last request
    (:meth:`CompactionContext.continue_run`: the same system, tools and messages, byte for
    byte, with the instruction appended as a last user message), so the provider reads the
    conversation from its prompt cache instead of a fresh prompt of the rendered turns; the
    summarizer is not called. The plan is the same (``split.older`` replaced by the summary,
    its usage recorded); a reply with no text (the model called a tool) leaves the history
    unchanged, as an empty summary does.

    Args:
        summarizer: an async ``chat(prompt) -> CLIverResponse``.
        threshold_tokens: the previous call's input tokens that trigger a summary.
        keep_turns: user turns kept verbatim (>= 1).
        prompt: the instruction before the rendered turns.
        continue_run: ask the run's own model, continuing its cached conversation (above).
        prepare_at: prepare the summary in the background (an option: the documented
            trigger is the threshold): once the previous call's input reaches this share of
            ``threshold_tokens`` (0.8, say), the summary of ``split.older`` starts while the
            run goes on; the iteration at the threshold plans with it (waiting for it when
            it still runs), keeping exactly the turns from that split's boundary on, the
            new ones too. A history that no longer extends the one summarized (by identity)
            cancels it, never sent; kept turns grown past half the threshold (chars/4 of
            their rendering) discard it (its usage recorded) and the summary is written
            anew. The prepared summaries are this object's, by run id (64 runs at most).

    Raises:
        ConfigError: a bad setting (a ``ValueError``).
    """

    def __init__(
        self,
        summarizer: Summarizer,
        threshold_tokens: int = 60_000,
        keep_turns: int = 2,
        *,
        prompt: str = SUMMARIZE_PROMPT,
        continue_run: bool = False,
        prepare_at: float | None = None,
    ) -> None:
        if prepare_at is not None and (
            isinstance(prepare_at, bool)
            or not isinstance(prepare_at, int | float)
            or not 0 < prepare_at < 1
        ):
            raise ConfigError(
                f"LlmCompactor: prepare_at must be None or a number in (0, 1), got {prepare_at!r}"
            )
        if not isinstance(continue_run, bool):
            raise ConfigError(f"LlmCompactor: continue_run must be a bool, got {continue_run!r}")
        if not callable(getattr(summarizer, "chat", None)):
            raise ConfigError("LlmCompactor: summarizer needs an async chat(prompt) method")
        for name, value, low in (
            ("threshold_tokens", threshold_tokens, 0),
            ("keep_turns", keep_turns, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"LlmCompactor: {name} must be an int >= {low}, got {value!r}")
        self.summarizer = summarizer
        self.threshold_tokens = threshold_tokens
        self.keep_turns = keep_turns
        self.prompt = prompt
        self.continue_run = continue_run
        self.prepare_at = prepare_at
        #: summaries prepared in the background, by run id (this object's own, bounded)
        self._jobs: OrderedDict[str, _Job] = OrderedDict()

    def __repr__(self) -> str:
        return (
            f"LlmCompactor(threshold_tokens={self.threshold_tokens}, keep_turns={self.keep_turns})"
        )

    async def __call__(self, context: CompactionContext) -> CompactionPlan | None:
        """The plan for this iteration, or ``None``."""
        used = context.last_usage
        if used is None:
            return None
        if self.prepare_at is not None:
            prepared = await self._prepared_plan(context, used.input_tokens)
            if prepared is not _NOW:
                return cast(CompactionPlan | None, prepared)
        if used.input_tokens < self.threshold_tokens:
            return None
        split = context.split_at_user_turn(self.keep_turns)
        if not split.older:
            return None
        response = await self._summary(context, split)
        usage = summary_usage(response)
        text = response.message.content if isinstance(response.message.content, str) else None
        if not text or not text.strip():
            context.record_usage(usage)
            return None
        return split.plan(summary=text, usage=usage)

    async def _prepared_plan(self, context: CompactionContext, used: int) -> Any:
        """With ``prepare_at``: under the threshold, start the summary of the older turns
        once the input reaches ``prepare_at`` of it (``None``: no plan now); at the
        threshold, the plan of the prepared summary (waiting for it when it still runs), or
        :data:`_NOW` when there is none to use (the summary is written now)."""
        jobs = self._jobs
        job = jobs.get(context.run_id)
        messages = context.messages
        if job is not None and not job.extended_by(messages):
            jobs.pop(context.run_id, None)
            job.task.cancel()  # the history is no longer the one summarized: never sent
            job = None
        if used < self.threshold_tokens:
            share = self.prepare_at or 1.0
            if job is None and used >= share * self.threshold_tokens:
                split = context.split_at_user_turn(self.keep_turns)
                if split.older:
                    task = asyncio.ensure_future(self._summary(context, split))
                    task.add_done_callback(_quiet)
                    jobs[context.run_id] = _Job(tuple(messages[: split.keep_from + 1]), task)
                    while len(jobs) > _MAX_JOBS:
                        jobs.popitem(last=False)[1].task.cancel()
            return None
        if job is None:
            return _NOW
        jobs.pop(context.run_id, None)
        try:
            response = await asyncio.shield(job.task)
        except asyncio.CancelledError:
            if not job.task.cancelled():
                raise
            return _NOW
        except Exception:  # a failed summary is discarded; the plan path writes one now
            return _NOW
        keep_from = len(job.snapshot) - 1
        usage = summary_usage(response)
        if len(context.render(messages[keep_from:])) / 4 > self.threshold_tokens / 2:
            context.record_usage(usage)  # the kept turns grew past the bound: discarded
            return _NOW
        text = response.message.content if isinstance(response.message.content, str) else None
        if not text or not text.strip():
            context.record_usage(usage)
            return None
        return CompactionPlan(keep_from, text, usage)

    async def _summary(self, context: CompactionContext, split: CompactionSplit) -> Any:
        """The summarizer's response for ``split.older`` (or the run's own model's, with
        ``continue_run``)."""
        if self.continue_run:
            kept = self.keep_turns
            response = await context.continue_run(
                f"{self.prompt}\n\nSummarize the conversation above up to its "
                f"{'last user message' if kept == 1 else f'{kept}th-last user message'}: "
                "from there on it stays verbatim after your summary. Reply with the summary "
                "only, and call no tool."
            )
        else:
            response = await self.summarizer.chat(f"{self.prompt}\n\n{context.render(split.older)}")
        return response


#: ``_prepared_plan``'s answer when no prepared summary is used: the plan path runs now.
_NOW: Any = object()
#: Runs whose prepared summaries an LlmCompactor holds at most (the oldest is cancelled).
_MAX_JOBS = 64


@dataclass(eq=False)
class _Job:
    """A summary prepared in the background: the history up to and including the split's
    first kept message (held by identity), and the summarizer's call."""

    snapshot: tuple[CLIverMessage, ...]
    task: asyncio.Future[Any]

    def extended_by(self, messages: Sequence[CLIverMessage]) -> bool:
        snap = self.snapshot
        return len(messages) >= len(snap) and all(
            a is b for a, b in zip(snap, messages, strict=False)
        )


def _quiet(task: asyncio.Future[Any]) -> None:
    """A prepared summary's failure is read when it is used, never logged unretrieved."""
    if not task.cancelled():
        task.exception()


def _counted(usage: Any) -> bool:
    return any(
        isinstance(n, int) and n > 0
        for n in (getattr(usage, "input_tokens", 0), getattr(usage, "output_tokens", 0))
    )


def summary_usage(response: Any) -> Any:
    """The usage of a summarizer's response: its run's ``usage_total`` when it counted any
    tokens, else its ``usage`` (a 0.3.0a5 ``CLIverResponse`` has only ``usage``; ours has
    ``usage_total`` defaulting to zero, which must not hide a set ``usage``)."""
    total = getattr(response, "usage_total", None)
    if total is not None and _counted(total):
        return total
    usage = getattr(response, "usage", None)
    return usage if usage is not None else total


#: Earlier iterations' ledgers watched for a background summary's usage, per conversation,
#: and conversations watched (the least recent go first). A summary may take many fast
#: iterations to write: watched over 4, a 0.3 s summary among fast iterations was lost
#: every time (found by a break test).
_WATCHED = 64
_WATCHED_CONVERSATIONS = 256


class PolicyCompactor:
    """A compactor from an :class:`agent_adapter.context.CompressionPolicy`: the same engine,
    steps and invariants as ``compress_for``, on the run's ``CLIverMessage`` history.

    It returns the full compressed list (kept messages are the same objects), which core
    validates like any returned history; ``None`` when the policy leaves the history as it
    is. Tool results recording a permission decision are approval state and stay. Model calls
    a policy step makes (a summarizing step) are recorded in the run's ``usage_total``.

    **Compact once, then append.** Core replaces the run's history with what the compactor
    returns, so within a run every request already starts with the one before, and so does the
    next run given ``response.messages``. The compaction state (see
    :class:`~agent_adapter.context.Compactor`), held in ``states``, is keyed by the run's
    ``run_id``, or by
    ``conversation`` when given: then it spans the runs of that conversation, so a run given the
    caller's own full transcript (which extends the history compressed last) is sent as the
    history sent then plus the new messages, until that is over the threshold, instead of
    being compressed afresh. With ``conversation`` the run context's ``thread_id`` is it too,
    so results a step saves belong to the conversation.

    **Prepared in the background.** When a step of the policy writes with a model
    (``Summarize(model=...)``), the next compaction starts at ``states.prepare_at`` (0.8) of
    the threshold, while the run goes on, and the iteration that crosses the threshold
    swaps it in for exactly the history it was made from (see
    :class:`~agent_adapter.context.Compactor`).

    **Reusing the conversation's cache.** When a ``Summarize`` step's model is the run's own
    (by identity: the port the run calls for the binding that answered last, i.e. its
    ``binding.get_provider()``, or the ``provider=`` port the binding was given), its
    summary request continues the run's last request (the machinery of
    :meth:`CompactionContext.continue_run`): the same system, tools, options and messages,
    byte for byte, with the instruction appended as a last user message, so the provider
    reads the conversation from its prompt cache. On a run's first iteration the last
    request is the one the compaction state remembers as sent (with ``conversation``, the
    previous run's); a span the last request does not hold is asked over the history as
    the run would send it next. A summary prepared in the background continues the run's
    last request as it stood when the preparation started. A reply that is no summary (a
    tool call, no JSON) or an overflow falls back to the fresh prompt of the span's
    transcript, as with ``CompressingModel``; the step's ``continue_conversation=False``
    always sends the fresh prompt. Any other model (another binding of the chain included)
    gets the fresh prompt.

    Example::

        binding = ModelBinding.llm(model="gpt-4o", api_key="...")
        own = binding.get_provider()  # the port the run calls
        policy = CompressionPolicy(threshold_tokens=60_000, steps=[Summarize(model=own)])
        agent = AgentCore(ModelBindings(llm=binding), context_compactor=PolicyCompactor(policy))

    Args:
        policy: the policy (its threshold and target decide when and how far).
        conversation: the id of the conversation this compactor's runs belong to (a session
            or chat id); ``None``: each run is a conversation of its own.
        states: where the compaction states live: ``None`` for a bounded in-memory one of
            this compactor's own (never one of the process), a
            :class:`~agent_adapter.context.CompactionStates`, or ``False`` for none (every
            iteration compresses the history it is given).
        on_report: called with each iteration's
            :class:`~agent_adapter.context.CompressionReport` (also when nothing was
            compressed; ``prefix_tokens`` counts what the history shares with the one sent
            before).

    Raises:
        ConfigError: ``policy`` is not a CompressionPolicy, ``conversation`` not a non-empty
            str, ``states`` none of the above, or ``on_report`` not callable.
    """

    def __init__(
        self,
        policy: CompressionPolicy,
        *,
        conversation: str | None = None,
        states: CompactionStates | Literal[False] | None = None,
        on_report: Callable[[CompressionReport], None] | None = None,
    ) -> None:
        if not isinstance(policy, CompressionPolicy):
            raise ConfigError(
                f"PolicyCompactor: policy must be a CompressionPolicy, got {type(policy).__name__}"
            )
        if conversation is not None and (not isinstance(conversation, str) or not conversation):
            raise ConfigError(
                f"PolicyCompactor: conversation must be a non-empty str, got {conversation!r}"
            )
        if states is not None and states is not False and not isinstance(states, CompactionStates):
            raise ConfigError(
                "PolicyCompactor: states must be a CompactionStates, False or None, got "
                f"{type(states).__name__}"
            )
        if on_report is not None and not callable(on_report):
            raise ConfigError("PolicyCompactor: on_report must be callable")
        self.policy = policy
        self.conversation = conversation
        self.states: CompactionStates | Literal[False] = (
            CompactionStates() if states is None else states
        )
        self.on_report = on_report
        # per conversation key: the ledgers of its latest iterations and how many of each
        # one's entries were counted (see _record_usage)
        self._watched: OrderedDict[str | None, OrderedDict[int, tuple[Ledger, int]]] = OrderedDict()

    def __repr__(self) -> str:
        return f"PolicyCompactor({self.policy!r})"

    def _record_usage(self, context: CompactionContext, key: str | None, run: RunContext) -> None:
        """Fold into the run's ``usage_total`` the model calls this iteration's steps made
        (``run``'s ledger) and those a summary prepared in the background recorded in an
        earlier iteration's ledger of the same conversation (``key``) after that iteration
        was over: a background task outlives the iteration that started it, so without this
        its summary's usage was counted nowhere. An earlier ledger is watched until
        ``_WATCHED`` newer ones push it out; a preparation still running when its run ends
        is counted by the next run of the conversation (with ``conversation``), else not."""
        watched = self._watched.setdefault(key, OrderedDict())
        watched[id(run.ledger)] = (run.ledger, 0)  # this iteration's: all of it counts
        usage = Usage()
        counted = 0
        for ledger_id, (ledger, seen) in list(watched.items()):
            entries = ledger.entries
            for entry in entries[seen:]:
                usage = usage + entry.usage
                counted += 1
            watched[ledger_id] = (ledger, len(entries))
        while len(watched) > _WATCHED:
            watched.popitem(last=False)
        self._watched.move_to_end(key)
        while len(self._watched) > _WATCHED_CONVERSATIONS:
            self._watched.popitem(last=False)
        if counted:
            context.record_usage(UsageInfo.of(usage))

    async def __call__(self, context: CompactionContext) -> list[CLIverMessage] | None:
        """The compressed history, or ``None`` when nothing changed."""
        messages = context.messages
        run = RunContext(run_id=context.run_id, thread_id=self.conversation)
        key = self.conversation or context.run_id or None
        # save_to=None (as a Compactor given save_to=None): only the policy's own steps'
        # stores save; a default recall store would name a recall_context call the run
        # offers no tool for. With states, a model-written compaction is prepared early
        # (background), as Compactor.compress does; states=False is compress_for's path.
        compressed, report = await stateful_compress(
            messages,
            self.policy,
            format="cliver",
            ctx=run,
            conversation=key,
            states=self.states,
            # the run's last request, for a step that writes with a model (its own?)
            continuation=context._continuing(run) if writes_with_model(self.policy) else None,
            background=True,
        )
        if self.on_report is not None:
            self.on_report(report)
        self._record_usage(context, key, run)
        out: list[Any] = list(compressed)
        if len(out) == len(messages) and all(a is b for a, b in zip(out, messages, strict=True)):
            return None
        return out
