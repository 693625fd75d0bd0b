"""compress_for on one list, with no compaction state: the format detected, the list converted
(or, in the steady state, only its new natives loaded), the engine run, the result written back
as natives. :func:`compress_conversion` is the same for the command line's step-by-step report.

A module of its own so that the engine never imports the formats and the formats never import
the engine: this module and the two above it (:mod:`._stateful`, :mod:`._compress_for`) are
where the two meet.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message
from agent_adapter.context._engine import _compress, _WouldCompress
from agent_adapter.context._pairing import PairingError, describe
from agent_adapter.context._policy import CompressionPolicy
from agent_adapter.context._report import CompressionReport
from agent_adapter.context._steps._continuation import Continuation
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._conversion import Conversion
from agent_adapter.context.formats._memo import load_messages, loaded_prefix, snapshot
from agent_adapter.context.formats._registry import _CONVERTERS, _detect, convert

__all__ = ["compress_conversion"]


def _in_native_terms(error: PairingError, conversion: Conversion[Any]) -> ConfigError:
    """``error`` (about the converted messages) restated for the caller's own list: the
    native's index, the format's names for calls and results, and the caller's call ids."""
    call, result = conversion.call_terms
    problem = error.problem
    ids = () if problem.rule == "tool_without_call" else problem.call_ids
    last = problem.rule == "duplicate_call_id"

    def at(i: int) -> str:
        return (
            f"messages[{conversion.native_index(i, ids if i == problem.index else (), last=last)}]"
        )

    text = describe(problem, call=call, result=result, name=conversion.native_call_id, at=at)
    return ConfigError(f"{text} (format {conversion.format!r})")


def _detected(
    messages: Sequence[Any], format: str | Converter[Any], *, auto: bool
) -> tuple[str | Converter[Any], Any, bool]:
    """The format (detected when ``auto``), the natives' snapshot for the memo (``None`` for
    ``agent_adapter`` messages) and whether the list holds natives."""
    native = bool(
        isinstance(messages, list | tuple) and messages and not isinstance(messages[0], Message)
    )
    snap = snapshot(messages) if native else None
    return (_detect(messages, snap) if auto else format), snap, native


def _format_key(name: str | Converter[Any]) -> str:
    """The format a state belongs to: its name, or for a converter instance its class and
    settings (``AnthropicConverter(strict_alternation=True)`` writes other natives)."""
    if not isinstance(name, Converter):
        return str(name)
    settings = (
        sorted((k, repr(v)) for k, v in vars(name).items()) if hasattr(name, "__dict__") else []
    )
    return f"{name.name}/{type(name).__qualname__}/{settings}"


def _messages_of(natives: Sequence[Any], n: int, name: str | Converter[Any]) -> list[Message]:
    """The messages of ``natives[:n]``, through the memo where it holds them."""
    head = list(natives[:n])
    if name == "agent_adapter" or (head and isinstance(head[0], Message)):
        return head
    converter = name if isinstance(name, Converter) else _CONVERTERS.get(name)
    loaded = loaded_prefix(natives, converter, n) if converter else None
    if loaded is None and converter is not None:
        loaded = load_messages(head, converter, snapshot(head))
    return loaded if loaded is not None else convert(head, name).messages


@dataclasses.dataclass(frozen=True, slots=True)
class _Options:
    """What one compress_for call passes to the engine besides the list and policy."""

    pinned: Callable[[Any], bool] | None
    model_max_tokens: int | None
    ctx: Any
    force: bool
    turn_thinking: bool | None
    hold_until: int = 0
    growth: Callable[[], tuple[int, int]] | None = None
    continuation: Continuation | None = None
    #: raise ``_WouldCompress`` where steps would run (a probe: is a compaction due?)
    probe: bool = False


