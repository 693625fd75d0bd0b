"""Gemini ``contents`` (``gemini`` format): dicts or ``google.genai.types.Content`` objects.

Shapes follow the Gemini API reference (``Content``: ``role`` ``"user"`` | ``"model"``,
``parts``) and the google-genai SDK. Dicts may use the SDK's snake_case keys (as
``Content.model_dump()`` gives them, ``None`` values included) or the REST API's camelCase keys
(``functionCall``, ``inlineData``, ``thoughtSignature``); both are read, and a changed dict keeps
its own key spelling. Content objects are read by attribute and never mutated: a changed one is
a ``model_copy``. Detection never imports google.genai.

Mapping:

* A ``model`` turn is one assistant message. ``text`` parts become :class:`TextPart` (other part
  fields such as ``thought_signature`` in its extras), ``thought: true`` parts
  :class:`ThinkingPart` (``thought_signature`` as its signature), ``inline_data`` /
  ``file_data`` parts :class:`ImagePart` (``image/*``) or :class:`FilePart`, and
  ``function_call`` parts :class:`ToolCall` s (``args`` as JSON text; the part's
  ``thought_signature`` in ``ToolCall.extras["thought_signature"]``; a call with no ``id`` gets
  ``gemini_call_<turn>_<k>`` and ``extras["gemini_no_id"]``). Other parts are opaque.
* A ``user`` (or legacy ``function``) turn: each ``function_response`` part is a ``tool``
  message (``name``; the call id is its ``id``, else the unanswered call of the previous model
  turn with the same name, in order), and each run of other parts one user message. A response
  ``{"output": str}`` is the text; ``{"error": str}`` is the text with ``extras["is_error"]``;
  another single string key is kept in ``extras["gemini_response_key"]``; any other response
  is its JSON text (``extras["gemini_response"] = "json"``).
* Signatures are base64 text in the message model (bytes from objects or ``model_dump()``
  dicts are encoded); kept natives keep their own bytes or text, so they go back
  byte-identical.

Back: kept natives are the very same objects; a changed turn keeps every part and field but
the changed text (the first plain text part gets the new text, other plain text parts go
unless they carry a ``thought_signature``, which stays on an empty part); a changed tool
result only changes ``function_response.response`` (``{key: text}`` in its old shape, the
parsed JSON if a JSON response still parses, else ``{"output": text}``). An empty text part
that only carries a ``thought_signature`` (Gemini 3 ends some turns so) is an opaque part:
never edited, always kept.

New natives (:meth:`GeminiConverter.dump`): each conversion gets a converter bound to the kind
of its natives (:meth:`GeminiConverter.bind`), so new turns are dicts or Content objects like
the rest; ``GeminiConverter(objects=True | False)`` fixes the choice. Dicts are snake_case and
lossless: whatever a message holds with no Gemini slot (a system role, a participant name,
foreign extras, non-canonical argument JSON, a content given as parts rather than a string
...) rides in a reserved ``"_agent_adapter"`` key of the content (a tool result's fields under
its ``"parts"`` map, by part index), so ``load(dump(m)) == [m]`` for every message. A changed
content that held the key gets it updated; no other native ever gets it. The Gemini API and
the SDK reject that key: it appears only on natives built from such messages (never for a
summary with no extras); :meth:`GeminiConverter.dump_all` leaves it out with ``carry=False``,
and ``check.strip_reserved`` removes it. Content objects have no room for it; what they lose
is listed in :meth:`GeminiConverter.dump`.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import Any

from agent_adapter.context.formats._base import Converter
from agent_adapter.errors import ConfigError, MissingDependency
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

__all__ = ["RESERVED_KEY", "GeminiConverter", "carry_apply", "carry_diff"]

RESERVED_KEY = "_agent_adapter"
"""Key carrying message fields with no slot in a native dict (see the module docstring)."""

# google-genai 3.x ``types.Part`` fields (snake_case); only these go into a dumped part.
_PART_KEYS = frozenset(
    {
        "media_resolution",
        "code_execution_result",
        "executable_code",
        "file_data",
        "function_call",
        "function_response",
        "inline_data",
        "text",
        "thought",
        "thought_signature",
        "video_metadata",
        "tool_call",
        "tool_response",
        "part_metadata",
        "audio_transcription",
        "media_processing",
        "speech_metadata",
        "document_metadata",
        "spreadsheet_metadata",
        "audio_metadata",
    }
)
_ROLES = ("user", "model", "function")
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
# The native index dumps are checked at: generated call ids never match a loaded one.
_PROBE = -1


# ----------------------------------------------------------------------------- field access


@functools.lru_cache(maxsize=512)
def _snake(key: str) -> str:
    return key if key.islower() else _CAMEL.sub("_", key).lower()


def _is_model(value: Any) -> bool:
    return not isinstance(value, Mapping) and hasattr(type(value), "model_fields")


def _fields(value: Any) -> dict[str, Any]:
    """The non-None fields of a dict (keys in snake_case) or a pydantic object."""
    if isinstance(value, dict | Mapping):
        return {
            _snake(k): v
            for k, v in value.items()
            if v is not None and isinstance(k, str) and k != RESERVED_KEY
        }
    if _is_model(value):
        attrs = getattr(value, "__dict__", None)
        if isinstance(attrs, dict):  # pydantic v2 keeps field values here
            return {k: v for k, v in attrs.items() if v is not None}
        return {
            k: v for k in type(value).model_fields if (v := getattr(value, k, None)) is not None
        }
    return {}


def _key(native: Mapping[str, Any], snake: str) -> str:
    """The key ``native`` spells ``snake`` with (snake_case or camelCase); ``snake`` if absent."""
    for k in native:
        if isinstance(k, str) and _snake(k) == snake:
            return k
    return snake


def _plain(value: Any) -> Any:
    """A pydantic value as plain data (dicts, lists); others as they are."""
    if _is_model(value):
        return value.model_dump(exclude_none=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _b64_text(value: Any) -> str:
    """A signature or data as text: bytes base64-encoded, text as it is."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)


