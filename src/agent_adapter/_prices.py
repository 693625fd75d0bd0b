"""The price table: ``provider:model`` -> USD per million input, output and cached tokens.

Figures are the providers' list prices for standard (not batch, not priority, not flex)
processing. Prices change and this table does not follow them: check them before relying on a
bill, and override what differs with :meth:`PriceTable.set` or a mapping passed to
:class:`PriceTable` (a :class:`~agent_adapter.RunContext` prices its ledger with its own table).
Each group names the provider page that states its figures, as read in December 2026; an entry
marked ``unverified`` was written from memory and no provider page reachable then stated it, so
treat it as an estimate. With ``genai-prices`` installed (extra ``prices``), its maintained
prices replace those estimates: :meth:`PriceTable.find` takes the caller's entries, then this
table's verified ones, then ``genai-prices`` (:mod:`agent_adapter._maintained`), then the
unverified ones, the documented fallback. Tiered prices (Gemini 2.5 Pro above 200k input
tokens) use the first tier. Anthropic cache prices follow the page's multipliers (reads 0.1x,
5-minute writes 1.25x) except Claude Haiku 3, which the page lists at $0.03 reads and $0.30
writes.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from agent_adapter._errors import ConfigError
from agent_adapter._model import Usage

__all__ = ["DEFAULT_PRICES", "Price", "PriceTable"]


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens (and per billing unit).

    Args:
        input: uncached input tokens.
        output: output tokens.
        cached_input: input tokens read from the prompt cache; ``None``: the input price
            (a model with no cache discount).
        cache_write: input tokens written to the prompt cache; ``None``: the input price
            (OpenAI before the GPT-5.6 family and Gemini's implicit cache charge nothing
            extra; Anthropic charges 1.25x for 5-minute writes and 2x for 1-hour ones, which
            :class:`~agent_adapter.Usage` does not tell apart: its writes are priced here).
        per_unit: USD per billing unit that is not a token (a rerank search, a request).

    Raises:
        ConfigError: a price is negative or not a finite number.
    """

    input: float
    output: float = 0.0
    cached_input: float | None = None
    cache_write: float | None = None
    per_unit: float = 0.0

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input", "cache_write", "per_unit"):
            v = getattr(self, name)
            if v is None and name in ("cached_input", "cache_write"):
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise ConfigError(f"Price.{name} must be a finite number, got {v!r}")
            if v < 0:
                raise ConfigError(f"Price.{name} must be >= 0, got {v!r}")

    def cost(self, usage: Usage) -> float:
        """The USD cost of ``usage`` at this price."""
        read = usage.cache_read_tokens
        write = usage.cache_write_tokens
        plain = usage.input_tokens - read - write
        cached = self.input if self.cached_input is None else self.cached_input
        writing = self.input if self.cache_write is None else self.cache_write
        return (
            plain * self.input + read * cached + write * writing + usage.output_tokens * self.output
        ) / 1_000_000 + usage.units * self.per_unit


def _anthropic(input: float, output: float) -> Price:
    # cache reads 0.1x, 5-minute cache writes 1.25x the input price
    return Price(input, output, cached_input=input / 10, cache_write=input * 1.25)


