"""Model bindings: which model, on which endpoint, with which key, for which purpose.

A :class:`ModelBinding` is one model handle (0.3.0a5's): its definition (``model``,
``api_key``, ``base_url``, ``protocol``, ``provider_name``, ``path``), its default call
parameters (``params``) and its provider. :class:`ModelBindings` holds one binding per purpose
(0.3.0a5's :data:`PURPOSES`) plus the llm's failover chain: ``ModelBindings(llm=[primary,
backup])`` (or ``llm=primary, llm_fallbacks=[backup]``) tries the bindings in order on
retryable failures (:mod:`cliver_core._model_bindings`).

The provider, per purpose:

* ``llm``: a given ``provider=`` is an :class:`agent_adapter.LLMPort` (a
  :class:`~agent_adapter.CallableModel`, a ``CompressingModel``...) or a 0.3.0a5
  :class:`~cliver_core.provider.Provider` (yours, adapted by
  :class:`~cliver_core._provider_port.ProviderPort`); without one, the binding builds one of
  :mod:`agent_adapter.providers` (the official SDKs) on first use.
* ``embed`` / ``rerank``: a given ``provider=`` is an agent_adapter
  :class:`~agent_adapter.context.EmbeddingPort` / :class:`~agent_adapter.context.RerankerPort`
  or a 0.3.0a5 ``Provider``; without one, the binding builds 0.3.0a5's ``Provider`` for the
  protocol and brand (:func:`~cliver_core.provider.providers.create_provider`), whose
  ``embed`` / ``rerank`` post to ``{base_url}/embeddings`` / ``{base_url}/rerank``.
* ``image``, ``video``, ``tts`` (``audio``), ``asr``: out of this version's scope. The
  bindings and their factories are 0.3.0a5's; using them raises
  :class:`~cliver_core.CapabilityNotSupported`, unless ``provider=`` is a ``Provider`` of
  yours implementing the method.

:meth:`ModelBinding.get_provider` returns a given ``provider=`` unchanged (as 0.3.0a5 does) or
what the binding built; the loop calls :meth:`ModelBinding._port`, always an
:class:`agent_adapter.LLMPort` (``_embedder()`` / ``_reranker()`` give the embedding and
reranker ports).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_adapter import ConfigError, LLMPort
from agent_adapter.context import EmbeddingPort, RerankerPort
from cliver_core._errors import CapabilityNotSupported
from cliver_core._provider_port import (
    ProviderEmbedder,
    ProviderPort,
    ProviderReranker,
    is_legacy_provider,
    provider_label,
)
from cliver_core._request import request_fields
from cliver_core.provider import unsupported_media
from cliver_core.provider.providers import create_provider

__all__ = [
    "PROTOCOLS",
    "PURPOSES",
    "CapabilityNotSupported",
    "ModelBinding",
    "binding_fields",
    "traced_provider",
]

#: Wire protocols a built binding speaks: OpenAI Chat Completions (and every compatible
#: server), OpenAI Responses, Anthropic Messages, the Gemini API.
PROTOCOLS = ("openai", "responses", "anthropic", "gemini")
#: Purposes AgentCore binds models for (0.3.0a5's); ``llm`` is the chat/stream model.
PURPOSES = ("llm", "embed", "rerank", "image", "audio", "video", "tts", "asr")
_MEDIA = ("image", "audio", "video", "tts", "asr")


def _drop_none(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


def _legacy(obj: Any) -> bool:
    return is_legacy_provider(obj)


def _accepted(purpose: str | None, provider: Any) -> bool:
    if _legacy(provider):
        return True
    if purpose in (None, "llm") and isinstance(provider, LLMPort):
        return True
    if purpose in (None, "embed") and isinstance(provider, EmbeddingPort):
        return True
    return purpose in (None, "rerank") and isinstance(provider, RerankerPort)


_KINDS = {
    "llm": "an agent_adapter.LLMPort",
    "embed": "an agent_adapter.context.EmbeddingPort",
    "rerank": "an agent_adapter.context.RerankerPort",
}


#: provider names whose endpoint is known without a base_url (the SDKs' own defaults for
#: OpenAI and Anthropic, DeepSeekModel's for DeepSeek)
_DEFAULT_ENDPOINTS = frozenset({"openai", "anthropic", "deepseek"})


@dataclass(kw_only=True)
class ModelBinding:
    """A model bound to one purpose: its definition, default call parameters and provider.

    Build one with the per-purpose factories (:meth:`llm`, :meth:`embed`, :meth:`rerank`,
    and 0.3.0a5's :meth:`image`, :meth:`video`, :meth:`tts`, :meth:`asr`); the raw
    constructor gives a binding without a ``purpose`` (an llm binding, as in 0.3.0a5).

    Attributes:
        model: the model name the endpoint knows.
        provider: a ready provider, used as it is and never closed by the binding (see the
            module docstring for what each purpose accepts); otherwise one is built on first
            use and reused.
        api_key: the key; ``""`` lets the SDK read its environment variable.
        base_url: the endpoint; ``""`` is the vendor's default only where
            ``provider_name`` names one that has it (``"openai"``, ``"anthropic"``,
            ``"deepseek"`` for llm; the brands of 0.3.0a5 for the other purposes), else
            building the provider is a ``ValueError``, as in 0.3.0a5 (``"responses"`` and
            ``"gemini"``, this version's own, default to the vendor's endpoint).
        protocol: ``"openai"`` (Chat Completions), ``"responses"``, ``"anthropic"`` or
            ``"gemini"``.
        provider_name: the vendor (``"deepseek"``, ``"vllm"``...): its name in the ledger,
            events and price lookups; 0.3.0a5's brand key for non-llm bindings.
        path: the endpoint path of a non-llm purpose (``/embeddings``, an absolute URL...).
        purpose: the purpose the factory made it for (``None`` for the raw constructor).
        params: default call parameters; call-site ones win (:meth:`call_defaults`).
        timeout_s: seconds a built llm provider's SDK waits for a read.
        max_retries: a built llm provider's SDK retries before failover moves on.
        context_window: the window in tokens of a self-hosted model (for
            ``CompressingModel``).

    Raises:
        ConfigError: an empty model, an unknown protocol, or a provider that cannot serve
            the purpose.
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
    _adapted: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise ConfigError("ModelBinding.model must be a non-empty str")
        if self.provider is None and self.protocol not in PROTOCOLS:
            raise ConfigError(
                f"ModelBinding.protocol must be one of {PROTOCOLS}, got {self.protocol!r}"
            )
        if self.provider is not None and not _accepted(self.purpose, self.provider):
            kind = _KINDS.get(self.purpose or "llm", "a cliver_core.provider.Provider")
            raise ConfigError(
                f"ModelBinding.provider must be {kind} or a cliver_core.provider.Provider, got "
                f"{type(self.provider).__name__}"
            )

    # -- per-purpose factories (0.3.0a5's signatures) --------------------------------------

    @classmethod
    def _make(cls, purpose: str, params: dict[str, Any], **definition: Any) -> ModelBinding:
        return cls(purpose=purpose, params=params, **definition)

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
        """A chat binding for :class:`~cliver_core.AgentCore`; ``params`` are default options
        (``temperature``, ``max_tokens``...).

        Raises:
            TypeError: ``path`` was given (chat requests have no endpoint path override).
            ConfigError: a bad model, protocol or provider.
        """
        if path is not None:
            raise TypeError(
                "ModelBinding.llm() takes no path — chat requests have no endpoint path "
                "override (provider, base_url, and protocol configure the endpoint)."
            )
        return cls._make(
            "llm",
            dict(params),
            model=model,
            provider=provider,
            api_key=api_key,
            base_url=base_url,
            protocol=protocol,
            provider_name=provider_name,
            timeout_s=timeout_s,
            max_retries=max_retries,
            context_window=context_window,
        )

    @classmethod
    def embed(
        cls,
        *,
        model: str,
        api_key: str = "",
        base_url: str = "",
        protocol: str = "openai",
        provider_name: str | None = None,
        provider: Any = None,
        dimensions: int | None = None,
        path: str | None = None,
        **params: Any,
    ) -> ModelBinding:
        """An embeddings binding; ``dimensions`` becomes a default param, ``path`` the
        endpoint override (default ``/embeddings``)."""
        return cls._make(
            "embed",
            {**_drop_none(dimensions=dimensions), **params},
            model=model,
            provider=provider,
            api_key=api_key,
            base_url=base_url,
            protocol=protocol,
            provider_name=provider_name,
            path=path,
        )

    @classmethod
    def rerank(
        cls,
        *,
        model: str,
        api_key: str = "",
        base_url: str = "",
        protocol: str = "openai",
        provider_name: str | None = None,
        provider: Any = None,
        top_k: int | None = None,
        path: str | None = None,
        **params: Any,
    ) -> ModelBinding:
        """A rerank binding; ``top_k`` becomes a default param, ``path`` the endpoint
        override (default ``/rerank``)."""
        return cls._make(
            "rerank",
            {**_drop_none(top_k=top_k), **params},
            model=model,
            provider=provider,
            api_key=api_key,
            base_url=base_url,
            protocol=protocol,
            provider_name=provider_name,
            path=path,
        )

    @classmethod
    def image(
        cls,
        *,
        model: str,
        api_key: str = "",
        base_url: str = "",
        protocol: str = "openai",
        provider_name: str | None = None,
        provider: Any = None,
        path: str | None = None,
        n: int | None = None,
        size: str | None = None,
        style: str | None = None,
        quality: str | None = None,
        **params: Any,
    ) -> ModelBinding:
        """An image binding (0.3.0a5's; image generation is out of scope)."""
        return cls._make(
            "image",
            {**_drop_none(n=n, size=size, style=style, quality=quality), **params},
            model=model,
            provider=provider,
            api_key=api_key,
            base_url=base_url,
            protocol=protocol,
            provider_name=provider_name,
            path=path,
        )

    @classmethod
    def video(
        cls,
        *,
        model: str,
        api_key: str = "",
        base_url: str = "",
        protocol: str = "openai",
        provider_name: str | None = None,
        provider: Any = None,
        path: str | None = None,
        duration: int | None = None,
        resolution: str | None = None,
        **params: Any,
    ) -> ModelBinding:
        """A video binding (0.3.0a5's; video generation is out of scope)."""
        return cls._make(
            "video",
            {**_drop_none(duration=duration, resolution=resolution), **params},
            model=model,
            provider=provider,
            api_key=api_key,
            base_url=base_url,
            protocol=protocol,
            provider_name=provider_name,
            path=path,
        )

    @classmethod
    def tts(
        cls,
        *,
        model: str,
        api_key: str = "",
        base_url: str = "",
        protocol: str = "openai",
        provider_name: str | None = None,
        provider: Any = None,
        voice: str | None = None,
        response_format: str | None = None,
        path: str | None = None,
        **params: Any,
    ) -> ModelBinding:
        """A text-to-speech binding, also for the legacy ``audio`` slot (0.3.0a5's; speech
        is out of scope)."""
        return cls._make(
            "tts",
            {**_drop_none(voice=voice, response_format=response_format), **params},
            model=model,
            provider=provider,
            api_key=api_key,
            base_url=base_url,
            protocol=protocol,
            provider_name=provider_name,
            path=path,
        )

    @classmethod
    def asr(
        cls,
        *,
        model: str,
        api_key: str = "",
        base_url: str = "",
        protocol: str = "openai",
        provider_name: str | None = None,
        provider: Any = None,
        language: str | None = None,
        path: str | None = None,
        **params: Any,
    ) -> ModelBinding:
        """A transcription binding (0.3.0a5's; transcription is out of scope)."""
        return cls._make(
            "asr",
            {**_drop_none(language=language), **params},
            model=model,
            provider=provider,
            api_key=api_key,
            base_url=base_url,
            protocol=protocol,
            provider_name=provider_name,
            path=path,
        )

    # -- call parameters -------------------------------------------------------------------

    def call_defaults(self) -> dict[str, Any]:
        """The parameters every call gets unless the call site sets them: ``path`` (when
        set) and ``params``, as 0.3.0a5."""
        return {**_drop_none(path=self.path), **self.params}

    @property
    def name(self) -> str:
        """``provider:model`` for events and errors."""
        port = self.provider if self.provider is not None else self._built
        if _legacy(port):
            vendor: Any = provider_label(port)
        else:
            vendor = getattr(port, "provider", None)
        return f"{vendor or self.provider_name or self.protocol}:{self.model}"

    # -- providers -------------------------------------------------------------------------

    def get_provider(self) -> LLMPort | Any:
        """The provider: ``provider`` as given, else the one this binding built (once).

        Built, it is the :mod:`agent_adapter.providers` model for an llm binding (0.3.0a5
        built its own ``Provider``), and 0.3.0a5's ``Provider`` for the protocol and brand
        for the other purposes (:func:`~cliver_core.provider.providers.create_provider`).

        Raises:
            ConfigError: no key where the SDK needs one, or a bad setting.
            MissingDependency: the protocol's SDK is not installed (names the extra).
            ValueError: a non-llm binding with no ``base_url`` and no brand default endpoint.
            CapabilityNotSupported: a non-llm binding on the ``gemini`` protocol.
        """
        return self._target(self.purpose or "llm")

    def _target(self, purpose: str) -> Any:
        """The provider serving ``purpose`` (built once when none was given)."""
        if self.provider is not None:
            return self.provider
        if self._built is None:
            self._built = self._build_llm() if purpose == "llm" else self._build_provider(purpose)
        return self._built

    def _port(self) -> LLMPort:
        """The :class:`agent_adapter.LLMPort` the loop calls for this binding: ``provider``
        when it is one, the built SDK provider, or a 0.3.0a5 ``Provider`` adapted by
        :class:`~cliver_core._provider_port.ProviderPort` (once per binding).

        Raises:
            CapabilityNotSupported: a binding made for a media purpose.
            As :meth:`get_provider`.
        """
        port: LLMPort = self._adapt("llm")
        return port

    def _embedder(self) -> EmbeddingPort:
        """The :class:`~agent_adapter.context.EmbeddingPort` of an embed binding (a 0.3.0a5
        ``Provider`` adapted by ``ProviderEmbedder``, with :meth:`call_defaults`)."""
        port: EmbeddingPort = self._adapt("embed")
        return port

    def _reranker(self) -> RerankerPort:
        """The :class:`~agent_adapter.context.RerankerPort` of a rerank binding (a 0.3.0a5
        ``Provider`` adapted by ``ProviderReranker``, with :meth:`call_defaults`)."""
        port: RerankerPort = self._adapt("rerank")
        return port

    def _adapt(self, purpose: str) -> Any:
        if self.purpose in _MEDIA:
            raise unsupported_media(self.purpose, f"ModelBinding {self.name}")
        target = self._target(purpose)
        if not _legacy(target):
            return target
        adapted = self._adapted
        if adapted is None or adapted[0] != purpose or adapted[1] is not target:
            port: Any
            if purpose == "embed":
                port = ProviderEmbedder(target, self.model, self.call_defaults())
            elif purpose == "rerank":
                port = ProviderReranker(target, self.model, self.call_defaults())
            else:
                port = ProviderPort(target, self.model)
            adapted = self._adapted = (purpose, target, port)
        return adapted[2]

    def _build_llm(self) -> LLMPort:
        if (
            not self.base_url
            and self.protocol in ("openai", "anthropic")
            and self.provider_name not in _DEFAULT_ENDPOINTS
        ):
            # 0.3.0a5's rule: no endpoint is guessed (a key meant for another vendor would go
            # to OpenAI's or Anthropic's)
            named = f" and provider_name '{self.provider_name}'" if self.provider_name else ""
            raise ConfigError(
                f"No base_url for protocol '{self.protocol}'{named} — pass base_url "
                "explicitly (any OpenAI- or Anthropic-compatible endpoint works). Only these "
                f"provider_name values carry a default endpoint: {sorted(_DEFAULT_ENDPOINTS)}"
            )
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

                return DeepSeekModel(self.model, reasoning_back="always", **kwargs)
            from agent_adapter.providers import OpenAIChatModel

            # every brand gets its turns' reasoning back, as 0.3.0a5 replays each reply
            return OpenAIChatModel(self.model, reasoning_back="always", **kwargs)
        if self.protocol == "responses":
            from agent_adapter.providers import OpenAIResponsesModel

            return OpenAIResponsesModel(self.model, **kwargs)
        if self.protocol == "anthropic":
            from agent_adapter.providers import AnthropicModel

            return AnthropicModel(self.model, **kwargs)
        from agent_adapter.providers import GeminiModel

        return GeminiModel(self.model, **kwargs)

    def _build_provider(self, purpose: str) -> Any:
        if self.protocol == "gemini":
            raise CapabilityNotSupported(
                f"ModelBinding.{purpose}(protocol='gemini'): this version serves {purpose} "
                "over the OpenAI protocol only (protocol='openai' with an OpenAI-compatible "
                "base_url), or through provider="
            )
        return create_provider(
            api_key=self.api_key,
            base_url=self.base_url,
            protocol="anthropic" if self.protocol == "anthropic" else "openai",
            provider_name=self.provider_name,
        )

    async def aclose(self) -> None:
        """Close the provider this binding built (a given ``provider`` stays open)."""
        built, self._built, self._adapted = self._built, None, None
        close = getattr(built, "aclose", None) or getattr(built, "close", None)
        if close is not None:
            await close()


def binding_fields(
    options: Mapping[str, Any], binding: ModelBinding
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`request_fields` for a call to ``binding``: built from its protocol, or a
    ``provider=`` port of the caller's own."""
    return request_fields(options, binding.protocol if binding.provider is None else None)


def traced_provider(binding: ModelBinding) -> str:
    """The provider name of the trace and the request echo (0.3.0a5's ``provider_name()``,
    the brand: ``"openai"``, ``"deepseek"``, ``"anthropic"``, a user provider's own)."""
    vendor = getattr(binding._port(), "provider", None)
    if isinstance(vendor, str) and vendor:
        return vendor
    return binding.provider_name or binding.protocol
