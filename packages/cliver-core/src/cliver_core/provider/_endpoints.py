"""Embeddings and rerank over HTTP: :class:`OpenAIEmbeddings` (an
:class:`agent_adapter.context.EmbeddingPort`) and :class:`RerankEndpoint` (a
:class:`agent_adapter.context.RerankerPort`).

Both post JSON with the official ``openai`` SDK's client (extra ``openai``), whose HTTP
client, timeouts, retries of 408 / 409 / 429 / 5xx and ``Authorization: Bearer`` header they
use, and speak the wire 0.3.0a5's ``Provider.embed`` / ``Provider.rerank`` speak:

* embeddings: ``POST {base_url}/embeddings`` with ``{"model", "input", **options}``; the reply's
  ``data[i].embedding`` (placed by ``data[i].index``) and ``usage.prompt_tokens``;
* rerank (the Cohere / Jina / GLM shape): ``POST {base_url}/rerank`` with ``{"model", "query",
  "documents", **options, "top_k"}``; the reply's ``results`` (or ``data``) items, each with
  ``index``, ``relevance_score`` (or ``score``) and ``document`` (a string or ``{"text"}``).

Unlike 0.3.0a5 (``RuntimeError``), a failed call raises agent_adapter's
:class:`~agent_adapter.ModelError` family, as every model call of this project does.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from agent_adapter import ConfigError, ModelOutputInvalid, Usage
from agent_adapter._run import record_call
from agent_adapter.context import RerankResult
from agent_adapter.providers._base import closed_at_loop_end
from agent_adapter.providers._openai_errors import import_openai, openai_error
from cliver_core._messages import UsageInfo
from cliver_core.provider._results import EmbeddingsResult, RerankItem

__all__ = ["JsonEndpoint", "OpenAIEmbeddings", "RerankEndpoint", "rerank_items"]


async def _close(client: Any) -> None:
    await client.close()


class JsonEndpoint:
    """JSON POSTs to one server with the ``openai`` SDK's async client (one per event loop,
    closed when that loop ends).

    Args:
        api_key: the key (``None`` or ``""``: the SDK reads ``OPENAI_API_KEY``).
        base_url: the server (``None``: OpenAI's).
        provider: the name in errors and ledger entries.
        timeout_s: seconds the SDK waits for a read.
        max_retries: the SDK's own retries.

    Raises:
        MissingDependency: the ``openai`` SDK is not installed.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = "openai",
        timeout_s: float = 120.0,
        max_retries: int = 2,
    ) -> None:
        self._openai = import_openai(type(self).__name__)
        self.api_key = api_key or None
        self.base_url = base_url or None
        self.provider = provider
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[Any, AsyncGenerator[None, None]]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._clients.get(loop)
            if entry is None:
                try:
                    client = self._openai.AsyncOpenAI(
                        api_key=self.api_key,
                        base_url=self.base_url,
                        timeout=self.timeout_s,
                        max_retries=self.max_retries,
                    )
                except self._openai.OpenAIError as e:
                    raise ConfigError(f"{self.provider}: {e}") from e
                entry = (client, closed_at_loop_end(_close, client))
                self._clients[loop] = entry
            return entry[0]

    async def post(self, path: str, body: Mapping[str, Any], *, model: str) -> dict[str, Any]:
        """The parsed JSON reply to ``POST path`` (relative to ``base_url``, or absolute).

        Raises:
            ModelTimeout: no reply in time.
            ModelOutputInvalid: the reply is not a JSON object.
            ModelError: any other failure (HTTP status errors once the retries are spent).
        """
        client = self._client()
        try:
            data = await client.post(path, cast_to=object, body=dict(body))
        except Exception as e:
            error = openai_error(e, provider=self.provider, model=model)
            if error is None:
                raise
            raise error from e
        if not isinstance(data, dict):
            raise ModelOutputInvalid(
                f"the {path} reply is not a JSON object", provider=self.provider, model=model
            )
        return data

    async def aclose(self) -> None:
        """Close this event loop's client (others close with their loops)."""
        with self._lock:
            entry = self._clients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()