DEFAULT_PRICES: Mapping[str, Price] = {
    # https://developers.openai.com/api/docs/models/<model> (standard "Text tokens" rows);
    # verified there: gpt-4.1-nano, gpt-5-mini, gpt-5-nano. The rest: unverified (no OpenAI
    # page reachable stated them; third-party copies of the pricing page agree).
    "openai:gpt-4o": Price(2.50, 10.00, 1.25),  # unverified
    "openai:gpt-4o-mini": Price(0.15, 0.60, 0.075),  # unverified
    "openai:gpt-4.1": Price(2.00, 8.00, 0.50),  # unverified
    "openai:gpt-4.1-mini": Price(0.40, 1.60, 0.10),  # unverified
    "openai:gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "openai:gpt-5": Price(1.25, 10.00, 0.125),  # unverified
    "openai:gpt-5-mini": Price(0.25, 2.00, 0.025),
    "openai:gpt-5-nano": Price(0.05, 0.40, 0.005),
    "openai:o3": Price(2.00, 8.00, 0.50),  # unverified
    "openai:o3-mini": Price(1.10, 4.40, 0.55),  # unverified
    "openai:o4-mini": Price(1.10, 4.40, 0.275),  # unverified
    # https://platform.claude.com/docs/en/about-claude/pricing (was docs.anthropic.com/en/docs/
    # about-claude/pricing; model table with cache columns: Opus 4.5, 4.1, 4, Sonnet 4, 3.7,
    # 3.5, Haiku 3.5, Haiku 3);
    # https://platform.claude.com/docs/en/models/<model>/overview (Sonnet 4.5, Haiku 4.5:
    # input and output; cache prices by the page's multipliers)
    "anthropic:claude-opus-4-5": _anthropic(5.00, 25.00),
    "anthropic:claude-opus-4-1": _anthropic(15.00, 75.00),
    "anthropic:claude-opus-4": _anthropic(15.00, 75.00),
    "anthropic:claude-sonnet-4-5": _anthropic(3.00, 15.00),
    "anthropic:claude-sonnet-4": _anthropic(3.00, 15.00),
    "anthropic:claude-3-7-sonnet": _anthropic(3.00, 15.00),
    "anthropic:claude-3-5-sonnet": _anthropic(3.00, 15.00),
    "anthropic:claude-haiku-4-5": _anthropic(1.00, 5.00),
    "anthropic:claude-3-5-haiku": _anthropic(0.80, 4.00),
    "anthropic:claude-3-haiku": Price(0.25, 1.25, cached_input=0.03, cache_write=0.30),
    # https://ai.google.dev/gemini-api/docs/pricing (paid tier, prompts <= 200k tokens), read
    # through a verbatim transcript of 2026-09-20: 2.5 Pro input, 2.5 Flash input, 2.5
    # Flash-Lite output. The rest: unverified. Gemini 2.0 Flash and Flash-Lite are shut down
    # (their model pages say so).
    "gemini:gemini-2.5-pro": Price(1.25, 10.00, 0.125),  # output, cached: unverified
    "gemini:gemini-2.5-flash": Price(0.30, 2.50, 0.03),  # output, cached: unverified
    "gemini:gemini-2.5-flash-lite": Price(0.10, 0.40, 0.01),  # input, cached: unverified
    "gemini:gemini-2.0-flash": Price(0.10, 0.40, 0.025),  # unverified
    "gemini:gemini-2.0-flash-lite": Price(0.075, 0.30),  # unverified; no cache price listed
    # https://api-docs.deepseek.com/quick_start/pricing: both names are the non-thinking and
    # thinking modes of deepseek-v4-flash ($0.14 cache miss, $0.28 output; the page's footnote
    # cuts cache hits to 1/10 of the $0.028 launch price from 2026-04-26). The page marks both
    # names for deprecation in favour of deepseek-v4-flash.
    "deepseek:deepseek-v4-flash": Price(0.14, 0.28, 0.0028),
    "deepseek:deepseek-chat": Price(0.14, 0.28, 0.0028),
    "deepseek:deepseek-reasoner": Price(0.14, 0.28, 0.0028),
}

#: The entries of :data:`DEFAULT_PRICES` written from memory (a figure no provider page then
#: stated): ``genai-prices`` goes before them.
_UNVERIFIED = frozenset(
    {
        "openai:gpt-4o",
        "openai:gpt-4o-mini",
        "openai:gpt-4.1",
        "openai:gpt-4.1-mini",
        "openai:gpt-5",
        "openai:o3",
        "openai:o3-mini",
        "openai:o4-mini",
        "gemini:gemini-2.5-pro",
        "gemini:gemini-2.5-flash",
        "gemini:gemini-2.5-flash-lite",
        "gemini:gemini-2.0-flash",
        "gemini:gemini-2.0-flash-lite",
    }
)

