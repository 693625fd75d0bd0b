"""Recognise a provider's context-overflow error and read its token numbers.

One reader for every provider, because OpenAI-compatible servers mix the bodies: each pattern
is the message a provider documents or is seen sending (see
:mod:`agent_adapter.testing._replies` for the full bodies):

* OpenAI Chat Completions: code ``context_length_exceeded``, "This model's maximum context
  length is 128000 tokens. However, your messages resulted in 130000 tokens." (older: "you
  requested 4972 tokens (3222 in the messages, 1750 in the completion)").
* OpenAI Responses: code ``context_length_exceeded``, "Your input exceeds the context window of
  this model." (no numbers).
* DeepSeek and vLLM: the Chat wording ("you requested N tokens"), code
  ``invalid_request_error`` or ``400``.
* llama.cpp server: type ``exceed_context_size_error`` with ``n_prompt_tokens`` and ``n_ctx``.
* Anthropic: "prompt is too long: 208310 tokens > 200000 maximum", and "input length and
  `max_tokens` exceed context limit: 189136 + 20000 > 204648".
* Gemini: "The input token count (1200293) exceeds the maximum number of tokens allowed
  (1048576)." with status ``INVALID_ARGUMENT``.

``tokens`` is the size the provider says the request has (the completion's reserve included
where the message counts it), ``limit`` the window it states.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_adapter._errors import ModelContextOverflow, ModelError

__all__ = ["overflow_numbers", "overflow_or_error"]

_OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_LIMIT_FIRST = re.compile(
    r"maximum context length is (\d+) tokens.*?(?:resulted in|requested) (\d+) tokens",
    re.IGNORECASE | re.DOTALL,
)
_TOKENS_FIRST = (
    re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum", re.IGNORECASE),
    re.compile(
        r"input token count \(?(\d+)\)? exceeds the maximum number of tokens allowed \(?(\d+)",
        re.IGNORECASE,
    ),
)
_SUM = re.compile(r"exceed context limit: (\d+) \+ (\d+) > (\d+)", re.IGNORECASE)
_PHRASES = re.compile(
    r"context_length_exceeded|exceeds the context window|maximum context length|"
    r"prompt is too long|exceed context limit|exceeds the available context size|"
    r"input token count.*exceeds the maximum",
    re.IGNORECASE | re.DOTALL,
)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def overflow_numbers(
    message: str, body: Any = None, code: Any = None
) -> tuple[int | None, int | None] | None:
    """``(tokens, limit)`` when the error is a context overflow (either may be ``None``
    when the provider does not say), else ``None``.

    Args:
        message: the error message.
        body: the parsed error body (``{"error": {...}}`` or the inner dict), when there is one.
        code: the error code or type the SDK read off the body.
    """
    inner: Mapping[str, Any] = {}
    if isinstance(body, Mapping):
        error = body.get("error")
        inner = error if isinstance(error, Mapping) else body
    text = message or ""
    if isinstance(inner.get("message"), str) and inner["message"] not in text:
        text = f"{text} {inner['message']}"
    codes = {str(c) for c in (code, inner.get("code"), inner.get("type")) if c is not None}
    n_prompt, n_ctx = _int(inner.get("n_prompt_tokens")), _int(inner.get("n_ctx"))
    if n_prompt is not None or n_ctx is not None:
        return n_prompt, n_ctx
    if match := _LIMIT_FIRST.search(text):
        return int(match[2]), int(match[1])
    for pattern in _TOKENS_FIRST:
        if match := pattern.search(text):
            return int(match[1]), int(match[2])
    if match := _SUM.search(text):
        return int(match[1]) + int(match[2]), int(match[3])
    if codes & _OVERFLOW_CODES or _PHRASES.search(text):
        return None, None
    return None


def overflow_or_error(
    message: str, body: Any, code: Any, *, provider: str, model: str, status: Any = None
) -> ModelError:
    """``ModelContextOverflow`` (with the numbers the message states) when the error is one,
    else a ``ModelError`` naming the status and message."""
    numbers = overflow_numbers(message, body, code)
    if numbers is not None:
        tokens, limit = numbers
        return ModelContextOverflow(
            message, tokens=tokens, limit=limit, provider=provider, model=model
        )
    head = f"{status} " if status not in (None, 200) else ""  # 200: an error mid-stream
    return ModelError(f"{head}{message}", provider=provider, model=model)
