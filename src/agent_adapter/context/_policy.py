"""CompressionPolicy: when to compress (threshold), how far (target), and with which steps."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from agent_adapter._compression import register_compression_settings
from agent_adapter._errors import ConfigError
from agent_adapter._prices import Price
from agent_adapter.context._langchain_counters import is_langchain_counter
from agent_adapter.context._steps.cut import CutLongMessages
from agent_adapter.context._steps.dedup import RemoveDuplicates
from agent_adapter.context._steps.drop import RemoveOldMessages
from agent_adapter.context._steps.stale import DropStaleReads
from agent_adapter.context._steps.tool_results import ShrinkToolResults
from agent_adapter.context._tokens import TokenCounter

if TYPE_CHECKING:
    from agent_adapter.context._steps._base import CompressionStep

__all__ = ["CompressionLimits", "CompressionPolicy", "IfStillTooLong", "OnStepError"]

IfStillTooLong: TypeAlias = Literal["keep", "cut", "raise"]
OnStepError: TypeAlias = Literal["raise", "skip"]
Depth: TypeAlias = Literal["auto", "fixed", "cost"]

#: Defaults when neither percents nor token counts are given: compress above 80% of the
#: context window, down to 60%, leaving room for the reply and a few more turns.
DEFAULT_THRESHOLD_PERCENT = 80.0
DEFAULT_TARGET_PERCENT = 60.0


@dataclass(frozen=True, slots=True)
class CompressionLimits:
    """The two token counts one compression works with.

    Attributes:
        threshold_tokens: above this many tokens, compression runs; at or below, the input
            comes back untouched.
        target_tokens: once running, steps stop as soon as the list is at or under this.
    """

    threshold_tokens: int
    target_tokens: int


@register_compression_settings  # accepted as a request's own compression
@dataclass(frozen=True, kw_only=True)
class CompressionPolicy:
    """When and how far to compress, and with which steps; give percents or token counts.

    Args:
        threshold_percent: compress above this percent (0-100] of the context window.
        target_percent: compress down to this percent; defaults to 3/4 of the threshold.
        threshold_tokens: compress above this many tokens.
        target_tokens: compress down to this many tokens; defaults to 3/4 of the threshold.
            Given alone, the threshold equals it (compress whenever over the target).
        model_max_tokens: the model's context window in tokens, for percents.
        steps: the steps to run, in order; ``None`` for :meth:`resolved_steps`' defaults.
        token_counter: ``list[Message] -> int``; ``None`` for
            :func:`~agent_adapter.context.estimate_tokens` (chars/4). LangChain's are taken
            too: a chat model (its ``get_num_tokens_from_messages``) or a LangChain counter
            such as ``count_tokens_approximately`` (each called with the messages written
            as LangChain messages).
        if_still_too_long: what happens when every step ran and the list is still over the
            target (usually because the protected newest turn alone is bigger):
            ``"keep"`` returns it as is and the report says so; ``"cut"`` cuts the text of the
            biggest protected tool results and assistant texts to head and tail with a marker
            (never the system prompt nor the latest user message, never a tool call or id);
            ``"raise"`` raises :class:`~agent_adapter._errors.ModelContextOverflow`; a step
            runs once more with only system messages and the latest user message protected.
        on_step_error: ``"skip"`` records a failing step in the report and goes on with the
            next one (a summarizer outage never kills the run); ``"raise"`` re-raises.
        recent_turns: loss follows age. The newest ``recent_turns`` assistant messages, the
            tool results answering them and everything after the first of them (the recency
            window) stay verbatim while older content can still go: the steps run first with
            the window protected, and only when that does not reach the target do they run
            again over everything (the newest turn itself stays protected as always). Within
            each pass the steps' order gives cheapest loss first (an exact duplicate, then a
            shrunk result, a cut text, a dropped round). ``0`` turns the window off.
        depth: how far each compaction goes. ``"auto"`` (the default): ``"cost"`` for the
            compactions of a conversation (a :class:`~agent_adapter.context.Compactor`,
            ``CompressingModel``, a framework's hook: what has compaction state) when no
            target is given, so that ``CompressionPolicy(threshold_tokens=T)``, the one knob,
            is what an agent loop needs; ``"fixed"`` for a one-off ``compress`` /
            ``compress_for(states=False)`` and whenever a target is given. ``"fixed"``: to
            the target (3/4 of the threshold when none is given). ``"cost"``, the setting for
            agent loops
            (a :class:`~agent_adapter.context.Compactor`, ``CompressingModel``): each
            compaction's target is derived from the prompt cache's prices, the window and
            the conversation's own growth a call (``T - D = sqrt(2 * write * growth * T /
            read)``, clamped to a tenth .. 3/4 of the threshold ``T`` and never below what keeps
            the opening, the newest turns and a note of names), and when the
            threshold is a budget under the window (``model_max_tokens``) a compaction that
            cannot pay for its rewrite within the calls the conversation goes on for with
            95% confidence (Gott's rule: ``calls / 19``, ``calls`` those it made)
            is deferred (``report.skipped == "deferred"``); at the window it always runs.
            The formula and its reasoning: :mod:`agent_adapter.context._depth`. Give no
            target with it (the target is what it derives).
        cache_price: the model's :class:`~agent_adapter.Price` (``PriceTable().find(...)``),
            whose input, cached-input and cache-write prices ``depth="cost"`` weighs;
            ``None``: Anthropic's ratios (reads 0.1x, writes 1.25x the input price).

    With no percents or token counts, the threshold is 80% and the target 60% of the window.
    Threshold above target gives hysteresis: once compressed to the target, the next few
    turns stay under the threshold and are sent untouched (and stay cacheable).

    Raises:
        ConfigError: a setting is out of range, or percents and token counts are mixed.
    """

    threshold_percent: float | None = None
    target_percent: float | None = None
    threshold_tokens: int | None = None
    target_tokens: int | None = None
    model_max_tokens: int | None = None
    steps: Sequence[CompressionStep] | None = None
    token_counter: TokenCounter | None = None
    if_still_too_long: IfStillTooLong | CompressionStep = "keep"
    on_step_error: OnStepError = "skip"
    recent_turns: int = 3
    depth: Depth = "auto"
    cache_price: Price | None = None

    def __post_init__(self) -> None:
        """The validators of :data:`_VALIDATORS`, in order: the first that fails raises."""
        for check in _VALIDATORS:
            check(self)

    def _percents(self) -> tuple[float, float] | None:
        """(threshold, target) in percent when the policy works in percents (the defaults
        included), else ``None``; derived from the fields, never stored."""
        if self.threshold_tokens is not None or self.target_tokens is not None:
            return None
        threshold, target = self.threshold_percent, self.target_percent
        if threshold is None and target is None:
            return (DEFAULT_THRESHOLD_PERCENT, DEFAULT_TARGET_PERCENT)
        if threshold is None:
            threshold = target
        if target is None:
            target = threshold * 0.75  # type: ignore[operator]
        return (float(threshold), float(target))  # type: ignore[arg-type]

    @property
    def uses_percent(self) -> bool:
        """True when the limits are percents of a context window."""
        return self._percents() is not None

    def limits(self, model_max_tokens: int | None = None) -> CompressionLimits:
        """The token limits; percents apply to the policy's model_max_tokens, else this one.

        Raises:
            ConfigError: percents are used and no model size is known, or it is not positive.
        """
        percent = self._percents()
        if percent is None:
            threshold = self.threshold_tokens
            target = self.target_tokens
            if threshold is None:
                threshold = target
            assert threshold is not None
            if target is None:
                target = max(1, threshold * 3 // 4)
            return CompressionLimits(threshold, target)
        window = self.model_max_tokens if self.model_max_tokens is not None else model_max_tokens
        if window is None:
            given = (
                "uses percents"
                if self.threshold_percent or self.target_percent
                else f"defaults to {DEFAULT_THRESHOLD_PERCENT:g}% / {DEFAULT_TARGET_PERCENT:g}% "
                "of the context window"
            )
            raise ConfigError(
                f"CompressionPolicy {given} but no context window is known: set "
                "model_max_tokens on the policy or pass it to the call, or give "
                "threshold_tokens / target_tokens"
            )
        if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
            raise ConfigError(f"model_max_tokens must be an int > 0, got {window!r}")
        threshold_p, target_p = percent
        return CompressionLimits(
            max(1, int(window * threshold_p / 100)), max(1, int(window * target_p / 100))
        )

    def resolved_steps(self) -> list[CompressionStep]:
        """The steps to run, in order: the policy's, else the defaults.

        Defaults, cheapest loss first: ``RemoveDuplicates()`` (nothing unique is lost),
        ``DropStaleReads()`` (file reads a later edit or read superseded: what they show is
        out of date or shown again), ``ShrinkToolResults()`` (old big tool outputs, the bulk
        of coding-agent traces), ``CutLongMessages()``, then ``RemoveOldMessages()``. None of
        them calls a model.
        """
        if self.steps is not None:
            return list(self.steps)
        return [
            RemoveDuplicates(),
            DropStaleReads(),
            ShrinkToolResults(),
            CutLongMessages(),
            RemoveOldMessages(),
        ]


def _percents_or_tokens(policy: CompressionPolicy) -> None:
    """Percents or token counts, never both."""
    percents = (policy.threshold_percent, policy.target_percent)
    tokens = (policy.threshold_tokens, policy.target_tokens)
    if any(p is not None for p in percents) and any(t is not None for t in tokens):
        raise ConfigError(
            "CompressionPolicy: give percents (threshold_percent/target_percent) or token "
            "counts (threshold_tokens/target_tokens), not both"
        )


def _percent(name: str, v: Any) -> None:
    """A percent: a finite number in (0, 100], or ``None``."""
    if v is not None and (
        isinstance(v, bool)
        or not isinstance(v, int | float)
        or not math.isfinite(v)
        or not 0 < v <= 100
    ):
        raise ConfigError(f"CompressionPolicy.{name} must be in (0, 100], got {v!r}")


def _turns(name: str, v: Any) -> None:
    """A count of turns: an int >= 0."""
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ConfigError(f"CompressionPolicy.{name} must be an int >= 0, got {v!r}")


def aimed_at(policy: CompressionPolicy, tokens: int, **changes: Any) -> CompressionPolicy:
    """``policy`` with threshold and target both ``tokens`` (its percents cleared) and
    ``changes``: a compression that goes down to that many tokens, as a provider's overflow
    retry or a compaction prepared ahead of its threshold asks."""
    return dataclasses.replace(
        policy,
        threshold_percent=None,
        target_percent=None,
        threshold_tokens=tokens,
        target_tokens=tokens,
        **changes,
    )


def check_window(value: Any, who: str = "") -> None:
    """A context window given to a call or an object: ``None`` or an int > 0.

    Raises:
        ConfigError: it is neither (naming ``who``, the object it was given to).
    """
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        prefix = f"{who}: " if who else ""
        raise ConfigError(f"{prefix}model_max_tokens must be an int > 0, got {value!r}")


def _tokens(name: str, v: Any) -> None:
    """A count of tokens: an int > 0, or ``None``."""
    if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v <= 0):
        raise ConfigError(f"CompressionPolicy.{name} must be an int > 0, got {v!r}")


def _threshold_in_window(policy: CompressionPolicy) -> None:
    """A threshold in tokens at or under the policy's own window, when both are given (a
    window given at the call is checked there, by the engine)."""
    threshold, window = policy.threshold_tokens, policy.model_max_tokens
    if threshold is not None and window is not None and threshold > window:
        raise ConfigError(
            f"CompressionPolicy: threshold_tokens {threshold:,} is above model_max_tokens "
            f"{window:,}, the model's context window: give a threshold at or under it"
        )


def _target_under_threshold(policy: CompressionPolicy) -> None:
    """The target at or under the threshold, in percents (the defaults included) and in
    token counts."""
    percent = policy._percents()
    if percent is not None and percent[1] > percent[0]:
        raise ConfigError(
            f"CompressionPolicy: target_percent {percent[1]} is above "
            f"threshold_percent {percent[0]}"
        )
    threshold, target = policy.threshold_tokens, policy.target_tokens
    if threshold is not None and target is not None and target > threshold:
        raise ConfigError(
            f"CompressionPolicy: target_tokens {target} is above threshold_tokens {threshold}"
        )


def conversation_depth(policy: CompressionPolicy) -> Literal["fixed", "cost"]:
    """The depth a conversation's compactions take under ``policy``: its ``depth``, with
    ``"auto"`` resolved (``"cost"`` when no target is given, else ``"fixed"``)."""
    if policy.depth == "auto":
        given = policy.target_tokens is not None or policy.target_percent is not None
        return "fixed" if given else "cost"
    return policy.depth


def _depth(policy: CompressionPolicy) -> None:
    """``"fixed"`` or ``"cost"`` (with no target given: it derives the target), and a
    :class:`Price` or ``None`` for ``cache_price``."""
    if policy.depth not in ("auto", "fixed", "cost"):
        raise ConfigError(
            f"CompressionPolicy.depth must be 'auto', 'fixed' or 'cost', got {policy.depth!r}"
        )
    if policy.depth == "cost" and (
        policy.target_tokens is not None or policy.target_percent is not None
    ):
        raise ConfigError(
            "CompressionPolicy: depth='cost' derives the target; give no target_tokens / "
            "target_percent with it"
        )
    if policy.cache_price is not None and not isinstance(policy.cache_price, Price):
        raise ConfigError(
            "CompressionPolicy.cache_price must be a Price, got "
            f"{type(policy.cache_price).__name__}"
        )


def _on_step_error(name: str, v: Any) -> None:
    """``"raise"`` or ``"skip"``."""
    if v not in ("raise", "skip"):
        raise ConfigError(f"CompressionPolicy.{name} must be 'raise' or 'skip', got {v!r}")


def _if_still_too_long(name: str, v: Any) -> None:
    """``"keep"``, ``"cut"``, ``"raise"`` or a step (anything with an ``apply``)."""
    if isinstance(v, str):
        if v not in ("keep", "cut", "raise"):
            raise ConfigError(
                f"CompressionPolicy.{name} must be 'keep', 'cut', 'raise' or a step, got {v!r}"
            )
    elif not callable(getattr(v, "apply", None)):
        raise ConfigError(f"CompressionPolicy.{name} is not a step")


def _steps(name: str, v: Any) -> None:
    """A sequence of steps (not a string), or ``None``."""
    if v is None:
        return
    if isinstance(v, str) or not isinstance(v, Sequence):
        raise ConfigError(f"CompressionPolicy.{name} must be a sequence of steps")
    for i, step in enumerate(v):
        if not callable(getattr(step, "apply", None)):
            raise ConfigError(f"CompressionPolicy.{name}[{i}] is {type(step).__name__}, not a step")


def _callable(name: str, v: Any) -> None:
    """A callable, or ``None``."""
    if v is not None and not callable(v):
        raise ConfigError(f"CompressionPolicy.{name} must be callable")


def _counter(name: str, v: Any) -> None:
    """A token counter: a callable, or LangChain's (a chat model, or a counter such as
    ``count_tokens_approximately``), which the meter adapts to take Messages."""
    if v is not None and not callable(v) and not is_langchain_counter(v):
        raise ConfigError(
            f"CompressionPolicy.{name} must be callable (list[Message] -> int), a LangChain "
            f"chat model or a LangChain token counter, got {type(v).__name__}"
        )


def _field(name: str, check: Callable[[str, Any], None]) -> Callable[[CompressionPolicy], None]:
    """``check`` on the field ``name``."""
    return lambda policy: check(name, getattr(policy, name))


#: The policy's validators, in the order they run: one per field, and the checks across
#: fields (percents or tokens first, the target under the threshold once each is valid).
_VALIDATORS: tuple[Callable[[CompressionPolicy], None], ...] = (
    _percents_or_tokens,
    _field("threshold_percent", _percent),
    _field("target_percent", _percent),
    _field("recent_turns", _turns),
    _field("threshold_tokens", _tokens),
    _field("target_tokens", _tokens),
    _field("model_max_tokens", _tokens),
    _target_under_threshold,
    _threshold_in_window,
    _depth,
    _field("on_step_error", _on_step_error),
    _field("if_still_too_long", _if_still_too_long),
    _field("steps", _steps),
    _field("token_counter", _counter),
)