def _sig_bytes(text: str) -> bytes | None:
    """Base64 ``text`` (standard or URL-safe) as bytes, if it encodes them canonically."""
    for decode, encode in (
        (base64.b64decode, base64.b64encode),
        (base64.urlsafe_b64decode, base64.urlsafe_b64encode),
    ):
        try:
            raw = decode(text.encode("ascii"))
        except (binascii.Error, ValueError, UnicodeEncodeError):
            continue
        if encode(raw).decode("ascii") == text:
            return raw
    return None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


# ----------------------------------------------------------------------------- carried fields


def _encode_part(part: Part) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": part.kind}
    for f in fields(part):
        if f.name == "kind":
            continue
        value = getattr(part, f.name)
        if f.name == "extras":
            if value:
                out["extras"] = dict(value)
        elif value is not None and value is not False:
            out[f.name] = value
    return out


_PART_CLASSES: dict[str, type[Any]] = {
    "text": TextPart,
    "image": ImagePart,
    "file": FilePart,
    "thinking": ThinkingPart,
    "opaque": OpaquePart,
}


def _decode_part(data: Any) -> Part:
    if not isinstance(data, Mapping) or data.get("kind") not in _PART_CLASSES:
        raise ConfigError(f"{RESERVED_KEY}: bad part {data!r}")
    cls = _PART_CLASSES[data["kind"]]
    part: Part = cls(**{k: v for k, v in data.items() if k != "kind"})
    return part


def _encode_field(name: str, value: Any) -> Any:
    if name == "content":
        return value if isinstance(value, str) else [_encode_part(p) for p in value]
    if name == "tool_calls":
        return [
            {"id": c.id, "name": c.name, "arguments": c.arguments, "extras": dict(c.extras)}
            for c in value
        ]
    if name == "extras":
        return dict(value)
    return value


def _decode_field(name: str, value: Any) -> Any:
    if name == "content":
        return value if isinstance(value, str) else tuple(_decode_part(p) for p in value)
    if name == "tool_calls":
        return tuple(
            ToolCall(c["id"], c["name"], c["arguments"], c.get("extras") or {}) for c in value
        )
    return value


_CARRIED = ("role", "content", "tool_calls", "tool_call_id", "name", "extras")


def carry_diff(plain: Message, target: Message) -> dict[str, Any] | None:
    """The fields of ``target`` that ``plain`` (what a native loads as) gets wrong, encoded.

    ``None`` when there are none. The encoding is JSON-safe when the values are.
    """
    out = {
        name: _encode_field(name, getattr(target, name))
        for name in _CARRIED
        if getattr(plain, name) != getattr(target, name)
    }
    return out or None


