"""What the model ports need of a compression policy, without importing the policy.

:class:`~agent_adapter.ModelRequest` carries a request's own compression policy, but the ports
sit below the compression engine: they type the field by :class:`CompressionSettings` and
accept only the classes registered with :func:`register_compression_settings` (the one today
is :class:`~agent_adapter.context.CompressionPolicy`, which registers itself on import; an
object of it cannot exist before its module is loaded).
"""

from __future__ import annotations

from typing import Protocol, TypeVar

__all__ = ["CompressionSettings", "is_compression_settings", "register_compression_settings"]

_T = TypeVar("_T", bound=type)

_registered: tuple[type, ...] = ()


class CompressionSettings(Protocol):
    """A compression policy as a request carries it: the window its percents refer to."""

    @property
    def model_max_tokens(self) -> int | None:
        """The model's context window in tokens, for percents; ``None`` when not given."""
        ...

    @property
    def uses_percent(self) -> bool:
        """True when the limits are percents of a context window."""
        ...


def register_compression_settings(cls: _T) -> _T:
    """Accept objects of ``cls`` (and its subclasses) as a request's compression."""
    global _registered
    if cls not in _registered:
        _registered = (*_registered, cls)
    return cls


def is_compression_settings(value: object) -> bool:
    """True when ``value`` is an object of a registered compression settings class."""
    return isinstance(value, _registered)