async def _compress_list(
    messages: Sequence[Any],
    policy: CompressionPolicy,
    name: str | Converter[Any],
    snap: Any,
    opts: _Options,
) -> tuple[list[Any], CompressionReport]:
    """compress_for on one list, with no compaction state."""
    pinned, window, ctx = opts.pinned, opts.model_max_tokens, opts.ctx
    if name == "agent_adapter":
        return await _compress(
            messages,
            policy,
            pinned=pinned,
            model_max_tokens=window,
            ctx=ctx,
            force=opts.force,
            turn_thinking=True if opts.turn_thinking is None else opts.turn_thinking,
            hold_until=opts.hold_until,
            growth=opts.growth,
            continuation=opts.continuation,
            probe=opts.probe,
        )
    converter = name if isinstance(name, Converter) else _CONVERTERS.get(name)
    if converter is not None and (pinned is None or callable(pinned)) and not opts.force:
        loaded = load_messages(messages, converter, snap)
        if loaded is not None:  # the steady state: only new natives were loaded
            try:
                _, report = await _compress(
                    loaded,
                    policy,
                    model_max_tokens=window,
                    ctx=ctx,
                    probe=True,
                    hold_until=opts.hold_until,
                    growth=opts.growth,
                )
            except _WouldCompress:
                if opts.probe:
                    raise
            except PairingError:
                pass  # compress (or report the pairing error) on a conversion of its own
            else:
                return messages if isinstance(messages, list) else list(messages), report
    conversion = convert(messages, name, pinned=pinned)
    try:
        result, report = await compress_conversion(
            conversion,
            policy,
            pinned=pinned is not None,
            model_max_tokens=window,
            ctx=ctx,
            force=opts.force,
            turn_thinking=opts.turn_thinking,
            hold_until=opts.hold_until,
            growth=opts.growth,
            continuation=_sent_of(opts.continuation, conversion),
            probe=opts.probe,
        )
    except PairingError as exc:
        raise _in_native_terms(exc, conversion) from None
    if result is conversion.messages:
        return messages if isinstance(messages, list) else list(messages), report
    return conversion.back(result), report


def _sent_of(continuation: Continuation | None, conversion: Conversion[Any]) -> Continuation | None:
    """``continuation`` knowing the messages of the request sent last time, when its owner
    named that request as natives (:attr:`Continuation.sent_natives`) and this conversion's
    natives start with them."""
    if continuation is None or not continuation.sent_natives:
        return continuation
    sent = conversion.prefix_of(continuation.sent_natives)
    return continuation if sent is None else continuation.after_sent(sent)


async def compress_conversion(
    conversion: Conversion[Any],
    policy: CompressionPolicy,
    *,
    pinned: bool = False,
    model_max_tokens: int | None = None,
    ctx: Any = None,
    force: bool = False,
    turn_thinking: bool | None = None,
    hold_until: int = 0,
    growth: Callable[[], tuple[int, int]] | None = None,
    continuation: Continuation | None = None,
    probe: bool = False,
) -> tuple[list[Message], CompressionReport]:
    """The engine on a conversion's messages, as ``compress_for`` runs it: added messages
    only where a native starts (``conversion.starts_native``), the format's thinking rule
    (``turn_thinking``: ``None`` for the conversion's own), the conversion's pins when
    ``pinned``. The compressed messages (``conversion.back`` turns them into natives) and
    the report; for the command line's step-by-step report too.

    Raises:
        ConfigError: as ``compress``.
        PairingError: the messages break a pairing rule (``compress_for`` restates it in the
            caller's terms).
    """
    return await _compress(
        conversion.messages,
        policy,
        pinned=conversion.is_pinned if pinned else None,
        model_max_tokens=model_max_tokens,
        ctx=ctx,
        force=force,
        insertable=conversion.starts_native,
        turn_thinking=conversion.turn_thinking if turn_thinking is None else turn_thinking,
        hold_until=hold_until,
        growth=growth,
        continuation=continuation,
        probe=probe,
    )
