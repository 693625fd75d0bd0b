"""A local endpoint for the purposes ProviderServer does not speak: OpenAI-shape embeddings
(``POST /v1/embeddings``) and Cohere/Jina-shape rerank (``POST /v1/rerank``), with
deterministic answers computed from the request, every request recorded.

Embeddings: text ``i`` of the input gets ``[len(text), i, 0.5]`` (``dimensions`` is recorded,
not applied); usage counts words. Rerank: a document scores the share of the query's words it
holds (ties keep input order), results best first, cut to ``top_k`` / ``top_n`` when given.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

__all__ = ["AuxServer"]


def _words(text: str) -> list[str]:
    return [w.strip(".,?!").lower() for w in text.split() if w.strip(".,?!")]


def embeddings_reply(body: dict[str, Any]) -> dict[str, Any]:
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    data = [
        {"object": "embedding", "index": i, "embedding": [float(len(t)), float(i), 0.5]}
        for i, t in enumerate(texts)
    ]
    tokens = sum(len(_words(t)) for t in texts)
    return {
        "object": "list",
        "data": data,
        "model": body.get("model", ""),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def rerank_reply(body: dict[str, Any]) -> dict[str, Any]:
    query = set(_words(str(body.get("query", ""))))
    documents = [str(d) for d in body.get("documents") or []]
    scored = []
    for i, doc in enumerate(documents):
        words = set(_words(doc))
        score = round(len(query & words) / max(len(query), 1), 4)
        scored.append({"index": i, "relevance_score": score})
    scored.sort(key=lambda r: (-r["relevance_score"], r["index"]))
    limit = body.get("top_k") or body.get("top_n")
    if isinstance(limit, int):
        scored = scored[:limit]
    return {"model": body.get("model", ""), "results": scored}


class AuxServer:
    """The endpoint on 127.0.0.1 and a free port, in a thread; ``with AuxServer() as aux``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._port = 0

    @property
    def url(self) -> str:
        """The OpenAI-style base URL (``.../v1``)."""
        return f"http://127.0.0.1:{self._port}/v1"

    async def _handle(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        path = request.url.path
        try:
            body = await request.json()
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(
                {
                    "path": path,
                    "authorization": request.headers.get("authorization"),
                    "body": body,
                }
            )
        if not isinstance(body, dict):
            return JSONResponse({"error": {"message": "body is not a JSON object"}}, 400)
        if path.endswith("/embeddings"):
            return JSONResponse(embeddings_reply(body))
        if path.endswith("/rerank"):
            return JSONResponse(rerank_reply(body))
        return JSONResponse({"error": {"message": f"no route {path}"}}, 404)

    def start(self) -> AuxServer:
        import uvicorn
        from starlette.applications import Starlette
        from starlette.routing import Route

        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["POST"])])
        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", access_log=False, ws="none", http="h11"
        )
        server = uvicorn.Server(config)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        self._server = server
        self._thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("AuxServer did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> AuxServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
