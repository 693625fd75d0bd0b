"""Merging adjacent same-role Anthropic messages, and splitting a merge back.

The Messages API combines consecutive same-role turns into one (*Messages API: consecutive
user or assistant turns will be combined into a single turn*), so
:meth:`~agent_adapter.context.formats._anthropic.AnthropicConverter.finish` merges them itself:
one new dict with the blocks of all of them, in order (string content becomes one ``text``
block), and the first one's other keys.

A merged native must still load as the messages it came from: a source native's carrier (see
:mod:`agent_adapter.context.formats._carrier`) may hold a Chat message's ``name``, a Responses
id, or the original id of a call ``dump_all`` renamed (without it, a ``tool_result`` for
``c0__2`` would answer a call loaded back as ``c0``). So when any source holds a carrier, the
merged dict gets one of its own::

    {"merged": [[n_blocks, carrier_or_null, was_str], ...]}

one entry per source, in order: how many of the merged blocks it contributed, its carrier, and
whether its content was a plain string; a fourth element, the source's other keys, appears when
they differ from the merged dict's. :func:`split_merged` rebuilds the source natives from it.
Sources that are merges themselves are flattened into their own sources first. Natives with no
carrier merge as they always did: no carrier is added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter._errors import ConfigError
from agent_adapter.context._own import own_text
from agent_adapter.context.formats._carrier import RESERVED_KEY, split_carrier, with_carrier

__all__ = ["MERGED", "merge_run", "own_turn", "split_merged"]

#: The carrier key of a merged native: one ``[n_blocks, carrier, was_str(, keys)]`` a source.
MERGED = "merged"


@dataclass(frozen=True)
class _Source:
    """One native a merged native was made of."""

    blocks: list[Any]
    carrier: Mapping[str, Any] | None
    was_str: bool
    keys: dict[str, Any]


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _other_keys(native: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in native.items() if k not in ("role", "content", RESERVED_KEY)}


def _entries(base: Mapping[str, Any], merged: Any, where: str) -> list[_Source]:
    """The sources a merged native's ``"merged"`` entry describes.

    Raises:
        ConfigError: the entry is malformed or does not add up to the native's blocks.
    """
    at = f"{where}.{RESERVED_KEY}.{MERGED}"
    blocks = base.get("content")
    if not isinstance(blocks, list):
        raise ConfigError(f"{where}.content must be a list of blocks (a merged message)")
    if not isinstance(merged, list | tuple):
        raise ConfigError(f"{at} must be a list of [n_blocks, carrier, was_str] entries")
    keys = _other_keys(base)
    out: list[_Source] = []
    start = 0
    for k, entry in enumerate(merged):
        if (
            not isinstance(entry, list | tuple)
            or len(entry) not in (3, 4)
            or type(entry[0]) is not int
            or entry[0] < 0
            or not isinstance(entry[1], Mapping | None)
            or not isinstance(entry[2], bool)
            or (len(entry) == 4 and not isinstance(entry[3], Mapping))
        ):
            raise ConfigError(f"{at}[{k}] must be [n_blocks, carrier or null, was_str(, keys)]")
        n, carrier, was_str = entry[0], entry[1], entry[2]
        own = dict(entry[3]) if len(entry) == 4 else keys
        out.append(_Source(blocks[start : start + n], carrier, was_str, own))
        start += n
    if start != len(blocks) or not out:
        raise ConfigError(f"{at} counts {start} blocks; the message has {len(blocks)}")
    return out


def _sources(native: Mapping[str, Any], where: str) -> list[_Source]:
    """The natives ``native`` was merged from (itself, when it is no merge)."""
    base, carrier = split_carrier(native)
    if carrier is not None and MERGED in carrier:
        return _entries(base, carrier[MERGED], where)
    content = base.get("content")
    return [_Source(_as_blocks(content), carrier, isinstance(content, str), _other_keys(base))]


def _content(source: _Source, at: str) -> str | list[Any]:
    """A source's content as it was: its blocks, or the string they were made from."""
    if not source.was_str:
        return list(source.blocks)
    if not source.blocks:
        return ""
    block = source.blocks[0]
    if (
        len(source.blocks) == 1
        and isinstance(block, Mapping)
        and set(block) == {"type", "text"}
        and block["type"] == "text"
        and isinstance(block["text"], str)
        and block["text"]
    ):
        return str(block["text"])
    raise ConfigError(f"{at}: a string content must be one plain text block")


