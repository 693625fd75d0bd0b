"""The gateway's counters: what ``GET /metrics`` shows (counts only, never content).

One set of counters a process (with ``--workers N`` each worker counts its own requests:
scrape each, or read the sum of the ``x-agent-adapter-*`` headers). Conversations are named
by the first 12 hex digits of a SHA-256 of their key, never by the id the client sent.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from dataclasses import dataclass

__all__ = ["Metrics"]

#: Conversations whose savings the page lists at most (the least recently seen go first).
MAX_CONVERSATIONS = 1000


@dataclass(slots=True)
class _Conversation:
    requests: int = 0
    compactions: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


class Metrics:
    """Counters of one gateway process.

        ``counts`` holds, by name: ``requests`` (every request), ``requests_<kind>``,
        ``passed_through`` (routes the gateway does not compress), ``compacted`` (a step ran),
        ``appended`` (sent as the previous request plus the new messages), ``fail_open`` (an
        unreadable body or an error inside compression: sent as it came), ``check_failed`` (a
        compressed request the checker refused: sent as it came), ``no_window`` (percents and no
        window known for the model: sent as it came), ``overflow_retries`` and
        ``upstream_errors`` (an error status) and ``upstream_unreachable`` (no response: a 502
    went back); ``tokens_before`` / ``tokens_after`` sum the reports' counts.
    """

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.conversations: OrderedDict[str, _Conversation] = OrderedDict()

    def add(self, name: str, n: int = 1) -> int:
        """Add ``n`` to counter ``name``; its new value."""
        self.counts[name] += n
        return self.counts[name]

    def saw(self, key: str, before: int, after: int, *, compacted: bool) -> None:
        """One request of conversation ``key`` went up with ``after`` tokens of ``before``."""
        name = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        entry = self.conversations.pop(name, None) or _Conversation()
        entry.requests += 1
        entry.compactions += compacted
        entry.tokens_before += before
        entry.tokens_after += after
        self.conversations[name] = entry
        while len(self.conversations) > MAX_CONVERSATIONS:
            self.conversations.popitem(last=False)
        self.counts["tokens_before"] += before
        self.counts["tokens_after"] += after

    def page(self) -> str:
        """The counters in Prometheus' text format."""
        lines = [
            "# agent-adapter gateway: counts only (tokens by the library's counter)",
            "# TYPE agent_adapter_gateway_total counter",
        ]
        for name in sorted(self.counts):
            lines.append(f'agent_adapter_gateway_total{{name="{name}"}} {self.counts[name]}')
        saved = self.counts["tokens_before"] - self.counts["tokens_after"]
        lines.append(f"agent_adapter_gateway_tokens_saved {saved}")
        lines.append("# TYPE agent_adapter_gateway_conversation gauge")
        for name, c in self.conversations.items():
            for field in ("requests", "compactions", "tokens_before", "tokens_after"):
                value = getattr(c, field)
                lines.append(
                    f'agent_adapter_gateway_conversation{{id="{name}",field="{field}"}} {value}'
                )
        return "\n".join(lines) + "\n"
