"""CallableReranker: your ``fn(query, texts)`` as a RerankerPort with a ledger entry and events."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agent_adapter._callable import call_fn, check_name, check_timeout, fn_name
from agent_adapter._errors import ConfigError, ModelOutputInvalid, ToolUsageError
from agent_adapter._model import Usage
from agent_adapter._rerank import RerankResult
from agent_adapter._run import emit_event, record_call

__all__ = ["CallableReranker"]

#: Texts one billing unit covers when fn reports no usage: Cohere bills a rerank "search unit"
#: per query with up to 100 documents (https://docs.cohere.com/docs/rerank-overview, "Pricing").
TEXTS_PER_UNIT = 100


class CallableReranker:
    """Wraps fn(query, texts) as a RerankerPort that writes a ledger entry and events.

    A sync fn runs in a worker thread; timeout_s bounds each call (a timed-out thread is
    abandoned, not stopped). The entry is priced as provider:model units in the price table.

    ``fn`` gets the query and a copy of the texts and returns one score per text: a sequence
    of numbers, a :class:`~agent_adapter.context.RerankResult`, or a mapping
    ``{"scores": [...], "usage": Usage | {...}}``. Without a usage, the call counts
    ``ceil(len(texts) / 100)`` units (Cohere's search units). Each call emits a ``rerank``
    event on ``ctx``.

    Args:
        fn: ``fn(query, texts) -> scores``, sync or async.
        provider: the provider name in the ledger and the price table.
        model: the model name in the ledger and the price table.
        stage: the ledger stage (``"rerank"``).
        timeout_s: seconds one call may take (``None``: no limit).

    Raises:
        ConfigError: a bad provider, model, stage or timeout_s.
        ToolUsageError: fn is not callable.
    """

    def __init__(
        self,
        fn: Callable[[str, list[str]], Any],
        *,
        provider: str = "callable",
        model: str = "reranker",
        stage: str = "rerank",
        timeout_s: float | None = None,
    ) -> None:
        if not callable(fn):
            raise ToolUsageError(f"CallableReranker: fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.provider = check_name(provider, "provider", "CallableReranker")
        self.model = check_name(model, "model", "CallableReranker")
        self.stage = check_name(stage, "stage", "CallableReranker")
        self.timeout_s = check_timeout(timeout_s, "CallableReranker")

    def __repr__(self) -> str:
        return (
            f"CallableReranker({fn_name(self.fn)}, provider={self.provider!r}, "
            f"model={self.model!r})"
        )

    def cache_key_fields(self) -> Mapping[str, Any]:
        """Provider, model and the function's qualified name."""
        return {"provider": self.provider, "model": self.model, "fn": fn_name(self.fn)}

    def _invalid(self, what: str) -> ModelOutputInvalid:
        return ModelOutputInvalid(f"the reranker {what}", provider=self.provider, model=self.model)

    def _result(self, raw: Any, n: int) -> RerankResult:
        usage: Any = None
        if isinstance(raw, RerankResult):
            scores, usage = raw.scores, raw.usage
        elif isinstance(raw, Mapping):
            if "scores" not in raw:
                raise self._invalid("returned a mapping without 'scores'")
            scores, usage = raw["scores"], raw.get("usage")
        else:
            scores = raw
        if isinstance(scores, str | bytes) or not isinstance(scores, Sequence):
            raise self._invalid(f"returned {type(scores).__name__}, not a list of scores")
        if len(scores) != n:
            raise self._invalid(f"returned {len(scores)} scores for {n} texts")
        out: list[float] = []
        for i, s in enumerate(scores):
            if isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s):
                raise self._invalid(f"returned a non-finite or non-numeric score at [{i}]: {s!r}")
            out.append(float(s))
        if usage is None:
            usage = Usage(units=-(-n // TEXTS_PER_UNIT))
        elif isinstance(usage, Mapping):
            try:
                usage = Usage(**usage)
            except (ConfigError, TypeError) as exc:
                raise self._invalid(f"returned bad usage: {exc}") from exc
        elif not isinstance(usage, Usage):
            raise self._invalid(f"returned usage of type {type(usage).__name__}, not a Usage")
        return RerankResult(scores=out, usage=usage)

    async def rerank(self, query: str, texts: Sequence[str], *, ctx: Any = None) -> RerankResult:
        """One score per text, in order; no call (and no entry) for an empty list.

        Raises:
            ToolUsageError: query is not a str or texts not a sequence of str.
            ModelTimeout: the call took longer than timeout_s.
            ModelOutputInvalid: fn returned the wrong count, a non-finite score or bad usage.
            ModelError: fn raised a non-adapter error (it is the __cause__).
        """
        if not isinstance(query, str):
            raise ToolUsageError(f"rerank: query must be a str, got {type(query).__name__}")
        if isinstance(texts, str | bytes) or not isinstance(texts, Sequence):
            raise ToolUsageError(
                f"rerank: texts must be a sequence of str, got {type(texts).__name__}"
            )
        copy = list(texts)
        for i, text in enumerate(copy):
            if not isinstance(text, str):
                raise ToolUsageError(f"rerank: texts[{i}] must be a str, got {type(text).__name__}")
        if not copy:
            return RerankResult(scores=[], usage=Usage())
        n = len(copy)
        t0 = time.perf_counter()
        try:
            raw = await call_fn(
                self.fn, query, copy, timeout_s=self.timeout_s, provider=self.provider,
                model=self.model,
            )  # fmt: skip
            result = self._result(raw, n)
        except Exception as exc:
            await emit_event(
                ctx, "model.error", provider=self.provider, model=self.model, stage=self.stage,
                error=type(exc).__name__, seconds=time.perf_counter() - t0,
            )  # fmt: skip
            raise
        seconds = time.perf_counter() - t0
        assert result.usage is not None
        cost = record_call(
            ctx, provider=self.provider, model=self.model, stage=self.stage, usage=result.usage,
            seconds=seconds,
        )  # fmt: skip
        await emit_event(
            ctx, "rerank", provider=self.provider, model=self.model, stage=self.stage,
            texts=n, usage=result.usage, cost_usd=cost, seconds=seconds,
        )  # fmt: skip
        return result
