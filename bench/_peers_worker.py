"""The peers of ``quality.py`` (headroom-ai, litellm's ``compress()``), run in a Python that has
them (their pins clash with ours: a separate venv, see bench/README.md).

One request a line on stdin, one answer a line on stdout (JSON)::

    {"peer": "headroom" | "litellm", "fmt": "openai" | "anthropic", "messages": [...],
     "target": 12000, "share": 0.25, "repeat": 1}
    -> {"messages": [...], "ms": 12.3} or {"error": "..."}

The first line the worker writes says which peers it has: ``{"peers": {"headroom":
"0.42.0", "litellm": "1.110.2"}}``. Everything runs offline: litellm reads its bundled
model-cost map (``LITELLM_LOCAL_MODEL_COST_MAP``), headroom's ML text compressor is not
downloaded (``HF_HUB_OFFLINE``; it falls back to what runs without it).

* **headroom**: ``headroom.compress(messages, model="gpt-4o", model_limit=target,
  target_ratio=share)``, its defaults otherwise (``protect_recent=4``, user messages not
  compressed).
* **litellm**: ``litellm.compress(messages, model="gpt-3.5-turbo", compression_trigger=target,
  compression_target=target)`` (BM25 only), ``call_type="anthropic_messages"`` for
  Anthropic input; the retrieval tool it adds is not counted (only the messages are). An
  OpenAI message whose content is ``None`` (an assistant's tool calls) is given ``""``
  first: ``compress()`` raises on it.
"""

import contextlib
import json
import os
import sys
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for peer, dist in (("headroom", "headroom-ai"), ("litellm", "litellm")):
        with contextlib.suppress(PackageNotFoundError):
            out[peer] = version(dist)
    return out


def _run(req: dict[str, Any]) -> list[Any]:
    msgs, target, share = req["messages"], int(req["target"]), float(req["share"])
    if req["peer"] == "headroom":
        import headroom

        result = headroom.compress(msgs, model="gpt-4o", model_limit=target, target_ratio=share)
        return list(result.messages)
    import litellm

    kwargs: dict[str, Any] = {}
    if req["fmt"] != "anthropic":  # it fails on an assistant message with content None
        msgs = [{**m, "content": ""} if m.get("content") is None else m for m in msgs]
    if req["fmt"] == "anthropic":
        kwargs["call_type"] = "anthropic_messages"
    out = litellm.compress(
        msgs,
        model="gpt-3.5-turbo",  # its tokenizer (cl100k) ships with litellm: no download
        compression_trigger=target,
        compression_target=target,
        **kwargs,
    )
    return list(out["messages"])


def main() -> None:
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # the peers' own prints never reach the protocol
    real_stdout.write(json.dumps({"peers": _versions()}) + "\n")
    real_stdout.flush()
    for line in sys.stdin:
        req = json.loads(line)
        try:
            times = []
            out: list[Any] = []
            for _ in range(max(1, int(req.get("repeat", 1)))):
                t0 = time.perf_counter()
                out = _run(req)
                times.append((time.perf_counter() - t0) * 1e3)
            times.sort()
            answer = {"messages": out, "ms": times[len(times) // 2]}
        except Exception as e:  # a peer's failure is reported, the bench goes on
            answer = {"error": f"{type(e).__name__}: {e}"[:500]}
        real_stdout.write(json.dumps(answer, default=str) + "\n")
        real_stdout.flush()


if __name__ == "__main__":
    main()
