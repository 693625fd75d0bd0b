"""0.3.0a5's ``cliver_core.bindings``: the per-purpose factories, ``call_defaults``,
``get_provider`` / ``aclose``, ``ModelBindings.get`` (with its wrong-purpose check and the
audio / tts alias), ``bound_purposes``, ``PURPOSES`` and the ``CapabilityNotSupported``
re-export; plus what each purpose's ``provider=`` may be in this version."""

from __future__ import annotations

from typing import Any

import pytest

import cliver_core
from agent_adapter import CallableModel, ConfigError, ModelResponse
from agent_adapter.context import RerankResult
from agent_adapter.providers import AnthropicModel, OpenAIChatModel
from cliver_core import bindings as public
from cliver_core._errors import CapabilityNotSupported
from cliver_core._provider_port import ProviderEmbedder, ProviderPort, ProviderReranker
from cliver_core.bindings import PURPOSES, ModelBinding, ModelBindings
from cliver_core.provider import EmbeddingsResult, Provider, RerankItem
from cliver_core.provider.providers.deepseek import DeepSeekOpenAIProvider
from cliver_core.provider.providers.glm import GLMAnthropicProvider
from cliver_core.provider.providers.openai import OpenAIProvider


def test_public_names() -> None:
    assert public.CapabilityNotSupported is CapabilityNotSupported
    assert cliver_core.CapabilityNotSupported is CapabilityNotSupported
    assert public.ModelBinding is cliver_core.ModelBinding
    assert PURPOSES == ("llm", "embed", "rerank", "image", "audio", "video", "tts", "asr")


def test_the_factories_fold_their_parameters_into_params() -> None:
    image = ModelBinding.image(model="i", size="1024x1024", n=2, style=None, seed=7, path="/img")
    assert (image.purpose, image.params, image.path) == (
        "image",
        {"n": 2, "size": "1024x1024", "seed": 7},
        "/img",
    )
    assert image.call_defaults() == {"path": "/img", "n": 2, "size": "1024x1024", "seed": 7}
    assert ModelBinding.video(model="v", duration=6).params == {"duration": 6}
    assert ModelBinding.tts(model="t", voice="alloy", response_format="wav").params == {
        "voice": "alloy",
        "response_format": "wav",
    }
    assert ModelBinding.asr(model="a", language="en").params == {"language": "en"}
    assert ModelBinding.embed(model="e", dimensions=256).params == {"dimensions": 256}
    assert ModelBinding.rerank(model="r", top_k=3).call_defaults() == {"top_k": 3}
    llm = ModelBinding.llm(model="m", temperature=0.3, max_tokens=99)
    assert (llm.purpose, llm.params, llm.call_defaults()) == (
        "llm",
        {"temperature": 0.3, "max_tokens": 99},
        {"temperature": 0.3, "max_tokens": 99},
    )
    with pytest.raises(TypeError, match="takes no path"):
        ModelBinding.llm(model="m", path="/chat")
    raw = ModelBinding(model="m")
    assert raw.purpose is None and raw.params == {}
    assert ModelBinding(model="m", purpose="embed") == ModelBinding(model="m")  # compare=False


def test_get_checks_the_purpose_as_0_3_0a5() -> None:
    bindings = ModelBindings(
        llm=ModelBinding.llm(model="m"),
        embed=ModelBinding.image(model="i"),
        audio=ModelBinding.tts(model="t"),
        tts=ModelBinding(model="raw"),
    )
    with pytest.raises(ValueError) as caught:
        bindings.get("embed")
    assert str(caught.value) == (
        "bindings.embed holds a 'image' binding — mount it in bindings.image instead."
    )
    assert bindings.get("audio") is bindings.audio  # the legacy alias pair
    assert bindings.get("tts") is bindings.tts  # no purpose: not checked
    assert ModelBindings(tts=ModelBinding.tts(model="t")).get("audio") is None
    assert ModelBindings(tts=ModelBinding(model="x", purpose="audio")).get("tts") is not None
    with pytest.raises(ValueError) as unknown:
        bindings.get("music")
    assert str(unknown.value) == f"Unknown purpose 'music'. Supported: {list(PURPOSES)}"
    assert bindings.bound_purposes() == ["llm", "embed", "audio", "tts"]
    assert bindings.get("rerank") is None


def test_the_llm_failover_chain_is_kept() -> None:
    a, b, c = (ModelBinding.llm(model=n) for n in "abc")
    assert ModelBindings(llm=[a, b], llm_fallbacks=[c]).llm_chain == (a, b, c)
    with pytest.raises(ConfigError, match="empty list"):
        ModelBindings(llm=[])


class Legacy(Provider):
    """A 0.3.0a5-style provider of the user's, with embed and rerank."""

    protocol = "openai"
    brand = "legacy"
    closed = False

    async def chat(self, request: Any) -> Any:
        raise NotImplementedError

    async def stream(self, request: Any) -> Any:
        raise NotImplementedError

    async def embed(self, texts: list[str], *, model: str, **options: Any) -> EmbeddingsResult:
        return EmbeddingsResult(vectors=[[float(len(t))] for t in texts], model=model)

    async def rerank(
        self, query: str, documents: list[str], *, model: str, top_k: int | None = None, **o: Any
    ) -> list[RerankItem]:
        return [RerankItem(index=i, relevance_score=1.0 / (i + 1)) for i in range(len(documents))]

    async def close(self) -> None:
        self.closed = True


