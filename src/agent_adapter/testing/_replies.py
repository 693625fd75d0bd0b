"""Scripted replies for :class:`~agent_adapter.testing.ProviderServer`, and the error bodies
each provider really sends.

A :class:`Reply` is protocol-neutral: the server renders it in the wire protocol of the
endpoint that received the request (Chat Completions, Responses, Anthropic Messages, Gemini).
The error bodies below are copied in shape from what each provider returns (status, error
type / code and message), so a client's error handling is tested against the real thing:

* OpenAI Chat Completions, context overflow: HTTP 400, ``{"error": {"message": "This model's
  maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.
  Please reduce the length of the messages.", "type": "invalid_request_error", "param":
  "messages", "code": "context_length_exceeded"}}`` (OpenAI error codes guide; bodies quoted in
  openai-python and many client issues).
* OpenAI Responses, context overflow: HTTP 400, ``code: "context_length_exceeded"``, ``param:
  "input"``, message "Your input exceeds the context window of this model. Please adjust your
  input and try again." (no token numbers).
* OpenAI-compatible servers: DeepSeek answers 400 with ``code: "invalid_request_error"`` and
  "This model's maximum context length is 65536 tokens. However, you requested 66343 tokens
  (62247 in the messages, 4096 in the completion). ..."; vLLM a flat ``{"object": "error",
  "message": ..., "type": "BadRequestError", "code": 400}``; llama.cpp's server ``{"error":
  {"code": 400, "message": "the request exceeds the available context size, try increasing
  it", "type": "exceed_context_size_error", "n_prompt_tokens": N, "n_ctx": M}}``.
* Anthropic Messages: HTTP 400, ``{"type": "error", "error": {"type": "invalid_request_error",
  "message": "prompt is too long: 208310 tokens > 200000 maximum"}, "request_id": ...}``
  (Anthropic errors reference: 400 invalid_request_error, 429 rate_limit_error, 500
  api_error, 529 overloaded_error).
* Gemini API: HTTP 400, ``{"error": {"code": 400, "message": "The input token count (1200293)
  exceeds the maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}``
  (Gemini API troubleshooting: 400 INVALID_ARGUMENT, 429 RESOURCE_EXHAUSTED, 500 INTERNAL,
  503 UNAVAILABLE).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from agent_adapter._errors import ConfigError
from agent_adapter._messages import ToolCall

__all__ = [
    "OverflowStyle",
    "Protocol",
    "Reply",
    "ReplyKind",
    "RetryAfterHeader",
    "WireUsage",
    "error_body",
    "stream_error",
]

#: The wire protocols the server speaks.
Protocol: TypeAlias = Literal["chat", "responses", "anthropic", "gemini"]
ReplyKind: TypeAlias = Literal["message", "overflow", "rate_limit", "server_error", "malformed"]
#: Which OpenAI-compatible server's overflow body a Chat Completions endpoint sends.
OverflowStyle: TypeAlias = Literal["openai", "deepseek", "vllm", "llamacpp"]
FinishReason: TypeAlias = Literal["stop", "length", "tool_calls"]
#: The header a scripted wait is sent in.
RetryAfterHeader: TypeAlias = Literal["retry-after-ms", "retry-after"]

_KINDS = ("message", "overflow", "rate_limit", "server_error", "malformed")


@dataclass(frozen=True, slots=True)
class WireUsage:
    """The usage a reply's body states, as the server settled it (the script's numbers, or
    the prompt cache's).

    Attributes:
        input_tokens: every input token, cached ones included.
        output_tokens: generated tokens.
        cache_read_tokens: the part of the input read from the prompt cache.
        cache_write_tokens: the part written to it (Anthropic).
        cache_write_1h_tokens: the part of the writes with a one-hour TTL (Anthropic).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0


