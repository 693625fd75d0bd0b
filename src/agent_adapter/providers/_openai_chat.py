"""OpenAI Chat Completions (``POST /v1/chat/completions``), and every server speaking it.

The official ``openai`` SDK does the HTTP, retries and SSE parsing; messages are written and
read by the ``openai`` format's Chat converter
(:class:`~agent_adapter.context.formats._openai.ChatConverter`), so what the compression toolkit
reads is what is sent. vLLM, Ollama, llama.cpp's server, LM Studio, DeepSeek and any other
OpenAI-compatible server are this class with a ``base_url`` (and a ``provider`` name for the
ledger); :class:`~agent_adapter.providers.DeepSeekModel` shows the whole cost of a vendor.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import replace
from typing import Any, Literal

from agent_adapter._errors import ConfigError, ModelError, ModelOutputInvalid
from agent_adapter._messages import Message, TextPart, ThinkingPart
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
from agent_adapter.context.formats._openai import ChatConverter
from agent_adapter.providers._base import (
    Parsed,
    ProviderModel,
    StreamState,
    call_parameters,
    checked_options,
)
from agent_adapter.providers._openai_errors import (
    import_openai,
    openai_client,
    openai_error,
    openai_retry,
)
from agent_adapter.providers._retry import Retry

__all__ = ["OpenAIChatModel"]

_CHAT = ChatConverter()
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


def _finish(value: Any) -> FinishReason:
    return _FINISH.get(value, "other") if value else "stop"


def with_reasoning(message: Message, reasoning: Any) -> Message:
    """``message`` with the ``reasoning_content`` of DeepSeek, vLLM and Ollama replies as a
    leading thinking part. The Chat converter writes a thinking part into no request field;
    a model class whose server wants it back sets ``reasoning_back`` (see
    :meth:`OpenAIChatModel.wire_messages`)."""
    if not isinstance(reasoning, str) or not reasoning:
        return message
    content = message.content
    parts = (TextPart(content),) if isinstance(content, str) and content else content or ()
    return replace(message, content=(ThinkingPart(reasoning), *parts))


def chat_usage(usage: Any) -> Usage:
    """Usage from a ``CompletionUsage`` (``prompt_tokens`` counts the cached ones too).

    Cache reads are OpenAI's ``prompt_tokens_details.cached_tokens``, else DeepSeek's
    ``prompt_cache_hit_tokens`` (DeepSeek reports its context cache in fields of its own,
    ``prompt_cache_hit_tokens`` + ``prompt_cache_miss_tokens`` = ``prompt_tokens``: DeepSeek
    API docs, "Context Caching"); writes are ``prompt_tokens_details.cache_write_tokens``
    (OpenAI reports them from the GPT-5.6 family on: prompt caching guide).
    """
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details else 0
    written = (getattr(details, "cache_write_tokens", None) or 0) if details else 0
    if not cached:
        hit = getattr(usage, "prompt_cache_hit_tokens", None)
        cached = hit if isinstance(hit, int) and not isinstance(hit, bool) and hit > 0 else 0
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


class OpenAIChatModel(ProviderModel):
    """An OpenAI Chat Completions model, or any OpenAI-compatible server's.

    Example::

        model = OpenAIChatModel("gpt-4o")                      # OPENAI_API_KEY
        local = OpenAIChatModel(
            "Qwen/Qwen2.5-7B-Instruct", base_url="http://localhost:8000/v1",
            api_key="EMPTY", provider="vllm", context_window=32_768,
        )
        reply = await model.generate(ModelRequest(messages=[Message("user", "hi")]))

    Streams ask for usage (``stream_options.include_usage``), as the API reference describes,
    so streamed calls are priced too.

    Args:
        model: the model name.
        max_tokens_field: the request field for ``max_output_tokens``:
            ``"max_completion_tokens"`` (OpenAI's, the only one its reasoning models accept)
            or ``"max_tokens"`` (what most compatible servers read); default the first for
            provider ``"openai"``, else the second.
        reasoning_back: which assistant turns send their reasoning back (see the class
            attribute); ``None``: the class's.
        **kwargs: see :class:`~agent_adapter.providers._base.ProviderModel` (``client``,
            ``api_key``, ``base_url``, ``timeout_s``, ``max_retries``, ``context_window``,
            ``provider``).

    Raises:
        ConfigError: a bad setting, or no API key (pass ``api_key`` or set
            ``OPENAI_API_KEY``).
        MissingDependency: ``openai`` is not installed (extra ``openai``).
    """

    default_provider = "openai"
    #: Which assistant turns send their reasoning (the leading thinking part, from the
    #: reply's ``reasoning_content``) back as ``reasoning_content``: ``False`` none (OpenAI
    #: takes no such field), ``True`` the turns that made tool calls (DeepSeek's thinking
    #: mode requires those: Thinking Mode guide, "Tool Calls"), ``"always"`` every turn
    #: that has reasoning (what cliver-core 0.3.0a5 sends, replaying each reply's wire
    #: message; GLM wants it with tool results, "Interleaved thinking", and from every
    #: earlier turn unmodified with preserved thinking: docs.z.ai/guides/capabilities/
    #: thinking-mode). The constructor's ``reasoning_back`` overrides it for one model.
    reasoning_back: bool | Literal["always"] = False
    #: The environment variable holding the API key (the SDK's own for OpenAI).
    api_key_env: str | None = None
    #: The base URL when none is given (``None``: the SDK's, OpenAI's).
    default_base_url: str | None = None

    def __init__(
        self,
        model: str,
        *,
        max_tokens_field: Literal["max_completion_tokens", "max_tokens"] | None = None,
        reasoning_back: bool | Literal["always"] | None = None,
        **kwargs: Any,
    ) -> None:
        if kwargs.get("base_url") is None and self.default_base_url is not None:
            kwargs["base_url"] = self.default_base_url
        super().__init__(model, **kwargs)
        if max_tokens_field is None:
            max_tokens_field = (
                "max_completion_tokens" if self.provider == "openai" else "max_tokens"
            )
        if max_tokens_field not in ("max_completion_tokens", "max_tokens"):
            raise ConfigError(
                f"max_tokens_field must be 'max_completion_tokens' or 'max_tokens', got "
                f"{max_tokens_field!r}"
            )
        self.max_tokens_field = max_tokens_field
        if reasoning_back is not None:
            if reasoning_back not in (True, False, "always"):
                raise ConfigError(
                    f"reasoning_back must be True, False or 'always', got {reasoning_back!r}"
                )
            self.reasoning_back = reasoning_back

    def _make_client(self, api_key: str | None) -> Any:
        if api_key is None and self.api_key_env is not None:
            import os

            import_openai(type(self).__name__)
            api_key = os.environ.get(self.api_key_env)
            if api_key is None:
                raise ConfigError(
                    f"{type(self).__name__}: no API key: pass api_key= or set {self.api_key_env}"
                )
        return openai_client(self, api_key)

    def wire_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The Chat Completions messages sent for ``messages``.

        An assistant message whose content is text alone goes as one string, as the API
        returns it (its reasoning has no slot in a list of parts either): DeepSeek and other
        compatible servers reject list content on an assistant turn ("invalid type:
        sequence, expected a string"). With ``reasoning_back``, an assistant turn that made
        tool calls (``"always"``: any turn) carries its reasoning as ``reasoning_content``
        (DeepSeek's Thinking Mode guide: for turns that performed tool calls, "the
        reasoning_content must be fully passed back to the API in all subsequent
        requests", else a 400; a turn without tool calls needs none)."""
        natives = strip_reserved(_CHAT.dump_all(messages))
        if len(natives) != len(messages):
            return natives
        out = []
        for message, native in zip(messages, natives, strict=True):
            if message.role == "assistant":
                native = self._assistant_wire(message, native)
            out.append(native)
        return out

    def _assistant_wire(self, message: Message, native: dict[str, Any]) -> dict[str, Any]:
        content = native.get("content")
        if (
            isinstance(content, list)
            and content
            and all(
                isinstance(b, dict) and set(b) == {"type", "text"} and b["type"] == "text"
                for b in content
            )
        ):
            native = {**native, "content": message.text}  # those blocks are its text parts
        parts = message.content
        if (
            self.reasoning_back
            and (message.tool_calls or self.reasoning_back == "always")
            and not isinstance(parts, str)
            and parts
            and isinstance(parts[0], ThinkingPart)
            and parts[0].text
        ):
            native = {**native, "reasoning_content": parts[0].text}
        return native

    def _request(self, request: ModelRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": self.wire_messages(request.messages),
        }
        if request.tools:
            kwargs["tools"] = [t.openai_schema() for t in request.tools]
        choice = request.tool_choice
        if choice is not None:
            if choice in ("auto", "none", "required"):
                kwargs["tool_choice"] = choice
            else:
                kwargs["tool_choice"] = {"type": "function", "function": {"name": choice}}
        fmt = request.response_format
        if fmt == "json":
            kwargs["response_format"] = {"type": "json_object"}
        elif isinstance(fmt, JsonSchema):
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": fmt.name, "schema": dict(fmt.schema), "strict": fmt.strict},
            }
        if request.max_output_tokens is not None:
            kwargs[self.max_tokens_field] = request.max_output_tokens
        for name in ("temperature", "top_p", "seed"):
            if (value := getattr(request, name)) is not None:
                kwargs[name] = value
        if request.stop:
            kwargs["stop"] = list(request.stop)
        kwargs.update(
            checked_options(
                request,
                call_parameters(self._client.chat.completions.create),
                "OpenAI chat.completions.create",
            )
        )
        return kwargs

    async def _send(self, kwargs: dict[str, Any]) -> Any:
        return await self._client.chat.completions.create(**kwargs)

    def _parse(self, raw: Any) -> Parsed:
        choice = raw.choices[0]
        message = choice.message
        native: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            native["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                }
                for c in message.tool_calls
            ]
        if message.refusal:
            native["refusal"] = message.refusal
        reasoning = getattr(message, "reasoning_content", None)
        return Parsed(
            message=with_reasoning(_CHAT.load(native, 0)[0], reasoning),
            usage=chat_usage(raw.usage),
            finish_reason=_finish(choice.finish_reason),
            model=raw.model or "",
            raw=raw,
        )

    async def _deltas(
        self, kwargs: dict[str, Any], state: StreamState
    ) -> AsyncIterator[StreamEvent]:
        """The stream's deltas; the reply once a chunk carried its ``finish_reason``.

        A Chat Completions stream ends with a chunk whose ``finish_reason`` is set (null on
        every chunk before it), the usage chunk when asked for, then ``data: [DONE]`` (API
        reference, "The chat completion chunk object" and "Streaming"). The SDK ends its
        iteration quietly when the connection closes before that, so a stream without a
        finish reason is a cut-off reply: ``ModelOutputInvalid``, not a short answer.
        """
        kwargs = {**kwargs, "stream": True}
        kwargs.setdefault("stream_options", {"include_usage": True})
        said = _ChatStream()
        stream = await self._client.chat.completions.create(**kwargs)
        async with stream:
            async for chunk in stream:
                for event in said.read(chunk):
                    yield event
        if said.finish is None:
            # a stream always ends with a chunk whose finish_reason is set, then
            # ``data: [DONE]`` (API reference, "The chat completion chunk object":
            # ``finish_reason`` "The reason the model stopped generating tokens", null on
            # every chunk before it; "Streaming": "terminated by a data: [DONE] message").
            # Without it the connection dropped mid-reply: the text is a fragment.
            raise ModelOutputInvalid(
                "the stream ended without a chunk holding finish_reason: the reply is "
                f"incomplete ({len(''.join(said.text))} characters received)",
                provider=self.provider,
                model=self.model,
            )
        state.reply = Parsed(
            message=with_reasoning(_CHAT.load(said.native(), 0)[0], "".join(said.reasoning)),
            usage=said.usage,
            finish_reason=_finish(said.finish),
            model=said.model,
        )

    def _vendor_error(self, error: BaseException) -> ModelError | None:
        return openai_error(error, provider=self.provider, model=self.model)

    def _retry(self, error: BaseException) -> Retry | None:
        return openai_retry(error)


