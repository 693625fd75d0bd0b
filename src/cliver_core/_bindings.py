"""Model bindings: which model, on which endpoint, with which key, for the agent's llm.

A :class:`ModelBinding` is built into one of the shared providers of
:mod:`agent_adapter.providers` (the official SDKs; no second provider stack) on first use, or
wraps any :class:`agent_adapter.LLMPort` given as ``provider=`` (a
:class:`~agent_adapter.CallableModel`, a ``CompressingModel``...). :class:`ModelBindings` holds
the llm binding and its failover chain: ``ModelBindings(llm=[primary, backup])`` (or
``llm=primary, llm_fallbacks=[backup]``) tries the bindings in order on retryable failures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_adapter import ConfigError, LLMPort

__all__ = ["PROTOCOLS", "PURPOSES", "ModelBinding", "ModelBindings"]

#: Wire protocols a binding speaks: OpenAI Chat Completions (and every compatible server),
#: OpenAI Responses, Anthropic Messages, the Gemini API.
PROTOCOLS = ("openai", "responses", "anthropic", "gemini")
#: Purposes a model can be bound for (0.3.0a5's); this version runs ``llm`` only.
PURPOSES = ("llm", "embed", "rerank", "image", "audio", "video", "tts", "asr")


@dataclass(kw_only=True)
class ModelBinding:
    """A model bound to a purpose: its definition, default call options and provider.

    Attributes:
        model: the model name the endpoint knows.
        provider: a ready :class:`agent_adapter.LLMPort` to use as it is (never closed by
            the binding); otherwise one is built from the fields below on first use.
        api_key: the key; ``""`` lets the SDK read its environment variable.
        base_url: the endpoint (``""``: the vendor's default).
        protocol: ``"openai"`` (Chat Completions), ``"responses"``, ``"anthropic"`` or
            ``"gemini"``.
        provider_name: the vendor's name in the ledger, events and price lookups
            (``"deepseek"``, ``"vllm"``...; default: the protocol's vendor).
        path: unused by llm bindings (0.3.0a5 media endpoints).
        purpose: the purpose the factory made it for.
        params: default call options (``temperature``, ``max_tokens``...); call-site
            ``options`` win.
        timeout_s: seconds the SDK waits for a read before a timeout (a retryable failure).
        max_retries: the SDK's own retries on this endpoint before failover moves on.
        context_window: the window in tokens for a self-hosted model (information for
            ``CompressingModel``; the core keeps no window table).
    """

    model: str
    provider: Any = None
    api_key: str = ""
    base_url: str = ""
    protocol: str = "openai"
    provider_name: str | None = None
    path: str | None = None
    purpose: str | None = field(default=None, compare=False)
    params: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 600.0
    max_retries: int = 2
    context_window: int | None = None
    _built: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ConfigError("ModelBinding.model must be a non-empty str")
        if self.protocol not in PROTOCOLS:
            raise ConfigError(
                f"ModelBinding.protocol must be one of {PROTOCOLS}, got {self.protocol!r}"
            )
        if self.provider is not None and not isinstance(self.provider, LLMPort):
            raise ConfigError(
                "ModelBinding.provider must be an agent_adapter.LLMPort, got "
                f"{type(self.provider).__name__}"
            )

    @classmethod
    def llm(
        cls,
        *,
        model: str,
        api_key: str = "",
        base_url: str = "",
        protocol: str = "openai",
        provider_name: str | None = None,
        provider: Any = None,
        path: str | None = None,
        timeout_s: float = 600.0,
        max_retries: int = 2,
        context_window: int | None = None,
        **params: Any,
    ) -> ModelBinding:
        """A chat binding for :class:`~cliver_core.AgentCore`; ``params`` are default options.

        Raises:
            TypeError: ``path`` was given (chat requests have no endpoint path override).
            ConfigError: a bad model or protocol.
        """
        if path is not None:
            raise TypeError("ModelBinding.llm() takes no path (base_url sets the endpoint)")
        return cls(
            model=model,
            provider=provider,
            api_key=api_key,
            base_url=base_url,
            protocol=protocol,
            provider_name=provider_name,
            purpose="llm",
            params=dict(params),
            timeout_s=timeout_s,
            max_retries=max_retries,
            context_window=context_window,
        )

    def call_defaults(self) -> dict[str, Any]:
        """The default call options."""
        return dict(self.params)

    @property
    def name(self) -> str:
        """``provider:model`` for events and errors."""
        port = self.provider or self._built
        vendor = getattr(port, "provider", None) or self.provider_name or self.protocol
        return f"{vendor}:{self.model}"

    def get_provider(self) -> LLMPort:
        """The port for this binding: ``provider``, or one built once and reused.

        Raises:
            ConfigError: no key where the SDK needs one, or a bad setting.
            MissingDependency: the protocol's SDK is not installed (names the extra).
        """
        if self.provider is not None:
            port: LLMPort = self.provider
            return port
        if self._built is None:
            self._built = self._build()
        built: LLMPort = self._built
        return built

    def _build(self) -> LLMPort:
        kwargs: dict[str, Any] = {
            "api_key": self.api_key or None,
            "base_url": self.base_url or None,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "context_window": self.context_window,
        }
        if self.provider_name:
            kwargs["provider"] = self.provider_name
        if self.protocol == "openai":
            if self.provider_name == "deepseek":
                from agent_adapter.providers import DeepSeekModel

                return DeepSeekModel(self.model, **kwargs)
            from agent_adapter.providers import OpenAIChatModel

            return OpenAIChatModel(self.model, **kwargs)
        if self.protocol == "responses":
            from agent_adapter.providers import OpenAIResponsesModel

            return OpenAIResponsesModel(self.model, **kwargs)
        if self.protocol == "anthropic":
            from agent_adapter.providers import AnthropicModel

            return AnthropicModel(self.model, **kwargs)
        from agent_adapter.providers import GeminiModel

        return GeminiModel(self.model, **kwargs)

    async def aclose(self) -> None:
        """Close the provider this binding built (a given ``provider`` stays open)."""
        built, self._built = self._built, None
        close = getattr(built, "aclose", None)
        if close is not None:
            await close()


@dataclass(kw_only=True)
class ModelBindings:
    """The models of an agent, by purpose; ``llm`` (required by AgentCore) runs the loop.

    ``llm`` may be a list: its first binding is ``llm`` and the others the failover chain,
    tried in order when a call fails with a retryable error (429, 5xx, timeouts, connection
    errors). Authentication and bad-request errors are not retried.

    Attributes:
        llm: the chat binding (or a list, see above).
        llm_fallbacks: the bindings tried after ``llm``, in order.
        embed, rerank, image, audio, video, tts, asr: other purposes (kept for 0.3.0a5
            code; this version's loop uses ``llm`` only).
    """

    llm: ModelBinding | None = None
    llm_fallbacks: Sequence[ModelBinding] = ()
    embed: ModelBinding | None = None
    rerank: ModelBinding | None = None
    image: ModelBinding | None = None
    audio: ModelBinding | None = None
    video: ModelBinding | None = None
    tts: ModelBinding | None = None
    asr: ModelBinding | None = None

    def __post_init__(self) -> None:
        llm: Any = self.llm
        fallbacks = list(self.llm_fallbacks)
        if isinstance(llm, list | tuple):
            if not llm:
                raise ConfigError("ModelBindings.llm: an empty list has no model")
            llm, fallbacks = llm[0], [*llm[1:], *fallbacks]
            self.llm = llm
        for i, binding in enumerate([llm, *fallbacks]):
            if binding is not None and not isinstance(binding, ModelBinding):
                where = "llm" if i == 0 else f"llm_fallbacks[{i - 1}]"
                raise ConfigError(
                    f"ModelBindings.{where} must be a ModelBinding, got {type(binding).__name__}"
                )
        self.llm_fallbacks = tuple(fallbacks)

    @property
    def llm_chain(self) -> tuple[ModelBinding, ...]:
        """``llm`` then its fallbacks: the order failover tries them in."""
        return (self.llm, *self.llm_fallbacks) if self.llm is not None else ()

    def get(self, purpose: str) -> ModelBinding | None:
        """The binding for ``purpose`` (one of :data:`PURPOSES`), or ``None``.

        Raises:
            ConfigError: an unknown purpose.
        """
        if purpose not in PURPOSES:
            raise ConfigError(f"unknown purpose {purpose!r}; supported: {list(PURPOSES)}")
        binding: ModelBinding | None = getattr(self, purpose)
        return binding

    def bound_purposes(self) -> list[str]:
        """Purposes that have a model bound."""
        return [p for p in PURPOSES if getattr(self, p) is not None]

    async def aclose(self) -> None:
        """Close the providers these bindings built."""
        for binding in (*self.llm_chain, *(getattr(self, p) for p in PURPOSES[1:])):
            if binding is not None:
                await binding.aclose()
