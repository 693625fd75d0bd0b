"""Anthropic Messages dicts (``anthropic`` format).

Shapes follow the Messages API reference: ``{"role": "user" | "assistant", "content": str |
list[block]}``. Assistant blocks ``text``, ``thinking`` (with ``signature``),
``redacted_thinking`` (``data``) and ``tool_use`` (``id``, ``name``, ``input``; other keys such
as ``cache_control`` in ``ToolCall.extras``) become one message with parts and tool calls;
other blocks (``server_tool_use``, ``web_search_tool_result``, the compaction beta's signed
``compaction`` block ...) ride along as opaque parts, and go back as the very dict. A
user message's ``tool_result`` blocks become ``tool`` messages (``tool_use_id`` ->
``tool_call_id``, ``is_error`` and ``cache_control`` in extras, block content as parts) and its
other blocks, after them, one user message; a ``tool_result`` after another block is a
:class:`~agent_adapter._errors.ConfigError` naming it (tool use guide: "tool_result blocks
must come FIRST in the content array"). ``image`` and ``document`` blocks with a ``base64``
or ``url`` source become image and file parts (other keys in extras); other sources stay
opaque. Back, blocks are rebuilt in their original places, so ``cache_control`` markers,
thinking blocks and signatures never move or change.

``dump`` is lossless for a message of any format: what a block has no slot for (a chat
message's ``name``, a Responses item's ``id``, a thinking part's missing signature...) rides in
the reserved carrier described in :mod:`agent_adapter.context.formats._carrier`.

**Alternation after compression.** Removing the assistant message between two user messages
makes them adjacent. The Messages API accepts that: "Consecutive user or assistant turns in
your request will be combined into a single turn" (Messages API reference, *messages*). So by
default :meth:`AnthropicConverter.finish` leaves adjacent same-role natives as they are: the
task and the latest user message stay the very objects the caller passed (the same-object
promise, and the prompt-cache prefix up to them). Gateways that require strict alternation
(Amazon Bedrock's Converse API answers consecutive same-role messages with a 400
``ValidationException``) get it with
``AnthropicConverter(strict_alternation=True)``, passed as ``format=`` to ``convert``,
``compress_for`` and ``check``: ``finish`` then merges such neighbours into one NEW dict (the
blocks of both, in order; string content becomes one ``text`` block; the first one's other
keys). When a merged native held a carrier, the new dict's carrier records each source's
carrier and blocks (:mod:`agent_adapter.context.formats._anthropic._merge`), so it loads as
exactly the messages it came from and rebuilds part by part. Every other native stays the same
object. Merging never reorders blocks: a user message holding ``tool_result`` blocks always
follows its assistant message directly (the round is one unit), so results stay first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar, assert_never

from agent_adapter._errors import ConfigError
from agent_adapter._messages import (
    FilePart,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from agent_adapter.context.formats._anthropic._merge import merge_run, own_turn, split_merged
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._carrier import (
    RESERVED_KEY,
    apply_carrier,
    dump_lossless,
    over_native,
    split_carrier,
)
from agent_adapter.context.formats._codec import parse_json, split_data_url, to_json
from agent_adapter.context.formats._patch import (
    CHAT_TEXT,
    blank_dict,
    never_blank,
    patch_text_blocks,
)

__all__ = ["AnthropicConverter"]

_SURE_BLOCKS = {
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "document",
    "server_tool_use",
    "web_search_tool_result",
    "search_result",
    "compaction",
}
#: Block keys of the API reference that parts and calls have no field for.
_TEXT_KEYS = frozenset({"cache_control", "citations"})
_IMAGE_KEYS = frozenset({"cache_control"})
_DOCUMENT_KEYS = frozenset({"cache_control", "citations", "title", "context"})
_TOOL_USE_KEYS = frozenset({"cache_control", "caller"})
_TOOL_RESULT_KEYS = frozenset({"cache_control", "is_error"})
#: Block types load() never turns into an opaque part.
_TYPED_BLOCKS = frozenset(
    {"text", "thinking", "redacted_thinking", "image", "document", "tool_use", "tool_result"}
)


def _source(block: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A ``base64`` or ``url`` source with only the keys a part has fields for."""
    src = block.get("source")
    if not isinstance(src, Mapping):
        return None
    if src.get("type") == "base64" and set(src) <= {"type", "media_type", "data"}:
        return src
    if src.get("type") == "url" and set(src) <= {"type", "url"}:
        return src
    return None


