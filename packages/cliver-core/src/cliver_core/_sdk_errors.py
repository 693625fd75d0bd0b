"""A model failure the run raises is an instance of the SDK's exception too.

0.3.0a5 lets the SDK's exceptions out of ``chat`` / ``stream`` (``openai.RateLimitError``,
``anthropic.BadRequestError``... with their ``status_code``, ``response`` and ``body``);
this library's providers raise :class:`agent_adapter.ModelError` (its subclasses say what
failed: :class:`~agent_adapter.ModelContextOverflow`, :class:`~agent_adapter.ModelTimeout`)
with the SDK's exception as ``__cause__``. The run raises one object that is both: an
instance of a class deriving from the ModelError class and from the SDK exception's class,
carrying the attributes of each, so ``except openai.RateLimitError as e: e.status_code``
written for 0.3.0a5 and ``except ModelError`` both catch it. The same holds for any
exception a model raised, an SDK's or a user provider's own (``except QuotaExceeded`` of a
0.3.0a5 program whose ``Provider.chat`` raises it); a class that cannot share an instance
with the ModelError (a layout conflict, such as ``OSError``'s) leaves the ModelError as it
is, its cause the original.
"""

from __future__ import annotations

from typing import Any

from agent_adapter import ModelError

__all__ = ["sdk_compatible"]

_MADE: dict[tuple[type[Any], type[Any]], type[ModelError] | None] = {}


def _both(ours: type[ModelError], sdk: type[Any]) -> type[ModelError] | None:
    key = (ours, sdk)
    if key not in _MADE:
        _MADE[key] = _make(ours, sdk)
    return _MADE[key]


def _make(ours: type[ModelError], sdk: type[Any]) -> type[ModelError] | None:
    try:
        combined: type[ModelError] = type(
            sdk.__name__, (ours, sdk), {"__module__": ours.__module__}
        )
    except TypeError:  # the two classes cannot share an instance layout
        return None
    return combined


def sdk_compatible(error: ModelError) -> ModelError:
    """``error`` as an instance of its ModelError class and of its cause's exception class
    (``error`` itself when there is no such cause or the two cannot combine)."""
    cause: Any = error.__cause__
    if not isinstance(cause, Exception) or isinstance(cause, ModelError):
        return error
    if isinstance(error, type(cause)):
        return error
    cls = _both(type(error), type(cause))
    if cls is None:
        return error
    both = cls.__new__(cls)
    both.__dict__.update(cause.__dict__)
    both.__dict__.update(error.__dict__)
    both.args = error.args
    both.__cause__ = cause
    both.__traceback__ = error.__traceback__
    return both
