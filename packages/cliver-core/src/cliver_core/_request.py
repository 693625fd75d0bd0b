"""One model call's request: the call options on the wire, and the trace's echo of it.

The call options (a binding's ``params`` under a call's ``options``) go on the wire as
0.3.0a5 sends them, where this project's providers build the request:

* ``temperature``, ``top_p``, ``stop``, ``seed`` and a string ``tool_choice`` are
  :class:`~agent_adapter.ModelRequest` fields (each provider writes them in its own words;
  a dict ``tool_choice`` is the API's own form, passed as it is);
* ``max_tokens`` and ``max_completion_tokens`` keep the name the caller used on the OpenAI
  Chat Completions protocol (0.3.0a5 sends its options verbatim); elsewhere they are
  ``max_output_tokens``, which each provider writes under its API's name;
* any other key the SDK's request method does not take goes in ``extra_body`` (0.3.0a5's
  transports split the body the same way: "known keys become kwargs, everything else merges
  into extra_body", which the OpenAI and Anthropic SDKs fold into the top-level JSON);
* an explicit ``None`` is sent as ``null`` on both protocols, as 0.3.0a5 sends it (its
  bodies are ``{**options}``; the SDKs send a keyword given as ``None`` as ``null``): an
  option the caller set to ``None`` is not the option left out.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agent_adapter import ModelResponse
from agent_adapter.providers._base import call_parameters
from cliver_core._messages import CLIverMessage, CLIverResponse, native_converter

if TYPE_CHECKING:
    from cliver_core._tools import CLIverTool

__all__ = [
    "request_echo",
    "request_fields",
    "response_native",
]

_FIELDS = {"temperature", "top_p", "stop", "seed"}
_MAX_TOKENS = ("max_output_tokens", "max_tokens", "max_completion_tokens")
_PASSTHROUGH = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
_DUMP = {"native", "native_protocol", "trace"}
#: the protocols whose explicit ``None`` options go on the wire as ``null`` (0.3.0a5's two)
_NULLS = frozenset({"openai", "anthropic"})


@functools.cache
def _sdk_parameters(protocol: str) -> frozenset[str] | None:
    """The keyword parameters of the SDK request method a built binding of ``protocol``
    calls (``None``: not known here, so every option is passed as it is)."""
    try:
        if protocol == "openai":
            from openai.resources.chat.completions import AsyncCompletions

            method: Any = AsyncCompletions.create
        elif protocol == "anthropic":
            from anthropic.resources.messages import AsyncMessages

            method = AsyncMessages.create
        else:
            return None
    except ImportError:
        return None
    return call_parameters(method) - {"self"} - _PASSTHROUGH


def request_fields(
    options: Mapping[str, Any], protocol: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Call options split into :class:`~agent_adapter.ModelRequest` fields and the rest
    (passed to the SDK call), as the module docstring says.

    Args:
        options: the merged call options.
        protocol: the wire protocol of the SDK provider the call goes to (``"openai"`` Chat
            Completions, ``"anthropic"``...); ``None`` for a port of the caller's own, which
            gets every other option as it is (that port decides what they mean).
    """
    accepted = _sdk_parameters(protocol) if protocol is not None else None
    fields: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in options.items():
        if value is None and key in _FIELDS | set(_MAX_TOKENS):
            if protocol not in _NULLS:
                continue
            # an explicit None goes as null, as 0.3.0a5 sends its options verbatim (its
            # Anthropic body's max_tokens is the options' max_tokens, else
            # max_completion_tokens): an SDK keyword or body field, which wins over the
            # request field the provider writes
            if key in _MAX_TOKENS and (protocol == "anthropic" or key == "max_output_tokens"):
                key = "max_tokens"
            if accepted is not None and key not in accepted:
                extra[key] = None
            else:
                rest[key] = None
        elif key in _FIELDS or (key == "tool_choice" and isinstance(value, str)):
            fields[key] = value
        elif key in _MAX_TOKENS:
            if protocol == "openai" and key != "max_output_tokens":
                rest[key] = value
            else:
                fields["max_output_tokens"] = value
        elif accepted is not None and key not in accepted and key not in _PASSTHROUGH:
            extra[key] = value
        else:
            rest[key] = value
    if extra:
        rest["extra_body"] = {**extra, **(rest.get("extra_body") or {})}
    return fields, rest


def _tool_dump(tool: CLIverTool) -> dict[str, Any]:
    dumped: dict[str, Any] = tool.model_dump(exclude={"execute", "aexecute"})
    return dumped


def request_echo(
    *,
    model: str,
    provider: str,
    options: dict[str, Any],
    system: str | None,
    history: Sequence[CLIverMessage],
    tools: Sequence[CLIverTool],
    streaming: bool,
) -> dict[str, Any]:
    """The trace's ``request`` entry with 0.3.0a5's keys: ``model``, ``provider`` (not on a
    streamed call's, as there), ``options``, ``system_prompt``, ``messages`` (the system
    message first, each without ``native`` / ``native_protocol`` / ``trace``) and ``tools``
    (without their callables)."""
    messages = [CLIverMessage(role="system", content=system)] if system else []
    messages.extend(history)
    echo: dict[str, Any] = {"model": model}
    if not streaming:
        echo["provider"] = provider
    echo.update(
        options=dict(options),
        system_prompt=system,
        messages=[m.model_dump(exclude=_DUMP) for m in messages],
        tools=[_tool_dump(t) for t in tools],
    )
    return echo


def response_native(response: ModelResponse, protocol: str) -> dict[str, Any] | None:
    """The reply's native wire message (the trace's ``response``, the message's ``native``),
    as 0.3.0a5 keeps it: the SDK's own message as a dict (``reasoning_content`` and other
    vendor fields included) from the raw reply; a user provider's ``message.native`` (which
    may be ``None``); else the message as the library's converter writes it (Anthropic
    Messages for an ``anthropic`` binding, else Chat Completions)."""
    raw = response.raw
    if isinstance(raw, CLIverResponse):
        return raw.message.native
    if protocol == "anthropic" and isinstance(getattr(raw, "content", None), list):
        blocks = [_dumped(b) for b in raw.content]
        return {"role": getattr(raw, "role", "assistant"), "content": blocks}
    choices = getattr(raw, "choices", None)
    if protocol != "anthropic" and isinstance(choices, list) and choices:
        message = getattr(choices[0], "message", None)
        if message is not None and hasattr(message, "model_dump"):
            # every field, None ones included, as 0.3.0a5's SDK dump has them
            # (``trace[i]["response"]["content"]`` of a tool-call reply is None, not missing)
            dumped: dict[str, Any] = message.model_dump()
            return dumped
    from agent_adapter.context.formats import strip_reserved

    converter = native_converter("anthropic" if protocol == "anthropic" else "openai")
    native: dict[str, Any] = strip_reserved([converter.dump(response.message)])[0]
    return native


def _dumped(block: Any) -> Any:
    return block.model_dump(exclude_none=True) if hasattr(block, "model_dump") else block
