"""cliver_core's standalone capabilities (0.3.0a5's ``cliver_core.capabilities``) and the
embedded model APIs of ``AgentCore`` (the ``EmbeddedModelsMixin``).

``embed`` and ``rerank`` go over real HTTP to a small local server speaking the wire
0.3.0a5's ``Provider.embed`` / ``Provider.rerank`` speak (OpenAI's ``/embeddings``, the
Cohere / Jina ``/rerank``); the media capabilities, pipelines, MCP and local models are out
of scope and must raise ``CapabilityNotSupported`` naming what is missing.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_adapter import ConfigError, ModelError, ModelOutputInvalid, RunContext
from agent_adapter.context import RerankResult
from cliver_core import CapabilityNotSupported, CLIverMessage, CLIverResponse, ModelBindings
from cliver_core._embedded_api import EmbeddedModelsMixin
from cliver_core.bindings import ModelBinding
from cliver_core.capabilities import (
    embed,
    generate_image,
    generate_video,
    rerank,
    text_to_speech,
    transcribe_audio,
)
from cliver_core.media import (
    MediaContent,
    MediaType,
    add_media_content_to_message_parts,
    extension_from_mime,
    load_media_file,
    media_type_from_mime,
    resolve_media_mime,
)
from cliver_core.media_jobs import MediaJob
from cliver_core.provider import (
    EmbeddingsResult,
    OpenAIEmbeddings,
    Provider,
    RerankEndpoint,
    RerankItem,
)

Handler = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]


class WireServer:
    """A local server answering ``POST`` with ``handler(path, body) -> (status, json)``,
    recording ``(path, headers, body)``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _app(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        body = await request.json()
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append((request.url.path, headers, body))
        status, payload = self.handler(request.url.path, body)
        return JSONResponse(payload, status_code=status)

    def __enter__(self) -> WireServer:
        import uvicorn
        from starlette.applications import Starlette
        from starlette.routing import Route

        app = Starlette(routes=[Route("/{path:path}", self._app, methods=["POST"])])
        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[sock])), daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "the test server did not start"
            time.sleep(0.005)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def _vector(text: str) -> list[float]:
    return [float(len(text)), float(text.count("a")), 1.0]