def _endpoint(
    endpoint: JsonEndpoint | None, api_key: str | None, base_url: str | None, provider: str
) -> JsonEndpoint:
    if endpoint is not None:
        return endpoint
    return JsonEndpoint(api_key=api_key, base_url=base_url, provider=provider)


class _EndpointModel:
    """What an embeddings and a rerank endpoint share: the model on one server, the body
    fields of every call, and the fields a cache keys on."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None,
        path: str,
        provider: str,
        options: Mapping[str, Any] | None,
        endpoint: JsonEndpoint | None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ConfigError(f"{type(self).__name__}: model must be a non-empty str")
        self.model = model
        self.provider = provider
        self.path = path
        self.options = dict(options or {})
        self.endpoint = _endpoint(endpoint, api_key, base_url, provider)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, provider={self.provider!r})"

    def cache_key_fields(self) -> Mapping[str, Any]:
        """Provider, model, server and options: what changes the results."""
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.endpoint.base_url,
            "path": self.path,
            "options": dict(self.options),
        }

    async def aclose(self) -> None:
        """Close the HTTP client of this event loop."""
        await self.endpoint.aclose()


class OpenAIEmbeddings(_EndpointModel):
    """An OpenAI-compatible embeddings endpoint as an
    :class:`~agent_adapter.context.EmbeddingPort`.

    Args:
        model: the embedding model.
        api_key: the key (default: ``OPENAI_API_KEY``).
        base_url: the server (default: OpenAI's).
        path: the endpoint path (``/embeddings``) or an absolute URL.
        provider: the name in errors, ledger entries and price lookups.
        options: more body fields for every call (``dimensions``, ``encoding_format``...).
        endpoint: a :class:`JsonEndpoint` to share (then ``api_key`` and ``base_url`` are
            its).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        path: str = "/embeddings",
        provider: str = "openai",
        options: Mapping[str, Any] | None = None,
        endpoint: JsonEndpoint | None = None,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            path=path,
            provider=provider,
            options=options,
            endpoint=endpoint,
        )

    async def embed(self, texts: Sequence[str], *, ctx: Any = None) -> list[list[float]]:
        """One vector per text, in order (a ledger entry on ``ctx``)."""
        return (await self.embeddings(texts, ctx=ctx)).vectors

    async def embeddings(
        self, texts: Sequence[str], *, ctx: Any = None, path: str | None = None, **options: Any
    ) -> EmbeddingsResult:
        """The vectors with the model and usage the server reports, as 0.3.0a5's
        ``EmbeddingsResult``.

        Args:
            texts: the texts.
            ctx: a run context for the ledger entry (stage ``"embed"``).
            path: this call's endpoint path.
            **options: more body fields, over the constructor's.
        """
        texts = list(texts)
        body = {"model": self.model, "input": texts, **self.options, **options}
        start = time.perf_counter()
        data = await self.endpoint.post(path or self.path, body, model=self.model)
        vectors: list[list[float]] = [[] for _ in texts]
        for i, item in enumerate(data.get("data") or []):
            if not isinstance(item, dict):
                continue
            index = item.get("index", i)
            if isinstance(index, int) and 0 <= index < len(vectors):
                vectors[index] = [float(x) for x in item.get("embedding") or []]
        raw = data.get("usage")
        usage = None
        if isinstance(raw, dict):
            usage = UsageInfo(input_tokens=int(raw.get("prompt_tokens") or 0), output_tokens=0)
        model = data.get("model") or self.model
        record_call(
            ctx,
            provider=self.provider,
            model=self.model,
            stage="embed",
            usage=usage.to_usage() if usage else Usage(),
            seconds=time.perf_counter() - start,
        )
        return EmbeddingsResult(vectors=vectors, model=model, usage=usage)