def _text(block: Mapping[str, Any]) -> Part | None:
    if not isinstance(block.get("text"), str):
        return None
    return TextPart(block["text"], {k: v for k, v in block.items() if k not in ("type", "text")})


def _thinking(block: Mapping[str, Any]) -> Part | None:
    signature = block.get("signature")
    if not isinstance(block.get("thinking"), str) or not isinstance(signature, str | None):
        return None
    extras = {k: v for k, v in block.items() if k not in ("type", "thinking", "signature")}
    return ThinkingPart(block["thinking"], signature, extras=extras)


def _redacted_thinking(block: Mapping[str, Any]) -> Part | None:
    if not isinstance(block.get("data"), str):
        return None
    extras = {k: v for k, v in block.items() if k not in ("type", "data")}
    return ThinkingPart(block["data"], redacted=True, extras=extras)


def _media(block: Mapping[str, Any]) -> Part | None:
    """An ``image`` or ``document`` block with a ``base64`` or ``url`` source."""
    src = _source(block)
    if src is None:
        return None
    extras = {k: v for k, v in block.items() if k not in ("type", "source")}
    cls = ImagePart if block.get("type") == "image" else FilePart
    return cls(
        url=src.get("url"), data=src.get("data"), media_type=src.get("media_type"), extras=extras
    )


#: The part mapper of each block type (``None`` from it, or a type not here: opaque).
_PARTS: dict[str, Callable[[Mapping[str, Any]], Part | None]] = {
    "text": _text,
    "thinking": _thinking,
    "redacted_thinking": _redacted_thinking,
    "image": _media,
    "document": _media,
}


def _block_part(block: Mapping[str, Any]) -> Part:
    kind = block.get("type")
    mapper = _PARTS.get(kind) if isinstance(kind, str) else None
    part = mapper(block) if mapper is not None else None
    return part if part is not None else OpaquePart("anthropic", block)


def _blocks(raw: Any, where: str) -> list[Mapping[str, Any]]:
    if not isinstance(raw, list):
        raise ConfigError(f"{where} must be a str or a list of content blocks")
    for k, block in enumerate(raw):
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise ConfigError(f"{where}[{k}] must be a content block dict with a 'type'")
        field = _REQUIRED_STR.get(block["type"])
        if field is not None and not isinstance(block.get(field), str):
            raise ConfigError(f"{where}[{k}].{field} must be a str ({block['type']} block)")
        if block["type"] == "tool_use" and not isinstance(block.get("input", {}), Mapping):
            raise ConfigError(f"{where}[{k}].input must be an object (tool_use block)")
        if block["type"] in ("image", "document") and not isinstance(block.get("source"), Mapping):
            # Messages API: an image or document block's source is an object (base64, url...)
            raise ConfigError(f"{where}[{k}].source must be an object ({block['type']} block)")
    return raw


#: The string field each block type must have (Messages API reference, content blocks).
_REQUIRED_STR = {"text": "text", "thinking": "thinking", "redacted_thinking": "data"}


def _load(native: Any, where: str) -> list[Message]:
    if not isinstance(native, Mapping):
        raise ConfigError(f"{where} is {type(native).__name__}, not an Anthropic message dict")
    role = native.get("role")
    if role not in ("user", "assistant", "system"):
        raise ConfigError(f"{where}.role {role!r} must be 'user', 'assistant' or 'system'")
    extras = {k: v for k, v in native.items() if k not in ("role", "content")}
    raw = native.get("content")
    if isinstance(raw, str):
        return [Message(role, raw, extras=extras)]
    blocks = _blocks(raw, f"{where}.content")
    if role == "system":
        # a mid-conversation system message (Claude Opus 4.8 and later: "role: system
        # messages immediately after a user turn", https://platform.claude.com/docs/en/
        # build-with-claude/mid-conversation-system-messages): a system Message, protected
        # as any system prompt; it comes back as the same native
        return [Message("system", tuple(_block_part(b) for b in blocks), extras=extras)]
    if role == "assistant":
        return [_load_assistant(blocks, where, extras)]
    return _load_user(blocks, where, extras)


