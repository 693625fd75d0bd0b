"""OpenAI Responses (``POST /v1/responses``) on the official ``openai`` SDK.

Messages are written and read by the ``openai`` format's Responses converter
(:class:`~agent_adapter.context.formats._openai.ResponsesConverter`): system messages stay
``system`` items of ``input``, tool calls are ``function_call`` items answered by
``function_call_output`` items. The API has no stop sequences and no seed, so a request with
either is refused (``ConfigError``) rather than silently changed. A ``response.failed`` or
``error`` event in a stream is translated like an HTTP error (a context overflow included).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from agent_adapter._errors import ConfigError, ModelError, ModelOutputInvalid
from agent_adapter._messages import Message, Part, TextPart, ThinkingPart, ToolCall
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
from agent_adapter.context.formats._openai import ResponsesConverter
from agent_adapter.providers._base import (
    Parsed,
    ProviderModel,
    StreamState,
    call_parameters,
    checked_options,
)
from agent_adapter.providers._openai_errors import openai_client, openai_error, openai_retry
from agent_adapter.providers._overflow import overflow_or_error
from agent_adapter.providers._retry import Retry

__all__ = ["OpenAIResponsesModel"]

_RESPONSES = ResponsesConverter()


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    details = getattr(usage, "input_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details else 0
    written = (getattr(details, "cache_write_tokens", None) or 0) if details else 0
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


def _item(item: Any) -> dict[str, Any]:
    """An output item as an input item: without the empty ``logprobs`` the API adds to
    every ``output_text`` part (an input part has no use for them)."""
    data: dict[str, Any] = item.model_dump(mode="json", exclude_none=True)
    for part in data.get("content") or ():
        if isinstance(part, dict) and part.get("logprobs") == []:
            del part["logprobs"]
    return data


def _one_message(messages: Sequence[Message]) -> Message:
    """The reply's items as one assistant message.

    The converter loads a ``reasoning`` item, a ``message`` item and a run of call items as
    messages of their own; the reply is one message holding them all: the text item's keys
    (``id``, ``status``) as its extras, each call item's ``id`` / ``status`` in its call's
    extras, each reasoning item whole in its thinking part (see :func:`_reasoning_apart`), so
    the items go back as they came.
    """
    if len(messages) == 1:
        return messages[0]
    parts: list[Part] = []
    calls: list[ToolCall] = []
    extras: dict[str, Any] = {}
    for m in messages:
        if isinstance(m.content, str):
            if m.content:
                parts.append(TextPart(m.content))
        else:
            parts.extend(m.content)
        kind = m.extras.get("type")
        if kind == "message" and not extras:
            extras = dict(m.extras)
        for i, call in enumerate(m.tool_calls):
            if i == 0 and kind not in (None, "message"):
                item = {k: v for k, v in m.extras.items() if k in ("id", "status")}
                call = replace(call, extras={**item, **call.extras})
            calls.append(call)
    return Message("assistant", content=tuple(parts), tool_calls=tuple(calls), extras=extras)


def _is_reasoning(part: Part) -> bool:
    return isinstance(part, ThinkingPart) and part.extras.get("type") == "reasoning"


def _reasoning_apart(messages: Sequence[Message]) -> list[Message]:
    """Each reasoning part of a message that holds more (a reply read by
    :func:`_one_message`) as a message of its own before it, which the converter writes as the
    ``reasoning`` item it was; the API wants reasoning items back with the calls they led to
    (function-calling guide, reasoning models)."""
    out: list[Message] = []
    for m in messages:
        content = m.content
        if (
            m.role != "assistant"
            or isinstance(content, str)
            or not any(_is_reasoning(p) for p in content)
            or (len(content) == 1 and not m.tool_calls)
        ):
            out.append(m)
            continue
        out.extend(Message("assistant", (p,)) for p in content if _is_reasoning(p))
        rest = tuple(p for p in content if not _is_reasoning(p))
        if rest or m.tool_calls:
            out.append(replace(m, content=rest))
    return out


class OpenAIResponsesModel(ProviderModel):
    """An OpenAI model through the Responses API.

    Example::

        model = OpenAIResponsesModel("gpt-5")                  # OPENAI_API_KEY
        reply = await model.generate(ModelRequest(messages=[Message("user", "hi")]))

    Args:
        model: the model name.
        **kwargs: see :class:`~agent_adapter.providers._base.ProviderModel`.

    Raises:
        ConfigError: a bad setting, or no API key (``api_key`` or ``OPENAI_API_KEY``).
        MissingDependency: ``openai`` is not installed (extra ``openai``).
    """

    default_provider = "openai"

    def _make_client(self, api_key: str | None) -> Any:
        return openai_client(self, api_key)

    def _request(self, request: ModelRequest) -> dict[str, Any]:
        if request.stop:
            raise ConfigError("OpenAI Responses has no stop sequences: ModelRequest.stop")
        if request.seed is not None:
            raise ConfigError("OpenAI Responses has no seed: ModelRequest.seed")
        kwargs: dict[str, Any] = {
            "model": self.model,
            "input": strip_reserved(_RESPONSES.dump_all(_reasoning_apart(request.messages))),
        }
        if request.tools:
            kwargs["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": False,
                }
                for t in request.tools
            ]
        choice = request.tool_choice
        if choice is not None:
            if choice in ("auto", "none", "required"):
                kwargs["tool_choice"] = choice
            else:
                kwargs["tool_choice"] = {"type": "function", "name": choice}
        fmt = request.response_format
        if fmt == "json":
            kwargs["text"] = {"format": {"type": "json_object"}}
        elif isinstance(fmt, JsonSchema):
            kwargs["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": fmt.name,
                    "schema": dict(fmt.schema),
                    "strict": fmt.strict,
                }
            }
        if request.max_output_tokens is not None:
            kwargs["max_output_tokens"] = request.max_output_tokens
        for name in ("temperature", "top_p"):
            if (value := getattr(request, name)) is not None:
                kwargs[name] = value
        kwargs.update(
            checked_options(
                request, call_parameters(self._client.responses.create), "OpenAI responses.create"
            )
        )
        return kwargs

    async def _send(self, kwargs: dict[str, Any]) -> Any:
        return await self._client.responses.create(**kwargs)

    def _failure(self, error: Any) -> ModelError:
        code = getattr(error, "code", None) if error is not None else None
        message = (getattr(error, "message", None) if error is not None else None) or "failed"
        return overflow_or_error(str(message), None, code, provider=self.provider, model=self.model)

    def _parse(self, raw: Any) -> Parsed:
        if raw.status == "failed" or raw.error is not None:
            raise self._failure(raw.error)
        items = [_item(item) for item in raw.output]
        if not items:
            raise ModelOutputInvalid(
                f"the response (status {raw.status!r}) has no output",
                provider=self.provider,
                model=self.model,
            )
        messages, _, _ = _RESPONSES.load_grouped(items)
        message = _one_message(messages)
        reason = getattr(raw.incomplete_details, "reason", None)
        finish: FinishReason
        if reason == "max_output_tokens":
            finish = "length"
        elif reason == "content_filter":
            finish = "content_filter"
        elif raw.status == "incomplete":
            finish = "other"
        else:
            finish = "tool_calls" if message.tool_calls else "stop"
        return Parsed(
            message=message,
            usage=_usage(raw.usage),
            finish_reason=finish,
            model=raw.model or "",
            raw=raw,
        )

    async def _deltas(
        self, kwargs: dict[str, Any], state: StreamState
    ) -> AsyncIterator[StreamEvent]:
        calls: dict[str, int] = {}
        final: Any = None
        stream = await self._client.responses.create(**kwargs, stream=True)
        async with stream:
            async for event in stream:
                kind = event.type
                if kind == "response.output_text.delta":
                    yield TextDelta(text=event.delta)
                elif kind in (
                    "response.reasoning_summary_text.delta",
                    "response.reasoning_text.delta",
                ):
                    yield ThinkingDelta(text=event.delta)
                elif kind == "response.output_item.added" and event.item.type == "function_call":
                    index = calls[event.item.id or str(len(calls))] = len(calls)
                    yield ToolCallDelta(
                        index=index,
                        id=event.item.call_id,
                        name=event.item.name,
                        arguments=event.item.arguments or "",
                    )
                elif kind == "response.function_call_arguments.delta":
                    yield ToolCallDelta(index=calls.get(event.item_id, 0), arguments=event.delta)
                elif kind in ("response.completed", "response.incomplete"):
                    final = event.response
                elif kind == "response.failed":
                    raise self._failure(event.response.error)
                elif kind == "error":
                    raise self._failure(event)
        if final is None:
            raise ModelOutputInvalid(
                "the stream ended without response.completed",
                provider=self.provider,
                model=self.model,
            )
        state.reply = self._parse(final)

    def _vendor_error(self, error: BaseException) -> ModelError | None:
        return openai_error(error, provider=self.provider, model=self.model)

    def _retry(self, error: BaseException) -> Retry | None:
        return openai_retry(error)
