"""The OpenAI SDK client, and its exceptions as library errors (shared by Chat Completions and
Responses)."""

from __future__ import annotations

import importlib
from typing import Any

from agent_adapter._errors import (
    ConfigError,
    ModelError,
    ModelOutputInvalid,
    ModelTimeout,
)
from agent_adapter.providers._base import ProviderModel, import_sdk, sdk_options, stainless_retry
from agent_adapter.providers._overflow import overflow_or_error
from agent_adapter.providers._retry import Retry

__all__ = ["import_openai", "openai_client", "openai_error", "openai_retry"]


def import_openai(purpose: str) -> Any:
    """The ``openai`` module; MissingDependency naming the ``openai`` extra when absent."""
    return import_sdk("openai", "openai", "openai", purpose)


def openai_client(model: ProviderModel, api_key: str | None) -> Any:
    """An ``AsyncOpenAI`` client with ``model``'s settings; the SDK's refusal (no key) as
    ConfigError naming the model class."""
    openai = import_openai(type(model).__name__)
    try:
        return openai.AsyncOpenAI(**sdk_options(model, api_key))
    except openai.OpenAIError as e:
        raise ConfigError(f"{type(model).__name__}: {e}") from e


def openai_error(e: BaseException, *, provider: str, model: str) -> ModelError | None:
    """The library error for an ``openai`` exception, ``None`` for anything else.

    ``APITimeoutError`` is a timeout; a status error or an in-stream error whose code or
    message is a context overflow (``context_length_exceeded`` and the wordings of
    OpenAI-compatible servers, see :mod:`agent_adapter.providers._overflow`) is
    ``ModelContextOverflow``; ``APIResponseValidationError`` is an invalid reply; the rest
    (429 and 5xx once the SDK's retries are spent, 4xx, connection errors) ``ModelError``.
    """
    openai = importlib.import_module("openai")
    where = {"provider": provider, "model": model}
    if isinstance(e, openai.APITimeoutError):
        return ModelTimeout(f"no reply in time: {e}", **where)
    if isinstance(e, openai.APIResponseValidationError):
        return ModelOutputInvalid(f"the reply does not match the API's schema: {e}", **where)
    if isinstance(e, openai.APIConnectionError):
        return ModelError(f"connection failed: {e}", **where)
    if isinstance(e, openai.APIError):
        status = getattr(e, "status_code", None)
        return overflow_or_error(e.message, e.body, e.code, status=status, **where)
    if isinstance(e, openai.OpenAIError):
        return ModelError(f"{type(e).__name__}: {e}", **where)
    return None


def openai_retry(e: BaseException) -> Retry | None:
    """What an ``openai`` exception says of another attempt: 408 / 409 / 429 / 5xx, timeouts
    and connection errors, with the wait ``retry-after-ms`` / ``retry-after`` asks (OpenAI's
    rate-limit guide; the SDK reads both, "Retries" in its README), bounded by the model's
    ``timeout_s`` (see :mod:`agent_adapter.providers._retry`)."""
    return stainless_retry(importlib.import_module("openai"), e)
