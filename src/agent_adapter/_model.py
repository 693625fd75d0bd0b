"""The model ports and what goes through them: requests, responses, usage and stream events.

Every model in the library (the real providers, :class:`~agent_adapter.CallableModel`,
``CompressingModel``) is an :class:`LLMPort`: ``await generate(request)`` for one reply,
``stream(request)`` for its events, ``cache_key_fields()`` for cache keys. The request and
response types are frozen keyword-only dataclasses, like :class:`~agent_adapter.Message`:
validated on construction (a :class:`~agent_adapter.ConfigError` naming the field), cheap to
copy with :func:`dataclasses.replace`, and never changed in place.

Usage follows OpenAI's accounting (``prompt_tokens`` counts cached tokens too):
``input_tokens`` is *every* input token of the call, of which ``cache_read_tokens`` were read
from the provider's prompt cache and ``cache_write_tokens`` written to it. Anthropic reports the
three apart (``input_tokens`` excludes ``cache_read_input_tokens`` and
``cache_creation_input_tokens``); its adapter adds them up.
"""

from __future__ import annotations

import math
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypeGuard, runtime_checkable

from agent_adapter._compression import CompressionSettings, is_compression_settings
from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter._tools import FunctionTool

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "EmbeddingPort",
    "FinishReason",
    "JsonSchema",
    "LLMPort",
    "ModelRequest",
    "ModelResponse",
    "StreamEnd",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "Usage",
    "UsageEvent",
]

#: Why the model stopped, normalised over providers: ``"stop"`` (natural end or a stop
#: sequence), ``"length"`` (max output tokens), ``"tool_calls"``, ``"content_filter"``,
#: ``"other"`` (anything else; the provider's own value is in ``ModelResponse.raw``).
FinishReason: TypeAlias = Literal["stop", "length", "tool_calls", "content_filter", "other"]
_FINISH = ("stop", "length", "tool_calls", "content_filter", "other")


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where} must be an int >= 0, got {value!r}")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """What one call used, for billing and for calibrating token counts.

    Attributes:
        input_tokens: every input token of the call, cached ones included.
        output_tokens: generated tokens (reasoning tokens included, as OpenAI bills them).
        cache_read_tokens: the part of ``input_tokens`` read from the prompt cache (OpenAI
            ``prompt_tokens_details.cached_tokens`` / ``input_tokens_details.cached_tokens``,
            Anthropic ``cache_read_input_tokens``, Gemini ``cached_content_token_count``,
            DeepSeek ``prompt_cache_hit_tokens``), priced at the cached-input price.
        cache_write_tokens: the part of ``input_tokens`` written to the prompt cache
            (Anthropic ``cache_creation_input_tokens``, OpenAI ``cache_write_tokens``), priced
            at the cache-write price.
        units: billing units that are not tokens (a rerank search, an image), priced with
            :attr:`~agent_adapter.Price.per_unit`.

    Raises:
        ConfigError: a count is not an int >= 0, or the cached parts exceed ``input_tokens``.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    units: int = 0

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            _count(getattr(self, name), f"Usage.{name}")
        _count(self.units, "Usage.units")
        if self.cache_read_tokens + self.cache_write_tokens > self.input_tokens:
            raise ConfigError(
                f"Usage: cache_read_tokens {self.cache_read_tokens} + cache_write_tokens "
                f"{self.cache_write_tokens} exceed input_tokens {self.input_tokens} (input "
                "counts every input token, cached ones included)"
            )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        """The field-wise sum (a run's total)."""
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            units=self.units + other.units,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonSchema:
    """Structured output: the reply must be JSON matching ``schema``.

    Attributes:
        name: the schema's name (OpenAI requires one; ``[a-zA-Z0-9_-]``, up to 64 chars).
        schema: the JSON schema of the reply object.
        strict: ask the provider to enforce the schema exactly (OpenAI ``strict``).
    """

    name: str
    schema: Mapping[str, Any]
    strict: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError("JsonSchema.name must be a non-empty str")
        if not isinstance(self.schema, Mapping):
            raise ConfigError("JsonSchema.schema must be a mapping (a JSON schema)")

    @classmethod
    def of(cls, model: type[BaseModel], *, strict: bool = True) -> JsonSchema:
        """The schema of a pydantic model, named after the class."""
        return cls(name=model.__name__, schema=model.model_json_schema(), strict=strict)


ResponseFormat: TypeAlias = Literal["json"] | JsonSchema