def openai_wire(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """OpenAI's embeddings reply (items out of order, as the index allows) and a Cohere-style
    rerank reply (best first, ``document`` as ``{"text"}``, billed search units)."""
    if path.endswith("/rerank"):
        docs = body["documents"]
        order = sorted(range(len(docs)), key=lambda i: -docs[i].count(body["query"]))
        results = [
            {
                "index": i,
                "relevance_score": docs[i].count(body["query"]) / 10,
                "document": {"text": docs[i]},
            }
            for i in order
        ]
        return 200, {"results": results, "meta": {"billed_units": {"search_units": 1}}}
    if body.get("model") == "broken":
        return 400, {"error": {"message": "unknown model", "type": "invalid_request_error"}}
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    data = [
        {"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(texts)
    ]
    return 200, {
        "object": "list",
        "data": list(reversed(data)),
        "model": body["model"] + "-v2",
        "usage": {"prompt_tokens": 7, "total_tokens": 7},
    }


@pytest.fixture
def wire() -> Iterator[WireServer]:
    with WireServer(openai_wire) as server:
        yield server


# -- embed --------------------------------------------------------------------------------


async def test_embed_on_a_built_binding_posts_the_wire_body(wire: WireServer) -> None:
    binding = ModelBinding.embed(
        model="text-embedding-3-small", api_key="sk-test", base_url=wire.url, dimensions=3
    )
    result = await embed(texts=["banana", "kiwi"], binding=binding)
    assert isinstance(result, EmbeddingsResult)
    assert result.vectors == [_vector("banana"), _vector("kiwi")]  # placed by index
    assert result.model == "text-embedding-3-small-v2"
    assert result.usage is not None and result.usage.input_tokens == 7
    path, headers, body = wire.requests[0]
    assert path == "/v1/embeddings"
    assert headers["authorization"] == "Bearer sk-test"
    assert body == {"model": "text-embedding-3-small", "input": ["banana", "kiwi"], "dimensions": 3}
    one = await embed(texts="solo", binding=binding, dimensions=2, path="/v2/embed")
    assert one.vectors == [_vector("solo")]
    assert wire.requests[1][0] == "/v1/v2/embed"
    assert wire.requests[1][2]["dimensions"] == 2  # the call site wins
    await binding.aclose()


async def test_embed_errors_are_model_errors(wire: WireServer) -> None:
    binding = ModelBinding.embed(model="broken", api_key="k", base_url=wire.url)
    with pytest.raises(ModelError) as caught:
        await embed(texts=["x"], binding=binding)
    assert "unknown model" in str(caught.value)
    await binding.aclose()


async def test_embed_through_an_embedding_port() -> None:
    class Port:
        async def embed(self, texts: Any, *, ctx: Any = None) -> list[list[float]]:
            return [[float(len(t))] for t in texts]

    binding = ModelBinding.embed(model="local", provider=Port())
    result = await embed(texts=["ab", "abc"], binding=binding)
    assert result.vectors == [[2.0], [3.0]] and result.model == "local"
    with pytest.raises(ConfigError, match="dimensions"):
        await embed(
            texts=["ab"], binding=ModelBinding.embed(model="m", provider=Port(), dimensions=8)
        )
    assert binding._embedder() is binding.provider


async def test_embed_through_a_0_3_0a5_provider_of_yours() -> None:
    class Mine(Provider):
        protocol = "openai"

        def __init__(self) -> None:
            super().__init__("k", "http://unused")
            self.calls: list[Any] = []

        async def chat(self, request: Any) -> Any:
            raise NotImplementedError

        async def stream(self, request: Any) -> Any:
            raise NotImplementedError

        async def embed(self, texts: list[str], *, model: str, **options: Any) -> EmbeddingsResult:
            self.calls.append((texts, model, options))
            return EmbeddingsResult(vectors=[[1.0] for _ in texts], model=model)

    mine = Mine()
    binding = ModelBinding.embed(model="e1", provider=mine, dimensions=4)
    result = await embed(texts=["a"], binding=binding)
    assert result.vectors == [[1.0]] and mine.calls == [(["a"], "e1", {"dimensions": 4})]
    assert await binding._embedder().embed(["a", "b"]) == [[1.0], [1.0]]


async def test_the_embeddings_port_writes_a_ledger_entry(wire: WireServer) -> None:
    port = OpenAIEmbeddings("emb", api_key="k", base_url=wire.url, provider="vllm")
    ctx = RunContext()
    vectors = await port.embed(["hello"], ctx=ctx)
    assert vectors == [_vector("hello")]
    entry = ctx.ledger.entries[-1]
    assert (entry.provider, entry.model, entry.stage) == ("vllm", "emb", "embed")
    assert entry.usage.input_tokens == 7
    await port.aclose()


# -- rerank -------------------------------------------------------------------------------


async def test_rerank_on_a_built_binding(wire: WireServer) -> None:
    binding = ModelBinding.rerank(model="rerank-v3.5", api_key="k", base_url=wire.url, top_k=2)
    docs = ["no match", "cat cat", "cat"]
    items = await rerank(query="cat", documents=docs, binding=binding)
    assert [(i.index, i.document) for i in items] == [(1, "cat cat"), (2, "cat")]
    assert all(isinstance(i, RerankItem) for i in items)
    path, _headers, body = wire.requests[0]
    assert path == "/v1/rerank"
    assert body == {"model": "rerank-v3.5", "query": "cat", "documents": docs, "top_k": 2}
    everything = await rerank(query="cat", documents=docs, binding=binding, top_k=3)
    assert len(everything) == 3
    await binding.aclose()


async def test_rerank_reads_the_jina_shape() -> None:
    def jina(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        data = [{"index": 1, "score": 0.9}, {"index": 0, "score": 0.1}]
        return 200, {"data": data, "usage": {"total_tokens": 12}}

    with WireServer(jina) as server:
        port = RerankEndpoint("jina-reranker", api_key="k", base_url=server.url)
        items = await port.rerank_items("q", ["a", "b"])
        assert [(i.index, i.relevance_score, i.document) for i in items] == [
            (1, 0.9, "b"),
            (0, 0.1, "a"),
        ]
        ctx = RunContext()
        result = await port.rerank("q", ["a", "b"], ctx=ctx)
        assert result.scores == [0.1, 0.9]  # input order
        assert ctx.ledger.entries[-1].usage.input_tokens == 12
        with pytest.raises(ModelOutputInvalid, match="no score"):
            await port.rerank("q", ["a", "b", "c"])
        await port.aclose()


async def test_rerank_through_a_reranker_port() -> None:
    class Port:
        async def rerank(self, query: str, texts: Any, *, ctx: Any = None) -> RerankResult:
            return RerankResult(scores=[0.2, 0.9, 0.5])

    binding = ModelBinding.rerank(model="local", provider=Port(), top_k=2)
    items = await rerank(query="q", documents=["a", "b", "c"], binding=binding)
    assert [(i.index, i.document) for i in items] == [(1, "b"), (2, "c")]
    with pytest.raises(ConfigError, match="temperature"):
        await rerank(query="q", documents=["a"], binding=binding, temperature=1)


# -- the embedded APIs --------------------------------------------------------------------


class Agent(EmbeddedModelsMixin):
    def __init__(self, bindings: ModelBindings) -> None:
        self.bindings = bindings


async def test_agent_embed_and_rerank(wire: WireServer) -> None:
    agent = Agent(
        ModelBindings(
            embed=ModelBinding.embed(model="e", api_key="k", base_url=wire.url),
            rerank=ModelBinding.rerank(model="r", api_key="k", base_url=wire.url),
        )
    )
    assert (await agent.embed("abc")).vectors == [_vector("abc")]
    items = await agent.rerank("x", ["x", "xx"], top_k=1)
    assert [i.index for i in items] == [1]
    await agent.bindings.aclose()


def test_unbound_purposes_raise_0_3_0a5_s_message() -> None:
    agent = Agent(ModelBindings())
    with pytest.raises(CapabilityNotSupported) as caught:
        asyncio.run(agent.embed("x"))
    assert str(caught.value) == (
        "No model bound for 'embed' — set bindings.embed (e.g. ModelBinding.embed("
        "model='...', api_key='...', base_url='...')) to enable it."
    )
    with pytest.raises(CapabilityNotSupported, match=r"ModelBinding\.tts\(model"):
        agent._require_binding("audio")


async def test_media_is_out_of_scope() -> None:
    image = ModelBinding.image(model="gpt-image-1", api_key="k", base_url="http://x/v1")
    agent = Agent(
        ModelBindings(
            image=image,
            video=ModelBinding.video(model="v", api_key="k", base_url="http://x/v1"),
            tts=ModelBinding.tts(model="t", api_key="k", base_url="http://x/v1"),
            asr=ModelBinding.asr(model="w", api_key="k", base_url="http://x/v1"),
        )
    )
    cases = [
        (agent.image("a cat"), "image generation"),
        (agent.video("a sunset"), "video generation"),
        (agent.tts("hi"), "text-to-speech"),
        (agent.asr(b"RIFF"), "audio transcription"),
        (generate_image(prompt="p", binding=image), "image generation"),
        (generate_video(prompt="p", binding=image), "video generation"),
        (text_to_speech(text="p", binding=image), "text-to-speech"),
        (transcribe_audio(audio=b"x", binding=image), "audio transcription"),
    ]
    for call, label in cases:
        with pytest.raises(CapabilityNotSupported, match=label):
            await call
    with pytest.raises(CapabilityNotSupported, match="image generation"):
        agent.submit_image("a cat")  # fails at submit time, nothing scheduled
    with pytest.raises(CapabilityNotSupported, match="image generation"):
        await image.get_provider().image("p", "m")
    with pytest.raises(CapabilityNotSupported, match="image generation"):
        image._port()


async def test_a_provider_of_yours_still_serves_media() -> None:
    class Speaker(Provider):
        protocol = "openai"

        async def chat(self, request: Any) -> Any:
            raise NotImplementedError

        async def stream(self, request: Any) -> Any:
            raise NotImplementedError

        async def tts(self, text: str, model: str, **options: Any) -> CLIverResponse:
            message = CLIverMessage(role="assistant", content=f"{model}:{text}:{options}")
            return CLIverResponse(message=message)

    agent = Agent(
        ModelBindings(tts=ModelBinding.tts(model="t1", provider=Speaker("", ""), voice="alloy"))
    )
    job = agent.submit_tts("hello")
    assert isinstance(job, MediaJob) and job.purpose == "tts"
    response = await job.result(timeout=5)
    assert response.message.content == "t1:hello:{'output_dir': None, 'voice': 'alloy'}"
    assert job.status == "done" and job.done()


def test_submit_needs_a_running_loop() -> None:
    class Speaker(Provider):
        protocol = "openai"

        async def chat(self, request: Any) -> Any:
            raise NotImplementedError

        async def stream(self, request: Any) -> Any:
            raise NotImplementedError

        async def image(self, prompt: str, model: str, **options: Any) -> CLIverResponse:
            raise NotImplementedError

    agent = Agent(ModelBindings(image=ModelBinding.image(model="i", provider=Speaker("", ""))))
    with pytest.raises(RuntimeError, match="requires a running event loop"):
        agent.submit_image("x")


def test_pipelines_and_local_models_are_out_of_scope() -> None:
    from cliver_core import local, pipeline

    with pytest.raises(CapabilityNotSupported, match="skill pipelines"):
        pipeline.PipelineStep(name="a", prompt="p")
    with pytest.raises(CapabilityNotSupported, match="skill pipelines"):
        pipeline.SkillPipeline([])
    assert pipeline.PipelineResult().ok and pipeline.FailurePolicy("continue").value == "continue"
    with pytest.raises(CapabilityNotSupported, match="local models"):
        local.LocalEmbeddingProvider(model="bge", backend="sentence-transformers")
    with pytest.raises(CapabilityNotSupported, match="local models"):
        local.local_embed(provider=None)
    assert issubclass(local.LocalDimensionError, RuntimeError)


# -- media helpers ------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


def test_media_helpers(tmp_path: Path) -> None:
    source = tmp_path / "pic.png"
    source.write_bytes(PNG)
    media = load_media_file(str(source))
    assert (media.type, media.mime_type, media.filename) == (
        MediaType.IMAGE,
        "image/png",
        "pic.png",
    )
    assert media.to_bytes() == PNG and media.get_file_extension() == ".png"
    assert media.save(tmp_path / "copy.png") and (tmp_path / "copy.png").read_bytes() == PNG
    parts: list[dict[str, Any]] = [{"type": "text", "text": "look"}]
    clip = MediaContent(type=MediaType.AUDIO, data="", mime_type="audio/wav", filename="a.wav")
    add_media_content_to_message_parts(parts, [media, clip])
    encoded = base64.b64encode(PNG).decode()
    assert parts[1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{encoded}"},
    }
    assert parts[2] == {"type": "text", "text": "[Audio file: a.wav]"}
    assert resolve_media_mime("image/png", payload=b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert resolve_media_mime("image/png", url="https://x/y.webp?sig=1") == "image/webp"
    assert media_type_from_mime("model/gltf+json") is MediaType.FILE
    assert extension_from_mime("model/gltf+json") == "gltf"
    assert extension_from_mime("application/octet-stream") == "bin"
    with pytest.raises(FileNotFoundError):
        load_media_file(str(tmp_path / "missing.png"))
