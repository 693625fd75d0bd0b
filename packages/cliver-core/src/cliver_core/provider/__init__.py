"""``cliver_core.provider``: 0.3.0a5's provider interface, request and result types.

* :class:`CLIverRequest`: what a :class:`Provider` is asked (the messages, the system message
  first, the tools, the model, the options), as 0.3.0a5 builds it;
* :class:`CLIverResponse`: the very class :class:`~cliver_core.AgentCore` returns (one class,
  re-exported here);
* :class:`RerankItem`, :class:`EmbeddingsResult`: rerank and embedding results;
* :class:`Provider`: the abstract base of 0.3.0a5's providers.

A :class:`Provider` subclass of yours (``async chat(request) -> CLIverResponse`` and
``async stream(request)`` yielding :class:`~cliver_core.CLIverMessageChunk` s, the last one
carrying the aggregated ``native`` message) drives the agent loop: give it as
``ModelBinding.llm(model=..., provider=MyProvider(...))`` and the binding adapts it to an
:class:`agent_adapter.LLMPort` (:class:`cliver_core._provider_port.ProviderPort`).

``Provider.embed`` and ``Provider.rerank`` post 0.3.0a5's wire bodies to
``{base_url}/embeddings`` and ``{base_url}/rerank`` through :class:`OpenAIEmbeddings` and
:class:`RerankEndpoint` (the ``openai`` SDK's HTTP client). Out of scope (each raises
:class:`~cliver_core.CapabilityNotSupported` naming what is missing, unless your subclass
implements it): media generation (``image``, ``video``, ``tts``, ``generate_media``) and
transcription (``asr``).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from cliver_core._errors import CapabilityNotSupported
from cliver_core._messages import CLIverMessage, CLIverMessageChunk, CLIverResponse
from cliver_core._tools import CLIverTool
from cliver_core.media import MediaContent
from cliver_core.provider._endpoints import JsonEndpoint, OpenAIEmbeddings, RerankEndpoint
from cliver_core.provider._results import EmbeddingsResult, RerankItem

__all__ = [
    "CLIverRequest",
    "CLIverResponse",
    "EmbeddingsResult",
    "MediaOutputHandler",
    "OpenAIEmbeddings",
    "Provider",
    "RerankEndpoint",
    "RerankItem",
    "unsupported_media",
]


class CLIverRequest(BaseModel):
    """A request to a provider.

    Attributes:
        messages: the conversation, the system message first; images ride the user message
            as content blocks.
        tools: the tools the model may call (``None``: none).
        model: the model name.
        options: call options (``temperature``, ``max_tokens``, ``thinking``...), passed
            through; each provider keeps what it supports.
    """

    messages: list[CLIverMessage]
    tools: list[CLIverTool] | None = None
    model: str
    options: dict[str, Any] = Field(default_factory=dict)


#: 0.3.0a5's ``generate_media(output_handler=...)``: the raw media payload to a
#: :class:`CLIverResponse` (sync or async). Media generation is out of this version's scope.
MediaOutputHandler = Callable[[Any], CLIverResponse | Awaitable[CLIverResponse]]


_MEDIA_LABELS = {
    "image": "image generation",
    "video": "video generation",
    "tts": "text-to-speech",
    "audio": "text-to-speech",
    "asr": "audio transcription",
}


def unsupported_media(purpose: str, who: str = "") -> CapabilityNotSupported:
    """The error for a media purpose this version does not serve (naming it).

    Args:
        purpose: ``"image"``, ``"video"``, ``"tts"``, ``"audio"``, ``"asr"`` or another
            media kind.
        who: the provider or binding asked, for the message.
    """
    label = _MEDIA_LABELS.get(purpose, f"media generation ({purpose})")
    where = f" ({who})" if who else ""
    return CapabilityNotSupported(
        f"{label} is not supported by this version of cliver_core{where}: image, video, "
        "speech and media jobs are out of its scope; a Provider subclass of yours that "
        "implements the method still serves it"
    )


class Provider(ABC):
    """0.3.0a5's provider base: one brand speaking one wire protocol.

    A concrete class declares ``protocol`` (``"openai"`` or ``"anthropic"``, the protocol its
    ``native`` messages are in) and ``brand``; an intermediate base opts out with
    ``protocol = ""`` in its own body (checked when the class is defined, as in 0.3.0a5).

    Args:
        api_key: the key (for :meth:`embed` / :meth:`rerank`, and your subclass).
        base_url: the server (for :meth:`embed` / :meth:`rerank`, and your subclass).
        logger: the logger (default: this module's).
    """

    protocol: str = ""
    brand: str = ""

    #: purpose → endpoint path (``"/x"`` relative to base_url, or an absolute URL).
    _media_gen_urls: ClassVar[dict[str, str]] = {}
    #: False: media purposes missing from ``_media_gen_urls`` have no endpoint.
    _standard_media_fallback: ClassVar[bool] = True
    _MEDIA_PURPOSES: ClassVar[frozenset[str]] = frozenset({"image", "tts", "video", "asr"})
    #: the protocol's standard paths (0.3.0a5's OpenAI-fashion table).
    _DEFAULT_MEDIA_PATHS: ClassVar[dict[str, dict[str, str]]] = {
        "openai": {
            "image": "/images/generations",
            "tts": "/audio/speech",
            "asr": "/audio/transcriptions",
            "video": "/videos/generations",
            "embed": "/embeddings",
            "rerank": "/rerank",
        },
    }

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "protocol" in cls.__dict__:
            return
        if not cls.protocol:
            raise TypeError(
                f"{cls.__name__} must define protocol ('openai' or 'anthropic'); "
                'declare protocol = "" only on intermediate mixin bases'
            )

    def __init__(
        self, api_key: str, base_url: str, *, logger: logging.Logger | None = None
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url
        self.logger = logger or logging.getLogger(__name__)
        #: 0.3.0a5's brand SDK pipe; this version's providers need none (always ``None``).
        self.transport: Any = None
        self._json: JsonEndpoint | None = None

    @classmethod
    def provider_name(cls) -> str:
        """The brand key, for logs and traces."""
        return cls.brand

    # -- hooks -----------------------------------------------------------------------------

    def on_response(self, response: CLIverResponse) -> CLIverResponse:
        """Reshape a response (brand quirks); the default returns it unchanged."""
        return response

    def on_chunk(self, chunk: CLIverMessageChunk) -> CLIverMessageChunk:
        """Reshape a streamed chunk; the default returns it unchanged."""
        return chunk

    def filter_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """Drop or rename options before the request is built; the default keeps them."""
        return options

    # -- the model calls -------------------------------------------------------------------

    @abstractmethod
    async def chat(self, request: CLIverRequest) -> CLIverResponse:
        """One reply to ``request``."""

    @abstractmethod
    async def stream(self, request: CLIverRequest) -> AsyncIterator[CLIverMessageChunk]:
        """The reply as chunks (implement it as an async generator); the last chunk carries
        the aggregated assistant message as ``native`` (in ``protocol``'s wire shape) and the
        ``usage``."""

    async def close(self) -> None:
        """Release what the provider holds (the embed / rerank HTTP client of this loop)."""
        endpoint = getattr(self, "_json", None)
        if endpoint is not None:
            await endpoint.aclose()

    # -- endpoints -------------------------------------------------------------------------

    def media_path(self, purpose: str, override: str | None = None) -> str | None:
        """The endpoint path of ``purpose``: ``override``, else the brand's
        ``_media_gen_urls``, else the protocol's standard path (media purposes only when
        ``_standard_media_fallback``); ``None`` when there is none. ``"audio"`` is ``"tts"``.
        As 0.3.0a5."""
        purpose = "tts" if purpose == "audio" else purpose
        if override:
            return override
        if purpose in self._media_gen_urls:
            return self._media_gen_urls[purpose]
        if purpose in self._MEDIA_PURPOSES and not self._standard_media_fallback:
            return None
        return self._DEFAULT_MEDIA_PATHS.get(self.protocol, {}).get(purpose)

    def _endpoint(self, label: str) -> JsonEndpoint:
        if not self.base_url:
            raise RuntimeError(f"{self.provider_name()} has no base_url configured for {label}")
        endpoint = getattr(self, "_json", None)
        if endpoint is None:
            endpoint = JsonEndpoint(
                api_key=self.api_key,
                base_url=self.base_url,
                provider=self.provider_name() or type(self).__name__,
            )
            self._json = endpoint
        return endpoint

    async def embed(self, texts: list[str], *, model: str, **options: Any) -> EmbeddingsResult:
        """Embed ``texts``: ``POST {base_url}{path}`` with ``{"model", "input", **options}``
        (0.3.0a5's wire; ``path=`` overrides the endpoint).

        Raises:
            CapabilityNotSupported: the protocol has no embeddings path (e.g. Anthropic).
            RuntimeError: no ``base_url``.
            ModelError: the call failed.
        """
        path = self.media_path("embed", options.pop("path", None))
        if path is None:
            raise CapabilityNotSupported(
                f"{self.provider_name()} does not support embeddings for protocol "
                f"'{self.protocol}' — pass path=..., or add an 'embed' entry to "
                "_media_gen_urls on the provider class."
            )
        endpoint = self._endpoint("embeddings")
        port = OpenAIEmbeddings(model, path=path, provider=endpoint.provider, endpoint=endpoint)
        result: EmbeddingsResult = await port.embeddings(list(texts), **options)
        return result

    async def rerank(
        self,
        query: str,
        documents: list[str],
        *,
        model: str,
        top_k: int | None = None,
        **options: Any,
    ) -> list[RerankItem]:
        """Score ``documents`` against ``query``: ``POST {base_url}{path}`` with ``{"model",
        "query", "documents", **options, "top_k"}``; the items best first, cut to ``top_k``.
        As 0.3.0a5.

        Raises:
            CapabilityNotSupported: the protocol has no rerank path (e.g. Anthropic).
            RuntimeError: no ``base_url``.
            ModelError: the call failed.
        """
        path = self.media_path("rerank", options.pop("path", None))
        if path is None:
            raise CapabilityNotSupported(
                f"{self.provider_name()} does not support rerank for protocol "
                f"'{self.protocol}' — pass path=..., or add a 'rerank' entry to "
                "_media_gen_urls on the provider class."
            )
        endpoint = self._endpoint("rerank")
        port = RerankEndpoint(model, path=path, provider=endpoint.provider, endpoint=endpoint)
        items: list[RerankItem] = await port.rerank_items(
            query, list(documents), top_k=top_k, **options
        )
        return items

    # -- media (out of scope) --------------------------------------------------------------

    async def generate_media(
        self,
        prompt: str,
        *,
        model: str,
        purpose: str = "image",
        media: list[MediaContent] | None = None,
        output_dir: str | None = None,
        path: str | None = None,
        mime: str | None = None,
        binary: bool | None = None,
        output_handler: MediaOutputHandler | None = None,
        **options: Any,
    ) -> CLIverResponse:
        """Out of scope: raises :class:`~cliver_core.CapabilityNotSupported` naming the
        purpose (0.3.0a5 posted to the media endpoint)."""
        raise unsupported_media(purpose, self.provider_name())

    async def image(
        self,
        prompt: str,
        model: str,
        *,
        media: list[MediaContent] | None = None,
        output_dir: str | None = None,
        **options: Any,
    ) -> CLIverResponse:
        """Out of scope: raises :class:`~cliver_core.CapabilityNotSupported` ("image
        generation")."""
        raise unsupported_media("image", self.provider_name())

    async def video(
        self,
        prompt: str,
        model: str,
        *,
        media: list[MediaContent] | None = None,
        output_dir: str | None = None,
        **options: Any,
    ) -> CLIverResponse:
        """Out of scope: raises :class:`~cliver_core.CapabilityNotSupported` ("video
        generation")."""
        raise unsupported_media("video", self.provider_name())

    async def tts(
        self, text: str, model: str, *, output_dir: str | None = None, **options: Any
    ) -> CLIverResponse:
        """Out of scope: raises :class:`~cliver_core.CapabilityNotSupported`
        ("text-to-speech")."""
        raise unsupported_media("tts", self.provider_name())

    async def asr(
        self, media: MediaContent, model: str, *, language: str | None = None, **options: Any
    ) -> CLIverResponse:
        """Out of scope: raises :class:`~cliver_core.CapabilityNotSupported` ("audio
        transcription")."""
        raise unsupported_media("asr", self.provider_name())
