"""The reserved carrier: what a dumped dict native has no slot for, so ``load(dump(m)) == m``.

See the module docstring of :mod:`agent_adapter.context.formats.openai` for the contract; the
OpenAI (Chat and Responses) and Anthropic converters share these helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, replace
from typing import Any

from agent_adapter.errors import ConfigError
from agent_adapter.messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
)

#: The key of the carrier a dumped native uses for what its format has no slot for.
RESERVED_KEY = "_agent_adapter"


def split_carrier(native: Any) -> tuple[Any, Mapping[str, Any] | None]:
    """``native`` without :data:`RESERVED_KEY`, and the carrier (``None`` when absent)."""
    if isinstance(native, Mapping) and RESERVED_KEY in native:
        carrier = native[RESERVED_KEY]
        rest = {k: v for k, v in native.items() if k != RESERVED_KEY}
        return rest, carrier if isinstance(carrier, Mapping) else None
    return native, None


def _field_values(obj: Any) -> dict[str, Any]:
    """A part's, call's or message's fields (``extras`` as a plain dict, ``kind`` left out)."""
    return {
        f.name: dict(getattr(obj, f.name)) if f.name == "extras" else getattr(obj, f.name)
        for f in fields(obj)
        if f.name != "kind"
    }


def _diff(want: Any, got: Any) -> dict[str, Any]:
    """The fields of ``want`` whose values differ in ``got`` (same dataclass)."""
    have = _field_values(got)
    return {k: v for k, v in _field_values(want).items() if have.get(k) != v}


_PART_CLASSES: dict[str, type[Part]] = {
    "text": TextPart,
    "image": ImagePart,
    "file": FilePart,
    "thinking": ThinkingPart,
    "opaque": OpaquePart,
}


def _part_to_dict(part: Part) -> dict[str, Any]:
    return {"kind": part.kind, **_field_values(part)}


def _part_from_dict(raw: Any) -> Part:
    if not isinstance(raw, Mapping) or raw.get("kind") not in _PART_CLASSES:
        raise ConfigError(f"{RESERVED_KEY}: not a part: {raw!r:.80}")
    cls = _PART_CLASSES[raw["kind"]]
    try:
        return cls(**{k: v for k, v in raw.items() if k != "kind"})
    except TypeError as exc:
        raise ConfigError(f"{RESERVED_KEY}: not a {raw['kind']} part") from exc


def _call_to_dict(call: ToolCall) -> dict[str, Any]:
    return _field_values(call)


def apply_carrier(loaded: Message, carrier: Mapping[str, Any]) -> Message:
    """``loaded`` (a native loaded without its carrier) with the carrier's fields restored.

    Raises:
        ConfigError: the carrier holds something that is not a part or a field.
    """
    content: str | tuple[Part, ...]
    kind = carrier.get("content")
    if kind == "str":
        content = loaded.text
    elif isinstance(loaded.content, str) and kind != "parts":
        content = loaded.content
    else:
        parts = list(loaded.parts)
        for i, raw in carrier.get("insert", ()):
            parts.insert(int(i), _part_from_dict(raw))
        for i, patch in carrier.get("parts", ()):
            if 0 <= int(i) < len(parts):
                parts[int(i)] = _patched(parts[int(i)], patch)
        content = tuple(parts)
    calls = list(loaded.tool_calls)
    if "calls" in carrier:
        try:
            calls = [ToolCall(**raw) for raw in carrier["calls"]]
        except TypeError as exc:
            raise ConfigError(f"{RESERVED_KEY}: bad tool calls") from exc
    for i, patch in carrier.get("tool_calls", ()):
        if 0 <= int(i) < len(calls):
            calls[int(i)] = _patched(calls[int(i)], patch)
    changes: dict[str, Any] = dict(carrier.get("message", {}))
    try:
        return replace(loaded, content=content, tool_calls=tuple(calls), **changes)
    except TypeError as exc:
        raise ConfigError(f"{RESERVED_KEY}: bad message fields {sorted(changes)}") from exc


def _patched(obj: Any, patch: Any) -> Any:
    try:
        return replace(obj, **patch)
    except TypeError as exc:
        raise ConfigError(f"{RESERVED_KEY}: a patch does not fit {type(obj).__name__}") from exc


def _carrier(
    message: Message,
    native: Any,
    rendered: Sequence[int],
    load_one: Callable[[Any], Message | None],
) -> dict[str, Any] | None:
    """What ``native`` (rendered from ``message``) needs to load back as ``message``; ``None``
    when the rendering does not line up with ``message`` at all."""
    try:
        loaded = load_one(native)
    except ConfigError:
        return None
    if loaded is None:
        return None
    carrier: dict[str, Any] = {}
    wanted, loaded_fields = _field_values(message), _field_values(loaded)
    changed = {
        name: wanted[name]
        for name in ("role", "name", "tool_call_id", "extras")
        if wanted[name] != loaded_fields[name]
    }
    if changed:
        carrier["message"] = changed
    if isinstance(message.content, str):
        if not isinstance(loaded.content, str):
            carrier["content"] = "str"
    else:
        if isinstance(loaded.content, str):
            carrier["content"] = "parts"
        got = loaded.parts
        if len(got) != len(rendered):
            return None
        at = set(rendered)
        inserts = [[i, _part_to_dict(p)] for i, p in enumerate(message.content) if i not in at]
        patches: list[list[Any]] = []
        for k, i in enumerate(rendered):
            part = message.content[i]
            if type(part) is not type(got[k]):
                return None
            diff = _diff(part, got[k])
            if diff:
                patches.append([i, diff])
        if inserts:
            carrier["insert"] = inserts
        if patches:
            carrier["parts"] = patches
    if len(message.tool_calls) == len(loaded.tool_calls):
        call_patches = [
            [i, d]
            for i, (call, got_call) in enumerate(
                zip(message.tool_calls, loaded.tool_calls, strict=True)
            )
            if (d := _diff(call, got_call))
        ]
        if call_patches:
            carrier["tool_calls"] = call_patches
    else:
        carrier["calls"] = [_call_to_dict(c) for c in message.tool_calls]
    try:
        if apply_carrier(loaded, carrier) != message:
            return None
    except ConfigError:
        return None
    return carrier


Render = Callable[[Message, bool], tuple[dict[str, Any], list[int]]]


def dump_lossless(
    message: Message, render: Render, load_one: Callable[[Any], Message | None]
) -> dict[str, Any]:
    """``render(message, True)`` plus the carrier it needs (none when nothing is lost).

    ``render(message, with_parts)`` returns the native and the indexes of the parts it
    rendered (in order); with ``with_parts=False`` it renders no part, the fallback when a
    rendering does not load back part for part.

    Raises:
        ConfigError: no rendering loads back as ``message`` (a converter bug).
    """
    for with_parts in (True, False):
        native, rendered = render(message, with_parts)
        carrier = _carrier(message, native, rendered, load_one)
        if carrier is not None:
            return {**native, RESERVED_KEY: carrier} if carrier else native
    raise ConfigError(f"cannot dump this {message.role} message losslessly")


def without_carrier_rebuild(native: Mapping[str, Any], dumped: Mapping[str, Any]) -> dict[str, Any]:
    """A changed native that carried a carrier: its other keys, then ``dumped``'s."""
    return {**{k: v for k, v in native.items() if k != RESERVED_KEY}, **dumped}
