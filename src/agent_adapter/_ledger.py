"""The ledger: one entry per model call (provider, model, stage, tokens, USD, seconds).

A :class:`~agent_adapter.RunContext` holds one :class:`Ledger`; every port that completes a
call under that context adds its entry (failed calls add none: providers do not bill them;
their events say what happened). Entries are frozen; the ledger only grows.

An entry's cost is priced after the provider's prompt cache: of its ``input_tokens``, the
``cache_read_tokens`` are priced at the price table's cached-input price and the
``cache_write_tokens`` at its cache-write price, the rest at the input price (see
:meth:`~agent_adapter.Price.cost`). The providers read both counts off their replies (OpenAI
``cached_tokens``, Anthropic ``cache_read_input_tokens`` / ``cache_creation_input_tokens``,
Gemini ``cached_content_token_count``, DeepSeek ``prompt_cache_hit_tokens``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

from agent_adapter._model import Usage

__all__ = ["Ledger", "LedgerEntry"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerEntry:
    """One model call.

    Attributes:
        provider: who served it (``"openai"``, ``"anthropic"``, ``"callable"``...).
        model: the model's name.
        stage: what the call was for (``"main"``, ``"summary"``, ``"rerank"``...).
        usage: tokens and billing units.
        cost_usd: its price, ``None`` when the price table has no entry for it.
        seconds: wall time of the call.
        run_id: the run it belongs to.
    """

    provider: str
    model: str
    stage: str
    usage: Usage
    cost_usd: float | None
    seconds: float
    run_id: str = ""

    @property
    def input_tokens(self) -> int:
        """Input tokens, cached ones included."""
        return self.usage.input_tokens

    @property
    def output_tokens(self) -> int:
        """Output tokens."""
        return self.usage.output_tokens

    @property
    def cache_read_tokens(self) -> int:
        """The part of the input read from the provider's prompt cache."""
        return self.usage.cache_read_tokens

    @property
    def cache_write_tokens(self) -> int:
        """The part of the input written to the provider's prompt cache."""
        return self.usage.cache_write_tokens


class Ledger:
    """The entries of one run, in call order; safe to add to from several threads."""

    __slots__ = ("_entries", "_lock")

    def __init__(self) -> None:
        self._entries: list[LedgerEntry] = []
        self._lock = threading.Lock()

    def add(self, entry: LedgerEntry) -> None:
        """Append ``entry``."""
        if not isinstance(entry, LedgerEntry):
            raise TypeError(f"Ledger.add takes a LedgerEntry, got {type(entry).__name__}")
        with self._lock:
            self._entries.append(entry)

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every entry so far, oldest first."""
        with self._lock:
            return tuple(self._entries)

    def __iter__(self) -> Iterator[LedgerEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Ledger({len(self)} entries, ${self.cost_usd:.6f})"

    @property
    def usage(self) -> Usage:
        """The summed usage of every entry."""
        total = Usage()
        for entry in self.entries:
            total = total + entry.usage
        return total

    @property
    def cost_usd(self) -> float:
        """The summed cost of the priced entries (see :attr:`unpriced`)."""
        return sum(e.cost_usd for e in self.entries if e.cost_usd is not None)

    @property
    def unpriced(self) -> int:
        """How many entries had no price."""
        return sum(e.cost_usd is None for e in self.entries)

    def by_stage(self) -> dict[str, Usage]:
        """Summed usage per stage, in first-seen order."""
        out: dict[str, Usage] = {}
        for e in self.entries:
            out[e.stage] = out.get(e.stage, Usage()) + e.usage
        return out