def split_merged(native: Any, where: str) -> list[dict[str, Any]] | None:
    """The source natives of a merged native, each with its own carrier (or, for a user
    turn holding a note or summary of ours among other blocks, the turns it is made of: see
    :func:`_split_own`); ``None`` when ``native`` is no merge.

    Args:
        native: an Anthropic message dict.
        where: its place in the caller's list, for errors (e.g. ``"messages[3]"``).

    Raises:
        ConfigError: the ``"merged"`` entry does not describe the native's blocks.
    """
    base, carrier = split_carrier(native)
    if carrier is None or MERGED not in carrier:
        return _split_own(native) if carrier is None else None
    out: list[dict[str, Any]] = []
    for k, source in enumerate(_entries(base, carrier[MERGED], where)):
        content = _content(source, f"{where}.{RESERVED_KEY}.{MERGED}[{k}]")
        part = {"role": base.get("role"), **source.keys, "content": content}
        out.append(with_carrier(part, source.carrier))
    return out


def _split_own(native: Any) -> list[dict[str, Any]] | None:
    """A user turn that holds a note or summary of ours among other blocks, as the turns it
    was merged from: each text block that opens with one of our heads (see
    :mod:`agent_adapter.context._own`) a turn of its own, the blocks between them one turn
    each; ``None`` for any other native.

    ``strict_alternation`` merges a note with the task next to it (Bedrock takes no two user
    turns in a row), and a framework may merge consecutive user turns client-side: the merge
    carries no carrier (it is sent as it is), yet the note in it must still load as ours on
    the next call (folded into the next note, never kept as part of the task for good), and
    the user text after it as a turn that can go with its round. Known by the head alone,
    exactly as a turn of its own is."""
    if not isinstance(native, Mapping) or native.get("role") != "user":
        return None
    content = native.get("content")
    if not isinstance(content, list) or len(content) < 2:
        return None
    keys = {k: v for k, v in native.items() if k != "content"}
    parts: list[list[Any]] = [[]]
    for block in content:
        if _own_block(block):
            parts.extend([[block], []])
        else:
            parts[-1].append(block)
    runs = [p for p in parts if p]
    if len(runs) < 2:
        return None
    return [{**keys, "content": run} for run in runs]


def _own_block(block: Any) -> bool:
    """A text block that opens with one of our heads (a note or summary of ours)."""
    return (
        isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and own_text(block["text"]) is not None
    )


def own_turn(native: Mapping[str, Any]) -> bool:
    """A user turn of text alone, every text of which is a note or summary of ours."""
    if native.get("role") != "user":
        return False
    content = native.get("content")
    if isinstance(content, str):
        return own_text(content) is not None
    return isinstance(content, list) and bool(content) and all(map(_own_block, content))


def merge_run(natives: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One new dict for a run of same-role natives (see the module docstring).

    Raises:
        ConfigError: a native is a malformed merge.
    """
    sources = [s for i, n in enumerate(natives) for s in _sources(n, f"messages[{i}]")]
    first = {k: v for k, v in natives[0].items() if k not in ("content", RESERVED_KEY)}
    merged = {**first, "content": [b for s in sources for b in s.blocks]}
    if all(s.carrier is None for s in sources):
        return merged
    keys = sources[0].keys
    entries: list[list[Any]] = []
    for s in sources:
        entry = [len(s.blocks), None if s.carrier is None else dict(s.carrier), s.was_str]
        entries.append([*entry, dict(s.keys)] if s.keys != keys else entry)
    return with_carrier(merged, {MERGED: entries})