def _load_assistant(blocks: list[Mapping[str, Any]], where: str, extras: dict[str, Any]) -> Message:
    """An assistant message: its ``tool_use`` blocks as calls, the others as parts."""
    parts: list[Part] = []
    calls: list[ToolCall] = []
    for k, block in enumerate(blocks):
        if block["type"] == "tool_use":
            calls.append(_tool_use(block, f"{where}.content[{k}]"))
        else:
            parts.append(_block_part(block))
    return Message("assistant", tuple(parts), tool_calls=tuple(calls), extras=extras)


def _tool_use(block: Mapping[str, Any], at: str) -> ToolCall:
    id_, name = block.get("id"), block.get("name")
    if not isinstance(id_, str) or not isinstance(name, str):
        raise ConfigError(f"{at} tool_use needs str id and name")
    meta = {k: v for k, v in block.items() if k not in ("type", "id", "name", "input")}
    return ToolCall(id_, name, to_json(block.get("input", {}), f"{at}.input"), meta)


def _load_user(
    blocks: list[Mapping[str, Any]], where: str, extras: dict[str, Any]
) -> list[Message]:
    """A user message: one ``tool`` message a ``tool_result`` block (they come first), then
    the other blocks as one user message."""
    out: list[Message] = []
    pending: list[Part] = []
    for k, block in enumerate(blocks):
        if block["type"] != "tool_result":
            pending.append(_block_part(block))
            continue
        if pending:
            raise ConfigError(_results_first(where, k, blocks))
        out.append(_tool_result(block, f"{where}.content[{k}]"))
    if pending or not out:
        out.append(Message("user", tuple(pending), extras=extras))
    return out


def _tool_result(block: Mapping[str, Any], at: str) -> Message:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or not call_id:
        raise ConfigError(f"{at}.tool_use_id must be a non-empty str")
    body = block.get("content", "")
    content: str | tuple[Part, ...]
    if isinstance(body, str):
        content = body
    else:
        content = tuple(_block_part(b) for b in _blocks(body, f"{at}.content"))
    meta = {k: v for k, v in block.items() if k not in ("type", "tool_use_id", "content")}
    return Message("tool", content, tool_call_id=call_id, extras=meta)


def _results_first(where: str, k: int, blocks: Sequence[Mapping[str, Any]]) -> str:
    """The error for ``tool_result`` block ``k`` of a user message after another block. Tool
    use guide (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use,
    *Handling tool use and tool result content blocks*): "tool_result blocks must come FIRST
    in the content array", "any text must come AFTER all tool results"."""
    other = next(b["type"] for b in blocks if b["type"] != "tool_result")
    return (
        f"{where}.content[{k}]: a tool_result block after a {other} block; tool_result blocks "
        "must come first in a user message's content (any text after all tool results)"
    )


def _render_source(part: ImagePart | FilePart, kind: str, keys: frozenset[str]) -> Any:
    """An ``image`` / ``document`` block with a ``url`` or ``base64`` source; a ``data:``
    URL (what Chat Completions and cliver messages carry inline) is a ``base64`` source, as
    the Messages API takes inline bytes (its ``url`` source fetches an https URL)."""
    media_type, inline = split_data_url(part.url) if part.url is not None else (None, None)
    if inline is not None:
        src: dict[str, Any] = {"type": "base64", "media_type": media_type, "data": inline}
    elif part.url is not None:
        src = {"type": "url", "url": part.url}
    elif part.data is not None:
        src = {"type": "base64", "media_type": part.media_type, "data": part.data}
    else:
        return None
    return {"type": kind, "source": src, **{k: v for k, v in part.extras.items() if k in keys}}


def _render_block(part: Part, role: str) -> Any:
    """The content block for ``part`` in a ``role`` message, or ``None`` with no slot."""
    match part:
        case TextPart():
            return {
                "type": "text",
                "text": part.text,
                **{k: v for k, v in part.extras.items() if k in _TEXT_KEYS},
            }
        case ThinkingPart():
            if role != "assistant":
                return None
            if part.redacted:
                return {"type": "redacted_thinking", "data": part.text}
            block: dict[str, Any] = {"type": "thinking", "thinking": part.text}
            if part.signature is not None:
                block["signature"] = part.signature
            return block
        case ImagePart():
            return _render_source(part, "image", _IMAGE_KEYS)
        case FilePart():
            return _render_source(part, "document", _DOCUMENT_KEYS)
        case OpaquePart():
            data = part.data
            if (
                part.provider == "anthropic"
                and isinstance(data, Mapping)
                and isinstance(data.get("type"), str)
                and data["type"] not in ("tool_use", "tool_result")
                and _block_part(data) == part
            ):
                return data
            return None
        case _:
            assert_never(part)


