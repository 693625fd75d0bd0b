"""One request's compaction: the conversation's :class:`~agent_adapter.context.Compactor`, the
checker, and the harder compaction of the overflow retry.

Each request's conversation goes through a ``Compactor`` over the gateway's one
:class:`~agent_adapter.context.CompactionStates` (in memory, or in ``--state``'s SQLite file
or Redis, so gateway processes share conversations): at or under the threshold the body goes
as it came; over it, a compaction; after one, the request sent then plus the new messages,
unchanged (the provider's prompt cache keeps hitting), until that is over the threshold. The
conversation's key names the route and model, and the client's conversation (see
:func:`~agent_adapter.gateway._wire.conversation_hint`); without one, the states tell
conversations apart by their opening messages.

Every request in which a compression step ran is checked with
:func:`~agent_adapter.context.formats.check` against the provider's rules; one that breaks a
rule goes as it came (``check_failed``). A request sent as the previous (checked) request plus
the client's own new messages is not checked again: that is the append path, whose cost is
the gateway's added latency.

**Nothing dropped is kept** (the issue's item 4, the honest choice): the gateway's policy
has no store, so no step saves what it removes and no recall tool is offered; each step's note
says what went (counts, never a promise of recall). The client keeps its full history (the
gateway never changes what the client holds) and sends it whole each turn.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agent_adapter._profiles import model_profile
from agent_adapter.context import (
    CompactionStates,
    Compactor,
    CompressionPolicy,
    CompressionReport,
    TokenMeter,
    estimate_tokens,
)
from agent_adapter.context._compressing_model import overflow_retry_target
from agent_adapter.context._policy import aimed_at
from agent_adapter.context._stateful import stateful_compress
from agent_adapter.context.formats import check, convert
from agent_adapter.gateway._body import Body
from agent_adapter.gateway._wire import FORMAT, Kind

__all__ = ["Compaction", "Prepared"]


@dataclasses.dataclass
class Prepared:
    """A request's conversation as it goes up.

    Attributes:
        kind / fmt: the protocol and the library's format name.
        field: the body's field that holds the conversation.
        body: the client's body (parsed).
        history: the client's conversation (``body[field]``).
        sent: what goes up in its place (``history`` itself when unchanged).
        report: the compaction's report.
        key: the conversation's key (``None``: by its opening messages).
        policy / window: the policy and the window it was judged with.
        thinking: whether the request enables Anthropic extended thinking.
        source: the parsed body, which writes the body that goes up
            (:class:`~agent_adapter.gateway._body.Body`).
        seconds / cpu_seconds: the gateway's own time on the request, wall clock and this
            thread's CPU (reading the body, the compaction, the check, writing the body that
            goes up).
        history_tokens: the client's conversation's tokens (the policy's counter); the
            report's ``tokens_before`` counts what the compaction started from, which after
            an earlier compaction is the request sent then plus the new messages.
    """

    kind: Kind
    fmt: str
    field: str
    body: dict[str, Any]
    history: list[Any]
    sent: list[Any]
    report: CompressionReport
    key: str | None
    policy: CompressionPolicy
    window: int | None
    thinking: bool | None
    source: Body | None = None
    history_tokens: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0

    def encoded(self) -> bytes:
        """The body that goes up, with :attr:`sent` in place of the conversation."""
        source = self.source if self.source is not None else Body(self.body)
        return source.write(self.field, self.sent)

    @property
    def changed(self) -> bool:
        """Whether the body goes up changed."""
        return self.sent is not self.history


class _Scaled:
    """A token counter scaled by ``ratio`` (the provider's count over the counter's)."""

    __slots__ = ("base", "ratio")

    def __init__(self, base: Any, ratio: float) -> None:
        self.base = base
        self.ratio = ratio

    def __call__(self, messages: list[Any]) -> int:
        return round(int(self.base(messages)) * self.ratio)


class Compaction:
    """The gateway's compaction: one policy, one states object, a window per model.

    Args:
        policy: the policy of ``--threshold`` / ``--target``.
        states: the conversations' states (shared through a store with ``--state``).
        model_max_tokens: ``--model-max-tokens``; ``None``: each model's profile.
    """

    def __init__(
        self,
        policy: CompressionPolicy,
        states: CompactionStates,
        model_max_tokens: int | None,
    ) -> None:
        self.policy = policy
        self.states = states
        self.model_max_tokens = model_max_tokens

    def window(self, provider: str, model: str) -> int | None:
        """The window of ``model`` (``--model-max-tokens``, else its profile's input limit)."""
        if self.model_max_tokens is not None:
            return self.model_max_tokens
        profile = model_profile(provider, model) if model else None
        return profile.input_limit if profile is not None else None

    async def prepare(
        self,
        kind: Kind,
        field: str,
        body: dict[str, Any],
        history: list[Any],
        key: str | None,
        window: int | None,
        thinking: bool | None,
    ) -> Prepared:
        """The conversation ``history`` (``body[field]``) as it goes up.

        Raises:
            Exception: whatever compression raises (the caller fails open).
        """
        fmt = FORMAT[kind]
        compactor = Compactor(
            self.policy,
            conversation=key,
            states=self.states,
            format=fmt,
            model_max_tokens=window,
            # the gateway does not save what it drops (see the module): no default recall
            # store, so no marker names a recall_context call the client's agent lacks
            save_to=None,
        )
        sent, report = await compactor.compress(history)
        prepared = Prepared(
            kind, fmt, field, body, history, sent, report, key, self.policy, window, thinking
        )
        prepared.history_tokens = report.tokens_before
        if sent is not history:  # counted by identity: only the new messages cost
            meter = TokenMeter(self.policy.token_counter)
            prepared.history_tokens = meter.total(convert(history, fmt).messages)
        return prepared

    def violations(self, prepared: Prepared) -> list[str]:
        """The provider's rules the request breaks (``[]`` for one sent as the previous
        request plus new messages, or as it came; see the module's docstring)."""
        if not prepared.changed or prepared.report.skipped:
            return []
        return [v.rule for v in check(prepared.sent, prepared.fmt, thinking=prepared.thinking)]

    async def harder(self, prepared: Prepared, tokens: int | None, limit: int | None) -> bool:
        """Compress what overflowed once more, for the one retry; whether it shrank (then
        ``prepared.sent`` and ``prepared.report`` are the retry's).

        The target is :func:`~agent_adapter.context._compressing_model.
        overflow_retry_target` (as ``CompressingModel``'s retry): what the provider's error
        says fits, counted with this request's ratio of the provider's count to the
        counter's; the compression is forced (the steps run even under the threshold) and
        kept in the conversation's state under the gateway's policy."""
        base = prepared.policy.token_counter or estimate_tokens
        raw = prepared.report.tokens_after
        target, ratio = overflow_retry_target(
            prepared.policy, prepared.window, raw, 1.0, tokens, limit
        )
        policy = aimed_at(prepared.policy, target, token_counter=_Scaled(base, ratio))
        window = prepared.window
        if limit and (window is None or limit < window):
            window = limit
        sent, report = await stateful_compress(
            prepared.sent,
            policy,
            format=prepared.fmt,
            model_max_tokens=window,
            conversation=prepared.key,
            states=self.states,
            force=True,
            key_policy=prepared.policy,
        )
        if sent is prepared.sent or report.tokens_after >= round(raw * ratio):
            return False
        if check(sent, prepared.fmt, thinking=prepared.thinking):
            return False
        prepared.sent, prepared.report = sent, report
        return True


def response_headers(prepared: Prepared, *, retried: bool) -> dict[str, str]:
    """The ``x-agent-adapter-*`` headers of a response the gateway compressed for: tokens
    before (the client's conversation) and after (what went up), by the policy's counter
    (``estimate_tokens`` by default: the messages only, not the system prompt or tools),
    why no step ran (``skipped``, the report's word), the gateway's own milliseconds on the
    request (``ms``, wall clock, and ``cpu-ms``, this thread's CPU time: reading, compaction,
    check, writing; not the proxying), and, when the request went up still over the
    threshold, the reason in the report's words (:meth:`CompressionReport.explain`)."""
    report = prepared.report
    out = {
        "x-agent-adapter-tokens-before": str(prepared.history_tokens),
        "x-agent-adapter-tokens-after": str(report.tokens_after),
    }
    if report.skipped:
        out["x-agent-adapter-skipped"] = report.skipped
    if report.tokens_after > report.threshold_tokens:
        out["x-agent-adapter-reason"] = _header_text(report.explain())
    if retried:
        out["x-agent-adapter-retried"] = "context_overflow"
    out["x-agent-adapter-ms"] = f"{prepared.seconds * 1000:.2f}"
    out["x-agent-adapter-cpu-ms"] = f"{prepared.cpu_seconds * 1000:.2f}"
    return out


def _header_text(text: str) -> str:
    """``text`` as one line of printable ASCII (a header value)."""
    line = " ".join(text.split())
    return "".join(c if " " <= c <= "~" else "?" for c in line)


def conversation_key(kind: Kind, model: str, hint: tuple[str, str] | None) -> str | None:
    """The conversation's key: route, model and the client's hint; ``None`` without a hint
    (the states then key the conversation by its opening messages)."""
    return f"gateway:{kind}:{model}:{hint[0]}:{hint[1]}" if hint else None
