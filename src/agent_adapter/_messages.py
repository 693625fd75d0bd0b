"""The one message model every format converts to and from.

A :class:`Message` is immutable. Its ``content`` is either a plain ``str`` or a tuple of parts,
each a small frozen dataclass with a ``kind`` tag: :class:`TextPart`, :class:`ImagePart`,
:class:`FilePart`, :class:`ThinkingPart` (reasoning, with its provider signature) and
:class:`OpaquePart` (a provider item with no slot here, carried untouched). Assistant messages
carry :class:`ToolCall` s; tool results are ``role="tool"`` messages with ``tool_call_id``.
Vendor fields with no slot ride along in ``extras`` so a round trip loses nothing.

Construction validates every field and raises :class:`~agent_adapter._errors.ConfigError`
naming the field; a list given as ``content`` or ``tool_calls`` is stored as a tuple.
"""

from __future__ import annotations

import copy
import itertools
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from agent_adapter._errors import ConfigError

__all__ = [
    "COMPACTION_TYPES",
    "DROPS_BEFORE_COMPACTION",
    "ROLES",
    "FilePart",
    "FrozenDict",
    "ImagePart",
    "Message",
    "OpaquePart",
    "Part",
    "Role",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "compaction_start",
]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


class FrozenDict(dict[str, Any]):
    """A read-only dict: vendor extras that no one can change after construction.

    Unlike ``MappingProxyType`` it pickles and deep-copies (LangGraph checkpoints do both).
    """

    __slots__ = ()

    def _readonly(self, *_args: Any, **_kwargs: Any) -> Any:
        raise TypeError("message extras are read-only; build a new Message instead")

    __setitem__ = __delitem__ = _readonly
    clear = pop = popitem = setdefault = update = _readonly
    __ior__ = _readonly

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return FrozenDict(copy.deepcopy(dict(self), memo))


_EMPTY: Mapping[str, Any] = FrozenDict()


def _parts(content: Any) -> tuple[Part, ...]:
    """``Message.content`` given as parts: a tuple of them, each checked."""
    if not isinstance(content, Sequence):
        raise ConfigError(
            f"Message.content must be a str or a sequence of parts, got {type(content).__name__}"
        )
    parts = tuple(content)
    for i, part in enumerate(parts):
        if not isinstance(part, _PART_TYPES):
            raise ConfigError(f"Message.content[{i}] must be a part, got {type(part).__name__}")
    return parts


def _check_calls(calls: tuple[Any, ...], role: str) -> None:
    """``Message.tool_calls``: each a ToolCall, on an assistant message only."""
    for i, call in enumerate(calls):
        if not isinstance(call, ToolCall):
            raise ConfigError(
                f"Message.tool_calls[{i}] must be a ToolCall, got {type(call).__name__}"
            )
    if role != "assistant":
        raise ConfigError(f"Message.tool_calls is only allowed on assistant, not {role}")


def _frozen_extras(value: Any, where: str) -> Mapping[str, Any]:
    if value is None or (not value and type(value) is dict):  # (a converter's: no ABC check)
        return _EMPTY
    if isinstance(value, FrozenDict):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: extras must be a mapping, got {type(value).__name__}")
    return FrozenDict(value) if value else _EMPTY


@dataclass(frozen=True, slots=True)
class TextPart:
    """Plain text. ``extras`` keeps vendor fields such as ``cache_control``."""

    text: str
    extras: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    kind: Literal["text"] = "text"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ConfigError(f"TextPart.text must be a str, got {type(self.text).__name__}")
        object.__setattr__(self, "extras", _frozen_extras(self.extras, "TextPart"))


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image by ``url`` or base64 ``data`` with its ``media_type``; ``detail`` as OpenAI's."""

    url: str | None = None
    data: str | None = None
    media_type: str | None = None
    detail: str | None = None
    extras: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    kind: Literal["image"] = "image"

    def __post_init__(self) -> None:
        object.__setattr__(self, "extras", _frozen_extras(self.extras, "ImagePart"))


