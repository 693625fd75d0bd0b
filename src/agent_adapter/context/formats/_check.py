"""Provider acceptance checks: would the provider accept this message list?

:func:`check` returns the :class:`~agent_adapter.context.formats._violations.Violation` s of a
native list (empty when the provider would accept it, as far as message structure goes). Each
rule names its source; the checks are structural (pairing, order, required fields, text that is
valid UTF-8), never about what the content says or model limits. Tool pairing is the one rule of
:mod:`agent_adapter.context._pairing` in every checker, so ``check()`` and ``compress()``'s input
validation agree.

Rules common to every dict format:

* ``reserved_key``: a native holds the reserved carrier key ``"_agent_adapter"`` (see
  :mod:`agent_adapter.context.formats._carrier`); OpenAI rejects unknown parameters ("Unknown
  parameter") and Anthropic unknown fields ("Extra inputs are not permitted"). Remove it with
  :func:`~agent_adapter.context.formats._violations.strip_reserved`.
* ``not_a_message`` / ``not_an_item``: an item the API reference does not describe.
* ``mixed_formats``: Chat Completions dicts and Responses items in one list.

Rule common to every format (``check()`` applies it, whichever checker runs):

* ``invalid_utf8``: a string that is not valid UTF-8 (a lone surrogate such as ``"\\ud800"``,
  left by a model reply or a lossy decoder); JSON cannot carry it to a provider. Named by
  index, field (``messages[1].content[0].text``) and character, never by text.

Layout: each provider's checker lives in its folder next to its converter (``_openai``: Chat
Completions and Responses; ``_anthropic``, with ``check_thinking_unchanged``; ``_gemini``, with
``check_thought_signatures``); :mod:`~agent_adapter.context.formats._violations` holds what they
share; this module holds :func:`check` with its table of checkers and :func:`check_messages`
(format ``"agent_adapter"``). A format without a checker (a registered integration's,
``"langchain"``) gets the Message-level pairing check through
:func:`~agent_adapter.context.formats.convert`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._pairing import Pairing, PairingError, describe, pair_messages
from agent_adapter.context.formats._anthropic import check_anthropic
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._gemini import check_gemini
from agent_adapter.context.formats._openai import check_openai
from agent_adapter.context.formats._registry import (
    check_format_name,
    convert,
    detect_format,
)
from agent_adapter.context.formats._violations import (
    Checker,
    Violation,
    by_index,
    invalid_text,
    pairing_violations,
    reported_problems,
)

__all__ = ["check", "check_messages"]


def check(
    messages: Sequence[Any],
    format: str | Converter[Any] = "auto",
    *,
    thinking: bool | None = None,
    strict_alternation: bool | None = None,
) -> list[Violation]:
    """The rules ``messages`` breaks for its provider; ``[]`` when it would be accepted.

    ``"openai"`` picks the Chat Completions or the Responses rules by item shape
    (:func:`~agent_adapter.context.formats._openai.check_openai_chat`,
    :func:`~agent_adapter.context.formats._openai.check_responses`); ``"anthropic"``,
    ``"gemini"`` and ``"agent_adapter"`` have their own checkers. Any other format
    (``"langchain"``, one an integration registered with
    :func:`~agent_adapter.context.formats.register_format`) is converted with
    :func:`~agent_adapter.context.formats.convert` and gets the tool-pairing rules of
    :func:`~agent_adapter.context.formats._check.check_messages` on its messages, each
    violation at the index of the native its message came from. ``"auto"`` detects the format like
    :func:`~agent_adapter.context.formats.detect_format`. Every format also gets
    ``invalid_utf8``: a string that is not valid UTF-8 (a lone surrogate), named by index and
    field (:func:`~agent_adapter.context.formats._violations.invalid_text`), and every
    provider format ``malformed``: an item its converter rejects (a field of the wrong type
    or a required one missing, such as Chat ``function.arguments`` given as an object), at
    the index the error names.

    check() sees one list, so it cannot tell what the request's settings are or what a list
    lost. Anthropic extended thinking is the case that matters: the current turn's opener must
    start with thinking when thinking is on (``thinking_not_first``), and only the request
    knows that. Pass ``thinking=True`` when the request enables thinking (``False``: it does
    not); unknown, thinking counts as on when the current turn holds a thinking block (see
    :func:`~agent_adapter.context.formats._anthropic.check_anthropic`), so a list that lost all of
    its current turn's thinking passes. To check a compression's output, also compare it with
    its input: :func:`~agent_adapter.context.formats._anthropic.check_thinking_unchanged`
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
    elif (checker := _CHECKERS.get(name)) is not None:
        found = checker(messages)
        found += _unreadable(messages, format if isinstance(format, Converter) else name)
    else:
        check_format_name(name, "check")
        found = _via_messages(list(messages), name)
    bad = invalid_text(messages)
    return by_index(found + bad) if bad else found


def check_messages(messages: Sequence[Any]) -> list[Violation]:
    """Tool pairing of a :class:`~agent_adapter._messages.Message` list.

    The rules of :mod:`agent_adapter.context._pairing` under their own names:
    ``tool_without_call``, ``call_unanswered``, ``calls_pending_at_end`` (the newest call
    turn still waits for results, which :func:`~agent_adapter.context.compress` accepts) and
    ``duplicate_call_id``; ``not_a_message`` for an item that is not a Message.
    """
    out: list[Violation] = []
    pairing = Pairing()
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            out.append(Violation(i, "not_a_message", "not a Message"))
        elif m.role == "tool":
            pairing.result(i, m.tool_call_id)
        else:
            pairing.turn(i, [c.id for c in m.tool_calls])
    pairing.end()
    return by_index(out + pairing_violations(pairing, {}))


#: format name -> its checker; any other format is checked through its messages.
_CHECKERS: dict[str, Checker] = {
    "agent_adapter": check_messages,
    "anthropic": check_anthropic,
    "gemini": check_gemini,
    "openai": check_openai,
}

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
