"""CompressionReport: what one compression did, in counts only (never message text)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = ["CompressionReport", "SkipReason", "StepFailure", "StepReport", "untouched_report"]

SkipReason: TypeAlias = Literal["", "under_threshold", "under_target", "nothing_to_compress"]


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
        skipped: why nothing ran ("" when steps ran).
        steps: per-step reports, in order of running.
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
        prefix_tokens: tokens at the start of this request that are the previous request
            of the same conversation, unchanged (what a provider's prompt cache can serve);
            0 when no earlier request is remembered (see ``compress_for``'s compaction state).
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
        """One plain sentence on the outcome, for logs and the CLI."""
        if self.skipped == "under_threshold":
            return (
                f"{self.tokens_before} tokens is at or under the threshold "
                f"{self.threshold_tokens}: nothing was changed."
            )
        if self.skipped == "under_target":
            return f"{self.tokens_before} tokens is already under the target: nothing changed."
        if self.skipped == "nothing_to_compress":
            return (
                f"Target {self.target_tokens} NOT reached, nothing removed: every message is "
                f"protected (system prompt, latest user message, newest turn: "
                f"{self.protected_tokens} tokens), so no step may remove any "
                "(if_still_too_long='cut' cuts the biggest protected texts)."
            )
        if self.reached_target:
            return (
                f"Compressed {self.tokens_before} -> {self.tokens_after} tokens "
                f"(target {self.target_tokens}).{self._troubles()}"
            )
        rest = self.tokens_after - self.protected_tokens
        kept = f"the steps kept {rest} tokens of unprotected history"
        if not (self.failures or self.summary_invalid_replies):  # else _troubles says why
            kept += (
                " (their own limits: keep_first / keep_last, older_than_turns, tool rounds "
                "they may not split)"
            )
        if self.protected_tokens > self.target_tokens:
            why = (
                f"the protected messages (system prompt, latest user message, newest turn) "
                f"alone are {self.protected_tokens} tokens"
            )
            if rest > 0:
                why += f", and {kept}"
        else:
            why = kept if rest > 0 else "the steps found nothing more they were allowed to remove"
        action = {
            "keep": " It was returned over the target (if_still_too_long='keep').",
            "cut": " The biggest protected texts were cut head-and-tail (if_still_too_long='cut').",
        }.get(self.if_still_too_long, "")
        if self.if_still_too_long.startswith("step:"):
            action = f" if_still_too_long ran {self.if_still_too_long[5:]}."
        return (
            f"Target {self.target_tokens} NOT reached: {self.tokens_after} tokens left, because "
            f"{why}.{action}{self._troubles()}"
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
                f" The summarizer's reply was no usable summary {n} time{'s' * (n != 1)} "
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
    """The report of a compression that sends its input as it is (nothing ran)."""
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
