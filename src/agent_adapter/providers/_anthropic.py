"""Anthropic Messages (``POST /v1/messages``) on the official ``anthropic`` SDK.

Messages are written and read by the ``anthropic`` format's converter
(:class:`~agent_adapter.context.formats._anthropic.AnthropicConverter`); system messages go to
the ``system`` field as text blocks (the API has no system role in ``messages``), in order.
``max_tokens`` is required by the API: a request without ``max_output_tokens`` gets the model
profile's output limit (4096 for an unknown model). Temperature is 0..1 and there is no seed
(Messages API reference), so a request outside that is refused (``ConfigError``). Anthropic
reports cached input apart (``input_tokens`` excludes ``cache_read_input_tokens`` and
``cache_creation_input_tokens``); :class:`~agent_adapter.Usage` counts all three as input, the
reads as ``cache_read_tokens`` and the writes as ``cache_write_tokens`` (both TTLs: the price
table's cache-write price is the 5-minute one, 1.25x input; a 1-hour write costs 2x).

The caller's ``cache_control`` marks travel in the converter's extras and are sent where they
were. ``cache_breakpoint="auto"`` adds breakpoints of its own at the end of the stable prefix
and of the request (:mod:`agent_adapter.providers._anthropic_cache`).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any, Literal

from agent_adapter._errors import (
    ConfigError,
    ModelError,
    ModelOutputInvalid,
    ModelTimeout,
)
from agent_adapter._messages import Message, ThinkingPart
from agent_adapter._model import (
    FinishReason,
    JsonSchema,
    ModelRequest,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
)
from agent_adapter._profiles import model_profile
from agent_adapter.context.formats import strip_reserved
from agent_adapter.context.formats._anthropic import AnthropicConverter
from agent_adapter.providers._anthropic_cache import StablePrefixes, chain, place
from agent_adapter.providers._base import (
    Parsed,
    ProviderModel,
    StreamState,
    call_parameters,
    checked_options,
    import_sdk,
    sdk_options,
    split_system,
    stainless_retry,
)
from agent_adapter.providers._overflow import overflow_or_error
from agent_adapter.providers._retry import Retry

__all__ = ["AnthropicModel"]

_ANTHROPIC = AnthropicConverter()
_DEFAULT_MAX_TOKENS = 4096
_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def _usage(usage: Any) -> Usage:
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return Usage(
        input_tokens=(usage.input_tokens or 0) + read + written,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


class AnthropicModel(ProviderModel):
    """A Claude model through the Anthropic Messages API.

    Example::

        model = AnthropicModel("claude-sonnet-4-5")            # ANTHROPIC_API_KEY
        reply = await model.generate(ModelRequest(messages=[Message("user", "hi")]))
        cached = AnthropicModel("claude-sonnet-4-5", cache_breakpoint="auto")

    Args:
        model: the model name.
        cache_breakpoint: ``None`` (default): send the caller's ``cache_control`` marks as
            they are and add none. ``"auto"``: also mark, with ``{"type": "ephemeral"}``, the
            last block of the stable prefix (the last message equal to the previous request
            of the same conversation, which that request's tail mark cached) and the last
            block of the request (caching it for the next call), never past Anthropic's
            four breakpoints a request, the caller's own included and kept
            (:mod:`agent_adapter.providers._anthropic_cache` says why these two). The
            previous request is remembered by this model object once it was answered.
        **kwargs: see :class:`~agent_adapter.providers._base.ProviderModel`.

    Raises:
        ConfigError: a bad setting, or no API key (``api_key`` or ``ANTHROPIC_API_KEY``).
        MissingDependency: ``anthropic`` is not installed (extra ``anthropic``).
    """

    default_provider = "anthropic"

    def __init__(
        self, model: str, *, cache_breakpoint: Literal["auto"] | None = None, **kwargs: Any
    ) -> None:
        if cache_breakpoint not in (None, "auto"):
            raise ConfigError(
                f"AnthropicModel: cache_breakpoint must be None or 'auto', got {cache_breakpoint!r}"
            )
        self.cache_breakpoint = cache_breakpoint
        self._prefixes = StablePrefixes() if cache_breakpoint == "auto" else None
        super().__init__(model, **kwargs)

    def _make_client(self, api_key: str | None) -> Any:
        anthropic = import_sdk("anthropic", "anthropic", "anthropic", type(self).__name__)
        return anthropic.AsyncAnthropic(**sdk_options(self, api_key))

    def _request(self, request: ModelRequest) -> dict[str, Any]:
        _check_sampling(request)
        system, rest = split_system(request.messages)
        if not rest:
            raise ConfigError("Anthropic Messages needs a non-system message")
        profile = model_profile(self.provider, self.model)
        max_tokens = request.max_output_tokens or (
            profile.max_output_tokens if profile is not None else _DEFAULT_MAX_TOKENS
        )
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": _results_together(strip_reserved(_ANTHROPIC.dump_all(_signed(rest)))),
        }
        if system:
            kwargs["system"] = _system_blocks(system)
        if request.tools:
            kwargs["tools"] = [t.anthropic_schema() for t in request.tools]
        if request.tool_choice is not None:
            kwargs["tool_choice"] = _tool_choice(request.tool_choice)
        output = _output_config(request.response_format)
        if output is not None:
            kwargs["output_config"] = output
        _add_options(kwargs, request, call_parameters(self._client.messages.create))
        if self._prefixes is not None:
            place(kwargs, self._prefixes.stable(chain(kwargs)))
        return kwargs

    def _answered(self, kwargs: dict[str, Any]) -> None:
        """Remember an answered request's prefixes (the provider cached them)."""
        if self._prefixes is not None:
            self._prefixes.remember(chain(kwargs))

    async def _send(self, kwargs: dict[str, Any]) -> Any:
        raw = await self._client.messages.create(**kwargs)
        self._answered(kwargs)
        return raw

    def _parse(self, raw: Any) -> Parsed:
        if getattr(raw, "type", "message") != "message" or raw.role != "assistant":
            raise ModelOutputInvalid(
                f"expected an assistant message, got type {raw.type!r}",
                provider=self.provider,
                model=self.model,
            )
        blocks = [block.model_dump(mode="json", exclude_none=True) for block in raw.content]
        native = {"role": "assistant", "content": blocks}
        messages = _ANTHROPIC.load(native, 0)
        if len(messages) != 1:
            raise ModelOutputInvalid(
                f"the reply loaded as {len(messages)} messages", provider=self.provider
            )
        return Parsed(
            message=messages[0],
            usage=_usage(raw.usage),
            finish_reason=_FINISH.get(raw.stop_reason or "", "other"),
            model=raw.model or "",
            raw=raw,
        )

    async def _deltas(
        self, kwargs: dict[str, Any], state: StreamState
    ) -> AsyncIterator[StreamEvent]:
        """The stream's deltas; the reply once ``message_stop`` arrived.

        A Messages stream runs ``message_start``, each block's ``content_block_start`` /
        ``_delta`` / ``_stop``, one or more ``message_delta``, and ends with
        ``message_stop`` (the streaming guide, "Event types"). The SDK's
        ``get_final_message()`` returns whatever had accumulated when the connection
        closed (``stop_reason`` None), so without ``message_stop`` the reply is a fragment:
        ``ModelOutputInvalid``.
        """
        calls: dict[int, int] = {}
        stopped = False
        async with self._client.messages.stream(**kwargs) as stream:
            async for event in stream:
                kind = event.type
                stopped = stopped or kind == "message_stop"
                if kind == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        index = calls[event.index] = len(calls)
                        yield ToolCallDelta(index=index, id=block.id, name=block.name)
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        yield TextDelta(text=delta.text)
                    elif delta.type == "input_json_delta":
                        yield ToolCallDelta(
                            index=calls.get(event.index, 0), arguments=delta.partial_json
                        )
                    elif delta.type == "thinking_delta":
                        yield ThinkingDelta(text=delta.thinking)
                    elif delta.type == "signature_delta":
                        yield ThinkingDelta(signature=delta.signature)
            final = await stream.get_final_message()
        if not stopped:
            # a stream's last event is ``message_stop`` ("Streaming messages", event flow:
            # message_start, content blocks, one or more message_delta, a final
            # message_stop); the SDK's final message is then only what had arrived
            raise ModelOutputInvalid(
                "the stream ended without message_stop: the reply is incomplete",
                provider=self.provider,
                model=self.model,
            )
        self._answered(kwargs)
        state.reply = self._parse(final)

    def _retry(self, error: BaseException) -> Retry | None:
        """408 / 409 / 429 / 5xx (529 overloaded included), timeouts and connection errors,
        with the wait the reply's ``retry-after`` header asks (Anthropic's 429s carry it:
        "Rate limits", platform.claude.com/docs/en/api/rate-limits; the SDK itself would wait
        any length it says, see :mod:`agent_adapter.providers._retry`)."""
        return stainless_retry(importlib.import_module("anthropic"), error)

    def _vendor_error(self, error: BaseException) -> ModelError | None:
        """Timeouts, overflow (``prompt is too long: N tokens > M maximum``), invalid replies,
        the rest of the SDK's errors (429 / 529 after its retries, 4xx, connection errors)."""
        anthropic = importlib.import_module("anthropic")
        where = {"provider": self.provider, "model": self.model}
        if isinstance(error, anthropic.APITimeoutError):
            return ModelTimeout(f"no reply in time: {error}", **where)
        if isinstance(error, anthropic.APIResponseValidationError):
            return ModelOutputInvalid(
                f"the reply does not match the API's schema: {error}", **where
            )
        if isinstance(error, anthropic.APIConnectionError):
            return ModelError(f"connection failed: {error}", **where)
        if isinstance(error, anthropic.APIError):
            body = error.body
            inner = body.get("error") if isinstance(body, dict) else None
            kind = inner.get("type") if isinstance(inner, dict) else None
            message = inner.get("message") if isinstance(inner, dict) else None
            status = getattr(error, "status_code", None)
            return overflow_or_error(
                str(message or error.message), body, kind, status=status, **where
            )
        if isinstance(error, anthropic.AnthropicError):
            return ModelError(f"{type(error).__name__}: {error}", **where)
        return None


def _signed(messages: Sequence[Message]) -> list[Message]:
    """``messages`` without the thinking parts Anthropic cannot take back: those with no
    signature (another provider's reasoning, e.g. a Chat Completions reply's
    ``reasoning_content`` after a failover or a switch of model). Anthropic's extended
    thinking guide: thinking blocks go back with their ``signature`` (the API checks it);
    its checker here calls a block without one ``thinking_signature``. A message with
    nothing of that kind is the same object."""
    out = []
    for message in messages:
        parts = message.content
        if isinstance(parts, str) or not any(
            isinstance(p, ThinkingPart) and not p.redacted and not p.signature for p in parts
        ):
            out.append(message)
            continue
        kept = tuple(
            p for p in parts if not isinstance(p, ThinkingPart) or p.redacted or p.signature
        )
        out.append(replace(message, content=kept))
    return out


def _only_results(native: Any) -> bool:
    content = native.get("content") if isinstance(native, dict) else None
    return (
        native.get("role") == "user"
        and isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _results_together(natives: list[Any]) -> list[Any]:
    """Adjacent user turns holding only ``tool_result`` blocks as one user turn: the results
    of one assistant turn's parallel calls go back in a single user message ("Parallel tool
    use", platform.claude.com/docs/en/agents-and-tools/tool-use/parallel-tool-use: formatting
    the history that way keeps Claude making parallel calls; separate messages teach it not
    to). The API would combine the turns anyway; the request is just as it recommends."""
    out: list[Any] = []
    for native in natives:
        if out and _only_results(native) and _only_results(out[-1]):
            out[-1] = {**out[-1], "content": [*out[-1]["content"], *native["content"]]}
        else:
            out.append(native)
    return out


def _check_sampling(request: ModelRequest) -> None:
    """What Anthropic Messages cannot take: a seed, a temperature above 1."""
    if request.seed is not None:
        raise ConfigError("Anthropic Messages has no seed: ModelRequest.seed")
    if request.temperature is not None and request.temperature > 1:
        raise ConfigError(
            f"Anthropic accepts temperature 0..1, got ModelRequest.temperature "
            f"{request.temperature}"
        )


def _system_blocks(system: list[Any]) -> list[Any]:
    """The system messages as the ``system`` field's text blocks."""
    blocks: list[Any] = []
    for native in strip_reserved([_ANTHROPIC.dump(m) for m in system]):
        content = native["content"]
        if isinstance(content, str):
            blocks.append({"type": "text", "text": content})
        else:
            blocks.extend(content)
    return blocks


def _tool_choice(choice: str) -> dict[str, Any]:
    """``ModelRequest.tool_choice`` as Anthropic spells it (a name: that tool)."""
    kinds = {
        "auto": {"type": "auto"},
        "none": {"type": "none"},
        "required": {"type": "any"},
    }
    return kinds.get(choice, {"type": "tool", "name": choice})


def _output_config(fmt: Any) -> dict[str, Any] | None:
    """``ModelRequest.response_format`` as ``output_config`` (a JSON schema only)."""
    if fmt == "json":
        raise ConfigError(
            "Anthropic structured output needs a JSON schema: give ModelRequest."
            "response_format a JsonSchema"
        )
    if isinstance(fmt, JsonSchema):
        return {"format": {"type": "json_schema", "schema": dict(fmt.schema)}}
    return None


def _add_options(kwargs: dict[str, Any], request: ModelRequest, accepted: frozenset[str]) -> None:
    """Stop sequences, the request's options that ``create()`` takes (``accepted``), and
    the sampling fields: those the installed SDK's create() no longer names (anthropic 2.x
    takes neither temperature nor top_p) go in the body as the API spells them."""
    sampling = {
        name: value
        for name in ("temperature", "top_p")
        if (value := getattr(request, name)) is not None
    }
    if request.stop:
        kwargs["stop_sequences"] = list(request.stop)
    kwargs.update(checked_options(request, accepted, "Anthropic messages.create"))
    for name, value in sampling.items():
        if name in accepted:
            kwargs[name] = value
        else:
            kwargs["extra_body"] = {name: value, **(kwargs.get("extra_body") or {})}