def rerank_items(data: Mapping[str, Any], documents: Sequence[str]) -> list[RerankItem]:
    """0.3.0a5's reading of a rerank reply: ``results`` (or ``data``) as ``RerankItem`` s, in
    the server's order; a missing document is taken from ``documents`` by its index."""
    raw = data.get("results") or data.get("data") or []
    items: list[RerankItem] = []
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(item, dict):
            continue
        index = item.get("index", i)
        document = item.get("document")
        if isinstance(document, dict):
            document = document.get("text")
        if not isinstance(document, str) and isinstance(index, int) and 0 <= index < len(documents):
            document = documents[index]
        score = item.get("relevance_score", item.get("score", 0.0))
        items.append(
            RerankItem(index=index, relevance_score=float(score or 0.0), document=document)
        )
    return items


def _rerank_usage(data: Mapping[str, Any]) -> Usage | None:
    meta = data.get("meta")
    billed = meta.get("billed_units") if isinstance(meta, dict) else None
    if isinstance(billed, dict) and isinstance(billed.get("search_units"), int):
        return Usage(units=billed["search_units"])  # Cohere
    raw = data.get("usage")
    if isinstance(raw, dict):  # Jina, vLLM, GLM: tokens
        tokens = raw.get("total_tokens") or raw.get("prompt_tokens") or 0
        return Usage(input_tokens=int(tokens)) if isinstance(tokens, int) else None
    return None


class RerankEndpoint(_EndpointModel):
    """A Cohere / Jina-style ``/rerank`` endpoint as a
    :class:`~agent_adapter.context.RerankerPort`.

    Args:
        model: the rerank model.
        api_key: the key (default: ``OPENAI_API_KEY``).
        base_url: the server.
        path: the endpoint path (``/rerank``) or an absolute URL.
        provider: the name in errors, ledger entries and price lookups.
        options: more body fields for every call.
        endpoint: a :class:`JsonEndpoint` to share.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        path: str = "/rerank",
        provider: str = "openai",
        options: Mapping[str, Any] | None = None,
        endpoint: JsonEndpoint | None = None,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            path=path,
            provider=provider,
            options=options,
            endpoint=endpoint,
        )

    async def _call(
        self,
        query: str,
        documents: list[str],
        top_k: int | None,
        path: str | None,
        options: Mapping[str, Any],
    ) -> tuple[dict[str, Any], float]:
        body: dict[str, Any] = {
            "model": self.model,
            "query": query,
            "documents": documents,
            **self.options,
            **options,
        }
        if top_k is not None:
            body["top_k"] = top_k
        start = time.perf_counter()
        data = await self.endpoint.post(path or self.path, body, model=self.model)
        return data, time.perf_counter() - start

    async def rerank(self, query: str, texts: Sequence[str], *, ctx: Any = None) -> RerankResult:
        """One score per text, in input order (a ledger entry on ``ctx``, stage ``"rerank"``).

        Raises:
            ModelOutputInvalid: the reply leaves a text without a score.
        """
        documents = list(texts)
        data, seconds = await self._call(query, documents, None, None, {})
        scores: list[float | None] = [None] * len(documents)
        for item in rerank_items(data, documents):
            if isinstance(item.index, int) and 0 <= item.index < len(scores):
                scores[item.index] = item.relevance_score
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:
            raise ModelOutputInvalid(
                f"the rerank reply has no score for texts {missing}",
                provider=self.provider,
                model=self.model,
            )
        usage = _rerank_usage(data)
        record_call(
            ctx,
            provider=self.provider,
            model=self.model,
            stage="rerank",
            usage=usage or Usage(),
            seconds=seconds,
        )
        return RerankResult(scores=[s for s in scores if s is not None], usage=usage)

    async def rerank_items(
        self,
        query: str,
        documents: Sequence[str],
        *,
        top_k: int | None = None,
        path: str | None = None,
        **options: Any,
    ) -> list[RerankItem]:
        """0.3.0a5's ``Provider.rerank`` result: ``RerankItem`` s in the server's order (best
        first), cut to ``top_k`` (which is also sent)."""
        docs = list(documents)
        data, _seconds = await self._call(query, docs, top_k, path, options)
        items = rerank_items(data, docs)
        return items[:top_k] if top_k is not None else items
