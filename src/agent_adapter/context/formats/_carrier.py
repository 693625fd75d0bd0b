"""The reserved carrier: what a native has no slot for, so ``load(dump(m)) == m`` everywhere.

``dump`` must be lossless for a message of *any* format: an Anthropic thinking signature, a
Gemini ``thought_signature`` in ``ToolCall.extras``, ``cache_control`` on an image, LangChain
ids in ``Message.extras``. Every converter renders every field its format documents, loads the
result back, and puts what came back different into one reserved key, :data:`RESERVED_KEY`
(``"_agent_adapter"``): on the dumped dict (OpenAI, Anthropic, Gemini contents) or in
``additional_kwargs`` (LangChain). Loading applies it, so the round trip is exact. This module is
that one mechanism, used by every converter; a carrier is a dict of:

* ``"message"``: message fields the native gets wrong (``role``, ``name``, ``tool_call_id``,
  ``extras``), their values;
* ``"content"``: ``"str"`` or ``"parts"`` when the content's kind flips (``"x"`` versus one
  text part);
* ``"insert"``: ``[[index, part]]``, parts with no rendering at all (e.g. a thinking part in a
  Chat message), at their index;
* ``"parts"``: ``[[index, {field: value}]]``, field-level patches of rendered parts;
* ``"whole"``: the whole content, when the rendered parts do not line up with the message's
  (a format that turns one part kind into another);
* ``"calls"``: every tool call, when their number differs; else ``"tool_calls"``:
  ``[[index, {field: value}]]`` patches.

Formats add keys of their own that :func:`apply_carrier` ignores (a Responses group's
``"group"``, a Gemini turn's ``"results"``). Parts and calls are encoded by one codec
(:func:`encode_part`, :func:`decode_part`), whose kinds come from the ``Part`` union itself.

No provider accepts unknown keys (OpenAI: "Unknown parameter"; Anthropic: "Extra inputs are not
permitted"; Gemini rejects unknown ``Content`` fields), so the carrier is for round trips through
another format: :func:`~agent_adapter.context.formats.check` reports it (rule ``reserved_key``)
and :func:`~agent_adapter.context.formats.strip_reserved` removes it before sending. Natives that
come back unchanged or rebuilt from a native never get the key; only ``dump`` adds it, and only
when something has no slot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, replace
from typing import Any, get_args

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, Part, ToolCall

__all__ = [
    "RESERVED_KEY",
    "apply_carrier",
    "carrier_diff",
    "carrier_for",
    "decode_part",
    "dump_lossless",
    "encode_part",
    "over_native",
    "split_carrier",
    "with_carrier",
]

#: The key of the carrier a dumped native uses for what its format has no slot for.
RESERVED_KEY = "_agent_adapter"

#: ``kind`` tag -> part class, for every member of the ``Part`` union (a new kind is
#: encoded and decoded with no change here).
_PART_CLASSES: dict[str, type[Any]] = {
    cls.__dataclass_fields__["kind"].default: cls for cls in get_args(Part)
}
_MESSAGE_FIELDS = ("role", "name", "tool_call_id", "extras")


def split_carrier(native: Any) -> tuple[Any, Mapping[str, Any] | None]:
    """``native`` without :data:`RESERVED_KEY`, and the carrier (``None`` when absent)."""
    if (type(native) is dict or isinstance(native, Mapping)) and RESERVED_KEY in native:
        carrier = native[RESERVED_KEY]
        rest = {k: v for k, v in native.items() if k != RESERVED_KEY}
        return rest, carrier if isinstance(carrier, Mapping) else None
    return native, None


def with_carrier(native: Mapping[str, Any], carrier: Mapping[str, Any] | None) -> dict[str, Any]:
    """``native`` without any old carrier, with ``carrier`` when it holds something."""
    bare = {k: v for k, v in native.items() if k != RESERVED_KEY}
    return {**bare, RESERVED_KEY: dict(carrier)} if carrier else bare


def over_native(native: Mapping[str, Any], dumped: Mapping[str, Any]) -> dict[str, Any]:
    """A changed native that held a carrier, dumped again: ``native``'s other keys, then
    ``dumped``'s (its new carrier included)."""
    return {**{k: v for k, v in native.items() if k != RESERVED_KEY}, **dumped}


# --------------------------------------------------------------------------------------------
# the part and call codec


def _field_values(obj: Any) -> dict[str, Any]:
    """A part's, call's or message's fields (``extras`` as a plain dict, ``kind`` left out)."""
    return {
        f.name: dict(getattr(obj, f.name)) if f.name == "extras" else getattr(obj, f.name)
        for f in fields(obj)
        if f.name not in ("kind", "origin")
    }


def _diff(want: Any, got: Any) -> dict[str, Any]:
    """The fields of ``want`` whose values differ in ``got`` (same dataclass)."""
    have = _field_values(got)
    return {k: v for k, v in _field_values(want).items() if have.get(k) != v}


