"""CompressionReport: what one compression did, in counts only (never message text)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from agent_adapter._messages import Message
from agent_adapter.context._units import Protection, unit_spans

__all__ = [
    "CompressionReport",
    "SkipReason",
    "StepFailure",
    "StepReport",
    "protected_by",
    "untouched_report",
]

SkipReason: TypeAlias = Literal[
    "",
    "under_threshold",
    "under_target",
    "nothing_to_compress",
    "sent_again",
    "held",
    "deferred",
    "preparing",
]

#: What keeps each built-in step from removing more, by step name (``""``: no setting of its
#: own does): :meth:`explain` names the limits of the steps that ran, and only those.
_STEP_LIMITS: dict[str, str] = {
    "remove_old_messages": "remove_old_messages keeps keep_first / keep_last and never splits "
    "a tool round",
    "shrink_tool_results": "shrink_tool_results leaves the results of the newest "
    "older_than_turns turns alone",
    "cut_long_messages": "cut_long_messages keeps the first keep_first messages whole and cuts "
    "only text",
    "summarize": "summarize keeps the newest keep_recent_messages verbatim",
    "summarize_long_message": "",
    "keep_most_relevant": "keep_most_relevant keeps its keep_count best units",
    "remove_duplicates": "",
}


#: What holds protected tokens, by :meth:`Protection.reason` of a unit's messages: a unit
#: counts under the first of these its messages have (in this order), as :meth:`explain`
#: names it.
_PROTECTED_AS: dict[str, str] = {
    "system": "the system prompt",
    "pinned": "pinned messages",
    "approval": "rounds carrying approval state",
    "compaction": "the provider's own compaction state (its compaction blocks or items)",
    "before_compaction": "what the provider drops before its compaction block",
    "latest_user": "the latest user message",
    "thinking_opener": "the current turn's first round (its thinking must be sent back)",
    "newest_turn": "the newest turn",
}


def protected_by(
    messages: Sequence[Message], protection: Protection, count: Callable[[Message], int]
) -> tuple[tuple[str, int], ...]:
    """The protected tokens of ``messages`` by what protects them, biggest first: each
    protected unit counts whole under the first reason of :data:`_PROTECTED_AS` its
    messages have (a tool result in the current turn's first round counts as that round).

    Args:
        messages: the compression's input.
        protection: its protection.
        count: tokens of one message.

    Returns:
        ``(reason, tokens)`` pairs, ``reason`` a :meth:`Protection.reason`.
    """
    tokens: dict[str, int] = {}
    spans = unit_spans(messages, protection)  # no Unit object a unit: few are protected
    for n, flag in enumerate(spans.protected):
        if not flag:
            continue
        start, stop = spans.bounds[n]
        unit = spans.messages[start:stop]
        found = {protection.reason(m) for m in unit}
        reason = next((r for r in _PROTECTED_AS if r in found), "unit")
        tokens[reason] = tokens.get(reason, 0) + sum(count(m) for m in unit)
    return tuple(sorted(tokens.items(), key=lambda item: -item[1]))


def _n(value: int) -> str:
    """``value`` with thousands separators (``217,340``)."""
    return f"{value:,}"


def _plural(count: int, word: str) -> str:
    """``1 step``, ``2 steps``: ``count`` (with separators) and ``word``, plural unless 1."""
    return f"{_n(count)} {word}{'s' * (count != 1)}"


@dataclass(frozen=True, slots=True)
class StepFailure:
    """A step that raised and was skipped (on_step_error="skip"); no exception text.

    Attributes:
        step: the step's name.
        error_type: the exception's class name, e.g. ``"ModelTimeout"``.
    """

    step: str
    error_type: str


@dataclass(frozen=True, slots=True)
class StepReport:
    """One step's effect: tokens before and after, and message counts."""

    step: str
    tokens_before: int
    tokens_after: int
    messages_removed: int
    messages_changed: int
    messages_added: int
    changes_reverted: int
    seconds: float

    @property
    def tokens_saved(self) -> int:
        """``tokens_before - tokens_after``."""
        return self.tokens_before - self.tokens_after


@dataclass(frozen=True, slots=True)
class CompressionReport:
    """What one compression did; counts only, never message text.

    Attributes:
        tokens_before / tokens_after: the list's tokens with the policy's counter.
        threshold_tokens / target_tokens: the limits used.
        messages_before / messages_after: list lengths.
        messages_removed / messages_changed / messages_added: against the input.
            All five ``messages_*`` counts are of the library's
            :class:`~agent_adapter.Message` s, not of the caller's natives (for
            ``compress_for`` on a provider format): one native
            may load as several messages (an Anthropic user turn holding tool results and
            text, a Responses message with calls). With
            ``AnthropicConverter(strict_alternation=True)`` they are the counts before
            adjacent same-role turns are merged into one.
        protected_tokens: tokens of the messages no step may touch; when it is over the
            target, no step can reach it.
        skipped: why the input is sent as it came ("" when the result holds a step's
            work): ``"under_threshold"``,
            ``"under_target"``, ``"nothing_to_compress"`` (every message is protected, or
            the steps found nothing to remove or shorten that makes the list smaller: the
            input is returned as it came, with every count 0 and ``tokens_after ==
            tokens_before``), ``"sent_again"`` (the history is the one compressed before
            for the same conversation: the request sent then is sent again, with no step
            run) or ``"held"`` (over the threshold, but the conversation's last compaction
            left the request over the target: no compaction runs until the request has
            grown by the gap between threshold and target, or is over the window; see
            :class:`~agent_adapter.context.Compactor`), ``"deferred"`` (``depth="cost"``:
            over the threshold, a budget under the window, but a compaction would not pay
            for its rewrite within the calls the conversation goes on for with 95%
            confidence: ``payback_calls`` > ``expected_calls``; the next call asks again)
            or ``"preparing"`` (over the
            threshold, under the window, while the conversation's compaction prepared in
            the background is not ready yet: a later call swaps it in; see
            :mod:`agent_adapter.context._background`).
        steps: per-step reports, in order of running (with ``"nothing_to_compress"``, the
            steps that ran, none of whose work is in the result).
        failures: steps that raised and were skipped.
        if_still_too_long: the action taken after the steps ("" when none was needed).
        summary_cost_usd: what steps' model calls cost, in USD.
        seconds: wall time of the whole compression.
        summary_probes / summary_probes_found: the fidelity probes drawn from the spans that
            model summaries replaced (file paths, identifiers, error lines, the open task),
            and how many the model's own reply named (before the missing ones were added
            from the extractive summary); 0 / 0 when no model summary was made.
        summary_invalid_replies: summarizer replies that were no usable summary (not JSON
            of the schema, cut off at the token limit): each skipped its step, as the spec
            has it, and :meth:`explain` says so.
        protected_by: ``protected_tokens`` by what protects them, biggest first:
            ``(reason, tokens)`` pairs (see :func:`protected_by`); ``()`` when not known.
        prefix_tokens: tokens at the start of this request that are the previous request
            of the same conversation, unchanged (what a provider's prompt cache can serve);
            0 when no earlier request is remembered (see ``compress_for``'s compaction state).
        depth: ``"fixed"`` (the target as the policy gives it) or ``"cost"`` (the target
            derived from the cache's prices, the window and the conversation's growth; see
            ``CompressionPolicy.depth``); with ``"cost"`` the three fields below say why.
        growth_tokens: the conversation's tokens a call the depth was derived from.
        calls: the calls (assistant turns) the conversation made so far.
        expected_calls: the calls it goes on for with 95% confidence (Gott's rule:
            ``calls / 19``).
        payback_calls: the calls a compaction to ``target_tokens`` needs to repay its
            rewrite at the cache-write price (0: the compaction call is itself cheaper).
    """

    tokens_before: int
    tokens_after: int
    threshold_tokens: int
    target_tokens: int
    messages_before: int
    messages_after: int
    messages_removed: int = 0
    messages_changed: int = 0
    messages_added: int = 0
    protected_tokens: int = 0
    skipped: SkipReason = ""
    steps: tuple[StepReport, ...] = ()
    failures: tuple[StepFailure, ...] = ()
    if_still_too_long: str = ""
    summary_cost_usd: float = 0.0
    seconds: float = 0.0
    summary_probes: int = 0
    summary_probes_found: int = 0
    summary_invalid_replies: int = 0
    prefix_tokens: int = 0
    protected_by: tuple[tuple[str, int], ...] = ()
    depth: Literal["fixed", "cost"] = "fixed"
    growth_tokens: int = 0
    calls: int = 0
    expected_calls: float = 0.0
    payback_calls: float = 0.0

    @property
    def summary_coverage(self) -> float | None:
        """The share of fidelity probes the model's summaries named; ``None`` when no model
        summary was made (the extractive summarizer draws its text from the span itself)."""
        if not self.summary_probes:
            return None
        return self.summary_probes_found / self.summary_probes

    @property
    def reached_target(self) -> bool:
        """True when the result is at or under the target."""
        return self.tokens_after <= self.target_tokens

    @property
    def tokens_saved(self) -> int:
        """``tokens_before - tokens_after``."""
        return self.tokens_before - self.tokens_after

    def explain(self) -> str:
        """One plain sentence on the outcome, for logs and the CLI.

        It says only what the report's counts show happened: an ``if_still_too_long='cut'``
        that cut nothing is not said to have cut, and the limits it names are those of the
        steps that ran (a custom step's own limits are not known here).
        """
        if self.skipped:
            return self._explain_skipped()
        if self.reached_target:
            return (
                f"Compressed {_n(self.tokens_before)} -> {_n(self.tokens_after)} tokens "
                f"(target {_n(self.target_tokens)}).{self._action()}{self._troubles()}"
                f"{self._depth()}"
            )
        rest = self.tokens_after - self.protected_tokens
        kept = f"the steps kept {_n(rest)} tokens of unprotected history"
        if not (self.failures or self.summary_invalid_replies):  # else _troubles says why
            kept += f" ({self._limits()})"
        if self.protected_tokens > self.target_tokens:
            why = (
                f"the protected messages no step may touch alone are "
                f"{_n(self.protected_tokens)} tokens{self._protected_parts()}"
            )
            if rest > 0:
                why += f", and {kept}"
        elif rest > 0:
            why = kept
        else:
            why = "the steps found nothing more they were allowed to remove"
        return (
            f"Target {_n(self.target_tokens)} NOT reached: {_n(self.tokens_after)} tokens "
            f"left, because {why}.{self._action()}{self._troubles()}{self._depth()}"
        )

    def _depth(self) -> str:
        """Why the target is where it is (``depth="cost"``), for :meth:`explain`."""
        if self.depth != "cost":
            return ""
        paid = (
            "at once"
            if self.payback_calls <= 0
            else f"in {self.payback_calls:.1f} calls"
            if self.payback_calls != float("inf")
            else "never"
        )
        return (
            f" Depth (cost-aware): the target {_n(self.target_tokens)} comes from where "
            f"rewriting the kept tokens at the cache-write price stops paying more than reading "
            f"them, for a conversation growing {_n(self.growth_tokens)} tokens a call "
            f"(threshold {_n(self.threshold_tokens)}, clamped to 1/10..3/4 of it), raised to "
            f"what keeps the opening, the newest turns and a note of names when that is "
            f"deeper; a compaction as deep as that formula says repays its rewrite {paid}; "
            f"{_plural(self.calls, 'call')} in, the conversation "
            f"goes on for {self.expected_calls:.1f} more with 95% confidence."
        )

    def _explain_skipped(self) -> str:
        """:meth:`explain` of a compression where no step ran."""
        if self.skipped == "under_threshold":
            return (
                f"{_n(self.tokens_before)} tokens is at or under the threshold "
                f"{_n(self.threshold_tokens)}: nothing was changed."
            )
        if self.skipped == "under_target":
            return (
                f"{_n(self.tokens_before)} tokens is already at or under the target "
                f"{_n(self.target_tokens)}: nothing was changed."
            )
        if self.skipped == "held":
            return (
                f"{_n(self.tokens_before)} tokens is over the threshold "
                f"{_n(self.threshold_tokens)}, but the last compaction of this conversation "
                "left it over the target (what no step may touch, or the steps' settings, "
                "kept more), so nothing was changed until it grows by the gap to the target."
            )
        if self.skipped == "deferred":
            return (
                f"{_n(self.tokens_before)} tokens is over the threshold "
                f"{_n(self.threshold_tokens)}, a budget under the window, but the compaction "
                f"was deferred: it would repay its rewrite at the cache-write price only in "
                f"{self.payback_calls:.1f} calls, and {_plural(self.calls, 'call')} in, the "
                f"conversation goes on for {self.expected_calls:.1f} more with 95% confidence; "
                "nothing was changed, the next call asks again (at the window it always runs)."
            )
        if self.skipped == "preparing":
            return (
                f"{_n(self.tokens_before)} tokens is over the threshold "
                f"{_n(self.threshold_tokens)}, under the window: the compaction prepared in "
                "the background is not ready yet, so the request went as it is; a later call "
                "sends the prepared one."
            )
        if self.skipped == "sent_again":
            over = (
                f", over the target {_n(self.target_tokens)} as it was then"
                if self.tokens_after > self.target_tokens
                else ""
            )
            return (
                "No step ran: this history is the one compressed before for the same "
                f"conversation, so the request sent then ({_n(self.tokens_after)} tokens"
                f"{over}) was sent again unchanged."
            )
        # what if_still_too_long did ('keep' is what "sent as it came" already says)
        action = "" if self.if_still_too_long == "keep" else self._action()
        left = f"{_n(self.tokens_after)} tokens left"
        if self.protected_tokens < self.tokens_before:
            # steps ran, and nothing they could do made the list smaller: it went as it came
            return (
                f"Target {_n(self.target_tokens)} NOT reached, nothing changed: {left}, sent "
                "as they came, because no step found anything it may remove or shorten that "
                f"makes the request smaller ({self._limits()}); {_n(self.protected_tokens)} "
                f"of them are protected{self._protected_parts()}.{action}{self._troubles()}"
            )
        hint = (
            ""
            if self.if_still_too_long == "cut"
            else " (if_still_too_long='cut' would cut the biggest tool results and assistant texts)"
        )
        return (
            f"Target {_n(self.target_tokens)} NOT reached, nothing removed: {left}, and every "
            f"message is protected ({_n(self.protected_tokens)} tokens no step may touch"
            f"{self._protected_parts(',')}), so no step may remove any{hint}.{action}"
            f"{self._troubles()}"
        )

    def _protected_parts(self, lead: str = "") -> str:
        """`` (the newest turn 217,081, the system prompt 140)``: :attr:`protected_by` in
        words (``lead`` instead of the brackets, ``""`` when it is not known)."""
        if not self.protected_by:
            return ""
        parts = ", ".join(
            f"{_PROTECTED_AS.get(reason, 'rounds sharing a unit with them')} {_n(tokens)}"
            for reason, tokens in self.protected_by
        )
        return f"{lead} of which {parts}" if lead else f" ({parts})"

    def _limits(self) -> str:
        """The limits of the steps that ran, for :meth:`explain`."""
        names = list(dict.fromkeys(s.step for s in self.steps))
        limits = [_STEP_LIMITS[name] for name in names if _STEP_LIMITS.get(name)]
        own = [name for name in names if name not in _STEP_LIMITS]
        if own:
            limits.append(f"{', '.join(own)} removed no more")
        if not names:
            return "no step ran"
        return "; ".join(limits) or f"{', '.join(names)} removed no more"

    def _cut_tokens(self) -> int:
        """Tokens that ``if_still_too_long='cut'`` saved: the whole saving less what the
        steps saved (each step's tokens are measured before and after it)."""
        return self.tokens_saved - sum(s.tokens_saved for s in self.steps)

    def _action(self) -> str:
        """What ``if_still_too_long`` did, for :meth:`explain` (``""`` when nothing ran)."""
        action = self.if_still_too_long
        if action == "keep":
            return " It was returned over the target (if_still_too_long='keep')."
        if action.startswith("step:"):
            return f" if_still_too_long ran {action[5:]}."
        if action != "cut":
            return ""
        unchanged = not (self.messages_removed or self.messages_changed or self.messages_added)
        cut = self._cut_tokens()
        if unchanged or cut <= 0:
            done = " Nothing was changed: the" if unchanged else " The"
            return (
                f"{done} last-resort cut found no text it may cut (it cuts tool results "
                "and assistant texts, never the system prompt, the latest user message or "
                "pinned messages)."
            )
        # "cut" is if_still_too_long='cut' or, with 'keep', the model's window: say neither
        return (
            f" The last-resort cut took {_plural(cut, 'token')} from the biggest tool results "
            "and assistant texts, keeping their head and tail."
        )

    def _troubles(self) -> str:
        """What went wrong in the steps, for :meth:`explain` (``""`` when nothing did)."""
        out = ""
        if self.failures:
            failed = ", ".join(f"{f.step} ({f.error_type})" for f in self.failures)
            out += f" Steps that failed and were skipped: {failed}."
        if self.summary_invalid_replies:
            n = self.summary_invalid_replies
            out += (
                f" The summarizer's reply was no usable summary {_plural(n, 'time')} "
                "(not JSON of the schema, or cut off at its token limit): those steps were "
                "skipped."
            )
        return out


def untouched_report(
    tokens: int,
    threshold_tokens: int,
    target_tokens: int,
    messages: int,
    skipped: SkipReason,
    **more: Any,
) -> CompressionReport:
    """The report of a compression that sends its input as it is (nothing ran).

    A ``"nothing_to_compress"`` whose protected tokens do not make up the request, and whose
    every token is the previous request's prefix, is a remembered request sent again:
    ``"sent_again"`` (no step ran, yet unprotected messages are left).
    """
    if (
        skipped == "nothing_to_compress"
        and more.get("protected_tokens", 0) < tokens
        and more.get("prefix_tokens", 0) == tokens
    ):
        skipped = "sent_again"
    return CompressionReport(
        tokens_before=tokens,
        tokens_after=tokens,
        threshold_tokens=threshold_tokens,
        target_tokens=target_tokens,
        messages_before=messages,
        messages_after=messages,
        skipped=skipped,
        **more,
    )
