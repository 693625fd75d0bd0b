"""CompressingModel: an LLMPort that compresses every request before the model sees it.

The steady state costs next to nothing: under the threshold the request goes on as it is
after one pass of cached counts (:class:`~agent_adapter.context.TokenMeter` shares counts of
living messages across calls), so a conversation grown by one round is counted only for the
new messages, and the engine does not run at all.

Calibration: chars/4 is off by -63% on base64 and -48% on logs with UUIDs (see
``estimate_tokens``). After each call the provider's reported ``input_tokens`` divided by the
counter's count of what was sent becomes the ratio applied to the next count (clamped to
0.25..8), so the threshold check tracks what the provider counts. What was sent includes the
request's tool schemas (the counter's count of their JSON, once a request: a constant, never
a share of each message), as the provider counts them too; a request of 20 tools and one
short message would otherwise read as a ratio of several hundred. A provider's overflow error
with a token count calibrates the same way before the retry; the retry itself counts with
that request's own ratio, unclamped, down to what the error says fits.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Literal, cast

from agent_adapter._callable import fn_name
from agent_adapter._errors import ConfigError, ModelContextOverflow, ToolUsageError
from agent_adapter._messages import Message
from agent_adapter._model import LLMPort, ModelRequest, ModelResponse, StreamEnd, StreamEvent, Usage
from agent_adapter._profiles import known_window
from agent_adapter._run import emit_event
from agent_adapter.context._policy import (
    CompressionLimits,
    CompressionPolicy,
    aimed_at,
    conversation_depth,
)
from agent_adapter.context._report import CompressionReport
from agent_adapter.context._state import CompactionStates
from agent_adapter.context._stateful import stateful_compress
from agent_adapter.context._steps._base import _json_safe
from agent_adapter.context._steps._continuation import continuing
from agent_adapter.context._tokens import TokenCounter, TokenMeter, estimate_tokens

__all__ = ["CompressingModel"]

#: The calibration ratio stays within these bounds (a provider reporting nonsense, or a
#: request dominated by tool schemas the counter never sees, cannot swing it further).
_RATIO_MIN, _RATIO_MAX = 0.25, 8.0
#: The overflow retry aims at this share of the limit the provider's error states (its
#: count of the reply and of tool schemas, and the counter's error on the rest, fit in the
#: remainder), and without a stated limit at this share of what overflowed.
_RETRY_MARGIN = 0.9
_RETRY_SHRINK = 0.75

When = Callable[[ModelRequest, Any], Any]


class _Calibrated:
    """``counter`` scaled by ``ratio``, with ``extra`` (the request's tool schemas) once a
    request: a token counter in the provider's units."""

    __slots__ = ("__weakref__", "extra", "meter", "ratio")

    def __init__(self, meter: TokenMeter, ratio: float, extra: int) -> None:
        self.meter = meter
        self.ratio = ratio
        self.extra = extra

    def __call__(self, messages: list[Message]) -> int:
        return round((self.meter.total(messages) + self.extra) * self.ratio)


def _marked(request: ModelRequest, **changes: Any) -> ModelRequest:
    """``request`` with ``changes`` and ``precompressed=True``; without new messages it is a
    shallow copy (the fields were validated when it was built)."""
    if "messages" in changes:
        return dataclasses.replace(request, precompressed=True, **changes)
    out = copy.copy(request)
    object.__setattr__(out, "precompressed", True)
    for name, value in changes.items():
        object.__setattr__(out, name, value)
    return out


class _Prepared:
    """A request as sent: the request, its policy and meter, and the count of its messages."""

    __slots__ = ("extra", "limits", "meter", "policy", "raw", "request", "window")

    def __init__(
        self,
        request: ModelRequest,
        policy: CompressionPolicy,
        meter: TokenMeter,
        limits: CompressionLimits,
        window: int | None,
        raw: int,
        extra: int,
    ) -> None:
        self.extra = extra  # the tool schemas' tokens, in raw (the counter's units)
        self.request = request
        self.policy = policy
        self.meter = meter
        self.limits = limits
        self.window = window
        self.raw = raw


class CompressingModel:
    """An LLMPort that compresses every request's messages with policy before model.

    A request's own compression wins over policy. when(request, ctx) (sync or async) can skip
    compression for some calls. On ModelContextOverflow the policy's if_still_too_long runs
    once and the call is retried once. Nested layers (a wrapper in a wrapper, or
    run_tool_loop(compression=) around one) compress and retry once in all: an inner layer
    passes a request the outer one compressed straight through.

    Details where the spec is silent:

    * ``when`` returns true to compress; false sends the request as it is (no compression and
      no overflow retry for that call).
    * The context window is the policy's ``model_max_tokens``, else the wrapped port's
      ``context_window`` attribute, else the model profile of ``provider:model``
      (:func:`~agent_adapter.model_profile`), else the window ``genai-prices`` states when
      it is installed. A policy in token counts needs none.
    * Under the (calibrated) threshold the engine does not run: the request goes on unchanged
      (only marked ``precompressed``), so its messages are not re-validated here; the provider
      does that. Above it, :func:`~agent_adapter.context.compress` runs with the calibrated
      counter and a ``compression`` event carries its report.
    * The overflow retry compresses the sent messages again with ``force=True`` (the steps
      down to the target, then ``if_still_too_long``). The target is what the provider's
      error says fits: 90% of its ``limit`` when that is below the policy's target, counted
      with the ratio of the error's ``tokens`` to the counter's count (not clamped to 8);
      without a limit, the policy's target or 3/4 of what overflowed, whichever is smaller.
      The retry goes out only when strictly smaller than what overflowed; otherwise the
      first error propagates. A second overflow propagates.

    * **Compact once, then append**, per conversation: the wrapper keeps its conversations'
      compaction states in ``states`` (its own bounded in-memory
      :class:`~agent_adapter.context.CompactionStates` by default; never one of the
      process), keyed by the request context's ``thread_id`` (else its ``run_id``, else the
      history's opening; conversations sharing a key keep branches of their own). After a
      compaction, later requests of the conversation are sent as the request sent then plus
      the new messages until over the threshold; a compaction that leaves the request over
      the target (the protected part alone is over it) holds further ones until the request
      has grown by the gap, judged by the calibrated counts (what the provider reported).

    * **The summary request reuses the conversation's cache.** A ``Summarize`` step whose
      model is this wrapper's own (``model``, or the wrapper itself) sends its summary
      request as the conversation's request, byte for byte (the same system, tools and
      messages: the uncompressed request, whose prefix is the request sent last time), with
      the instruction appended as a last user message, so the provider reads it from its
      prompt cache (see ``Summarize.continue_conversation``).

    * **Prepared in the background.** When a step of the policy writes with a model, the
      conversation's next compaction starts at ``states.prepare_at`` (0.8) of the threshold
      on that call's request and runs while the conversation goes on; the call that crosses
      the threshold sends the prepared compaction followed by what came after it, without
      waiting for a summarizer (see :mod:`agent_adapter.context._background`).

    Args:
        model: the port to call.
        policy: when and how far to compress.
        when: ``when(request, ctx) -> bool`` (or an awaitable of one).
        states: where the conversations' compaction states live (``None``: the wrapper's
            own; ``False``: none, every request is compressed as it is given).

    Raises:
        ConfigError: policy is not a CompressionPolicy, when is not callable, states is not
            a CompactionStates, or no context window is known for model (see the policy's
            model_max_tokens).
    """

    def __init__(
        self,
        model: LLMPort,
        policy: CompressionPolicy,
        *,
        when: When | None = None,
        states: CompactionStates | Literal[False] | None = None,
    ) -> None:
        if not callable(getattr(model, "generate", None)) or not callable(
            getattr(model, "stream", None)
        ):
            raise ConfigError(
                f"CompressingModel: model must be an LLMPort, got {type(model).__name__}"
            )
        if not isinstance(policy, CompressionPolicy):
            raise ConfigError(
                f"CompressingModel: policy must be a CompressionPolicy, got {type(policy).__name__}"
            )
        if when is not None and not callable(when):
            raise ConfigError("CompressingModel: when must be callable: when(request, ctx)")
        if states is not None and states is not False and not isinstance(states, CompactionStates):
            raise ConfigError(
                "CompressingModel: states must be a CompactionStates, False or None, got "
                f"{type(states).__name__}"
            )
        self.states: CompactionStates | Literal[False] = (
            CompactionStates() if states is None else states
        )
        self.wrapped = model
        self.policy = policy
        self.when = when
        self.provider: str = str(getattr(model, "provider", "") or "")
        self.model: str = str(getattr(model, "model", "") or "")
        self.context_window = self._window(policy)
        self._limits = self._limits_of(policy)  # fails now when no window is known
        self.ratio = 1.0
        self._tools: tuple[Any, int] = ((), 0)

    def __repr__(self) -> str:
        return f"CompressingModel({self.wrapped!r}, window={self.context_window})"

    def _window(self, policy: CompressionPolicy) -> int | None:
        if policy.model_max_tokens is not None:
            return policy.model_max_tokens
        own = getattr(self.wrapped, "context_window", None)
        if isinstance(own, int) and not isinstance(own, bool) and own > 0:
            return own
        return known_window(self.provider, self.model)

    def _limits_of(self, policy: CompressionPolicy) -> CompressionLimits:
        window = self._window(policy) if policy is not self.policy else self.context_window
        if policy.uses_percent and window is None:
            raise ConfigError(
                f"CompressingModel: no context window is known for "
                f"{self.provider or '?'}:{self.model or '?'}; set model_max_tokens on the "
                "policy, register a model profile, or give threshold_tokens / target_tokens"
            )
        return policy.limits(window)

    def cache_key_fields(self) -> Mapping[str, Any]:
        """The wrapped port's key material plus the policy's settings."""
        inner = dict(self.wrapped.cache_key_fields())
        return {**inner, "compression": _policy_config(self.policy, self.context_window)}

    def _check(self, request: Any) -> ModelRequest:
        if not isinstance(request, ModelRequest):
            raise ToolUsageError(
                f"CompressingModel: request must be a ModelRequest, got {type(request).__name__}"
            )
        return request

    async def _wanted(self, request: ModelRequest) -> bool:
        if self.when is None:
            return True
        verdict = self.when(request, request.ctx)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)

    async def _prepare(self, request: ModelRequest) -> _Prepared | None:
        """The request to send, compressed when over the threshold; ``None`` to pass it on."""
        if request.precompressed or not await self._wanted(request):
            return None
        own = request.compression  # None or a CompressionPolicy (the request checked it)
        policy = own if isinstance(own, CompressionPolicy) else self.policy
        if policy is self.policy:
            limits, window = self._limits, self.context_window
        else:
            limits, window = self._limits_of(policy), self._window(policy)
        meter = TokenMeter(policy.token_counter)
        messages = request.messages
        # through the conversation's compaction state (compact once, then append): under
        # the threshold, the request sent last time plus the new messages, unchanged
        out, report = await self._compress(request, policy, meter, window, force=False)
        sent = _marked(request, messages=out) if out is not messages else _marked(request)
        if not report.skipped:
            await self._report(request, report)
        extra = self._tool_tokens(request, meter)
        raw = meter.total(sent.messages) + extra
        return _Prepared(sent, policy, meter, limits, window, raw, extra)

    def _tool_tokens(self, request: ModelRequest, meter: TokenMeter) -> int:
        """The counter's count of the request's tool schemas (name, description,
        parameters as JSON), remembered for the same tools object."""
        tools = request.tools
        if not tools:
            return 0
        if self._tools[0] is tools:
            return self._tools[1]
        schemas = [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in tools
        ]
        text = json.dumps(schemas, ensure_ascii=False, default=str)
        self._tools = (tools, meter.of(Message("system", text)))
        return self._tools[1]

    async def _compress(
        self,
        request: ModelRequest,
        policy: CompressionPolicy,
        meter: TokenMeter,
        window: int | None,
        *,
        force: bool,
        ratio: float | None = None,
        key_policy: CompressionPolicy | None = None,
    ) -> tuple[list[Message], CompressionReport]:
        ratio = self.ratio if ratio is None else ratio
        calibrated = policy
        extra = self._tool_tokens(request, meter)
        if ratio != 1.0 or extra:
            counter = _Calibrated(meter, ratio, extra)
            calibrated = dataclasses.replace(policy, token_counter=counter)
        given = request.messages
        messages = given if isinstance(given, list) else list(given)
        out, report = await stateful_compress(
            messages,
            calibrated,
            format="agent_adapter",
            model_max_tokens=window,
            ctx=request.ctx,
            force=force,
            turn_thinking=_turn_thinking(self.provider),
            key_policy=key_policy or policy,
            states=self.states,
            continuation=continuing(request, self.wrapped, self),
            background=not force,
        )
        if out is messages:  # nothing changed: the caller's own sequence goes on
            return cast(list[Message], given), report
        return out, report

    async def _report(self, request: ModelRequest, report: CompressionReport) -> None:
        await emit_event(
            request.ctx, "compression", provider=self.provider, model=self.model,
            stage=request.stage, report=report,
        )  # fmt: skip

    def _calibrate(self, prepared: _Prepared, input_tokens: int | None) -> None:
        if input_tokens and prepared.raw > 0:
            self.ratio = min(_RATIO_MAX, max(_RATIO_MIN, input_tokens / prepared.raw))

    def _retry_target(self, prepared: _Prepared, error: ModelContextOverflow) -> tuple[int, float]:
        """What the overflow retry compresses to, in the provider's tokens, and the ratio of
        the provider's count to the counter's for this request (see
        :func:`overflow_retry_target`)."""
        return overflow_retry_target(
            prepared.policy, prepared.window, prepared.raw, self.ratio, error.tokens, error.limit
        )

    async def _smaller(self, prepared: _Prepared, error: ModelContextOverflow) -> ModelRequest:
        """The overflowed request compressed once more, strictly smaller; else ``error``.

        It is compressed (``force=True``) down to :meth:`_retry_target`, counted in the
        provider's tokens with this request's own ratio: a token-count policy whose target
        is above what the provider says fits, or a provider counting more than 8x the
        counter, still gets a retry that fits."""
        self._calibrate(prepared, error.tokens)
        target, ratio = self._retry_target(prepared, error)
        policy = aimed_at(prepared.policy, target)
        window = prepared.window
        if error.limit and (window is None or error.limit < window):
            window = error.limit
        sent = prepared.request
        await emit_event(
            sent.ctx, "model.retry", provider=self.provider, model=self.model, stage=sent.stage,
            reason="context_overflow",
        )  # fmt: skip
        out, report = await self._compress(
            sent, policy, prepared.meter, window, force=True, ratio=ratio,
            key_policy=prepared.policy,
        )  # fmt: skip
        await self._report(sent, report)
        raw = prepared.meter.total(out) + prepared.extra
        if raw >= prepared.raw:
            raise error
        prepared.request = _marked(sent, messages=out)
        prepared.raw = raw
        return prepared.request

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """The wrapped port's reply to the compressed request.

        Raises:
            ConfigError: the policy or a step's output is invalid.
            ModelError: the wrapped port's error (a second overflow included).
        """
        request = self._check(request)
        prepared = await self._prepare(request)
        if prepared is None:
            return await self.wrapped.generate(request)
        try:
            response = await self.wrapped.generate(prepared.request)
        except ModelContextOverflow as error:
            response = await self.wrapped.generate(await self._smaller(prepared, error))
        self._calibrate(prepared, response.usage.input_tokens)
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The wrapped port's stream of the compressed request.

        Raises:
            ConfigError: as generate.
            ModelError: as generate; an overflow after the first event is not retried.
        """
        request = self._check(request)
        prepared = await self._prepare(request)
        if prepared is None:
            async for event in self.wrapped.stream(request):
                yield event
            return
        started = False
        usage: Usage | None = None
        try:
            async for event in self.wrapped.stream(prepared.request):
                started = True
                if isinstance(event, StreamEnd):
                    usage = event.response.usage
                yield event
        except ModelContextOverflow as error:
            if started:
                raise
            retry = await self._smaller(prepared, error)
            async for event in self.wrapped.stream(retry):
                if isinstance(event, StreamEnd):
                    usage = event.response.usage
                yield event
        if usage is not None:
            self._calibrate(prepared, usage.input_tokens)


def overflow_retry_target(
    policy: CompressionPolicy,
    window: int | None,
    raw: int,
    ratio: float,
    tokens: int | None,
    limit: int | None,
) -> tuple[int, float]:
    """What a request that overflowed is compressed to for its one retry, in the provider's
    tokens, and the ratio of the provider's count to the counter's for that request.

    ``raw`` is the counter's count of what was sent, ``ratio`` the calibrated ratio so far,
    ``tokens`` / ``limit`` what the provider's error states (either may be ``None``). The
    ratio is ``tokens`` over ``raw``, not clamped (the clamp guards the steady state against
    a nonsense report; here the provider just counted this very request), else ``ratio``.
    The target is the smallest of: the policy's target (for percents, of ``limit`` when it
    is below the window), ``_RETRY_MARGIN`` of ``limit`` (what the provider says fits, with
    room for its counting and the reply), and, without a ``limit``, ``_RETRY_SHRINK`` of
    what was sent; always below what was sent. ``CompressingModel`` and the gateway
    (``agent-adapter gateway``) retry with it."""
    sent = tokens if tokens else round(raw * ratio)
    if tokens and raw > 0:
        ratio = max(tokens / raw, 1e-6)
    if limit and policy.uses_percent and (window is None or limit < window):
        window = limit
    target = policy.limits(window).target_tokens
    if limit:
        target = min(target, int(limit * _RETRY_MARGIN))
    else:
        target = min(target, int(sent * _RETRY_SHRINK))
    return max(1, min(target, sent - 1)), ratio


def _counter_name(counter: TokenCounter | None) -> str:
    return fn_name(counter) if counter is not None else fn_name(estimate_tokens)


def _turn_thinking(provider: str | None) -> bool:
    """Whether the current turn must keep opening on its thinking block: Anthropic's rule
    (Claude on Anthropic's API or Bedrock), assumed when the provider is unknown; OpenAI's
    reasoning items and Gemini's thought parts go with their round (see ``opens_turn``)."""
    if not provider:
        return True
    low = provider.lower()
    return any(name in low for name in ("anthropic", "bedrock", "claude"))


def _policy_config(policy: CompressionPolicy, window: int | None) -> dict[str, Any]:
    """The policy's settings as JSON-safe values (steps by their ``config()``)."""
    still = policy.if_still_too_long
    steps: Sequence[Any] = policy.resolved_steps()

    def step_config(step: Any) -> Any:
        config = getattr(step, "config", None)
        return _json_safe(config()) if callable(config) else _json_safe(step)

    limits = policy.limits(window) if (window is not None or not policy.uses_percent) else None
    out = {
        "threshold_tokens": limits.threshold_tokens if limits else None,
        "target_tokens": limits.target_tokens if limits else None,
        "steps": [step_config(s) for s in steps],
        "token_counter": _counter_name(policy.token_counter),
        "if_still_too_long": still if isinstance(still, str) else step_config(still),
        "on_step_error": policy.on_step_error,
        "recent_turns": policy.recent_turns,
    }
    depth = conversation_depth(policy)
    if depth != "fixed":  # a fixed depth's key material as before
        out["depth"] = depth
        out["cache_price"] = repr(policy.cache_price)
    json.dumps(out)  # JSON-safe by construction; fail loudly here if not
    return out