@dataclass(frozen=True, slots=True)
class FilePart:
    """A document or file by ``url``, base64 ``data`` or provider ``file_id``."""

    url: str | None = None
    data: str | None = None
    file_id: str | None = None
    media_type: str | None = None
    filename: str | None = None
    extras: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    kind: Literal["file"] = "file"

    def __post_init__(self) -> None:
        object.__setattr__(self, "extras", _frozen_extras(self.extras, "FilePart"))


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """Model reasoning. ``signature`` must go back byte-identical (Anthropic, Gemini).

    ``redacted=True`` marks encrypted reasoning whose ``text`` is the opaque payload.
    """

    text: str
    signature: str | None = None
    redacted: bool = False
    extras: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    kind: Literal["thinking"] = "thinking"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ConfigError("ThinkingPart.text must be a str")
        object.__setattr__(self, "extras", _frozen_extras(self.extras, "ThinkingPart"))


#: The deepest nesting of dicts, lists and tuples an :class:`OpaquePart`'s data may have, the
#: limit the converters put on tool payloads (``formats._codec.MAX_DEPTH``): real provider
#: items stay far below it, and it leaves room under Python's default recursion limit
#: (1,000) for ``json``, ``repr``, ``copy.deepcopy`` and pickling of the message.
OPAQUE_MAX_DEPTH = 200


#: Leaves of provider data, skipped without a look inside, and the containers looked into.
_LEAVES = (str, int, float, bytes, type(None))
_CONTAINERS = (Mapping, list, tuple)


def _nesting_over(value: Any, limit: int) -> bool:
    """True when ``value`` nests dicts (mappings), lists and tuples more than ``limit`` deep.

    Level by level (it never recurses); data where a container is met twice (shared, or a
    cycle) goes to :func:`_shared_nesting_over`.
    """
    if isinstance(value, _LEAVES) or not isinstance(value, _CONTAINERS):
        return False
    level, seen, depth = [value], {id(value)}, 1
    while True:
        level = [
            child
            for item in level
            for child in _children(item)
            if not isinstance(child, _LEAVES) and isinstance(child, _CONTAINERS)
        ]
        if not level:
            return False
        depth += 1
        known = len(seen)
        seen.update(map(id, level))
        if len(seen) - known != len(level):
            return _shared_nesting_over(value, limit)
        if depth > limit:
            return True


def _shared_nesting_over(value: Any, limit: int) -> bool:
    """:func:`_nesting_over` for data with shared containers or cycles, depth first.

    Iterative; a container already on the path (a cycle) adds no depth, as ``repr`` and
    ``copy.deepcopy`` handle cycles, and a container met again elsewhere is measured once.
    """
    path: list[tuple[int, Any]] = [(id(value), iter(_children(value)))]
    on_path = {id(value)}
    height: dict[int, int] = {}  # containers done: how many levels they nest, themselves too
    below = [0]  # per container on the path: the most levels under it seen so far
    while path:
        ident, items = path[-1]
        for child in items:
            if isinstance(child, _LEAVES) or not isinstance(child, _CONTAINERS):
                continue
            key = id(child)
            if key in on_path:
                continue
            done = height.get(key)
            if done is not None:
                below[-1] = max(below[-1], done)
                if len(path) + done > limit:
                    return True
                continue
            if len(path) >= limit:
                return True
            path.append((key, iter(_children(child))))
            on_path.add(key)
            below.append(0)
            break
        else:
            path.pop()
            on_path.discard(ident)
            height[ident] = levels = below.pop() + 1
            if below:
                below[-1] = max(below[-1], levels)
    return False


def _children(container: Any) -> Any:
    return container.values() if isinstance(container, Mapping) else container


#: The ``type`` of provider items that hold a provider's own compaction state, which must go
#: back unchanged:
#:
#: * ``"compaction"``: Anthropic's ``compaction`` content block (Messages API, compaction
#:   beta ``compact-2026-01-12``: "On subsequent requests, append the response to your
#:   messages. The API automatically drops all message blocks prior to the compaction block,
#:   continuing the conversation from the summary"; the SDK's ``BetaCompactionBlockParam``:
#:   "Users should round-trip these blocks from responses to subsequent requests to maintain
#:   context across compaction boundaries", its ``encrypted_content`` "to be round-tripped
#:   verbatim" and its ``signature`` "to be sent back verbatim"), and OpenAI Responses'
#:   ``compaction`` item (compaction guide: "The returned compaction item carries forward key
#:   prior state and reasoning into the next run using fewer tokens. It is opaque and not
#:   intended to be human-interpretable"; its ``encrypted_content`` is required).
#: * ``"compaction_trigger"``: the Responses input item that asks the server to compact
#:   ("Compacts the current context. Must be the final input item.", API reference).
COMPACTION_TYPES = frozenset({"compaction", "compaction_trigger"})