def _with_native_ids(message: Message, native: Mapping[str, Any]) -> Message:
    """``message`` with the call ids ``native`` was written with (by position)."""
    blocks = native.get("content")
    if not isinstance(blocks, list):
        return message
    if message.tool_calls:
        ids = [
            b["id"]
            for b in blocks
            if isinstance(b, Mapping)
            and b.get("type") == "tool_use"
            and isinstance(b.get("id"), str)
        ]
        if len(ids) == len(message.tool_calls):
            calls = tuple(replace(c, id=i) for c, i in zip(message.tool_calls, ids, strict=True))
            return replace(message, tool_calls=calls)
    if message.role == "tool":
        ids = [
            b.get("tool_use_id")
            for b in blocks
            if isinstance(b, Mapping) and b.get("type") == "tool_result"
        ]
        if len(ids) == 1 and isinstance(ids[0], str):
            return replace(message, tool_call_id=ids[0])
    return message


def _renderer(view: Message) -> Callable[[Message, bool], tuple[dict[str, Any], list[int]]]:
    """A render function that writes ``view`` (the message with renamed call ids) instead of
    the message it is given, so the carrier records the original ids."""
    return lambda _message, with_parts: _render(view, with_parts)


def _render(message: Message, with_parts: bool) -> tuple[dict[str, Any], list[int]]:
    role = "assistant" if message.role == "assistant" else "user"
    rendered: list[int] = []
    if isinstance(message.content, str) and not message.tool_calls and message.role != "tool":
        return {"role": role, "content": message.content}, rendered
    blocks: list[Any] = []
    if isinstance(message.content, str):
        if message.content:
            blocks.append({"type": "text", "text": message.content})
    else:
        for i, part in enumerate(message.content):
            block = _render_block(part, message.role) if with_parts else None
            if block is not None:
                blocks.append(block)
                rendered.append(i)
    for call in message.tool_calls:
        args = parse_json(call.arguments) if call.arguments else {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": args if isinstance(args, dict) else {},
                **{k: v for k, v in call.extras.items() if k in _TOOL_USE_KEYS},
            }
        )
    if message.role != "tool":
        return {"role": role, "content": blocks}, rendered
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if isinstance(message.content, str):
        if message.content:
            result["content"] = message.content
    else:
        result["content"] = blocks
    result.update({k: v for k, v in message.extras.items() if k in _TOOL_RESULT_KEYS})
    return {"role": "user", "content": [result]}, rendered


def _rebuild_carried(
    native: dict[str, Any], original: Message, message: Message | None
) -> list[dict[str, Any]]:
    """A native with a carrier: written again; the ids the native was sent with (dump_all
    may have renamed reused ones) stay, the carrier keeps the message's own."""
    if message is None:
        return []
    if message.text == original.text:
        return [native]
    view = _with_native_ids(message, native)
    dumped = dump_lossless(message, _renderer(view), _load_one)
    return [over_native(native, dumped)]


def _rebuild_single(
    native: dict[str, Any], raw: Any, original: Message, message: Message | None
) -> list[dict[str, Any]]:
    """A native of one message (string content, or an assistant message): its new text."""
    if message is None:
        return []
    if message.text == original.text:
        return [native]
    if isinstance(raw, str):
        return [{**native, "content": message.text}]
    blocks0 = raw if isinstance(raw, list) else []
    return [{**native, "content": patch_text_blocks(blocks0, message.text, CHAT_TEXT)}]


def _rebuild_user(
    native: dict[str, Any],
    raw: Any,
    originals: Sequence[Message],
    now: Sequence[Message | None],
) -> list[dict[str, Any]]:
    """A user message: tool_result blocks and runs of other blocks, as load() split them."""
    blocks: list[Any] = []
    k = 0  # index of the message the current block belongs to
    run: list[Any] = []
    for block in raw or []:
        if block.get("type") != "tool_result":
            run.append(block)
            continue
        if run:
            blocks.extend(_rebuilt_run(run, originals[k], now[k]))
            run = []
            k += 1
        blocks.extend(_rebuilt_result(block, originals[k], now[k]))
        k += 1
    if run:
        blocks.extend(_rebuilt_run(run, originals[k], now[k]))
    if len(blocks) == len(raw or []) and all(
        a is b for a, b in zip(blocks, raw or [], strict=True)
    ):
        return [native]
    return [{**native, "content": blocks}] if blocks else []