@dataclass(frozen=True, kw_only=True)
class Reply:
    """One scripted reply: a model message, or one of the failures providers really produce.

    Build messages directly (``Reply(text="hi", input_tokens=12)``) and failures with the class
    methods. Every reply can be slowed down with ``delay_s`` (the server waits before sending
    the status line: what a client timeout sees).

    Attributes:
        kind: ``"message"`` (a normal answer), ``"overflow"`` (the provider's context-window
            error), ``"rate_limit"`` (429), ``"server_error"`` (5xx), ``"malformed"`` (status
            200 with a body that is not the protocol's JSON).
        text: the assistant text of a message.
        thinking: reasoning shown before the text: an Anthropic ``thinking`` block, a
            Responses ``reasoning`` item (as its summary), a Gemini ``thought`` part, or the
            ``reasoning_content`` that DeepSeek, vLLM and Ollama add to Chat Completions.
        signature: the thinking's signature (Anthropic ``signature``, Responses
            ``encrypted_content``, Gemini ``thoughtSignature``; not in Chat Completions).
        compaction: a provider compaction's summary, sent before everything else: an
            Anthropic ``compaction`` block (compaction beta: "the API returns a compaction
            block at the start of the assistant response"; ``content`` this text, with an
            ``encrypted_content`` and the ``signature`` above), or a Responses ``compaction``
            output item (its opaque ``encrypted_content`` made from this text). Chat
            Completions and Gemini have no such thing and leave it out.
        tool_calls: the calls of a message (``ToolCall(id, name, arguments_json)``); Gemini
            gets no call ids, as the Gemini API sends none.
        input_tokens / output_tokens: the usage the reply reports; ``input_tokens`` counts
            every input token, cached ones included (as :class:`~agent_adapter.Usage` and
            OpenAI do; the Anthropic body reports the uncached rest, as Anthropic does).
            ``input_tokens=None``: the request's prompt as the server counts it (see
            :func:`~agent_adapter.testing.prompt_tokens`), with the part of it the server's
            prompt cache (:class:`~agent_adapter.testing.PromptCache`) held from earlier
            requests as the cache counts. A scripted ``input_tokens`` is reported as it is,
            with only the cache counts scripted here.
        cache_read_tokens / cache_write_tokens: the cached part of the input (OpenAI and
            Gemini bodies carry reads; Anthropic's both). Set, they are reported as scripted
            (with ``input_tokens=None``, in place of the prompt cache's).
        finish_reason: ``"stop"``, ``"length"`` or ``"tool_calls"``; default ``"tool_calls"``
            when there are calls, else ``"stop"``; rendered in each protocol's own words.
        delay_s: seconds to wait before answering.
        tokens / limit: the request size and the window an overflow body states.
        overflow_style: which OpenAI-compatible server's overflow body Chat Completions sends.
        status: the HTTP status of an error reply.
        retry_after_s: a wait the server asks on a 429 / 5xx, in the header
            ``retry_after_header`` names.
        retry_after_header: ``"retry-after-ms"`` (default: milliseconds, what OpenAI sends
            and the OpenAI and Anthropic SDKs read first) or ``"retry-after"`` (whole
            seconds, rounded up, RFC 9110's ``Retry-After``: what Anthropic's 429s carry).
        in_stream: an error reply to a streaming request comes as an error event after the
            stream began (status 200), as providers report failures mid-stream: Chat
            Completions a ``data: {"error": ...}`` line, Responses an ``error`` event,
            Anthropic an ``event: error`` frame after ``message_start``, Gemini a
            ``data: {"error": ...}`` line. A non-streaming request gets the HTTP error.
        body: the raw text of a malformed reply.
        chunk_size: characters per text / arguments delta when streaming.
        truncated: a streamed message ends (the connection closes cleanly, status 200) after
            its content deltas, without the protocol's terminal events: Chat Completions no
            chunk with a ``finish_reason``, no usage chunk and no ``data: [DONE]``; Responses
            no ``response.completed``; Anthropic no ``content_block_stop`` of the last block,
            ``message_delta`` or ``message_stop``; Gemini no response carrying
            ``finishReason`` and the usage (what a dropped proxy connection or a server
            killed mid-reply looks like). A non-streaming request gets the whole body.
    """

    kind: ReplyKind = "message"
    text: str = ""
    thinking: str = ""
    signature: str = "c2lnbmF0dXJl"
    compaction: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    input_tokens: int | None = 10
    output_tokens: int = 5
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    finish_reason: FinishReason | None = None
    delay_s: float = 0.0
    tokens: int = 130_000
    limit: int = 128_000
    overflow_style: OverflowStyle = "openai"
    status: int = 200
    retry_after_s: float | None = None
    retry_after_header: RetryAfterHeader = "retry-after-ms"
    in_stream: bool = False
    body: str = '{"id": "broken", "choices": [{"index": 0, "message": {"role": '
    chunk_size: int = 8
    truncated: bool = False

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ConfigError(f"Reply.kind must be one of {_KINDS}, got {self.kind!r}")
        calls = tuple(self.tool_calls)
        for i, call in enumerate(calls):
            if not isinstance(call, ToolCall):
                raise ConfigError(
                    f"Reply.tool_calls[{i}] must be a ToolCall, got {type(call).__name__}"
                )
            try:
                json.loads(call.arguments or "{}")
            except ValueError as e:
                raise ConfigError(
                    f"Reply.tool_calls[{i}].arguments is not JSON: {call.arguments!r}"
                ) from e
        object.__setattr__(self, "tool_calls", calls)
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            value = getattr(self, name)
            if value is None and name == "input_tokens":
                continue
            if type(value) is not int or value < 0:
                raise ConfigError(f"Reply.{name} must be an int >= 0, got {value!r}")
        cached = self.cache_read_tokens + self.cache_write_tokens
        if self.input_tokens is not None and cached > self.input_tokens:
            raise ConfigError(
                "Reply: cache_read_tokens + cache_write_tokens exceed input_tokens (input "
                "counts every input token, cached ones included)"
            )
        if self.delay_s < 0:
            raise ConfigError(f"Reply.delay_s must be >= 0, got {self.delay_s!r}")
        if self.retry_after_header not in ("retry-after-ms", "retry-after"):
            raise ConfigError(
                "Reply.retry_after_header must be 'retry-after-ms' or 'retry-after', got "
                f"{self.retry_after_header!r}"
            )
        if self.compaction is not None and not (
            isinstance(self.compaction, str) and self.compaction
        ):
            # SDK BetaCompactionBlockParam: "Empty string content is not allowed"
            raise ConfigError("Reply.compaction must be None or a non-empty str")
        if self.chunk_size < 1:
            raise ConfigError(f"Reply.chunk_size must be >= 1, got {self.chunk_size!r}")

    @classmethod
    def overflow(
        cls,
        tokens: int = 130_000,
        limit: int = 128_000,
        *,
        style: OverflowStyle = "openai",
        delay_s: float = 0.0,
        in_stream: bool = False,
    ) -> Reply:
        """The provider's real context-overflow error (HTTP 400) stating ``tokens > limit``.

        ``style`` picks the OpenAI-compatible server whose body a Chat Completions endpoint
        sends (``"openai"``, ``"deepseek"``, ``"vllm"``, ``"llamacpp"``); other protocols have
        one body each (see the module docstring).
        """
        return cls(
            kind="overflow",
            tokens=tokens,
            limit=limit,
            overflow_style=style,
            status=400,
            delay_s=delay_s,
            in_stream=in_stream,
        )

    @classmethod
    def rate_limited(
        cls,
        *,
        retry_after_s: float | None = 0.0,
        in_stream: bool = False,
        header: RetryAfterHeader = "retry-after-ms",
    ) -> Reply:
        """A 429 with the provider's rate-limit body; ``retry_after_s`` sets the ``header``
        (``retry-after-ms``, or ``retry-after`` in whole seconds as Anthropic sends it;
        ``None``: no header, the client backs off on its own)."""
        return cls(
            kind="rate_limit",
            status=429,
            retry_after_s=retry_after_s,
            retry_after_header=header,
            in_stream=in_stream,
        )

    @classmethod
    def server_error(
        cls, status: int = 500, *, retry_after_s: float | None = 0.0, in_stream: bool = False
    ) -> Reply:
        """A 5xx with the provider's body (500 internal, 503 unavailable, Anthropic's 529
        overloaded)."""
        if not 500 <= status <= 599:
            raise ConfigError(f"Reply.server_error: status must be 5xx, got {status}")
        return cls(
            kind="server_error", status=status, retry_after_s=retry_after_s, in_stream=in_stream
        )

    @classmethod
    def malformed(cls, body: str | None = None) -> Reply:
        """Status 200 whose body is not valid protocol JSON (default: truncated JSON; streamed,
        an SSE ``data:`` line holding it)."""
        return cls(kind="malformed") if body is None else cls(kind="malformed", body=body)

    @property
    def finish(self) -> FinishReason:
        """The finish reason in neutral words."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


def _openai_error(message: str, type_: str, param: str | None, code: str | None) -> Any:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _overflow_body(reply: Reply, protocol: Protocol) -> Any:
    tokens, limit = reply.tokens, reply.limit
    if protocol == "anthropic":
        return {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {tokens} tokens > {limit} maximum",
            },
            "request_id": "req_011CVQe1dLrGNMJyE1ghG1av",
        }
    if protocol == "gemini":
        message = (
            f"The input token count ({tokens}) exceeds the maximum number of tokens allowed "
            f"({limit})."
        )
        return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    if protocol == "responses":
        message = (
            "Your input exceeds the context window of this model. Please adjust your input "
            "and try again."
        )
        return _openai_error(message, "invalid_request_error", "input", "context_length_exceeded")
    style = reply.overflow_style
    if style == "deepseek":
        completion = 4096
        message = (
            f"This model's maximum context length is {limit} tokens. However, you requested "
            f"{tokens} tokens ({tokens - completion} in the messages, {completion} in the "
            "completion). Please reduce the length of the messages or completion."
        )
        return _openai_error(message, "invalid_request_error", None, "invalid_request_error")
    if style == "vllm":
        message = (
            f"This model's maximum context length is {limit} tokens. However, you requested "
            f"{tokens} tokens ({tokens} in the messages, 0 in the completion). Please reduce "
            "the length of the messages or completion."
        )
        return {
            "object": "error",
            "message": message,
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    if style == "llamacpp":
        return {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": tokens,
                "n_ctx": limit,
            }
        }
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages."
    )
    return _openai_error(message, "invalid_request_error", "messages", "context_length_exceeded")


def _rate_limit_body(protocol: Protocol) -> Any:
    if protocol == "anthropic":
        message = (
            "This request would exceed the rate limit for your organization of 30,000 input "
            "tokens per minute."
        )
        return {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
    if protocol == "gemini":
        message = "Resource has been exhausted (e.g. check quota)."
        return {"error": {"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED"}}
    message = (
        "Rate limit reached for gpt-4o in organization org-test on tokens per min (TPM): "
        "Limit 30000, Used 30000, Requested 500. Please try again in 1s."
    )
    return _openai_error(message, "tokens", None, "rate_limit_exceeded")


def _server_error_body(status: int, protocol: Protocol) -> Any:
    if protocol == "anthropic":
        if status == 529:
            error = {"type": "overloaded_error", "message": "Overloaded"}
        else:
            error = {"type": "api_error", "message": "Internal server error"}
        return {"type": "error", "error": error}
    if protocol == "gemini":
        if status == 503:
            return {
                "error": {
                    "code": 503,
                    "message": "The model is overloaded. Please try again later.",
                    "status": "UNAVAILABLE",
                }
            }
        message = "An internal error has occurred. Please retry or report the problem."
        return {"error": {"code": status, "message": message, "status": "INTERNAL"}}
    message = "The server had an error while processing your request. Sorry about that!"
    return _openai_error(message, "server_error", None, None)


def stream_error(reply: Reply, protocol: Protocol) -> tuple[str | None, Any]:
    """The event name and data of an error reported mid-stream in ``protocol``."""
    body = error_body(reply, protocol)
    inner = body.get("error", body) if isinstance(body, dict) else body
    if protocol == "responses":
        fields = {k: inner.get(k) for k in ("code", "message", "param")}
        return "error", {"type": "error", "sequence_number": 2, **fields}
    if protocol == "anthropic":
        return "error", {"type": "error", "error": inner}
    return None, {"error": inner}


def error_body(reply: Reply, protocol: Protocol) -> Any:
    """The JSON body of an error reply in ``protocol``'s words."""
    if reply.kind == "overflow":
        return _overflow_body(reply, protocol)
    if reply.kind == "rate_limit":
        return _rate_limit_body(protocol)
    return _server_error_body(reply.status, protocol)
