"""Retries of a failed provider call, bounded by the model's ``timeout_s`` and ``max_retries``
whatever the server asks.

The SDKs retry on their own, each its own way, and a server's ``Retry-After`` could hold a
call for as long as the server liked: the ``anthropic`` SDK waits whatever ``retry-after`` /
``retry-after-ms`` says (an hour for ``Retry-After: 3600``, failover delayed by it), the
``openai`` SDK up to two minutes (longer: it fails at once), ``google-genai`` ignores the header
and backs off from 1 s. So a :class:`~agent_adapter.providers._base.ProviderModel` that builds
its SDK client turns the SDK's retries off and retries here, the same way for every provider:

* what is retried: 408, 409, 429 and 5xx, timeouts and connection errors (the statuses the
  OpenAI and Anthropic SDKs retry, "Retries" in their READMEs; Gemini's troubleshooting guide
  names 429 RESOURCE_EXHAUSTED, 500 INTERNAL, 503 UNAVAILABLE and 504 DEADLINE_EXCEEDED as the
  transient ones), unless the server says ``x-should-retry: false`` (``true`` retries any);
* how long is waited: what the server asks, when it asks, else an exponential backoff (0.5 s
  doubling, at most 8 s, less up to 25% jitter, as the OpenAI and Anthropic SDKs do). The server
  asks with ``retry-after-ms`` (milliseconds; the OpenAI and Anthropic SDKs read it first),
  ``Retry-After`` (seconds or an HTTP date, RFC 9110 section 10.2.3; Anthropic's rate-limit
  429s carry it: "Rate limits", platform.claude.com/docs/en/api/rate-limits, "the number of
  seconds to wait"; OpenAI documents it on its rate-limit errors too) or, for Gemini, a
  ``google.rpc.RetryInfo`` detail in the error body (``retryDelay: "36s"``: "Clients should
  wait until retry_delay amount of time has passed", google.rpc error details);
* the bound: a wait is at most :func:`max_wait` (``timeout_s``, and never over 60 s). A server
  asking for longer is not waited for at all: the call fails at once with the provider's error
  (a :class:`~agent_adapter.ModelError` raised from the SDK's 429 / 5xx exception, which
  failover reads as retryable), its message saying what the server asked. So a call's wall
  time is at most ``(max_retries + 1) * timeout_s`` for the attempts plus ``max_retries``
  waits of at most ``timeout_s`` each.

A client given to a model (``client=``) keeps its own retry settings: nothing is retried here.
"""

from __future__ import annotations

import email.utils
import math
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_WAIT_S", "Retry", "backoff", "body_wait", "header_wait", "max_wait", "retryable"]

#: A server's wait is honoured up to ``timeout_s``, and never past this many seconds.
MAX_WAIT_S = 60.0
_INITIAL_S, _MAX_BACKOFF_S = 0.5, 8.0
_DURATION = re.compile(r"\A\s*(\d+(?:\.\d+)?)s\s*\Z")


@dataclass(frozen=True)
class Retry:
    """What a failed attempt says of trying again.

    Attributes:
        retryable: another attempt may well succeed.
        server_wait_s: the seconds the server asked to wait first (``None``: it did not ask).
    """

    retryable: bool
    server_wait_s: float | None = None


def retryable(status: int, headers: Mapping[str, str] | None = None) -> bool:
    """Whether a reply of HTTP ``status`` is worth another attempt: 408, 409, 429 and 5xx,
    unless the server says ``x-should-retry: false`` (``true``: any status)."""
    flag = headers.get("x-should-retry") if headers is not None else None
    if flag in ("true", "false"):
        return flag == "true"
    return status in (408, 409, 429) or status >= 500


def header_wait(headers: Mapping[str, str] | None) -> float | None:
    """The seconds a reply's headers ask to wait before another attempt: ``retry-after-ms``
    (milliseconds), else ``Retry-After`` as seconds or as an HTTP date; ``None`` when neither
    is there or readable. A huge or infinite value stays huge (it is refused, not waited)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            continue
        if not math.isnan(seconds):
            return max(0.0, seconds)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, float(email.utils.mktime_tz(parsed)) - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def body_wait(body: Any) -> float | None:
    """The ``retryDelay`` of a ``google.rpc.RetryInfo`` detail in a Google API error body
    (``{"error": {"details": [{"@type": ".../google.rpc.RetryInfo", "retryDelay": "36s"}]}}``
    or the inner ``error`` object), in seconds; ``None`` when there is none."""
    inner = body.get("error", body) if isinstance(body, Mapping) else None
    details = inner.get("details") if isinstance(inner, Mapping) else None
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, Mapping) and str(detail.get("@type", "")).endswith("RetryInfo"):
            found = _DURATION.match(str(detail.get("retryDelay", "")))
            if found:
                return float(found[1])
    return None


def backoff(retries_taken: int) -> float:
    """The wait before retry number ``retries_taken + 1`` when the server asked none: 0.5 s
    doubling, at most 8 s, less up to 25% jitter."""
    delay = min(_INITIAL_S * 2.0 ** min(retries_taken, 16), _MAX_BACKOFF_S)
    return delay * (1 - 0.25 * random.random())


def max_wait(timeout_s: float) -> float:
    """The longest wait between two attempts of a model with this ``timeout_s``."""
    return min(timeout_s, MAX_WAIT_S)
