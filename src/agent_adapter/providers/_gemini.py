"""The Gemini API (``models.generateContent`` / ``streamGenerateContent``) on ``google-genai``.

Messages are written and read by the ``gemini`` format's converter
(:class:`~agent_adapter.context.formats._gemini.GeminiConverter`); system messages go to
``system_instruction``. The Gemini API sends function calls without ids, so each call of a
reply gets a fresh unique id here (marked so that the converter does not send it back; the
result is matched by name, as the API does). Usage: ``promptTokenCount`` counts cached tokens
too (``cachedContentTokenCount``); thinking tokens (``thoughtsTokenCount``) are billed as
output and counted there. ``timeout_s`` becomes the SDK's ``HttpOptions.timeout``; the SDK
does not retry (its ``HttpRetryOptions`` back off from 1 s whatever the server asks): the
model retries 408, 429 and 5xx, timeouts and connection errors itself, waiting what the
reply's ``Retry-After`` header or its ``google.rpc.RetryInfo`` detail (``retryDelay``) asks
within ``timeout_s`` (:mod:`agent_adapter.providers._retry`).
"""

from __future__ import annotations

import base64
import importlib
import json
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from agent_adapter._errors import (
    ConfigError,
    ModelError,
    ModelOutputInvalid,
    ModelTimeout,
)
from agent_adapter._messages import Message
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
from agent_adapter.context.formats import strip_reserved
from agent_adapter.context.formats._gemini import GeminiConverter
from agent_adapter.providers._base import (
    Parsed,
    ProviderModel,
    StreamState,
    checked_options,
    import_sdk,
    split_system,
)
from agent_adapter.providers._overflow import overflow_or_error
from agent_adapter.providers._retry import Retry, body_wait, header_wait

__all__ = ["GeminiModel"]

_GEMINI = GeminiConverter()
_FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}


def _import(purpose: str) -> Any:
    return import_sdk("google.genai", "google-genai", "gemini", purpose)


def _enum(value: Any) -> str:
    return str(getattr(value, "value", value) or "")


def _usage(meta: Any) -> Usage:
    if meta is None:
        return Usage()
    return Usage(
        input_tokens=meta.prompt_token_count or 0,
        output_tokens=(meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0),
        cache_read_tokens=meta.cached_content_token_count or 0,
    )


def _finish(reason: str, message: Message) -> FinishReason:
    if reason in ("", "STOP"):
        return "tool_calls" if message.tool_calls else "stop"
    if reason == "MAX_TOKENS":
        return "length"
    return "content_filter" if reason in _FILTERED else "other"