class _ChatStream:
    """What a Chat Completions stream has said so far: text, reasoning, the tool calls by
    index, the finish reason, the model and the usage."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: Any = None
        self.model = ""
        self.usage = Usage()

    def read(self, chunk: Any) -> Iterator[StreamEvent]:
        """One chunk: its model and usage noted, its deltas kept and yielded in order."""
        self.model = chunk.model or self.model
        if chunk.usage is not None:
            self.usage = chat_usage(chunk.usage)
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        delta = choice.delta
        thinking = getattr(delta, "reasoning_content", None)
        if isinstance(thinking, str) and thinking:
            self.reasoning.append(thinking)
            yield ThinkingDelta(text=thinking)
        if delta.content:
            self.text.append(delta.content)
            yield TextDelta(text=delta.content)
        for call in delta.tool_calls or ():
            yield self._call(call)
        self.finish = choice.finish_reason or self.finish

    def _call(self, call: Any) -> ToolCallDelta:
        """A tool call's delta, added to the call of its index."""
        slot = self.calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
        function = call.function
        name = function.name if function is not None else None
        piece = (function.arguments if function is not None else None) or ""
        if call.id:
            slot["id"] = call.id
        if name:
            slot["name"] += name
        slot["arguments"] += piece
        return ToolCallDelta(index=call.index, id=call.id, name=name, arguments=piece)

    def native(self) -> dict[str, Any]:
        """The reply as a Chat Completions assistant message."""
        native: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.calls:
            native["tool_calls"] = [
                {
                    "id": slot["id"] or f"call_{i}",
                    "type": "function",
                    "function": {"name": slot["name"], "arguments": slot["arguments"]},
                }
                for i, slot in sorted(self.calls.items())
            ]
        return native
