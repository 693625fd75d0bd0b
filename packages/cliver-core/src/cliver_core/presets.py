"""Ready-made llm bindings for well-known providers and self-hosted servers.

Each factory returns a fresh :class:`~cliver_core.ModelBinding` (a binding owns the provider it
builds; sharing one between agents would let one close it under the other). The key is the
explicit ``api_key`` when given (``""`` included), else the vendor's environment variable
read at call time (:data:`API_KEY_ENV`), else ``""``, which lets the SDK look for its own
variable and fail naming it. ``**params`` become the binding's default call options
(``temperature``, ``max_tokens``...); ``base_url`` overrides the endpoint.

Endpoints, from the vendors' docs: DeepSeek ``https://api.deepseek.com`` (OpenAI format) and
``https://api.deepseek.com/anthropic`` (Anthropic format), api-docs.deepseek.com "Your First
API Call" and "Using the Anthropic API"; Zhipu GLM ``https://open.bigmodel.cn/api/paas/v4``
and ``https://open.bigmodel.cn/api/anthropic``; MiniMax ``https://api.minimaxi.com/anthropic``;
Ollama ``http://localhost:11434/v1`` with any non-empty key (docs.ollama.com, "OpenAI
compatibility": "required but ignored"); vLLM's OpenAI-compatible server
``http://localhost:8000/v1`` (vLLM docs, "OpenAI-Compatible Server": ``vllm serve`` listens
on port 8000, key ``EMPTY`` unless ``--api-key`` is set).
"""

from __future__ import annotations

import os
from typing import Any

from agent_adapter import ConfigError
from cliver_core._bindings import ModelBinding

__all__ = [
    "API_KEY_ENV",
    "anthropic",
    "deepseek",
    "deepseek_anthropic",
    "gemini",
    "glm",
    "glm_anthropic",
    "minimax_anthropic",
    "minimax_asr",
    "minimax_image",
    "minimax_tts",
    "ollama",
    "openai",
    "openai_compatible",
    "seedance",
    "vllm",
]

#: The environment variables each vendor's key is read from, first set wins.
API_KEY_ENV: dict[str, tuple[str, ...]] = {
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "glm": ("GLM_API_KEY", "ZHIPUAI_API_KEY"),
    "minimax": ("MINIMAX_API_KEY",),
    "seedance": ("SEEDANCE_API_KEY",),
}


def _key(api_key: str | None, vendor: str) -> str:
    if api_key is not None:
        return api_key
    for name in API_KEY_ENV.get(vendor, ()):
        value = os.environ.get(name)
        if value:
            return value
    return ""


def _llm(
    vendor: str,
    default_url: str,
    protocol: str,
    model: str,
    api_key: str | None,
    base_url: str,
    params: dict[str, Any],
) -> ModelBinding:
    """The one body of every preset: ``vendor``'s binding at ``base_url or default_url``."""
    return ModelBinding.llm(
        model=model,
        api_key=_key(api_key, vendor),
        base_url=base_url or default_url,
        protocol=protocol,
        provider_name=vendor,
        **params,
    )


def deepseek(
    *,
    api_key: str | None = None,
    model: str = "deepseek-v4-flash",
    base_url: str = "",
    **params: Any,
) -> ModelBinding:
    """DeepSeek over its OpenAI-compatible endpoint (key ``DEEPSEEK_API_KEY``)."""
    return _llm("deepseek", "https://api.deepseek.com", "openai", model, api_key, base_url, params)


def deepseek_anthropic(
    *,
    api_key: str | None = None,
    model: str = "deepseek-v4-flash",
    base_url: str = "",
    **params: Any,
) -> ModelBinding:
    """DeepSeek over its Anthropic-compatible endpoint (key ``DEEPSEEK_API_KEY``)."""
    return _llm(
        "deepseek",
        "https://api.deepseek.com/anthropic",
        "anthropic",
        model,
        api_key,
        base_url,
        params,
    )


def openai(
    *,
    api_key: str | None = None,
    model: str = "gpt-4o",
    base_url: str = "",
    responses: bool = False,
    **params: Any,
) -> ModelBinding:
    """OpenAI Chat Completions, or the Responses API with ``responses=True``
    (key ``OPENAI_API_KEY``)."""
    return _llm(
        "openai", "", "responses" if responses else "openai", model, api_key, base_url, params
    )


def anthropic(
    *,
    api_key: str | None = None,
    model: str = "claude-sonnet-4-5",
    base_url: str = "",
    **params: Any,
) -> ModelBinding:
    """Anthropic Messages (key ``ANTHROPIC_API_KEY``)."""
    return _llm("anthropic", "", "anthropic", model, api_key, base_url, params)


def gemini(
    *,
    api_key: str | None = None,
    model: str = "gemini-2.5-flash",
    base_url: str = "",
    **params: Any,
) -> ModelBinding:
    """The Gemini API (key ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``)."""
    return _llm("gemini", "", "gemini", model, api_key, base_url, params)


