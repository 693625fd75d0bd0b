"""The error classes of agent_adapter.

Hierarchy::

    AgentAdapterError
    ├── ConfigError            bad settings or bad input (names the message index and field)
    ├── ToolUsageError         a tool or port called with the wrong arguments
    ├── MissingDependency      an optional library is not installed (names the extra)
    └── ModelError             a model call failed
        ├── ModelTimeout           it took longer than allowed
        ├── ModelOutputInvalid     it returned something unusable
        └── ModelContextOverflow   the request is longer than the model's context window

Vendor exceptions are translated at the adapter boundary with ``raise ... from e``.
"""

from __future__ import annotations

__all__ = [
    "AgentAdapterError",
    "ConfigError",
    "MissingDependency",
    "ModelContextOverflow",
    "ModelError",
    "ModelOutputInvalid",
    "ModelTimeout",
    "ToolUsageError",
]


class AgentAdapterError(Exception):
    """Base class of every error this library raises on purpose."""


class ConfigError(AgentAdapterError, ValueError):
    """A setting or an input is invalid; the message names what and where."""


class ToolUsageError(AgentAdapterError, TypeError):
    """A tool, port or helper was called with arguments of the wrong type or shape."""


class MissingDependency(AgentAdapterError, ImportError):
    """An optional library is needed; the message names the ``pip install`` that adds it."""

    def __init__(self, package: str, extra: str, purpose: str = "") -> None:
        self.package = package
        self.extra = extra
        what = f" for {purpose}" if purpose else ""
        super().__init__(f'{package} is needed{what}: pip install "agent-adapter[{extra}]"')


class ModelError(AgentAdapterError):
    """A model call failed. ``provider`` and ``model`` name the call when known."""

    def __init__(self, message: str, *, provider: str = "", model: str = "") -> None:
        self.provider = provider
        self.model = model
        where = f" ({provider}:{model})" if provider or model else ""
        super().__init__(f"{message}{where}")


class ModelTimeout(ModelError):
    """The model call took longer than its timeout."""


class ModelOutputInvalid(ModelError):
    """The model returned output that cannot be used (wrong shape, count or values)."""


class ModelContextOverflow(ModelError):
    """The request does not fit the model's context window.

    ``tokens`` and ``limit`` are the request's size and the window, in tokens, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        tokens: int | None = None,
        limit: int | None = None,
        provider: str = "",
        model: str = "",
    ) -> None:
        self.tokens = tokens
        self.limit = limit
        super().__init__(message, provider=provider, model=model)
