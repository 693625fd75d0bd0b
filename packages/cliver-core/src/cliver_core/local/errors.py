"""``cliver_core.local.errors``: 0.3.0a5's local-model error classes (local models are out of
this version's scope; the classes are kept so ``except`` clauses keep working)."""

from __future__ import annotations

__all__ = [
    "LocalBackendNotSupportedError",
    "LocalConfigurationError",
    "LocalDependencyError",
    "LocalDeviceError",
    "LocalDimensionError",
    "LocalInferenceError",
    "LocalModelError",
    "LocalModelLoadError",
    "LocalProviderClosedError",
]


class LocalModelError(RuntimeError):
    """Base of every local-model failure (a ``RuntimeError``, as in 0.3.0a5)."""


class LocalDependencyError(LocalModelError):
    """An optional local backend package is not installed."""


class LocalModelLoadError(LocalModelError):
    """The model could not be resolved, downloaded or loaded."""


class LocalConfigurationError(LocalModelError):
    """An option is unknown, invalid or set at the wrong layer."""


class LocalDeviceError(LocalModelError):
    """The device is unavailable or out of memory."""


class LocalBackendNotSupportedError(LocalModelError):
    """A backend does not implement the capability."""


class LocalDimensionError(LocalModelError):
    """Vectors do not have the expected dimension."""


class LocalInferenceError(LocalModelError):
    """The backend failed or returned something unusable."""


class LocalProviderClosedError(LocalModelError):
    """The provider was closed."""