def encode_part(part: Part) -> dict[str, Any]:
    """``part`` as a dict: its ``kind`` and every field (``extras`` as a plain dict)."""
    return {"kind": part.kind, **_field_values(part)}


def decode_part(raw: Any, where: str = RESERVED_KEY) -> Part:
    """The part :func:`encode_part` made ``raw`` from.

    Raises:
        ConfigError: ``raw`` is not an encoded part (naming ``where``).
    """
    if not isinstance(raw, Mapping) or raw.get("kind") not in _PART_CLASSES:
        raise ConfigError(f"{where}: not a part: {raw!r:.80}")
    cls = _PART_CLASSES[raw["kind"]]
    try:
        part: Part = cls(**{k: v for k, v in raw.items() if k != "kind"})
    except TypeError as exc:
        raise ConfigError(f"{where}: not a {raw['kind']} part") from exc
    return part


def _decode_call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: not a tool call")
    try:
        return ToolCall(**raw)
    except TypeError as exc:
        raise ConfigError(f"{where}: bad tool call") from exc


def _patched(obj: Any, patch: Any, where: str) -> Any:
    if not isinstance(patch, Mapping):
        raise ConfigError(f"{where}: a patch must be a dict")
    try:
        return replace(obj, **patch)
    except TypeError as exc:
        raise ConfigError(f"{where}: a patch does not fit {type(obj).__name__}") from exc


def _pairs(value: Any, where: str) -> list[tuple[int, Any]]:
    """``[[index, value]]`` as pairs (indexes as ints)."""
    if not isinstance(value, list | tuple):
        raise ConfigError(f"{where} must be a list of [index, value] pairs")
    out: list[tuple[int, Any]] = []
    for pair in value:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise ConfigError(f"{where} must be a list of [index, value] pairs")
        try:
            out.append((int(pair[0]), pair[1]))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: {pair[0]!r} is not an index") from exc
    return out


# --------------------------------------------------------------------------------------------
# applying a carrier


def _carried_content(
    loaded: Message, carrier: Mapping[str, Any], at: str
) -> str | tuple[Part, ...]:
    """The content a carrier restores: its ``whole`` content, the loaded text (``"str"``),
    or the loaded parts with its inserts and patches."""
    kind = carrier.get("content")
    if "whole" in carrier:
        whole = carrier["whole"]
        if isinstance(whole, str):
            return whole
        if isinstance(whole, list | tuple):
            return tuple(decode_part(p, f"{at}.whole") for p in whole)
        raise ConfigError(f"{at}.whole must be a str or a list of parts")
    if kind == "str":
        return loaded.text
    if isinstance(loaded.content, str) and kind != "parts":
        return loaded.content
    parts = list(loaded.parts)
    for i, raw in _pairs(carrier.get("insert", ()), f"{at}.insert"):
        parts.insert(i, decode_part(raw, f"{at}.insert"))
    for i, patch in _pairs(carrier.get("parts", ()), f"{at}.parts"):
        if 0 <= i < len(parts):
            parts[i] = _patched(parts[i], patch, f"{at}.parts")
    return tuple(parts)


def _carried_calls(loaded: Message, carrier: Mapping[str, Any], at: str) -> list[ToolCall]:
    """The tool calls a carrier restores: its ``calls``, else the loaded ones, patched."""
    calls = list(loaded.tool_calls)
    if "calls" in carrier:
        raw_calls = carrier["calls"]
        if not isinstance(raw_calls, list | tuple):
            raise ConfigError(f"{at}.calls must be a list of tool calls")
        calls = [_decode_call(raw, f"{at}.calls") for raw in raw_calls]
    for i, patch in _pairs(carrier.get("tool_calls", ()), f"{at}.tool_calls"):
        if 0 <= i < len(calls):
            calls[i] = _patched(calls[i], patch, f"{at}.tool_calls")
    return calls


def apply_carrier(loaded: Message, carrier: Any, where: str = "") -> Message:
    """``loaded`` (a native loaded without its carrier) with the carrier's fields restored.

    Args:
        loaded: what the native loads as.
        carrier: the carrier (see the module docstring).
        where: the native's place in the caller's list, for errors (e.g. ``"messages[3]"``).

    Raises:
        ConfigError: the carrier holds something that is not a part, a call or a field.
    """
    at = f"{where}.{RESERVED_KEY}" if where else RESERVED_KEY
    if not isinstance(carrier, Mapping):
        raise ConfigError(f"{at} must be a dict")
    content = _carried_content(loaded, carrier, at)
    calls = _carried_calls(loaded, carrier, at)
    changes = carrier.get("message", {})
    if not isinstance(changes, Mapping) or not set(changes) <= set(_MESSAGE_FIELDS):
        raise ConfigError(f"{at}.message must map fields of {_MESSAGE_FIELDS}")
    try:
        return replace(loaded, content=content, tool_calls=tuple(calls), **changes)
    except (ConfigError, TypeError) as exc:
        raise ConfigError(f"{at}: does not fit the message: {exc}") from exc


