"""``cliver_core.local``: 0.3.0a5's in-process local models, out of this version's scope.

The names import as in 0.3.0a5 (the error classes and data types are kept), but building a
local provider, resolving or registering a backend, or calling :func:`local_embed` /
:func:`local_rerank` raises :class:`~cliver_core.CapabilityNotSupported` naming "local
models". For local embeddings, bind agent_adapter's ``LocalEmbedder`` (an ONNX
all-MiniLM-L6-v2, extra ``embeddings``): ``ModelBinding.embed(model="all-MiniLM-L6-v2",
provider=agent_adapter.context.LocalEmbedder())``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Protocol

from cliver_core._errors import CapabilityNotSupported
from cliver_core._messages import CLIverResponse
from cliver_core.local.errors import (
    LocalBackendNotSupportedError,
    LocalConfigurationError,
    LocalDependencyError,
    LocalDeviceError,
    LocalDimensionError,
    LocalInferenceError,
    LocalModelError,
    LocalModelLoadError,
    LocalProviderClosedError,
)
from cliver_core.provider import CLIverRequest, Provider

__all__ = [
    "EmbeddingBackend",
    "LoadSpec",
    "LoadedEmbedding",
    "LoadedRerank",
    "LocalBackendNotSupportedError",
    "LocalConfigurationError",
    "LocalDependencyError",
    "LocalDeviceError",
    "LocalDimensionError",
    "LocalEmbeddingProvider",
    "LocalInferenceError",
    "LocalModelError",
    "LocalModelInfo",
    "LocalModelLoadError",
    "LocalProvider",
    "LocalProviderClosedError",
    "LocalRerankProvider",
    "RerankBackend",
    "local_embed",
    "local_rerank",
    "register_backend",
    "resolve_backend",
]


def _unsupported(what: str) -> CapabilityNotSupported:
    return CapabilityNotSupported(
        f"{what}: local models are not supported by this version of cliver_core; for local "
        "embeddings bind agent_adapter.context.LocalEmbedder (extra 'embeddings') as "
        "ModelBinding.embed(model=..., provider=LocalEmbedder()), or any EmbeddingPort / "
        "RerankerPort of yours"
    )


@dataclass(frozen=True)
class LocalModelInfo:
    """A local provider's settings and load state (0.3.0a5's fields)."""

    model: str
    backend: str
    loaded: bool
    closed: bool
    revision: str | None = None
    resolved_model: str | None = None
    device: str | None = None
    dtype: str | None = None
    dim: int | None = None
    max_length: int | None = None
    load_seconds: float | None = None


@dataclass(frozen=True)
class LoadSpec:
    """What a backend loads (0.3.0a5's fields)."""

    model: str
    device: str
    dtype: str
    revision: str | None
    trust_remote_code: bool
    cache_dir: str | None
    local_files_only: bool
    max_length: int | None
    logger: logging.Logger


@dataclass(frozen=True)
class LoadedEmbedding:
    """A loaded embedding model (0.3.0a5's fields)."""

    handle: Any
    resolved_model: str
    revision: str | None
    device: str
    dtype: str
    dim: int | None
    max_length: int | None


@dataclass(frozen=True)
class LoadedRerank:
    """A loaded rerank model (0.3.0a5's fields)."""

    handle: Any
    resolved_model: str
    revision: str | None
    device: str
    dtype: str
    max_length: int | None


class EmbeddingBackend(Protocol):
    """0.3.0a5's embedding backend interface."""

    name: str

    def load_embedding(self, spec: LoadSpec) -> LoadedEmbedding:
        """Load the model."""
        ...

    def embed(
        self, loaded: LoadedEmbedding, texts: list[str], *, batch_size: int
    ) -> list[list[float]]:
        """Embed the texts."""
        ...

    def unload_embedding(self, loaded: LoadedEmbedding) -> None:
        """Release the model."""
        ...


class RerankBackend(Protocol):
    """0.3.0a5's rerank backend interface."""

    name: str

    def load_rerank(self, spec: LoadSpec) -> LoadedRerank:
        """Load the model."""
        ...

    def score(
        self, loaded: LoadedRerank, pairs: list[tuple[str, str]], *, batch_size: int
    ) -> list[float]:
        """Score (query, document) pairs."""
        ...

    def unload_rerank(self, loaded: LoadedRerank) -> None:
        """Release the model."""
        ...


def register_backend(name: str, backend: Any) -> None:
    """Raises :class:`~cliver_core.CapabilityNotSupported` (local models are out of scope)."""
    raise _unsupported(f"register_backend({name!r})")


def resolve_backend(name: str) -> Any:
    """Raises :class:`~cliver_core.CapabilityNotSupported` (local models are out of scope)."""
    raise _unsupported(f"resolve_backend({name!r})")


class LocalProvider(Provider):
    """0.3.0a5's local provider base; building one raises
    :class:`~cliver_core.CapabilityNotSupported` (its 0.3.0a5 keyword arguments are
    accepted)."""

    protocol = "local"
    brand = "local"

    def __init__(
        self,
        *,
        model: str,
        backend: Any,
        device: str = "auto",
        dtype: str = "auto",
        revision: str | None = None,
        trust_remote_code: bool = False,
        cache_dir: str | os.PathLike[str] | None = None,
        local_files_only: bool = False,
        max_length: int | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        raise _unsupported(f"{type(self).__name__}(model={model!r})")

    async def chat(self, request: CLIverRequest) -> CLIverResponse:
        """Raises :class:`~cliver_core.CapabilityNotSupported`."""
        raise _unsupported(f"{type(self).__name__}.chat")

    async def stream(self, request: CLIverRequest) -> Any:
        """Raises :class:`~cliver_core.CapabilityNotSupported`."""
        raise _unsupported(f"{type(self).__name__}.stream")


class LocalEmbeddingProvider(LocalProvider):
    """0.3.0a5's local embedding provider (raises ``CapabilityNotSupported``)."""


class LocalRerankProvider(LocalProvider):
    """0.3.0a5's local rerank provider (raises ``CapabilityNotSupported``)."""


def local_embed(
    *,
    provider: Any,
    dim: int | None = None,
    normalize: bool = False,
    batch_size: int = 32,
) -> Any:
    """Raises :class:`~cliver_core.CapabilityNotSupported` (local models are out of scope)."""
    raise _unsupported("local_embed")


def local_rerank(
    *,
    provider: Any,
    top_k: int | None = None,
    normalize: bool = False,
    batch_size: int = 32,
) -> Any:
    """Raises :class:`~cliver_core.CapabilityNotSupported` (local models are out of scope)."""
    raise _unsupported("local_rerank")
