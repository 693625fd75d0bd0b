"""``check()``: the registered checker of a format, else the Message-level pairing check
through :func:`~agent_adapter.context.formats.convert`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter.context._pairing import PairingError, describe, pair_messages
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._checks._anthropic import check_anthropic
from agent_adapter.context.formats._checks._common import (
    Violation,
    by_index,
    checker_for,
    invalid_text,
    reported_problems,
)
from agent_adapter.context.formats._registry import (
    FORMATS,
    convert,
    detect_format,
    registered_names,
)

__all__ = ["check"]


def check(
    messages: Sequence[Any],
    format: str | Converter[Any] = "auto",
    *,
    thinking: bool | None = None,
    strict_alternation: bool | None = None,
) -> list[Violation]:
    """The rules ``messages`` breaks for its provider; ``[]`` when it would be accepted.

    ``"openai"`` picks the Chat Completions or the Responses rules by item shape
    (:func:`~agent_adapter.context.formats._checks.check_openai_chat`,
    :func:`~agent_adapter.context.formats._checks.check_responses`); ``"anthropic"``,
    ``"gemini"`` and ``"agent_adapter"`` have their own checkers. Any other format
    (``"langchain"``, one an integration registered with
    :func:`~agent_adapter.context.formats.register_format`) is converted with
    :func:`~agent_adapter.context.formats.convert` and gets the tool-pairing rules of
    :func:`~agent_adapter.context.formats._checks.check_messages` on its messages, each
    violation at the index of the native its message came from. ``"auto"`` detects the format like
    :func:`~agent_adapter.context.formats.detect_format`. Every format also gets
    ``invalid_utf8``: a string that is not valid UTF-8 (a lone surrogate), named by index and
    field (:func:`~agent_adapter.context.formats._checks._common.invalid_text`), and every
    provider format ``malformed``: an item its converter rejects (a field of the wrong type
    or a required one missing, such as Chat ``function.arguments`` given as an object), at
    the index the error names.

    check() sees one list, so it cannot tell what the request's settings are or what a list
    lost. Anthropic extended thinking is the case that matters: the current turn's opener must
    start with thinking when thinking is on (``thinking_not_first``), and only the request
    knows that. Pass ``thinking=True`` when the request enables thinking (``False``: it does
    not); unknown, thinking counts as on when the current turn holds a thinking block (see
    :func:`~agent_adapter.context.formats._checks.check_anthropic`), so a list that lost all of
    its current turn's thinking passes. To check a compression's output, also compare it with
    its input: :func:`~agent_adapter.context.formats._checks.check_thinking_unchanged`
    ``(before, after)`` reports ``turn_thinking_dropped`` for a current-turn thinking block
    that went (and ``thinking_changed``); for Gemini, ``check_gemini(after, before=before)``
    checks the thought signatures.

    Args:
        messages: the natives.
        format: their format, or ``"auto"``.
        thinking: whether the request enables Anthropic extended thinking (``None``: unknown);
            ``"anthropic"`` only.
        strict_alternation: report adjacent same-role messages (``roles_not_alternating``),
            for gateways that reject them such as Bedrock's Converse API; ``"anthropic"``
            only. ``None``: as the converter given as ``format`` says, else off (the Messages
            API combines consecutive same-role turns itself).

    Raises:
        ConfigError: ``messages`` is not a list, the format is unknown, "auto" cannot detect
            it, ``thinking`` is given for another format, or the converter of a format without
            a checker rejects an item.
    """
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ConfigError(f"check: messages must be a list, got {type(messages).__name__}")
    if isinstance(format, Converter):
        if strict_alternation is None:
            strict_alternation = getattr(format, "strict_alternation", None)
        name = format.name
    else:
        name = detect_format(messages) if format == "auto" else format
    if thinking is not None or strict_alternation is not None:
        if name != "anthropic":
            given = "thinking=" if thinking is not None else "strict_alternation="
            raise ConfigError(f"check: {given} is for the anthropic format, not {name!r}")
        found = check_anthropic(
            messages, thinking=thinking, strict_alternation=bool(strict_alternation)
        )
        found += _unreadable(messages, format)
    elif (checker := checker_for(name)) is not None:
        found = checker(messages)
        found += _unreadable(messages, format if isinstance(format, Converter) else name)
    elif name not in FORMATS and name not in registered_names():
        raise ConfigError(
            f"check: unknown format {name!r}; known: {[*FORMATS, *registered_names()]}"
        )
    else:
        found = _via_messages(list(messages), name)
    bad = invalid_text(messages)
    return by_index(found + bad) if bad else found


_WHERE = re.compile(r"(?:messages|input)\[(\d+)\]")


def _unreadable(messages: Sequence[Any], format: str | Converter[Any]) -> list[Violation]:
    """``malformed``: what the format's converter rejects (a field of the wrong type, a
    required one missing; the provider rejects it too), at the index its error names. The
    pairing rules are the checker's own, so a pairing error is not restated here."""
    if format == "agent_adapter":
        return []
    try:
        convert(list(messages), format)
    except PairingError:
        return []
    except ConfigError as e:
        where = _WHERE.search(str(e))
        return [Violation(int(where.group(1)) if where else 0, "malformed", str(e))]
    return []


def _via_messages(natives: list[Any], name: str) -> list[Violation]:
    """The Message-level pairing check of ``natives`` converted, restated for the natives:
    each violation at the index of the native its message came from, in the format's
    terms."""
    conversion = convert(natives, name)
    call, result = conversion.call_terms
    return [
        Violation(
            conversion.native_index(p.index),
            p.rule,
            describe(
                p,
                call=call,
                result=result,
                name=conversion.native_call_id,
                at=lambda i: f"messages[{conversion.native_index(i)}]",
            ),
        )
        for p in reported_problems(pair_messages(conversion.messages))
    ]