def glm(
    *, api_key: str | None = None, model: str = "glm-5.3", base_url: str = "", **params: Any
) -> ModelBinding:
    """Zhipu GLM over its OpenAI-compatible endpoint (``GLM_API_KEY`` / ``ZHIPUAI_API_KEY``)."""
    return _llm(
        "glm", "https://open.bigmodel.cn/api/paas/v4", "openai", model, api_key, base_url, params
    )


def glm_anthropic(
    *, api_key: str | None = None, model: str = "glm-5.3", base_url: str = "", **params: Any
) -> ModelBinding:
    """Zhipu GLM over its Anthropic-compatible endpoint."""
    return _llm(
        "glm",
        "https://open.bigmodel.cn/api/anthropic",
        "anthropic",
        model,
        api_key,
        base_url,
        params,
    )


def minimax_anthropic(
    *, api_key: str | None = None, model: str = "MiniMax-M3", base_url: str = "", **params: Any
) -> ModelBinding:
    """MiniMax chat over its Anthropic-compatible endpoint (key ``MINIMAX_API_KEY``)."""
    return _llm(
        "minimax",
        "https://api.minimaxi.com/anthropic",
        "anthropic",
        model,
        api_key,
        base_url,
        params,
    )


def ollama(
    *, model: str, base_url: str = "", api_key: str = "ollama", **params: Any
) -> ModelBinding:
    """A model served by Ollama on this machine (its OpenAI-compatible endpoint)."""
    return _llm("ollama", "http://localhost:11434/v1", "openai", model, api_key, base_url, params)


def vllm(*, model: str, base_url: str = "", api_key: str = "EMPTY", **params: Any) -> ModelBinding:
    """A model served by vLLM's OpenAI-compatible server (default port 8000)."""
    return _llm("vllm", "http://localhost:8000/v1", "openai", model, api_key, base_url, params)


def openai_compatible(
    *,
    base_url: str,
    model: str,
    api_key: str = "EMPTY",
    provider_name: str = "openai-compatible",
    **params: Any,
) -> ModelBinding:
    """Any server speaking OpenAI Chat Completions at ``base_url`` (LM Studio, llama.cpp's
    server, a proxy...).

    Raises:
        ConfigError: ``base_url`` is empty.
    """
    if not base_url:
        raise ConfigError("presets.openai_compatible: base_url is required")
    return _llm(provider_name, "", "openai", model, api_key, base_url, params)


# -- media presets (0.3.0a5's): the bindings are made as there, but this version does not
# generate media, so AgentCore.image / tts / asr / video on them raise CapabilityNotSupported


def minimax_image(
    *,
    api_key: str | None = None,
    model: str = "image-01",
    base_url: str = "",
    path: str | None = "/image_generation",
    **params: Any,
) -> ModelBinding:
    """A MiniMax image-generation binding (0.3.0a5's preset; image generation is out of this
    version's scope)."""
    return ModelBinding.image(
        model=model,
        api_key=_key(api_key, "minimax"),
        base_url=base_url,
        protocol="anthropic",
        provider_name="minimax",
        path=path,
        **params,
    )


def minimax_tts(
    *,
    api_key: str | None = None,
    model: str = "speech-2.8-hd",
    base_url: str = "",
    path: str | None = "/t2a_v2",
    **params: Any,
) -> ModelBinding:
    """A MiniMax speech-synthesis binding (0.3.0a5's preset; speech is out of this version's
    scope)."""
    return ModelBinding.tts(
        model=model,
        api_key=_key(api_key, "minimax"),
        base_url=base_url,
        protocol="anthropic",
        provider_name="minimax",
        path=path,
        **params,
    )


def minimax_asr(
    *,
    api_key: str | None = None,
    model: str = "asr-1.0",
    base_url: str = "",
    path: str | None = "/speech_to_text",
    **params: Any,
) -> ModelBinding:
    """A MiniMax speech-to-text binding (0.3.0a5's preset; speech is out of this version's
    scope)."""
    return ModelBinding.asr(
        model=model,
        api_key=_key(api_key, "minimax"),
        base_url=base_url,
        protocol="anthropic",
        provider_name="minimax",
        path=path,
        **params,
    )


def seedance(
    *,
    api_key: str | None = None,
    model: str = "doubao-seedance-2-5-260628",
    base_url: str = "",
    path: str | None = "/contents/generations/tasks",
    **params: Any,
) -> ModelBinding:
    """A Seedance (Volcano Engine Ark) video-generation binding (0.3.0a5's preset; video is
    out of this version's scope)."""
    return ModelBinding.video(
        model=model,
        api_key=_key(api_key, "seedance"),
        base_url=base_url,
        protocol="openai",
        provider_name="seedance",
        path=path,
        **params,
    )