def carry_apply(plain: Message, data: Any, where: str) -> Message:
    """``plain`` with the fields ``data`` (from :func:`carry_diff`) carries.

    Raises:
        ConfigError: ``data`` is not what :func:`carry_diff` makes (naming ``where``).
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}.{RESERVED_KEY} must be a dict")
    try:
        changes = {k: _decode_field(k, v) for k, v in data.items() if k in _CARRIED}
        return replace(plain, **changes)
    except (ConfigError, KeyError, TypeError) as exc:
        raise ConfigError(f"{where}.{RESERVED_KEY} is invalid: {exc}") from exc


# ----------------------------------------------------------------------------- loading


def _content(parts: list[Part]) -> str | tuple[Part, ...]:
    """Parts as message content: one plain text part is a str, no part is ``""``."""
    if not parts:
        return ""
    if len(parts) == 1 and isinstance(parts[0], TextPart) and not parts[0].extras:
        return parts[0].text
    return tuple(parts)


def _part_extras(pf: Mapping[str, Any], skip: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pf.items():
        if k in skip:
            continue
        out[k] = _b64_text(v) if k == "thought_signature" else _plain(v)
    return out


def _is_text(pf: Mapping[str, Any]) -> bool:
    """A plain text part: not a thought, and not an empty text carrying only a signature (as
    Gemini 3 ends some turns with; that one is kept as an opaque part, never edited)."""
    text = pf.get("text")
    if not isinstance(text, str) or pf.get("thought"):
        return False
    return bool(text) or "thought_signature" not in pf


def _media_part(pf: Mapping[str, Any], native: Any) -> Part:
    """An inline_data / file_data part as an image or file part; other parts opaque."""
    for key in ("inline_data", "file_data"):
        if key not in pf:
            continue
        blob = _fields(pf[key])
        mime = blob.get("mime_type")
        mime = mime if isinstance(mime, str) else None
        extras = _part_extras(pf, (key,))
        rest = {k: _plain(v) for k, v in blob.items() if k not in ("mime_type", "data", "file_uri")}
        if rest:
            extras["gemini_blob"] = rest
        if key == "inline_data":
            data = blob.get("data")
            data_text = _b64_text(data) if data is not None else None
            if mime and mime.startswith("image/"):
                return ImagePart(data=data_text, media_type=mime, extras=extras)
            return FilePart(data=data_text, media_type=mime, extras=extras)
        uri = blob.get("file_uri")
        uri = uri if isinstance(uri, str) else None
        if mime and mime.startswith("image/"):
            return ImagePart(url=uri, media_type=mime, extras=extras)
        return FilePart(url=uri, media_type=mime, extras=extras)
    return OpaquePart("gemini", native)


def _part(native: Any) -> Part:
    pf = _fields(native)
    if _is_text(pf):
        return TextPart(pf["text"], _part_extras(pf, ("text",)))
    if pf.get("thought") and isinstance(pf.get("text"), str):
        sig = pf.get("thought_signature")
        return ThinkingPart(
            pf["text"],
            _b64_text(sig) if sig is not None else None,
            extras=_part_extras(pf, ("text", "thought", "thought_signature")),
        )
    return _media_part(pf, native)


def _response_text(response: Any) -> tuple[str, dict[str, Any]]:
    """A function response as text, and what extras say how it was shaped."""
    if response is None:
        return "", {"gemini_response": "none"}
    if isinstance(response, Mapping) and len(response) == 1:
        ((key, value),) = response.items()
        if isinstance(value, str):
            if key == "output":
                return value, {}
            if key == "error":
                return value, {"is_error": True}
            return value, {"gemini_response_key": key}
    return _json(_plain(response)), {"gemini_response": "json"}


def _new_response(old: Any, text: str) -> dict[str, Any]:
    """The response for ``text`` in the shape of the response ``old``."""
    if isinstance(old, Mapping) and len(old) == 1:
        ((key, value),) = old.items()
        if isinstance(value, str):
            return {key: text}
    if old is not None:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    return {"output": text}


class _Calls:
    """Calls of the latest model turn not answered yet: (id, name), in order."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, str]] = []

    def answer(self, name: str | None, index: int, k: int) -> str:
        for i, (cid, cname) in enumerate(self.pending):
            if cname == name:
                del self.pending[i]
                return cid
        if self.pending:
            return self.pending.pop(0)[0]
        return f"gemini_call_{index - 1}_{k}"

    def drop(self, call_id: str) -> None:
        self.pending = [c for c in self.pending if c[0] != call_id]