#: A dated snapshot name (``gpt-4o-2024-08-06``, ``claude-sonnet-4-5-20250929``,
#: ``claude-3-5-sonnet-latest``) or a preview suffix, stripped when the exact name is unknown.
_VERSION_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest|-preview(-[\w-]+)?|-\d{3})$")


def _key(provider: str, model: str) -> str:
    return f"{provider}:{model}"


class PriceTable(Mapping[str, Price]):
    """Prices by ``provider:model``; the defaults plus yours.

    Lookups try the exact key, then the name without a dated-snapshot suffix
    (``gpt-4o-2024-08-06`` -> ``gpt-4o``), then the longest entry of that provider the name
    starts with (``gpt-4o-mini-audio`` -> ``gpt-4o-mini``). The entry found is used when it
    is yours or one of the defaults a provider page stated; otherwise (a default written
    from memory, or none) ``genai-prices``' price is used when it is installed and knows the
    model (see :mod:`agent_adapter._maintained`), else that default.

    Args:
        prices: entries to add or override, keyed ``"provider:model"``.
        defaults: start from :data:`DEFAULT_PRICES` (``False``: only ``prices``).

    Raises:
        ConfigError: a key is not ``"provider:model"`` or a value is not a :class:`Price`.
    """

    def __init__(self, prices: Mapping[str, Price] | None = None, *, defaults: bool = True) -> None:
        self._prices: dict[str, Price] = dict(DEFAULT_PRICES) if defaults else {}
        self._defaults = defaults
        self._lock = threading.Lock()
        for key, price in (prices or {}).items():
            self.set(key, price)

    def set(self, key: str, price: Price) -> None:
        """Add or replace the price of ``key`` (``"provider:model"``).

        Raises:
            ConfigError: a bad key or a value that is not a :class:`Price`.
        """
        if not isinstance(key, str) or key.count(":") < 1 or not all(key.split(":", 1)):
            raise ConfigError(f"price keys are 'provider:model', got {key!r}")
        if not isinstance(price, Price):
            raise ConfigError(f"the price of {key!r} must be a Price, got {type(price).__name__}")
        with self._lock:
            self._prices[key] = price

    def __getitem__(self, key: str) -> Price:
        return self._prices[key]

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._prices))

    def __len__(self) -> int:
        return len(self._prices)

    def find(self, provider: str, model: str) -> Price | None:
        """The price of ``model`` at ``provider``, or ``None`` when unknown (see the class
        docstring for where it comes from)."""
        key = self._key_of(provider, model)
        hit = self._prices.get(key) if key is not None else None
        if hit is not None and not (key in _UNVERIFIED and hit is DEFAULT_PRICES.get(key)):
            return hit
        if self._defaults:
            from agent_adapter._maintained import maintained_price

            found = maintained_price(provider, model)
            if found is not None:
                plain, out, read, write = found
                # a cache price equal to the input price is no cache price (None: as billed)
                return Price(
                    plain, out, None if read == plain else read, None if write == plain else write
                )
        return hit

    def _key_of(self, provider: str, model: str) -> str | None:
        """The entry ``model`` at ``provider`` resolves to (exact, undated, prefix)."""
        prices = self._prices
        exact = _key(provider, model)
        if exact in prices:
            return exact
        base = _VERSION_SUFFIX.sub("", model)
        if base != model and _key(provider, base) in prices:
            return _key(provider, base)
        prefix = f"{provider}:"
        best = ""
        for key in list(prices):
            if key.startswith(prefix) and model.startswith(key[len(prefix) :]):
                name = key[len(prefix) :]
                if len(name) > len(best) and model[len(name) : len(name) + 1] in ("", "-", "@"):
                    best = name
        return prefix + best if best else None

    def cost(self, provider: str, model: str, usage: Usage) -> float | None:
        """The USD cost of ``usage`` on ``provider:model``, or ``None`` without a price."""
        price = self.find(provider, model)
        return None if price is None else price.cost(usage)