def _unchanged(original: Message, message: Message | None) -> bool:
    return message is not None and (message is original or message.text == original.text)


def _rebuilt_run(run: list[Any], original: Message, message: Message | None) -> list[Any]:
    """The blocks of a run of other blocks (one user message)."""
    if _unchanged(original, message):
        return run
    if message is not None:
        return patch_text_blocks(run, message.text, CHAT_TEXT)
    return []


def _rebuilt_result(block: Any, original: Message, message: Message | None) -> list[Any]:
    """A tool_result block (one tool message), as it was or with its new text."""
    if _unchanged(original, message):
        return [block]
    if message is None:
        return []
    body = block.get("content", "")
    new_body: Any = (
        message.text
        if isinstance(body, str)
        else patch_text_blocks(list(body), message.text, CHAT_TEXT)
    )
    return [{**block, "content": new_body}]


def _load_carried(native: Any, where: str) -> list[Message]:
    """The messages of one native that is no merge, its carrier applied."""
    base, carrier = split_carrier(native)
    messages = _load(base, where)
    if carrier is not None and len(messages) == 1:
        return [apply_carrier(messages[0], carrier, where)]
    return messages


def _load_one(native: Any) -> Message | None:
    messages = _load(native, "messages[?]")
    return messages[0] if len(messages) == 1 else None