def _reply(request: Any) -> ModelResponse:
    raise NotImplementedError


def test_what_provider_may_be_per_purpose() -> None:
    model = CallableModel(_reply)
    assert ModelBinding.llm(model="m", provider=model).get_provider() is model
    assert ModelBinding.llm(model="m", provider=model)._port() is model
    legacy = Legacy("k", "http://h")
    for factory in (ModelBinding.llm, ModelBinding.embed, ModelBinding.rerank, ModelBinding.tts):
        assert factory(model="m", provider=legacy).get_provider() is legacy

    class Embedder:
        async def embed(self, texts: Any, *, ctx: Any = None) -> list[list[float]]:
            return []

    class Reranker:
        async def rerank(self, query: str, texts: Any, *, ctx: Any = None) -> RerankResult:
            return RerankResult(scores=[])

    assert ModelBinding.embed(model="e", provider=Embedder())._embedder() is not None
    assert ModelBinding.rerank(model="r", provider=Reranker())._reranker() is not None
    with pytest.raises(ConfigError, match=r"must be an agent_adapter\.LLMPort"):
        ModelBinding.llm(model="m", provider=Embedder())
    with pytest.raises(ConfigError, match="EmbeddingPort"):
        ModelBinding.embed(model="e", provider=Reranker())
    with pytest.raises(ConfigError, match="protocol"):
        ModelBinding.llm(model="m", protocol="grpc")
    with pytest.raises(ConfigError, match="non-empty"):
        ModelBinding.llm(model="")


async def test_a_legacy_provider_is_adapted_per_purpose() -> None:
    legacy = Legacy("k", "http://h")
    llm = ModelBinding.llm(model="m", provider=legacy)
    assert isinstance(llm._port(), ProviderPort) and llm._port() is llm._port()
    embed = ModelBinding.embed(model="e", provider=legacy, dimensions=8)
    embedder = embed._embedder()
    assert isinstance(embedder, ProviderEmbedder) and embedder.options == {"dimensions": 8}
    assert await embedder.embed(["ab", "c"]) == [[2.0], [1.0]]
    rerank = ModelBinding.rerank(model="r", provider=legacy, top_k=1)
    reranker = rerank._reranker()
    assert isinstance(reranker, ProviderReranker) and reranker.options == {}  # all texts scored
    assert (await reranker.rerank("q", ["a", "b"])).scores == [1.0, 0.5]
    await ModelBindings(llm=llm, embed=embed, rerank=rerank).aclose()
    assert not legacy.closed  # the caller's provider stays open
    with pytest.raises(CapabilityNotSupported, match="text-to-speech"):
        ModelBinding.tts(model="t", provider=legacy)._port()


async def test_built_providers() -> None:
    llm = ModelBinding.llm(model="gpt", api_key="k", base_url="http://h/v1")
    port = llm.get_provider()
    assert isinstance(port, OpenAIChatModel) and llm._port() is port is llm.get_provider()
    anthropic = ModelBinding.llm(
        model="claude", api_key="k", protocol="anthropic", provider_name="anthropic"
    )
    assert isinstance(anthropic._port(), AnthropicModel)
    # no endpoint is guessed (0.3.0a5): a key meant for another vendor never goes to OpenAI's
    for protocol in ("openai", "anthropic"):
        with pytest.raises(ValueError, match="No base_url"):
            ModelBinding.llm(model="m", api_key="k", protocol=protocol).get_provider()

    embed = ModelBinding.embed(model="e", api_key="k", base_url="http://h/v1")
    provider = embed.get_provider()
    assert type(provider) is OpenAIProvider and provider.base_url == "http://h/v1"
    assert isinstance(embed._embedder(), ProviderEmbedder)
    branded = ModelBinding.rerank(model="r", api_key="k", provider_name="deepseek")
    assert isinstance(branded.get_provider(), DeepSeekOpenAIProvider)
    glm = ModelBinding.embed(model="e", api_key="k", provider_name="glm", protocol="anthropic")
    assert isinstance(glm.get_provider(), GLMAnthropicProvider)
    with pytest.raises(ValueError, match="No base_url"):
        ModelBinding.embed(model="e", api_key="k").get_provider()
    with pytest.raises(CapabilityNotSupported, match="gemini"):
        ModelBinding.embed(model="e", api_key="k", protocol="gemini").get_provider()
    image = ModelBinding.image(model="i", api_key="k", base_url="http://h/v1")
    assert isinstance(image.get_provider(), OpenAIProvider)  # its media methods raise

    bindings = ModelBindings(llm=llm, embed=embed, image=image)
    await bindings.aclose()
    assert llm._built is None and embed._built is None and image._built is None
    assert llm.name == "openai:gpt"


def test_a_binding_made_for_another_purpose_is_refused_in_the_llm_slot() -> None:
    """Regression: AgentCore took an image binding as its llm (0.3.0a5 fails fast)."""
    from cliver_core import AgentCore

    image = ModelBinding.image(model="image-01", api_key="k", base_url="http://x")
    llm = ModelBinding.llm(model="m", api_key="k", base_url="http://x")
    with pytest.raises(ValueError, match=r"bindings\.llm holds a 'image' binding"):
        AgentCore(ModelBindings(llm=image))
    with pytest.raises(ValueError, match=r"llm_fallbacks\[0\] holds a 'image' binding"):
        AgentCore(ModelBindings(llm=llm, llm_fallbacks=[image]))
    AgentCore(ModelBindings(llm=llm, llm_fallbacks=[llm]))