def _answers_without_ids(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with each tool result that answers a call the API sent without an id
    marked so (``extras["gemini_no_id"]``): the converter then sends the result by name only,
    as the call came (the caller's own messages are not changed: marked copies replace them)."""
    no_id = {c.id for m in messages for c in m.tool_calls if c.extras.get("gemini_no_id")}
    if not no_id:
        return list(messages)
    return [
        replace(m, extras={**m.extras, "gemini_no_id": True})
        if m.role == "tool" and m.tool_call_id in no_id and not m.extras.get("gemini_no_id")
        else m
        for m in messages
    ]


def _fresh_ids(message: Message) -> Message:
    """The reply with a unique id for each call the API sent without one."""
    if not message.tool_calls:
        return message
    calls = tuple(
        replace(c, id=f"call_{secrets.token_hex(8)}") if c.extras.get("gemini_no_id") else c
        for c in message.tool_calls
    )
    return replace(message, tool_calls=calls)


class GeminiModel(ProviderModel):
    """A Gemini model through the Gemini API (``google-genai``).

    Example::

        model = GeminiModel("gemini-2.5-flash")                # GEMINI_API_KEY
        reply = await model.generate(ModelRequest(messages=[Message("user", "hi")]))

    Args:
        model: the model name.
        **kwargs: see :class:`~agent_adapter.providers._base.ProviderModel`; ``client`` is a
            ``google.genai.Client``.

    Raises:
        ConfigError: a bad setting, or no API key (``api_key``, ``GEMINI_API_KEY`` or
            ``GOOGLE_API_KEY``).
        MissingDependency: ``google-genai`` is not installed (extra ``gemini``).
    """

    default_provider = "gemini"

    def _make_client(self, api_key: str | None) -> Any:
        genai = _import(type(self).__name__)
        types = importlib.import_module("google.genai.types")
        options = types.HttpOptions(base_url=self.base_url, timeout=int(self.timeout_s * 1000))
        try:
            return genai.Client(api_key=api_key, http_options=options)
        except ValueError as e:
            raise ConfigError(f"{type(self).__name__}: {e}") from e

    async def _close(self, client: Any) -> None:
        await client.aio.aclose()

    def _request(self, request: ModelRequest) -> dict[str, Any]:
        system, rest = split_system(_answers_without_ids(request.messages))
        if not rest:
            raise ConfigError("Gemini needs a non-system message")
        config: dict[str, Any] = {}
        if system:
            parts = [p for n in strip_reserved(_GEMINI.dump_all(system)) for p in n["parts"]]
            config["system_instruction"] = {"parts": parts}
        if request.tools:
            declarations = [
                {
                    "name": t.name,
                    "description": t.description,
                    "parameters_json_schema": t.parameters,
                }
                for t in request.tools
            ]
            config["tools"] = [{"function_declarations": declarations}]
        choice = request.tool_choice
        if choice is not None:
            modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
            calling: dict[str, Any] = {"mode": modes.get(choice, "ANY")}
            if choice not in modes:
                calling["allowed_function_names"] = [choice]
            config["tool_config"] = {"function_calling_config": calling}
        fmt = request.response_format
        if fmt is not None:
            config["response_mime_type"] = "application/json"
            if isinstance(fmt, JsonSchema):
                config["response_json_schema"] = dict(fmt.schema)
        if request.max_output_tokens is not None:
            config["max_output_tokens"] = request.max_output_tokens
        for name in ("temperature", "top_p", "seed"):
            if (value := getattr(request, name)) is not None:
                config[name] = value
        if request.stop:
            config["stop_sequences"] = list(request.stop)
        fields = importlib.import_module("google.genai.types").GenerateContentConfig.model_fields
        config.update(checked_options(request, fields, "Gemini GenerateContentConfig"))
        return {
            "model": self.model,
            "contents": strip_reserved(_GEMINI.dump_all(rest)),
            "config": config,
        }

    async def _send(self, kwargs: dict[str, Any]) -> Any:
        return await self._client.aio.models.generate_content(**kwargs)

    def _message(self, content: Any) -> Message:
        native = {"role": "model", "parts": list(getattr(content, "parts", None) or [])}
        messages = _GEMINI.load(native, 0) if native["parts"] else [Message("assistant", "")]
        if len(messages) != 1:
            raise ModelOutputInvalid(
                f"the reply loaded as {len(messages)} messages", provider=self.provider
            )
        return _fresh_ids(messages[0])

    def _parse(self, raw: Any) -> Parsed:
        candidates = raw.candidates or []
        if not candidates:
            feedback = getattr(raw, "prompt_feedback", None)
            if feedback is not None and feedback.block_reason is not None:
                return Parsed(
                    message=Message("assistant", ""),
                    usage=_usage(raw.usage_metadata),
                    finish_reason="content_filter",
                    model=raw.model_version or "",
                    raw=raw,
                )
            raise ModelOutputInvalid(
                "the reply has no candidates", provider=self.provider, model=self.model
            )
        candidate = candidates[0]
        message = self._message(candidate.content)
        return Parsed(
            message=message,
            usage=_usage(raw.usage_metadata),
            finish_reason=_finish(_enum(candidate.finish_reason), message),
            model=raw.model_version or "",
            raw=raw,
        )

    async def _deltas(
        self, kwargs: dict[str, Any], state: StreamState
    ) -> AsyncIterator[StreamEvent]:
        """The stream's deltas; the reply once a candidate carried its ``finishReason``.

        ``streamGenerateContent`` sends whole ``GenerateContentResponse`` objects with no
        end marker of its own; the last one's candidate carries ``finishReason`` (API
        reference, ``Candidate.finishReason``: "If empty, the model has not stopped
        generating the tokens"). A stream that ends without one was cut off:
        ``ModelOutputInvalid``.
        """
        parts: list[Any] = []
        usage: Any = None
        reason = ""
        model = ""
        calls = 0
        stream = await self._client.aio.models.generate_content_stream(**kwargs)
        async for chunk in stream:
            usage = chunk.usage_metadata or usage
            model = chunk.model_version or model
            for candidate in chunk.candidates or ():
                reason = _enum(candidate.finish_reason) or reason
                for part in getattr(candidate.content, "parts", None) or ():
                    call = part.function_call
                    if call is not None:
                        arguments = json.dumps(call.args or {})
                        yield ToolCallDelta(
                            index=calls, id=call.id, name=call.name, arguments=arguments
                        )
                        calls += 1
                    elif part.text and part.thought:
                        signature = part.thought_signature
                        yield ThinkingDelta(
                            text=part.text,
                            signature=base64.b64encode(signature).decode() if signature else None,
                        )
                    elif part.text:
                        yield TextDelta(text=part.text)
                    _append(parts, part)
        if not reason:
            # the last response of a stream carries the candidate's finishReason (API
            # reference, Candidate.finishReason: "If empty, the model has not stopped
            # generating tokens"); a stream that ends without one was cut off mid-reply
            raise ModelOutputInvalid(
                "the stream ended without a candidate holding finishReason: the reply is "
                "incomplete",
                provider=self.provider,
                model=self.model,
            )
        message = self._message(_Content(parts))
        state.reply = Parsed(
            message=message,
            usage=_usage(usage),
            finish_reason=_finish(reason, message),
            model=model,
        )

    def _retry(self, error: BaseException) -> Retry | None:
        """408, 429 and 5xx (the transient ones of Gemini's troubleshooting guide: 429
        RESOURCE_EXHAUSTED, 500 INTERNAL, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED), timeouts
        and connection errors; the wait a ``Retry-After`` header or the body's
        ``google.rpc.RetryInfo`` ``retryDelay`` asks (see :mod:`agent_adapter.providers._retry`)."""
        errors = importlib.import_module("google.genai.errors")
        if _is_timeout(error) or _is_transport(error):
            return Retry(retryable=True)
        if not isinstance(error, errors.APIError) or not isinstance(error.code, int):
            return None
        headers = getattr(getattr(error, "response", None), "headers", None)
        wait = header_wait(headers if isinstance(headers, Mapping) else None)
        if wait is None:
            wait = body_wait(error.details)
        status = error.code
        return Retry(status in (408, 429) or status >= 500, wait)

    def _vendor_error(self, error: BaseException) -> ModelError | None:
        """Timeouts (httpx2 / httpx), overflow (400 INVALID_ARGUMENT "The input token count
        (N) exceeds the maximum number of tokens allowed (M)."), the rest of the SDK's errors
        (429 RESOURCE_EXHAUSTED and 5xx after its retries, 4xx)."""
        errors = importlib.import_module("google.genai.errors")
        where = {"provider": self.provider, "model": self.model}
        if _is_timeout(error):
            return ModelTimeout(f"no reply within {self.timeout_s:g}s: {error!r}", **where)
        if isinstance(error, errors.APIError):
            return overflow_or_error(
                str(error.message or error),
                error.details,
                error.status,
                status=error.code,
                **where,
            )
        if isinstance(error, errors.UnknownApiResponseError):
            return ModelOutputInvalid(f"unusable reply: {error}", **where)
        if _is_transport(error):
            return ModelError(f"connection failed: {error!r}", **where)
        return None


class _Content:
    """A content holding the streamed parts (what :meth:`GeminiModel._message` reads)."""

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts


def _append(parts: list[Any], part: Any) -> None:
    """Add a streamed part, joining plain text onto the plain text part before it."""
    last = parts[-1] if parts else None
    if (
        last is not None
        and _plain(last)
        and _plain(part)
        and last.thought_signature is None
        and part.thought_signature is None
    ):
        parts[-1] = last.model_copy(update={"text": last.text + part.text})
    else:
        parts.append(part)


def _plain(part: Any) -> bool:
    return part.text is not None and not part.thought and part.function_call is None


def _http_errors(name: str) -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = []
    for module in ("httpx2", "httpx"):
        try:
            found.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def _is_timeout(error: BaseException) -> bool:
    return isinstance(error, _http_errors("TimeoutException"))


def _is_transport(error: BaseException) -> bool:
    return isinstance(error, _http_errors("TransportError"))