def _is_pydantic_model(value: object) -> TypeGuard[type[BaseModel]]:
    """A pydantic model class; False without importing pydantic when it is not loaded."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(value, type):
        return False
    return issubclass(value, pydantic.BaseModel)


def _response_format(value: Any) -> ResponseFormat | None:
    if value is None or value == "text":
        return None
    if value == "json" or isinstance(value, JsonSchema):
        return value  # type: ignore[no-any-return]
    if _is_pydantic_model(value):
        return JsonSchema.of(value)
    if isinstance(value, Mapping):
        return JsonSchema(name="response", schema=value)
    raise ConfigError(
        "ModelRequest.response_format must be None, 'text', 'json', a JsonSchema, a JSON schema "
        f"mapping or a pydantic model class, got {type(value).__name__}"
    )


def _messages(value: Any) -> tuple[Message, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigError("ModelRequest.messages must be a sequence of Message")
    messages = value if type(value) is tuple else tuple(value)
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            raise ConfigError(
                f"ModelRequest.messages[{i}] must be a Message, got {type(m).__name__}"
            )
    return messages


def _unit_float(value: Any, name: str, low: float, high: float) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"ModelRequest.{name} must be a finite number, got {value!r}")
    if not low <= value <= high:
        raise ConfigError(f"ModelRequest.{name} must be in [{low}, {high}], got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """One call to a model.

    Attributes:
        messages: the conversation, oldest first (stored as a tuple).
        tools: the tools the model may call.
        tool_choice: ``None`` (the provider's default, "auto" when tools are given),
            ``"auto"``, ``"none"``, ``"required"``, or a tool name the model must call.
        response_format: ``None`` (text), ``"json"`` (any JSON object) or a
            :class:`JsonSchema`; a JSON schema mapping or a pydantic model class is turned
            into a ``JsonSchema``.
        max_output_tokens: the reply's token limit (``max_tokens`` / ``max_output_tokens`` /
            ``maxOutputTokens`` of the providers); ``None`` for the provider's default
            (Anthropic requires one: its adapter uses the model profile's output limit).
        temperature: sampling temperature, 0..2 (Anthropic accepts 0..1).
        top_p: nucleus sampling, 0..1.
        stop: stop sequences.
        seed: a sampling seed where the provider supports one.
        compression: this request's own policy; it wins over a ``CompressingModel``'s.
        stage: what the call is for, in the ledger and events (``"main"``, ``"summary"``...).
        ctx: the run context (:class:`~agent_adapter.RunContext`): ledger, events, ids.
        options: provider-specific request fields, passed to the SDK call as they are.
        precompressed: set by a ``CompressingModel`` on the request it passes on: it was
            compressed and that layer owns the overflow retry, so an inner layer passes it
            straight through. Leave it ``False``.

    Raises:
        ConfigError: a field has the wrong type or is out of range.
    """

    messages: Sequence[Message]
    tools: Sequence[FunctionTool] = ()
    tool_choice: str | None = None
    response_format: ResponseFormat | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: Sequence[str] = ()
    seed: int | None = None
    compression: CompressionSettings | None = None
    stage: str = "main"
    ctx: Any = field(default=None, compare=False)
    options: Mapping[str, Any] = field(default_factory=dict)
    precompressed: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", _messages(self.messages))
        tools = self.tools
        if isinstance(tools, str) or not isinstance(tools, Sequence):
            raise ConfigError("ModelRequest.tools must be a sequence of FunctionTool")
        tools = tuple(tools)
        for i, tool in enumerate(tools):
            if not isinstance(tool, FunctionTool):
                raise ConfigError(
                    f"ModelRequest.tools[{i}] must be a FunctionTool, got {type(tool).__name__}"
                )
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise ConfigError(f"ModelRequest.tools: duplicate tool names in {names}")
        object.__setattr__(self, "tools", tools)
        if self.tool_choice is not None and (
            not isinstance(self.tool_choice, str) or not self.tool_choice
        ):
            raise ConfigError("ModelRequest.tool_choice must be None or a non-empty str")
        object.__setattr__(self, "response_format", _response_format(self.response_format))
        if self.max_output_tokens is not None and (
            isinstance(self.max_output_tokens, bool)
            or not isinstance(self.max_output_tokens, int)
            or self.max_output_tokens <= 0
        ):
            raise ConfigError(
                f"ModelRequest.max_output_tokens must be an int > 0, got {self.max_output_tokens!r}"
            )
        _unit_float(self.temperature, "temperature", 0.0, 2.0)
        _unit_float(self.top_p, "top_p", 0.0, 1.0)
        stop = self.stop
        if isinstance(stop, str):
            stop = (stop,)
        if not isinstance(stop, Sequence) or not all(isinstance(s, str) and s for s in stop):
            raise ConfigError("ModelRequest.stop must be a sequence of non-empty str")
        object.__setattr__(self, "stop", tuple(stop))
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise ConfigError(f"ModelRequest.seed must be an int, got {self.seed!r}")
        if self.compression is not None and not is_compression_settings(self.compression):
            raise ConfigError(
                "ModelRequest.compression must be a CompressionPolicy or None, got "
                f"{type(self.compression).__name__}"
            )
        if not isinstance(self.stage, str) or not self.stage:
            raise ConfigError("ModelRequest.stage must be a non-empty str")
        if not isinstance(self.options, Mapping):
            raise ConfigError("ModelRequest.options must be a mapping")

    def tool(self, name: str) -> FunctionTool | None:
        """The tool called ``name``, or ``None``."""
        return next((t for t in self.tools if t.name == name), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponse:
    """A model's reply.

    Attributes:
        message: the assistant message (text, thinking parts, tool calls).
        usage: what the call used.
        cost_usd: its price from the run's price table; ``None`` when the model has no price.
        model: the model that answered (as the provider names it, e.g. a dated version).
        provider: the provider's name (``"openai"``, ``"anthropic"``, ...).
        finish_reason: why it stopped (:data:`FinishReason`).
        raw: the vendor's own response object, for fields with no slot here.

    Raises:
        ConfigError: ``message`` is not an assistant :class:`~agent_adapter.Message`, or a
            field has the wrong type.
    """

    message: Message
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    model: str = ""
    provider: str = ""
    finish_reason: FinishReason = "stop"
    raw: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.message, Message) or self.message.role != "assistant":
            raise ConfigError("ModelResponse.message must be an assistant Message")
        if not isinstance(self.usage, Usage):
            raise ConfigError(
                f"ModelResponse.usage must be a Usage, got {type(self.usage).__name__}"
            )
        c = self.cost_usd
        if c is not None and (
            isinstance(c, bool) or not isinstance(c, int | float) or not math.isfinite(c) or c < 0
        ):
            raise ConfigError(f"ModelResponse.cost_usd must be None or a number >= 0, got {c!r}")
        if self.finish_reason not in _FINISH:
            raise ConfigError(
                f"ModelResponse.finish_reason must be one of {_FINISH}, got {self.finish_reason!r}"
            )

    @property
    def text(self) -> str:
        """The reply's text."""
        return self.message.text


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A piece of the reply's text."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDelta:
    """A piece of the model's reasoning; ``signature`` arrives once, at its end."""

    text: str = ""
    signature: str | None = None
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta:
    """A piece of a tool call: ``index`` names the call, ``id`` and ``name`` come on its first
    delta, ``arguments`` is the next fragment of its JSON text."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageEvent:
    """The usage of the call, once known (usually just before the end)."""

    usage: Usage
    kind: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEnd:
    """The last event: the whole reply, as ``generate`` would have returned it."""

    response: ModelResponse
    kind: Literal["end"] = "end"


StreamEvent: TypeAlias = TextDelta | ThinkingDelta | ToolCallDelta | UsageEvent | StreamEnd


@runtime_checkable
class LLMPort(Protocol):
    """A chat model: one reply for a request, or its stream of events.

    ``provider`` and ``model`` name it (ledger entries, price and profile lookups). A port
    writes one ledger entry per call to ``request.ctx`` and emits its events there.
    """

    provider: str
    model: str

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """The model's reply to ``request``.

        Raises:
            ModelError: the call failed (``ModelContextOverflow``, ``ModelTimeout``,
                ``ModelOutputInvalid`` for the known causes).
        """
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The reply as events, ending with one :class:`StreamEnd`."""
        ...

    def cache_key_fields(self) -> Mapping[str, Any]:
        """JSON-safe settings that change the reply: provider, model, fixed options."""
        ...


@runtime_checkable
class EmbeddingPort(Protocol):
    """Turns texts into vectors, one per text, in order."""

    async def embed(self, texts: Sequence[str], *, ctx: Any = None) -> list[list[float]]:
        """One vector per text, all of the same size."""
        ...