# ----------------------------------------------------------------------------- the converter


class GeminiConverter(Converter[Any]):
    """Gemini contents <-> Message (see the module docstring).

    Args:
        objects: ``True``: :meth:`dump` builds ``google.genai.types.Content`` objects;
            ``False``: dicts; ``None`` (the registered converter): like the natives last loaded
            in the current context, dicts if none.
    """

    name = "gemini"

    def __init__(self, objects: bool | None = None) -> None:
        self.objects = objects

    # ---- detection

    def kind(self, item: Any) -> str | None:
        if isinstance(item, Mapping):
            if "content" in item or "type" in item:
                return None
            role = item.get("role")
            if role is not None and role not in _ROLES:
                return None
            return "sure" if isinstance(item.get("parts"), list | tuple) else None
        if type(item).__module__.startswith("google.") and _is_model(item):
            return "sure" if hasattr(item, "parts") and hasattr(item, "role") else None
        return None

    def bind(self, natives: Sequence[Any]) -> GeminiConverter:
        """A converter whose new turns match ``natives``: Content objects when any native is
        one, else dicts (unless ``objects`` was fixed)."""
        if self.objects is not None:
            return self
        return GeminiConverter(objects=any(not isinstance(n, Mapping) for n in natives))

    # ---- loading

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        calls = _Calls()
        messages: list[Message] = []
        ranges: list[tuple[int, int]] = []
        for i, native in enumerate(natives):
            start = len(messages)
            messages.extend(self._load(native, i, calls))
            ranges.append((start, len(messages)))
        return messages, ranges

    def load(self, native: Any, index: int) -> list[Message]:
        return self._load(native, index, _Calls())

    def _load(self, native: Any, index: int, calls: _Calls) -> list[Message]:
        where = f"messages[{index}]"
        if not isinstance(native, Mapping) and not _is_model(native):
            raise ConfigError(f"{where} is {type(native).__name__}, not a Gemini content")
        cf = _fields(native)
        role = cf.get("role", "user")
        if role not in _ROLES:
            raise ConfigError(f"{where}.role {role!r} must be 'user' or 'model'")
        parts = cf.get("parts", [])
        if not isinstance(parts, list | tuple):
            raise ConfigError(f"{where}.parts must be a list of parts")
        for k, part in enumerate(parts):
            if not isinstance(part, Mapping) and not _is_model(part):
                raise ConfigError(f"{where}.parts[{k}] must be a part, not {type(part).__name__}")
            text = _fields(part).get("text")
            if text is not None and not isinstance(text, str):
                raise ConfigError(
                    f"{where}.parts[{k}].text must be a str, not {type(text).__name__}"
                )
        extras = {k: _plain(v) for k, v in cf.items() if k not in ("role", "parts")}
        own, by_part = _carrier(native, where)
        if role == "model":
            message = self._model(parts, index, extras, where)
            if own is not None:
                message = carry_apply(message, own, where)
            calls.pending = [(c.id, c.name) for c in message.tool_calls]
            return [message]
        out: list[Message] = []
        run: list[Part] = []
        n_user = 0
        k_resp = 0
        for k, part in enumerate(parts):
            pf = _fields(part)
            if "function_response" not in pf:
                run.append(_part(part))
                continue
            if run:
                out.append(Message("user", _content(run), extras=extras))
                n_user += 1
                run = []
            tool = self._tool(pf, index, k_resp, calls)
            if k in by_part:
                tool = carry_apply(tool, by_part[k], f"{where}.parts[{k}]")
            k_resp += 1
            out.append(tool)
        if run or not out:
            out.append(Message("user", _content(run), extras=extras))
            n_user += 1
        if own is not None and n_user == 1:
            out = [carry_apply(m, own, where) if m.role != "tool" else m for m in out]
        return out

    def _model(
        self, parts: Sequence[Any], index: int, extras: dict[str, Any], where: str
    ) -> Message:
        content: list[Part] = []
        tool_calls: list[ToolCall] = []
        for k, part in enumerate(parts):
            pf = _fields(part)
            if "function_call" not in pf:
                content.append(_part(part))
                continue
            fc = _fields(pf["function_call"])
            name = fc.get("name")
            if not isinstance(name, str) or not name:
                raise ConfigError(f"{where}.parts[{k}].function_call.name must be a str")
            args = fc.get("args", {})
            if not isinstance(args, Mapping):
                raise ConfigError(f"{where}.parts[{k}].function_call.args must be an object")
            call_extras: dict[str, Any] = {}
            call_id = fc.get("id")
            if not isinstance(call_id, str) or not call_id:
                call_id = f"gemini_call_{index}_{len(tool_calls)}"
                call_extras["gemini_no_id"] = True
            call_extras.update(
                {f: _plain(v) for f, v in fc.items() if f not in ("id", "name", "args")}
            )
            if "thought_signature" in pf:
                call_extras["thought_signature"] = _b64_text(pf["thought_signature"])
            rest = _part_extras(pf, ("function_call", "thought_signature"))
            if rest:
                call_extras["gemini_part"] = rest
            tool_calls.append(ToolCall(call_id, name, _json(dict(args)), call_extras))
        return Message("assistant", _content(content), tool_calls=tuple(tool_calls), extras=extras)

    def _tool(self, pf: Mapping[str, Any], index: int, k: int, calls: _Calls) -> Message:
        fr = _fields(pf["function_response"])
        name = fr.get("name")
        name = name if isinstance(name, str) and name else None
        text, extras = _response_text(fr.get("response"))
        call_id = fr.get("id")
        if isinstance(call_id, str) and call_id:
            calls.drop(call_id)
        else:
            call_id = calls.answer(name, index, k)
            extras["gemini_no_id"] = True
        extras.update(
            {f: _plain(v) for f, v in fr.items() if f not in ("id", "name", "response", "parts")}
        )
        rest = _part_extras(pf, ("function_response",))
        if rest:
            extras["gemini_part"] = rest
        media = [_media_part(_fields(p), p) for p in fr.get("parts", [])]
        content: str | tuple[Part, ...] = (TextPart(text), *media) if media else text
        return Message("tool", content, tool_call_id=call_id, name=name, extras=extras)

    def _part_diff(self, part: Any, message: Message) -> dict[str, Any] | None:
        """What a function_response ``part`` gets wrong about ``message`` (see carry_diff)."""
        return carry_diff(self._tool(_fields(part), _PROBE, 0, _Calls()), message)

    # ---- back

    def rebuild(
        self, native: Any, originals: Sequence[Message], now: Sequence[Message | None]
    ) -> list[Any]:
        cf = _fields(native)
        parts = list(cf.get("parts", []))
        own, by_part = _carrier(native, "native")
        carried = isinstance(native, Mapping) and RESERVED_KEY in native
        if cf.get("role", "user") == "model":
            message = now[0]
            if message is None:
                return []
            if message.text == originals[0].text:
                return [native]
            new = _with_parts(native, _patch_parts(native, parts, message.text))
            return [self._carry(new, message) if carried else new]
        out: list[Any] = []
        new_by_part: dict[str, Any] = {}
        user: Message | None = None  # the user message of the turn, as it is now
        k = 0
        run: list[Any] = []

        def flush() -> None:
            nonlocal user
            msg = now[k]
            user = msg
            if msg is originals[k]:
                out.extend(run)
            elif msg is not None:
                out.extend(_patch_parts(native, run, msg.text))
            run.clear()

        for i, part in enumerate(parts):
            pf = _fields(part)
            if "function_response" not in pf:
                run.append(part)
                continue
            if run:
                flush()
                k += 1
            msg = now[k]
            if msg is originals[k]:
                out.append(part)
                if i in by_part:
                    new_by_part[str(len(out) - 1)] = by_part[i]
            elif msg is not None:
                out.append(self._patch_response(part, pf, msg))
                diff = self._part_diff(out[-1], msg) if i in by_part else None
                if diff:
                    new_by_part[str(len(out) - 1)] = diff
            k += 1
        if run or k == 0:
            flush()
        if not out:
            return []
        new = _with_parts(native, out)
        if not carried:
            return [new]
        carrier: dict[str, Any] = {}
        if own is not None and user is not None:
            if any(user is o for o in originals):
                carrier.update(own)
            else:
                bare = {key: v for key, v in new.items() if key != RESERVED_KEY}
                plain = [m for m in self.load(bare, _PROBE) if m.role != "tool"]
                carrier.update((carry_diff(plain[0], user) if len(plain) == 1 else None) or {})
        if new_by_part:
            carrier["parts"] = new_by_part
        return [_with_carrier(new, carrier)]

    def _patch_response(self, part: Any, pf: Mapping[str, Any], message: Message) -> Any:
        fr_native = pf["function_response"]
        response = _new_response(_fields(fr_native).get("response"), message.text)
        if isinstance(part, Mapping):
            fr_key = _key(part, "function_response")
            fr_dict = dict(part[fr_key])
            fr_dict[_key(fr_dict, "response")] = response
            return {**part, fr_key: fr_dict}
        return part.model_copy(
            update={"function_response": fr_native.model_copy(update={"response": response})}
        )

    def _carry(self, native: dict[str, Any], message: Message) -> dict[str, Any]:
        """``native`` (one non-tool message's content) carrying what it gets wrong."""
        bare = {k: v for k, v in native.items() if k != RESERVED_KEY}
        plain = self.load(bare, _PROBE)
        diff = carry_diff(plain[0], message) if len(plain) == 1 else _whole(message)
        return _with_carrier(bare, diff or {})

    # ---- new natives

    def dump(self, message: Message) -> Any:
        """A new content for ``message``: a dict, or a Content object (see the class).

        One message is one content; a ``tool`` message is a ``user`` turn with one
        ``function_response`` (use :meth:`dump_all` to put parallel results in one turn).

        A dict is lossless (``load(dump(m)) == [m]``), through the reserved key when needed.
        A Content object cannot hold that key, so it loses what has no Gemini slot: the
        ``system`` role (sent as ``user``); a user or assistant message's ``name`` and extras;
        tool-result extras other than ``is_error`` and Gemini's own; text-part extras that are
        not Part fields (``cache_control`` ...); ``ImagePart.detail``; ``FilePart.filename``;
        a part with only a ``file_id``; an image part without an ``image/*`` media type
        (it comes back as a file part) or given as a ``data:`` URL (it comes back as data);
        the ``redacted`` flag of thinking; opaque parts of other providers; tool-call extras
        other than Gemini's; the exact text of a call's arguments (they are sent as a JSON
        object: whitespace and escapes change, non-object JSON becomes ``{}``); a tool
        result's parts other than its first text, images and files; ``"x"`` versus one plain
        text part ``(TextPart("x"),)`` and ``""`` versus ``()``; data and signatures that are
        not canonical base64 (the part, or the signature, is left out); and generated call
        ids (a call or result that had none is sent without one, so it may get another
        generated id when loaded again).

        Raises:
            MissingDependency: Content objects are needed and google-genai is missing.
        """
        objects = bool(self.objects)
        if message.role == "tool":
            native = self._tool_turn([message], carry=not objects)
        else:
            native = self._dump_dict(message, carry=not objects)
        return _to_object(native) if objects else native

    def dump_all(
        self, messages: Sequence[Message], *, objects: bool | None = None, carry: bool = True
    ) -> list[Any]:
        """Contents for a whole message list (e.g. from another format), in order.

        Unlike :meth:`dump` one message at a time, consecutive ``tool`` messages share one
        ``user`` turn (Gemini wants every response to a model turn's calls in the next turn),
        and a result with no ``name`` takes its call's name.

        Args:
            messages: the messages.
            objects: Content objects instead of dicts; ``None``: as :meth:`dump`.
            carry: add the reserved key where needed (dicts only); ``False`` gives dicts
                the API accepts, losing what Content objects lose.

        Raises:
            MissingDependency: Content objects are needed and google-genai is missing.
        """
        if objects is None:
            objects = bool(self.objects)
        carry = carry and not objects
        names = {c.id: c.name for m in messages for c in m.tool_calls}
        out: list[dict[str, Any]] = []
        results: list[Message] = []
        for m in [*messages, None]:
            if m is not None and m.role == "tool":
                results.append(m)
                continue
            if results:
                out.append(self._tool_turn(results, carry=carry, names=names))
                results = []
            if m is not None:
                out.append(self._dump_dict(m, carry=carry))
        return [_to_object(c) for c in out] if objects else out

    def _dump_dict(self, message: Message, *, carry: bool) -> dict[str, Any]:
        parts = [p for p in (_dump_part(p) for p in message.parts) if p is not None]
        for call in message.tool_calls:
            parts.append(_dump_call(call))
        if not parts and message.content == "" and not message.tool_calls:
            parts = [{"text": ""}]
        native: dict[str, Any] = {
            "role": "model" if message.role == "assistant" else "user",
            "parts": parts,
        }
        return self._carry(native, message) if carry else native

    def _tool_turn(
        self, results: Sequence[Message], *, carry: bool, names: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """One ``user`` turn answering with ``results`` (tool messages), in order."""
        parts: list[dict[str, Any]] = []
        by_part: dict[str, Any] = {}
        for k, m in enumerate(results):
            filled = m
            call_id = m.tool_call_id or ""
            if names and m.name is None and call_id in names:
                filled = replace(m, name=names[call_id])
            part = self._tool_part(filled)
            parts.append(part)
            diff = self._part_diff(part, m) if carry else None
            if diff:
                by_part[str(k)] = diff
        return _with_carrier(
            {"role": "user", "parts": parts}, {"parts": by_part} if by_part else {}
        )

    def _tool_part(self, message: Message) -> dict[str, Any]:
        extras = message.extras
        text = message.text
        fr: dict[str, Any] = {}
        if not extras.get("gemini_no_id"):
            fr["id"] = message.tool_call_id
        fr["name"] = message.name or ""
        shape = extras.get("gemini_response")
        if shape == "json":
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            fr["response"] = parsed if isinstance(parsed, dict) else {"output": text}
        elif shape != "none" or text:
            key = "error" if extras.get("is_error") is True else "output"
            fr["response"] = {str(extras.get("gemini_response_key", key)): text}
        for k in ("will_continue", "scheduling"):
            if k in extras:
                fr[k] = extras[k]
        media = [
            d
            for d in (_dump_part(p) for p in message.parts if isinstance(p, ImagePart | FilePart))
            if d is not None
        ]
        if media:
            fr["parts"] = media
        part: dict[str, Any] = {"function_response": fr}
        more = extras.get("gemini_part")
        if isinstance(more, Mapping):
            part.update({k: v for k, v in more.items() if k in _PART_KEYS})
        return part


def _carrier(native: Any, where: str) -> tuple[dict[str, Any] | None, dict[int, Any]]:
    """A content's carrier: the fields of its (single) non-tool message, and those of each
    function_response part by part index."""
    data = native.get(RESERVED_KEY) if isinstance(native, Mapping) else None
    if data is None:
        return None, {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}.{RESERVED_KEY} must be a dict")
    by_part = data.get("parts") or {}
    try:
        parts = {int(k): v for k, v in by_part.items()}
    except (AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}.{RESERVED_KEY}.parts must map part indexes") from exc
    own = {k: v for k, v in data.items() if k != "parts"}
    return own or None, parts


def _with_carrier(native: dict[str, Any], carrier: Mapping[str, Any]) -> dict[str, Any]:
    bare = {k: v for k, v in native.items() if k != RESERVED_KEY}
    return {**bare, RESERVED_KEY: dict(carrier)} if carrier else bare


def _whole(message: Message) -> dict[str, Any]:
    return {name: _encode_field(name, getattr(message, name)) for name in _CARRIED}


def _known(extras: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in extras.items() if k in _PART_KEYS}


def _dump_part(part: Part) -> dict[str, Any] | None:
    """A part dict for ``part``; ``None`` when it has no Gemini form."""
    if isinstance(part, TextPart):
        return {"text": part.text, **_known(part.extras)}
    if isinstance(part, ThinkingPart):
        out: dict[str, Any] = {"text": part.text, "thought": True}
        if part.signature is not None:
            out["thought_signature"] = part.signature
        out.update({k: v for k, v in _known(part.extras).items() if k not in out})
        return out
    if isinstance(part, OpaquePart):
        if part.provider != "gemini":
            return None
        data = part.data
        if isinstance(data, Mapping):
            return dict(data)
        if _is_model(data):
            dumped: dict[str, Any] = data.model_dump(exclude_none=True, mode="json")
            return dumped
        return None
    url, data, mime = part.url, part.data, part.media_type
    if url and url.startswith("data:") and ";base64," in url and data is None:
        head, _, data = url.partition(";base64,")
        mime, url = mime or head[5:] or None, None
    blob: dict[str, Any] = {}
    if data is not None:
        blob = {"mime_type": mime or "application/octet-stream", "data": data}
        key = "inline_data"
    elif url is not None:
        blob = {"file_uri": url}
        if mime:
            blob["mime_type"] = mime
        key = "file_data"
    else:
        return None
    more = part.extras.get("gemini_blob")
    if isinstance(more, Mapping):
        blob.update({k: v for k, v in more.items() if k not in blob})
    return {key: blob, **_known(part.extras)}


def _dump_call(call: ToolCall) -> dict[str, Any]:
    extras = call.extras
    try:
        args = json.loads(call.arguments) if call.arguments else {}
    except ValueError:
        args = None
    fc: dict[str, Any] = {}
    if not extras.get("gemini_no_id"):
        fc["id"] = call.id
    fc["name"] = call.name
    fc["args"] = args if isinstance(args, dict) else {}
    for k in ("will_continue", "partial_args"):
        if k in extras:
            fc[k] = extras[k]
    part: dict[str, Any] = {"function_call": fc}
    sig = extras.get("thought_signature")
    if isinstance(sig, str | bytes):
        part["thought_signature"] = _b64_text(sig)
    more = extras.get("gemini_part")
    if isinstance(more, Mapping):
        part.update({k: v for k, v in more.items() if k in _PART_KEYS and k not in part})
    return part


def _types() -> Any:
    try:
        from google.genai import types
    except ImportError as exc:  # pragma: no cover - exercised with the import blocked
        raise MissingDependency(
            "google-genai", "gemini", "building google.genai Content objects"
        ) from exc
    return types


def _to_object(native: Mapping[str, Any]) -> Any:
    """A ``types.Content`` for a dumped dict (signatures and data decoded from base64)."""
    types = _types()
    parts: list[Any] = []
    for part in native.get("parts", []):
        fixed = _decode_blobs(part)
        if fixed is None:
            continue
        try:
            parts.append(types.Part.model_validate(fixed))
        except ValueError:
            continue
    return types.Content(role=native.get("role", "user"), parts=parts)


def _decode_blobs(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """``part`` with base64 text turned into bytes; ``None`` if some is not base64."""
    out = {k: v for k, v in part.items() if k != RESERVED_KEY}
    sig = out.get("thought_signature")
    if isinstance(sig, str):
        raw = _sig_bytes(sig)
        if raw is None:
            del out["thought_signature"]
        else:
            out["thought_signature"] = raw
    blob = out.get("inline_data")
    if isinstance(blob, Mapping) and isinstance(blob.get("data"), str):
        raw = _sig_bytes(blob["data"])
        if raw is None:
            return None
        out["inline_data"] = {**blob, "data": raw}
    fr = out.get("function_response")
    if isinstance(fr, Mapping) and fr.get("parts"):
        fixed = [_decode_blobs(p) for p in fr["parts"]]
        out["function_response"] = {**fr, "parts": [p for p in fixed if p is not None]}
    return out


def _patch_parts(native: Any, parts: list[Any], text: str) -> list[Any]:
    """``parts`` with the first plain text part's text set to ``text`` and the other plain
    text parts removed (one carrying a ``thought_signature`` stays, with empty text); other
    parts stay the same objects. With no text part, one is appended for a non-empty text."""
    out: list[Any] = []
    placed = False
    for part in parts:
        pf = _fields(part)
        if not _is_text(pf):
            out.append(part)
            continue
        if not placed:
            out.append(_set_text(part, text))
            placed = True
        elif "thought_signature" in pf:
            out.append(_set_text(part, ""))
    if not placed and text:
        if isinstance(native, Mapping):
            out.append({"text": text})
        else:
            out.append(_types().Part(text=text))
    return out


def _set_text(part: Any, text: str) -> Any:
    if isinstance(part, Mapping):
        return {**part, _key(part, "text"): text}
    return part.model_copy(update={"text": text})


def _with_parts(native: Any, parts: list[Any]) -> Any:
    if isinstance(native, Mapping):
        return {**native, _key(native, "parts"): parts}
    return native.model_copy(update={"parts": parts})