class AnthropicConverter(Converter[dict[str, Any]]):
    """Anthropic Messages dicts <-> Message (see the module docstring).

    Args:
        strict_alternation: merge adjacent same-role messages after compression (for
            gateways that reject them, such as Bedrock's Converse API); by default they are
            left adjacent, which the Messages API accepts and combines itself. Only what a
            compression writes back is merged: a list sent back untouched (under the
            threshold, or nothing removable) is the caller's own, adjacent turns included;
            check it with ``check(messages, "anthropic", strict_alternation=True)``.
    """

    name = "anthropic"
    call_terms: ClassVar[tuple[str, str]] = ("tool_use", "tool_result")

    def __init__(self, *, strict_alternation: bool = False) -> None:
        if not isinstance(strict_alternation, bool):
            raise ConfigError(
                f"AnthropicConverter: strict_alternation must be a bool, got {strict_alternation!r}"
            )
        self.strict_alternation = strict_alternation

    def kind(self, item: Any) -> str | None:
        if not isinstance(item, Mapping) or item.get("role") not in ("user", "assistant"):
            return None
        if "type" in item or "tool_calls" in item or "tool_call_id" in item:
            return None
        content = item.get("content")
        if isinstance(content, str):
            return "maybe"
        if not isinstance(content, list) or not all(isinstance(b, Mapping) for b in content):
            return None
        kinds = {b.get("type") for b in content if isinstance(b.get("type"), str)}
        if (
            kinds & _SURE_BLOCKS
            or any(b.get("type") == "image" and "source" in b for b in content)
            or any("cache_control" in b for b in content)
        ):
            return "sure"
        return "maybe" if kinds <= {"text"} else None

    def load(self, native: dict[str, Any], index: int) -> list[Message]:
        where = f"messages[{index}]"
        parts = split_merged(native, where)
        if parts is None:
            return _load_carried(native, where)
        # a merge of natives that held carriers: each source loads with its own
        at = f"{where}.{RESERVED_KEY}.merged"
        return [m for k, part in enumerate(parts) for m in _load_carried(part, f"{at}[{k}]")]

    def rebuild(
        self,
        native: dict[str, Any],
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> list[dict[str, Any]]:
        """The native with its messages' new text, blocks in their places (see the module
        docstring). A message cut to blank text never leaves empty content or a blank text
        block (see :func:`~agent_adapter.context.formats._patch.never_blank`)."""
        return never_blank(self._rebuild, blank_dict, native, originals, now)

    def _rebuild(
        self,
        native: dict[str, Any],
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> list[dict[str, Any]]:
        parts = split_merged(native, "messages[?]")
        if parts is not None:
            return self._rebuild_merged(native, parts, originals, now)
        if RESERVED_KEY in native and len(originals) == 1:
            return _rebuild_carried(native, originals[0], now[0])
        raw = native.get("content")
        if isinstance(raw, str) or native.get("role") == "assistant":
            return _rebuild_single(native, raw, originals[0], now[0])
        return _rebuild_user(native, raw, originals, now)

    def _rebuild_merged(
        self,
        native: dict[str, Any],
        parts: Sequence[dict[str, Any]],
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> list[dict[str, Any]]:
        """A merge: each source rebuilt with its own messages, then merged again."""
        out: list[dict[str, Any]] = []
        start = 0
        for part in parts:
            stop = start + len(_load_carried(part, "messages[?]"))
            out.extend(self.rebuild(part, originals[start:stop], now[start:stop]))
            start = stop
        if len(out) == len(parts) and all(a is b for a, b in zip(out, parts, strict=True)):
            return [native]
        return self.finish(out)

    def dump(self, message: Message) -> dict[str, Any]:
        return dump_lossless(message, _render, _load_one)

    def dump_all(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Natives for ``messages``, with call ids unique in the list.

        Anthropic requires unique ``tool_use`` ids ("tool_use ids must be unique"); OpenAI
        lets a conversation reuse one in a later round (tau-bench does). A reused id is
        written as ``<id>__<n>`` on its ``tool_use`` and on the ``tool_result`` s answering
        it; the original id rides in the carrier, so loading gives ``messages`` back.
        """
        seen: set[str] = set()
        renamed: dict[str, str] = {}
        out: list[dict[str, Any]] = []
        for message in messages:
            view = message
            if message.tool_calls:
                renamed = {}
                for call in message.tool_calls:
                    if call.id in seen:
                        n = 2
                        while f"{call.id}__{n}" in seen:
                            n += 1
                        renamed[call.id] = f"{call.id}__{n}"
                    seen.add(renamed.get(call.id, call.id))
                if renamed:
                    calls = tuple(
                        replace(c, id=renamed.get(c.id, c.id)) for c in message.tool_calls
                    )
                    view = replace(message, tool_calls=calls)
            elif message.role == "tool" and message.tool_call_id in renamed:
                view = replace(message, tool_call_id=renamed[message.tool_call_id])
            if view is message:
                out.append(self.dump(message))
            else:
                out.append(dump_lossless(message, _renderer(view), _load_one))
        return out

    def finish(
        self,
        natives: list[dict[str, Any]],
        *,
        new: Callable[[dict[str, Any]], bool] | None = None,
    ) -> list[dict[str, Any]]:
        """``natives`` with runs of adjacent same-role natives that back() wrote (``new``)
        merged into one new dict each; with ``strict_alternation``, every run.

        back() writes a message it could not write onto its native (a change of more than
        text, an addition) as natives of its own: a user turn that held tool results and
        text becomes one native per message; merging such a run gives the one user turn the
        format has (and, when nothing changed, the very input native again). A run that
        includes a native kept from the input is left adjacent (the API combines
        consecutive same-role turns itself; see the module docstring), so the task and the
        latest user message stay the caller's objects; so is a note or summary of ours next
        to the user's words (a later compression knows it as ours, and folds it, only while
        it is a turn of its own; see :mod:`agent_adapter.context._own`). Natives with no
        same-role neighbour come back as the same objects. A merge of natives that held
        carriers keeps them in its own (see
        :mod:`agent_adapter.context.formats._anthropic._merge`), so it loads as the messages
        of its sources.
        """
        strict = self.strict_alternation
        runs: list[list[dict[str, Any]]] = []
        for native in natives:
            prev = runs[-1][-1] if runs else None
            if (
                prev is not None
                and isinstance(native, Mapping)
                and isinstance(prev, Mapping)
                and native.get("role") == prev.get("role")
                and (
                    strict
                    or new is None
                    or (new(native) and new(prev) and own_turn(native) == own_turn(prev))
                )
            ):
                runs[-1].append(native)
            else:
                runs.append([native])
        if len(runs) == len(natives):
            return natives
        return [run[0] if len(run) == 1 else merge_run(run) for run in runs]