# --------------------------------------------------------------------------------------------
# making a carrier


def _content_diff(
    message: Message, loaded: Message, rendered: Sequence[int] | None
) -> dict[str, Any] | None:
    """The content entries of a carrier; ``None`` when the parts do not line up."""
    out: dict[str, Any] = {}
    if isinstance(message.content, str):
        if not isinstance(loaded.content, str):
            out["content"] = "str"
        return out
    if isinstance(loaded.content, str):
        out["content"] = "parts"
    got = loaded.parts
    if rendered is None:  # no rendering map: the parts must line up one to one
        rendered = range(len(message.content)) if len(got) == len(message.content) else None
    if rendered is None or len(got) != len(rendered):
        return None
    at = set(rendered)
    inserts = [[i, encode_part(p)] for i, p in enumerate(message.content) if i not in at]
    patches: list[list[Any]] = []
    for k, i in enumerate(rendered):
        part = message.content[i]
        if type(part) is not type(got[k]):
            return None
        diff = _diff(part, got[k])
        if diff:
            patches.append([i, diff])
    if inserts:
        out["insert"] = inserts
    if patches:
        out["parts"] = patches
    return out


def _other_diff(message: Message, loaded: Message) -> dict[str, Any]:
    """The message-field and tool-call entries of a carrier."""
    out: dict[str, Any] = {}
    wanted, have = _field_values(message), _field_values(loaded)
    changed = {name: wanted[name] for name in _MESSAGE_FIELDS if wanted[name] != have[name]}
    if changed:
        out["message"] = changed
    if len(message.tool_calls) == len(loaded.tool_calls):
        patches = [
            [i, d]
            for i, (call, got) in enumerate(zip(message.tool_calls, loaded.tool_calls, strict=True))
            if (d := _diff(call, got))
        ]
        if patches:
            out["tool_calls"] = patches
    else:
        out["calls"] = [_field_values(c) for c in message.tool_calls]
    return out


def _fits(loaded: Message, carrier: Mapping[str, Any], message: Message) -> bool:
    try:
        return apply_carrier(loaded, carrier) == message
    except ConfigError:
        return False


def carrier_diff(
    message: Message, loaded: Message, rendered: Sequence[int] | None = None
) -> dict[str, Any] | None:
    """The carrier that turns ``loaded`` (what a native rendered from ``message`` loads as)
    into ``message``, patch by patch; ``{}`` when nothing is lost, ``None`` when the rendered
    parts do not line up with the message's.

    Args:
        message: the message dumped.
        loaded: what its native loads as, without a carrier.
        rendered: the indexes of the message's parts the native holds, in order; ``None``:
            the parts must line up one to one.
    """
    content = _content_diff(message, loaded, rendered)
    if content is None:
        return None
    carrier = {**content, **_other_diff(message, loaded)}
    return carrier if _fits(loaded, carrier, message) else None


def carrier_for(
    message: Message, loaded: Message, rendered: Sequence[int] | None = None
) -> dict[str, Any]:
    """:func:`carrier_diff`, else a carrier holding the whole content; ``{}`` when nothing is
    lost. Always restores ``message`` exactly.

    Raises:
        ConfigError: not even the whole content restores ``message`` (a converter bug).
    """
    carrier = carrier_diff(message, loaded, rendered)
    if carrier is not None:
        return carrier
    whole: Any = (
        message.content
        if isinstance(message.content, str)
        else [encode_part(p) for p in message.content]
    )
    carrier = {"whole": whole, **_other_diff(message, loaded)}
    if not _fits(loaded, carrier, message):
        raise ConfigError(f"cannot carry this {message.role} message losslessly")
    return carrier


Render = Callable[[Message, bool], tuple[dict[str, Any], list[int]]]


def dump_lossless(
    message: Message, render: Render, load_one: Callable[[Any], Message | None]
) -> dict[str, Any]:
    """``render(message, True)`` plus the carrier it needs (none when nothing is lost).

    ``render(message, with_parts)`` returns the native and the indexes of the parts it
    rendered (in order); with ``with_parts=False`` it renders no part, the fallback when a
    rendering does not load back part for part. ``load_one(native)`` is the message the
    native loads as (``None``: it is not one message).

    Raises:
        ConfigError: no rendering loads back as ``message`` (a converter bug).
    """
    for with_parts in (True, False):
        native, rendered = render(message, with_parts)
        try:
            loaded = load_one(native)
        except ConfigError:
            continue
        if loaded is None:
            continue
        carrier = carrier_diff(message, loaded, rendered)
        if carrier is not None:
            return with_carrier(native, carrier)
    raise ConfigError(f"cannot dump this {message.role} message losslessly")