#: The providers whose API drops every message block that comes before their ``compaction``
#: block in a request, so the request is read from its last such block on (the system prompt
#: and the tools are no message blocks: they stay):
#:
#: * ``"anthropic"``: compaction guide
#:   (https://platform.claude.com/docs/en/build-with-claude/compaction): "On subsequent
#:   requests, append the response to your messages. The API automatically drops all message
#:   blocks prior to the compaction block, continuing the conversation from the summary."
#:
#: OpenAI Responses is not one: its compaction guide
#: (https://developers.openai.com/api/docs/guides/compaction) leaves what precedes a
#: ``compaction`` item to the client: "After appending output items to the previous input
#: items, you can drop items that came before the most recent compaction item to keep
#: requests smaller and reduce long-tail latency. The latest compaction item carries the
#: necessary context to continue the conversation." Items sent before it are part of the
#: request ("to keep requests smaller"): they count, and may be compressed, as any item.
DROPS_BEFORE_COMPACTION = frozenset({"anthropic"})


@dataclass(frozen=True, slots=True)
class OpaquePart:
    """A provider item with no slot here (audio, server tool results, ...), carried untouched.

    ``data`` is the native item itself; it is never read or changed by compression. Its
    dicts, lists and tuples may nest :data:`OPAQUE_MAX_DEPTH` (200) levels deep, no more.

    Raises:
        ConfigError: ``data`` nests deeper than :data:`OPAQUE_MAX_DEPTH` (serializing,
            copying or comparing it would exceed Python's recursion limit).
    """

    provider: str
    data: Any
    kind: Literal["opaque"] = "opaque"

    def __post_init__(self) -> None:
        if _nesting_over(self.data, OPAQUE_MAX_DEPTH):
            raise ConfigError(
                f"OpaquePart.data is nested more than {OPAQUE_MAX_DEPTH} levels deep (the "
                f"limit for provider items); flatten it"
            )

    @property
    def is_compaction(self) -> bool:
        """True when ``data`` is a provider's own compaction state (:data:`COMPACTION_TYPES`).

        Known by the item's documented ``type``, the provider's own tag, never by its text.
        Such state goes back byte for byte and no step may cut, change or drop it
        (:class:`~agent_adapter.context.Protection` protects the message holding it).
        """
        data = self.data
        if not isinstance(data, Mapping):
            return False
        kind = data.get("type")  # any JSON value: a list or dict is no type (and unhashable)
        return isinstance(kind, str) and kind in COMPACTION_TYPES


