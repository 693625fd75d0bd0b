"""The gateway's settings: the command's options, parsed, and carried to worker processes."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter.context import CompressionPolicy

__all__ = ["DEFAULT_UPSTREAMS", "GatewayConfig", "parse_args"]

#: The providers' public API URLs, the upstreams by default.
DEFAULT_UPSTREAMS = {
    "openai": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
#: The environment variable that carries the settings to ``--workers`` processes.
CONFIG_ENV = "AGENT_ADAPTER_GATEWAY_CONFIG"


@dataclasses.dataclass(frozen=True)
class GatewayConfig:
    """What ``agent-adapter gateway`` was started with.

    Attributes:
        host / port: where it listens.
        threshold / target: ``"80%"`` (of the model's window) or a token count (``"32k"``);
            ``None``: the policy's default (threshold 80% of the window; with no target,
            each conversation's compactions derive their depth from the cache's prices and
            the conversation's growth, ``CompressionPolicy.depth="auto"``).
        model_max_tokens: the window for percents; ``None``: the request's model in the
            library's profiles (:func:`agent_adapter.model_profile`).
        state: ``None`` (in memory, this process), ``sqlite:///path`` or ``redis://...``.
        workers: processes serving (more than one without ``state`` share a SQLite file
            in a temporary folder, see :func:`agent_adapter.gateway.main`).
        openai_upstream / anthropic_upstream / gemini_upstream: where requests go.
        log_level: uvicorn's and the gateway's log level.
    """

    host: str = "127.0.0.1"
    port: int = 8787
    threshold: str | None = None
    target: str | None = None
    model_max_tokens: int | None = None
    state: str | None = None
    workers: int = 1
    openai_upstream: str = DEFAULT_UPSTREAMS["openai"]
    anthropic_upstream: str = DEFAULT_UPSTREAMS["anthropic"]
    gemini_upstream: str = DEFAULT_UPSTREAMS["gemini"]
    log_level: str = "info"

    def __post_init__(self) -> None:
        self.policy()  # a bad --threshold / --target fails at start, not on a request
        if self.state is not None and not self.state.startswith(
            ("sqlite://", "redis://", "rediss://", "unix://")
        ):
            raise ConfigError(
                f"--state {self.state!r}: give sqlite:///path/to/file or redis://host:port/db"
            )
        for name in ("openai_upstream", "anthropic_upstream", "gemini_upstream"):
            url = getattr(self, name)
            if not url.startswith(("http://", "https://")):
                raise ConfigError(f"--{name.replace('_', '-')} {url!r} must be an http(s) URL")
        if self.workers < 1:
            raise ConfigError(f"--workers must be >= 1, got {self.workers}")

    def upstream(self, provider: str) -> str:
        """The upstream base URL of ``provider`` (``openai``, ``anthropic``, ``gemini``)."""
        return str(getattr(self, f"{provider}_upstream"))

    def policy(self) -> CompressionPolicy:
        """The compression policy of ``--threshold`` / ``--target`` (its defaults otherwise).

        Raises:
            ConfigError: a value is neither a token count nor a percent, or percents and
                counts are mixed.
        """
        fields: dict[str, Any] = {}
        for name, value in (("threshold", self.threshold), ("target", self.target)):
            if value is None:
                continue
            tokens, percent = _limit(value, f"--{name}")
            if percent is not None:
                fields[f"{name}_percent"] = percent
            else:
                fields[f"{name}_tokens"] = tokens
        return CompressionPolicy(**fields)

    def to_env(self) -> str:
        """The settings as JSON (for :data:`CONFIG_ENV`)."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_env(cls) -> GatewayConfig:
        """The settings :meth:`to_env` wrote into :data:`CONFIG_ENV` (defaults without)."""
        raw = os.environ.get(CONFIG_ENV)
        return cls(**json.loads(raw)) if raw else cls()


_SUFFIXES = {"k": 1_000, "m": 1_000_000}


def _limit(value: str, option: str) -> tuple[int | None, float | None]:
    """``80%`` as a percent, ``32k`` / ``32000`` as a token count.

    Raises:
        ConfigError: neither, or out of range.
    """
    text = value.strip().lower().replace("_", "").replace(",", "")
    if text.endswith("%"):
        try:
            percent = float(text[:-1])
        except ValueError:
            raise ConfigError(f"{option} {value!r} is not a percent (e.g. 80%)") from None
        if not 0 < percent <= 100:
            raise ConfigError(f"{option} {value!r} must be a percent in (0, 100]")
        return None, percent
    return _count(text, value, option), None


def _count(text: str, value: str, option: str) -> int:
    """A positive token count (``200000``, ``200k``, ``1.5m``).

    Raises:
        ConfigError: not one.
    """
    scale = 1
    if text and text[-1] in _SUFFIXES:
        scale, text = _SUFFIXES[text[-1]], text[:-1]
    try:
        number = Decimal(text) * scale
    except (InvalidOperation, ValueError):
        raise ConfigError(f"{option} {value!r} is not a token count (e.g. 32000 or 32k)") from None
    if not number.is_finite() or number <= 0 or number != number.to_integral_value():
        raise ConfigError(f"{option} {value!r} must be a whole number of tokens > 0")
    if number > 10**12:
        raise ConfigError(f"{option} {value!r} is too large a token count")
    return int(number)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-adapter gateway",
        description="A context gateway: point any agent's base URL here; its requests are "
        "compressed (compact once, then append) and sent to the provider.",
    )
    add = parser.add_argument
    add("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    add("--port", type=int, default=8787, help="port to listen on (default 8787)")
    add("--threshold", metavar="TOKENS|PCT", help="compress above this (default 80%%)")
    add(
        "--target",
        metavar="TOKENS|PCT",
        help="compress down to this (default: derived from the cache's prices and growth)",
    )
    add(
        "--model-max-tokens",
        metavar="TOKENS",
        help="the context window for percents (default: the request's model's profile)",
    )
    add(
        "--state",
        metavar="URL",
        help="where conversations' compaction states live: sqlite:///path or redis://... "
        "(default: this process's memory)",
    )
    add("--workers", type=int, default=1, help="worker processes (default 1)")
    for provider, url in DEFAULT_UPSTREAMS.items():
        add(f"--{provider}-upstream", metavar="URL", default=url, help=f"default {url}")
    add("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    return parser


def parse_args(argv: Sequence[str]) -> GatewayConfig:
    """The settings of the command line ``argv``.

    Raises:
        SystemExit: bad usage (argparse prints it, exit code 2).
        ConfigError: a value argparse accepts but the gateway cannot use.
    """
    args = _parser().parse_args(list(argv))
    window = None
    if args.model_max_tokens is not None:
        raw = args.model_max_tokens.strip().lower().replace("_", "").replace(",", "")
        window = _count(raw, args.model_max_tokens, "--model-max-tokens")
    return GatewayConfig(
        host=args.host,
        port=args.port,
        threshold=args.threshold,
        target=args.target,
        model_max_tokens=window,
        state=args.state,
        workers=args.workers,
        openai_upstream=args.openai_upstream.rstrip("/"),
        anthropic_upstream=args.anthropic_upstream.rstrip("/"),
        gemini_upstream=args.gemini_upstream.rstrip("/"),
        log_level=args.log_level,
    )
