"""Where a request goes and where its conversation is: routes, message fields, session hints.

The routes the gateway compresses, and the field of each body that holds the conversation:

* ``POST /v1/chat/completions`` (and ``/chat/completions``): ``messages``, format ``openai``;
* ``POST /v1/responses`` (and ``/responses``): ``input`` when it is a list (a string, or a
  request continuing a stored response with ``previous_response_id`` / ``conversation``,
  goes as it came: the provider holds that history);
* ``POST /v1/messages``: ``messages``, format ``anthropic`` (``/v1/messages/count_tokens``
  and everything else under it pass through);
* ``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent`` (also
  under ``/v1`` and ``/v1alpha``): ``contents``, format ``gemini``.

Every other request passes through to the upstream its path and headers name: Anthropic for
``/v1/messages...`` or an ``anthropic-version`` / ``x-api-key`` header, Gemini for
``/v1beta/...``, ``/upload/...`` or an ``x-goog-api-key`` header, else OpenAI.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CONVERSATION_HEADER",
    "Kind",
    "Wire",
    "conversation_hint",
    "messages_of",
    "route",
    "upstream_url",
]

Kind = Literal["chat", "responses", "messages", "gemini"]
Provider = Literal["openai", "anthropic", "gemini"]

#: The header a client sets to name its conversation (any string: a session, thread or chat
#: id). It wins over the session hints in the body; the gateway does not send it upstream.
CONVERSATION_HEADER = "x-agent-adapter-conversation"

_GEMINI = re.compile(
    r"^/(?:v1beta|v1|v1alpha)/models/(?P<model>[^:/]+):(?P<method>generateContent|streamGenerateContent)$"
)
_PATHS: dict[str, Kind] = {
    "/v1/chat/completions": "chat",
    "/chat/completions": "chat",
    "/v1/responses": "responses",
    "/responses": "responses",
    "/v1/messages": "messages",
}
_PROVIDER: dict[Kind, Provider] = {
    "chat": "openai",
    "responses": "openai",
    "messages": "anthropic",
    "gemini": "gemini",
}
#: The library's format name of each kind.
FORMAT: dict[Kind, str] = {
    "chat": "openai",
    "responses": "openai",
    "messages": "anthropic",
    "gemini": "gemini",
}


@dataclass(frozen=True, slots=True)
class Wire:
    """Where one request goes.

    Attributes:
        provider: the upstream it goes to.
        kind: the protocol whose conversation the gateway compresses; ``None``: passed
            through as it came.
        model: the model named by the path (Gemini), else ``""`` (read from the body).
    """

    provider: Provider
    kind: Kind | None
    model: str = ""


def route(method: str, path: str, headers: Mapping[str, str]) -> Wire:
    """Where ``method path`` with ``headers`` (lower-case names) goes."""
    if method == "POST":
        kind = _PATHS.get(path)
        if kind is not None:
            return Wire(_PROVIDER[kind], kind)
        gemini = _GEMINI.match(path)
        if gemini:
            return Wire("gemini", "gemini", gemini["model"])
    if path.startswith("/v1/messages") or "anthropic-version" in headers or "x-api-key" in headers:
        return Wire("anthropic", None)
    if (
        path.startswith(("/v1beta/", "/v1alpha/", "/upload/"))
        or "x-goog-api-key" in headers
        or _GEMINI.match(path)
    ):
        return Wire("gemini", None)
    return Wire("openai", None)


def upstream_url(base: str, path: str, query: str) -> str:
    """The upstream URL of ``path?query`` under ``base``.

    A base ending in the path's first segment (``http://host/v1`` for ``/v1/chat/
    completions``, OpenRouter's ``https://openrouter.ai/api/v1``) does not repeat it."""
    base = base.rstrip("/")
    last = base.rsplit("/", 1)[-1]
    if "://" not in last and path.startswith(f"/{last}/"):
        path = path[len(last) + 1 :]
    return f"{base}{path}" + (f"?{query}" if query else "")


def field_of(kind: Kind) -> str:
    """The body's field that holds the conversation of a request of ``kind``."""
    return {"responses": "input", "gemini": "contents"}.get(kind, "messages")


def messages_of(kind: Kind, body: Mapping[str, Any]) -> tuple[str, list[Any]] | None:
    """``(field, conversation)`` of a body of ``kind``; ``None`` when the gateway leaves the
    body as it came (no list there, or a Responses request continuing a stored one)."""
    if kind == "responses" and (body.get("previous_response_id") or body.get("conversation")):
        return None
    field = field_of(kind)
    messages = body.get(field)
    return (field, messages) if isinstance(messages, list) and messages else None


def model_of(wire: Wire, body: Mapping[str, Any]) -> str:
    """The model the request names (the path's for Gemini, else the body's ``model``)."""
    if wire.model:
        return wire.model
    model = body.get("model")
    return model if isinstance(model, str) else ""


def conversation_hint(
    kind: Kind, body: Mapping[str, Any], headers: Mapping[str, str]
) -> tuple[str, str] | None:
    """``(source, id)`` of the conversation the request names: the
    :data:`CONVERSATION_HEADER`, else the client's session hints (Anthropic
    ``metadata.user_id``; OpenAI ``prompt_cache_key``, else ``user``); ``None``: the
    compaction state tells conversations apart by their opening messages.

    A hint shared by several conversations (OpenAI's ``user`` names an end user) is no
    harm: conversations that share a key keep branches of their own, each found by what
    it remembers (see :class:`~agent_adapter.context.CompactionStates`)."""
    given = headers.get(CONVERSATION_HEADER)
    if given:
        return "header", given
    if kind == "messages":
        metadata = body.get("metadata")
        user_id = metadata.get("user_id") if isinstance(metadata, Mapping) else None
        if isinstance(user_id, str) and user_id:
            return "metadata.user_id", user_id
    elif kind in ("chat", "responses"):
        for field in ("prompt_cache_key", "user"):
            value = body.get(field)
            if isinstance(value, str) and value:
                return field, value
    return None


def thinking_of(kind: Kind, body: Mapping[str, Any]) -> bool | None:
    """Whether an Anthropic request enables extended thinking (for ``check``); ``None`` for
    the other kinds."""
    if kind != "messages":
        return None
    thinking = body.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