Part: TypeAlias = TextPart | ImagePart | FilePart | ThinkingPart | OpaquePart
_PART_TYPES = (TextPart, ImagePart, FilePart, ThinkingPart, OpaquePart)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call: its ``id``, tool ``name`` and ``arguments`` as JSON text."""

    id: str
    name: str
    arguments: str = "{}"
    extras: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        for attr in ("id", "name", "arguments"):
            if not isinstance(getattr(self, attr), str):
                got = type(getattr(self, attr)).__name__
                raise ConfigError(f"ToolCall.{attr} must be a str, got {got}")
        object.__setattr__(self, "extras", _frozen_extras(self.extras, "ToolCall"))

    @property
    def args(self) -> Any:
        """``arguments`` parsed as JSON (raises ``json.JSONDecodeError`` when it is not)."""
        return json.loads(self.arguments) if self.arguments else {}


#: Origin tokens: a random start per process, so messages unpickled from another process do
#: not share tokens with new ones (a collision needs two runs of ~2**90 messages to overlap).
_ORIGINS = itertools.count(secrets.randbits(96) + 1)


@dataclass(frozen=True, slots=True, eq=True, weakref_slot=True)
class Message:
    """One chat message.

    Args:
        role: ``"system"``, ``"user"``, ``"assistant"`` or ``"tool"``.
        content: a ``str``, or a sequence of parts (stored as a tuple).
        tool_calls: the calls an assistant message makes (assistant only).
        tool_call_id: the call a ``tool`` message answers (required on ``tool``).
        name: the tool name of a result, or a participant name.
        extras: vendor fields with no slot here, carried for round trips.
        origin: provenance, an opaque token (keyword only). A new message gets a fresh one;
            a copy made with :func:`dataclasses.replace` (or :meth:`with_text`,
            :func:`copy.deepcopy`, pickling) keeps it, so the compression engine and
            ``Conversion.back`` *know* which input message a changed one came from instead of
            guessing; a message built from scratch is an addition. Never compared, hashed or
            shown. Leave it alone: passing another message's token claims to be its edit.

    Raises:
        ConfigError: a field has the wrong type, or tool fields sit on the wrong role.
    """

    role: Role
    content: str | tuple[Part, ...] = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    extras: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    origin: int = field(default=0, compare=False, repr=False, kw_only=True)

    def __post_init__(self) -> None:
        if not self.origin:
            object.__setattr__(self, "origin", next(_ORIGINS))
        elif type(self.origin) is not int:
            raise ConfigError(f"Message.origin must be an int, got {type(self.origin).__name__}")
        if self.role not in ROLES:
            raise ConfigError(f"Message.role must be one of {ROLES}, got {self.role!r}")
        if not isinstance(self.content, str):
            object.__setattr__(self, "content", _parts(self.content))
        calls = self.tool_calls
        if not isinstance(calls, tuple):
            if not isinstance(calls, Sequence) or isinstance(calls, str):
                raise ConfigError("Message.tool_calls must be a sequence of ToolCall")
            calls = tuple(calls)
            object.__setattr__(self, "tool_calls", calls)
        if calls:
            _check_calls(calls, self.role)
        if self.role == "tool":
            if not isinstance(self.tool_call_id, str) or not self.tool_call_id:
                raise ConfigError("Message.tool_call_id is required on a tool message")
        elif self.tool_call_id is not None:
            raise ConfigError(f"Message.tool_call_id is only allowed on tool, not {self.role}")
        if self.name is not None and not isinstance(self.name, str):
            raise ConfigError("Message.name must be a str or None")
        object.__setattr__(self, "extras", _frozen_extras(self.extras, "Message"))

    @property
    def parts(self) -> tuple[Part, ...]:
        """The content as parts (a ``str`` content is one :class:`TextPart`)."""
        if isinstance(self.content, str):
            return (TextPart(self.content),) if self.content else ()
        return self.content

    @property
    def text(self) -> str:
        """The text parts joined by newlines (thinking and other parts excluded)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))

    def with_text(self, text: str) -> Message:
        """A copy whose text is ``text``; every other part, call and field is kept.

        With part content, the first text part gets ``text`` (keeping its extras) and the
        other text parts are dropped; with no text part, one is appended.
        """
        if isinstance(self.content, str):
            return replace(self, content=text)
        out: list[Part] = []
        placed = False
        for part in self.content:
            if isinstance(part, TextPart):
                if not placed:
                    out.append(TextPart(text, part.extras))
                    placed = True
            else:
                out.append(part)
        if not placed:
            out.append(TextPart(text))
        return replace(self, content=tuple(out))


def compaction_start(message: Message) -> int:
    """The index of ``message``'s last part that is a ``compaction`` block of a provider of
    :data:`DROPS_BEFORE_COMPACTION` (an Anthropic one), ``-1`` when it holds none.

    The provider reads a request from that block on: every message block before it, in this
    message and in the messages before, is dropped. Known by the part's provider and its
    documented ``type``, never by its text; a ``str`` content is answered at once.
    """
    content = message.content
    if type(content) is str:
        return -1
    for i in range(len(content) - 1, -1, -1):
        part = content[i]
        if (
            isinstance(part, OpaquePart)
            and part.provider in DROPS_BEFORE_COMPACTION
            and part.is_compaction
            and part.data.get("type") == "compaction"
        ):
            return i
    return -1
