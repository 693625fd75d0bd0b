"""Prices and context windows from a maintained source: ``genai-prices`` (pydantic's, MIT).

``genai-prices`` ships its price data in the package (a snapshot of its
``prices/data.json``, read offline; nothing is fetched unless its ``UpdatePrices`` is
started, which this module never does) and matches model names as the providers spell them
(dated snapshots, ``-latest`` aliases) with each provider's own rules. It is an optional
dependency (extra ``prices``: it brings ``pydantic`` and ``httpx2``, more than a plain install
should carry): without it every lookup here answers ``None`` and the library's own tables
(:mod:`agent_adapter._prices`, :mod:`agent_adapter._profiles`) are used alone.

Precedence, the same for prices and windows (see :class:`~agent_adapter.PriceTable` and
:func:`~agent_adapter.model_profile`): what the caller set; then an entry of the library's
table that cites the provider's page it was read from (a dated reading of the provider beats
a snapshot that may predate it: ``genai-prices`` 0.2.5 still lists deepseek-chat at the
V3 prices and a 64K window, DeepSeek's page now says otherwise); then ``genai-prices``; then
the library's entries written from memory (marked ``unverified``), the documented fallback.

Set ``AGENT_ADAPTER_GENAI_PRICES=0`` to leave ``genai-prices`` out even when installed.

Provider names map to ``genai-prices``' ids where they differ (``gemini`` is ``google``,
``bedrock`` is ``aws``, ``xai`` is ``x-ai``); a name it does not know (``vllm``, ``ollama``,
a gateway of your own) gets nothing from it: the model behind it is not guessed.
"""

from __future__ import annotations

import functools
import os
from typing import Any

__all__ = ["available", "maintained_price", "maintained_window", "source"]

_IDS = {"gemini": "google", "google-gla": "google", "bedrock": "aws", "xai": "x-ai"}
#: tokens priced to read a per-token price (small: a tiered price stays on its first tier)
_PROBE = 1000


@functools.cache
def _module() -> Any:
    if os.environ.get("AGENT_ADAPTER_GENAI_PRICES", "1") == "0":
        return None
    try:
        import genai_prices
    except ImportError:
        return None
    return genai_prices


def available() -> bool:
    """Whether ``genai-prices`` is installed (and not switched off)."""
    return _module() is not None


def source() -> str:
    """``"genai-prices <version>"`` (``""`` when it is not used)."""
    module = _module()
    if module is None:
        return ""
    from importlib.metadata import version

    return f"genai-prices {version('genai-prices')}"


def _provider_id(provider: str) -> str:
    return _IDS.get(provider, provider)


def _calc(provider: str, model: str, **usage: int) -> Any:
    module = _module()
    if module is None or not provider or not model:
        return None
    try:
        return module.calc_price(module.Usage(**usage), model, provider_id=_provider_id(provider))
    except LookupError:
        return None


@functools.lru_cache(maxsize=1024)
def maintained_price(provider: str, model: str) -> tuple[float, float, float, float] | None:
    """USD per million tokens of ``model`` at ``provider``: (input, output, cache read,
    cache write), or ``None`` when ``genai-prices`` is not there or does not know it.

    Each is read by pricing 1,000 tokens of one kind (so a tiered price is its first
    tier, as the library's table keeps it); a model with no cache price prices cache
    tokens as input, as the provider bills them."""
    plain = _calc(provider, model, input_tokens=_PROBE, output_tokens=_PROBE)
    if plain is None:
        return None
    read = _calc(provider, model, input_tokens=_PROBE, cache_read_tokens=_PROBE)
    write = _calc(provider, model, input_tokens=_PROBE, cache_write_tokens=_PROBE)
    scale = 1_000_000 / _PROBE

    def per_million(value: Any) -> float:
        return round(float(value) * scale, 10)

    return (
        per_million(plain.input_price),
        per_million(plain.output_price),
        per_million(read.input_price) if read is not None else per_million(plain.input_price),
        per_million(write.input_price) if write is not None else per_million(plain.input_price),
    )


@functools.lru_cache(maxsize=1024)
def maintained_window(provider: str, model: str) -> int | None:
    """``model``'s context window at ``provider`` as ``genai-prices`` states it, or
    ``None``."""
    found = _calc(provider, model, input_tokens=1)
    window = getattr(getattr(found, "model", None), "context_window", None)
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        return window
    return None
