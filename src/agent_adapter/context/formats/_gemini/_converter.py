"""Gemini ``contents`` (``gemini`` format): dicts or ``google.genai.types.Content`` objects.

Shapes follow the Gemini API reference (``Content``: ``role`` ``"user"`` | ``"model"``,
``parts``) and the google-genai SDK. Dicts may use the SDK's snake_case keys (as
``Content.model_dump()`` gives them, ``None`` values included) or the REST API's camelCase keys
(``functionCall``, ``inlineData``, ``thoughtSignature``); both are read, a changed dict keeps
its own key spelling, and errors name fields as the input spells them
(``messages[1].parts[0].functionCall.name``). Content objects are read by attribute and never
mutated: a changed one is a ``model_copy``. Detection never imports google.genai.

Mapping:

* A ``model`` turn is one assistant message. ``text`` parts become :class:`TextPart` (other part
  fields such as ``thought_signature`` in its extras), ``thought: true`` parts
  :class:`ThinkingPart` (``thought_signature`` as its signature), ``inline_data`` /
  ``file_data`` parts :class:`ImagePart` (``image/*``) or :class:`FilePart`, and
  ``function_call`` parts :class:`ToolCall` s (``args`` as JSON text; the part's
  ``thought_signature`` in ``ToolCall.extras["thought_signature"]``; a call with no ``id`` gets
  ``gemini_call_<turn>_<k>`` and ``extras["gemini_no_id"]``). Other parts are opaque.
* A ``user`` (or legacy ``function``) turn: each ``function_response`` part is a ``tool``
  message (``name``), and each run of other parts one user message. A response answers the
  call of the previous model turn whose ``id`` is its ``id``; one without an id, or whose id
  names no call of that turn, answers the first unanswered call without id of its ``name``
  (its own id then rides in ``extras["gemini_response_id"]``); one that answers no call keeps
  its id, or gets ``gemini_response_<turn>_<k>``, so the pairing reports it. Source: the API
  reference, ``FunctionCall.id`` ("If populated, the client to execute the functionCall and
  return the response with the matching id"), ``FunctionResponse.id`` ("Populated by the
  client to match the corresponding function call id") and ``FunctionResponse.name``
  ("Matches [FunctionDeclaration.name] and [FunctionCall.name]"); the checker
  (``response_count``) follows the same rule. A response
  ``{"output": str}`` is the text; ``{"error": str}`` is the text with ``extras["is_error"]``;
  another single string key is kept in ``extras["gemini_response_key"]``; any other response
  is its JSON text (``extras["gemini_response"] = "json"``).
* Signatures are base64 text in the message model (bytes from objects or ``model_dump()``
  dicts are encoded); kept natives keep their own bytes or text, so they go back
  byte-identical.

Made-up call ids never reach the caller: they are not sent back (a call or result that had
no id is dumped without one), and :meth:`GeminiConverter.native_call_id` names such a call by
its function (``function_call 'get_weather'``) in errors.

Back: kept natives are the very same objects; a changed turn keeps every part and field but
the changed text (text parts through
:func:`~agent_adapter.context.formats._patch.patch_text_blocks`: a part with a
``thought_signature`` keeps its place, with empty text when its text went); a changed tool
result only changes ``function_response.response`` (``{key: text}`` in its old shape, the
parsed JSON if a JSON response still parses, else ``{"output": text}``). An empty text part
that only carries a ``thought_signature`` (Gemini 3 ends some turns so) is an opaque part:
never edited, always kept.

New natives (:meth:`GeminiConverter.dump`): each conversion gets a converter bound to the kind
of its natives (:meth:`GeminiConverter.bind`), so new turns are dicts or Content objects like
the rest; ``GeminiConverter(objects=True | False)`` fixes the choice. Dicts are snake_case and
lossless: whatever a message holds with no Gemini slot (a system role, a participant name,
foreign extras, non-canonical argument JSON, a content given as parts rather than a string
...) rides in the reserved carrier (:mod:`agent_adapter.context.formats._carrier`) under the
content's ``"_agent_adapter"`` key (a tool result's under its ``"results"`` map, by part
index), so ``load(dump(m)) == [m]`` for every message. A changed content that held the key
gets it updated; no other native ever gets it. The Gemini API and the SDK reject that key: it
appears only on natives built from such messages (never for a summary with no extras);
:meth:`GeminiConverter.dump_all` leaves it out with ``carry=False``, and ``strip_reserved``
removes it. Content objects have no room for it; what they lose is listed in
:meth:`GeminiConverter.dump`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from agent_adapter._errors import ConfigError
from agent_adapter._messages import FilePart, ImagePart, Message, Part, TextPart, ToolCall
from agent_adapter.context.formats._base import Converter
from agent_adapter.context.formats._carrier import (
    RESERVED_KEY,
    apply_carrier,
    carrier_for,
    with_carrier,
)
from agent_adapter.context.formats._codec import parse_json
from agent_adapter.context.formats._gemini._fields import b64_text, is_model, key_of, plain
from agent_adapter.context.formats._gemini._fields import fields_of as _fields
from agent_adapter.context.formats._gemini._parts import (
    Calls,
    content_of,
    dump_call,
    dump_part,
    json_text,
    known_fields,
    load_part,
    media_part,
    new_response,
    part_extras,
    response_text,
    text_blocks,
    to_object,
    with_parts,
)
from agent_adapter.context.formats._patch import never_blank, patch_text_blocks

__all__ = ["GeminiConverter"]

_ROLES = ("user", "model", "function")
# The native index dumps are checked at: generated call ids never match a loaded one.
_PROBE = -1


def _carrier(native: Any, where: str) -> tuple[dict[str, Any] | None, dict[int, Any]]:
    """A content's carrier: the one of its (single) non-tool message, and those of its
    function_response parts by part index."""
    data = native.get(RESERVED_KEY) if isinstance(native, Mapping) else None
    if data is None:
        return None, {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}.{RESERVED_KEY} must be a dict")
    by_part = data.get("results") or {}
    try:
        results = {int(k): v for k, v in by_part.items()}
    except (AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}.{RESERVED_KEY}.results must map part indexes") from exc
    own = {k: v for k, v in data.items() if k != "results"}
    return own or None, results


def _no_parts(native: Any) -> bool:
    """True for a content without parts (the API: "contents.parts must not be empty")."""
    return not _fields(native).get("parts")


class GeminiConverter(Converter[Any]):
    """Gemini contents <-> Message (see the module docstring).

    Args:
        objects: ``True``: :meth:`dump` builds ``google.genai.types.Content`` objects;
            ``False``: dicts; ``None`` (the registered converter): like the natives of the
            conversion (:meth:`bind`), dicts if none.
    """

    name = "gemini"
    call_terms: ClassVar[tuple[str, str]] = ("function_call", "function_response")
    turn_thinking: ClassVar[bool] = False  # thought parts go with their round

    def __init__(self, objects: bool | None = None) -> None:
        self.objects = objects
        #: made-up call ids of the natives loaded last -> how the caller knows the call
        self._made_up: dict[str, str] = {}

    def native_call_id(self, call_id: str) -> str:
        """How the caller knows ``call_id``: a made-up id (a call or result with no ``id``)
        as its function, e.g. ``function_call 'get_weather'``; a real id as itself."""
        known = self._made_up.get(call_id)
        if known is not None:
            return known
        if call_id.startswith("gemini_call_"):
            return "a function_call without id"
        if call_id.startswith("gemini_response_"):
            return "a function_response without id"
        return repr(call_id)

    # ---- detection

    def kind(self, item: Any) -> str | None:
        if isinstance(item, Mapping):
            if "content" in item or "type" in item:
                return None
            role = item.get("role")
            if role is not None and role not in _ROLES:
                return None
            return "sure" if isinstance(item.get("parts"), list | tuple) else None
        if type(item).__module__.startswith("google.") and is_model(item):
            return "sure" if hasattr(item, "parts") and hasattr(item, "role") else None
        return None

    def bind(self, natives: Sequence[Any]) -> GeminiConverter:
        """A converter of its own for one conversion, whose new turns match ``natives``:
        Content objects when any native is one, else dicts (unless ``objects`` was fixed)."""
        objects = self.objects
        if objects is None:
            objects = any(not isinstance(n, Mapping) for n in natives)
        return GeminiConverter(objects=objects)

    # ---- loading

    def load_all(self, natives: Sequence[Any]) -> tuple[list[Message], list[tuple[int, int]]]:
        self._made_up = {}
        calls = Calls()
        messages: list[Message] = []
        ranges: list[tuple[int, int]] = []
        for i, native in enumerate(natives):
            start = len(messages)
            messages.extend(self._load(native, i, calls))
            ranges.append((start, len(messages)))
        return messages, ranges

    def load(self, native: Any, index: int) -> list[Message]:
        return self._load(native, index, Calls())

    def _load(self, native: Any, index: int, calls: Calls) -> list[Message]:
        where = f"messages[{index}]"
        if not isinstance(native, Mapping) and not is_model(native):
            raise ConfigError(f"{where} is {type(native).__name__}, not a Gemini content")
        cf = _fields(native)
        role = cf.get("role", "user")
        if role not in _ROLES:
            raise ConfigError(f"{where}.role {role!r} must be 'user' or 'model'")
        parts = cf.get("parts", [])
        if not isinstance(parts, list | tuple):
            raise ConfigError(f"{where}.parts must be a list of parts")
        _check_parts(parts, where)
        extras = {k: plain(v) for k, v in cf.items() if k not in ("role", "parts")}
        own, results = _carrier(native, where)
        if role == "model":
            message = self._model(parts, index, extras, where)
            if own is not None:
                message = apply_carrier(message, own, where)
            calls.turn(message.tool_calls)
            return [message]
        out = self._load_user(parts, index, calls, extras, results, where)
        if own is not None and sum(m.role != "tool" for m in out) == 1:
            out = [apply_carrier(m, own, where) if m.role != "tool" else m for m in out]
        return out

    def _load_user(
        self,
        parts: Sequence[Any],
        index: int,
        calls: Calls,
        extras: dict[str, Any],
        results: Mapping[int, Any],
        where: str,
    ) -> list[Message]:
        """A user turn: a tool message a ``function_response`` part, one user message a run
        of other parts (at least one message)."""
        out: list[Message] = []
        run: list[Part] = []
        k_resp = 0
        for k, part in enumerate(parts):
            if "function_response" not in _fields(part):
                run.append(load_part(part))
                continue
            if run:
                out.append(Message("user", content_of(run), extras=extras))
                run = []
            tool = self._tool(part, index, k_resp, calls, f"{where}.parts[{k}]")
            if k in results:
                tool = apply_carrier(tool, results[k], where)
            k_resp += 1
            out.append(tool)
        if run or not out:
            out.append(Message("user", content_of(run), extras=extras))
        return out

    def _model(
        self, parts: Sequence[Any], index: int, extras: dict[str, Any], where: str
    ) -> Message:
        content: list[Part] = []
        tool_calls: list[ToolCall] = []
        for k, part in enumerate(parts):
            pf = _fields(part)
            if "function_call" not in pf:
                content.append(load_part(part))
                continue
            at = f"{where}.parts[{k}].{key_of(part, 'function_call')}"
            tool_calls.append(self._call(pf, index, len(tool_calls), at))
        return Message(
            "assistant", content_of(content), tool_calls=tuple(tool_calls), extras=extras
        )

    def _call(self, pf: Mapping[str, Any], index: int, n: int, at: str) -> ToolCall:
        """The tool call of one ``function_call`` part (``pf``: its fields; ``n``: the
        turn's calls before it; ``at`` names its ``function_call``)."""
        raw = pf["function_call"]
        if not isinstance(raw, Mapping) and not is_model(raw):
            raise ConfigError(f"{at} must be an object, not {type(raw).__name__}")
        fc = _fields(raw)
        name = fc.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{at}.name must be a str")
        args = fc.get("args", {})
        if not isinstance(args, Mapping):
            raise ConfigError(f"{at}.args must be an object")
        arguments = json_text(dict(args), f"{at}.args")
        call_extras: dict[str, Any] = {}
        call_id = fc.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = f"gemini_call_{index}_{n}"
            call_extras["gemini_no_id"] = True
            if index >= 0:
                self._made_up[call_id] = f"function_call {name!r}"
        call_extras.update({f: plain(v) for f, v in fc.items() if f not in ("id", "name", "args")})
        if "thought_signature" in pf:
            call_extras["thought_signature"] = b64_text(pf["thought_signature"])
        rest = part_extras(pf, ("function_call", "thought_signature"))
        if rest:
            call_extras["gemini_part"] = rest
        return ToolCall(call_id, name, arguments, call_extras)

    def _tool(self, part: Any, index: int, k: int, calls: Calls, where: str) -> Message:
        """The tool message of one ``function_response`` part (``where`` names the part)."""
        pf = _fields(part)
        at = f"{where}.{key_of(part, 'function_response')}"
        raw = pf["function_response"]
        if not isinstance(raw, Mapping) and not is_model(raw):
            raise ConfigError(f"{at} must be an object, not {type(raw).__name__}")
        fr = _fields(raw)
        name = fr.get("name")
        name = name if isinstance(name, str) and name else None
        response = fr.get("response")
        if response is not None and not isinstance(response, Mapping):
            # Gemini API: FunctionResponse.response is an object (Struct), required
            raise ConfigError(f"{at}.response must be an object, not {type(response).__name__}")
        text, extras = response_text(response, f"{at}.response")
        own = fr.get("id")
        own = own if isinstance(own, str) and own else None
        call_id = calls.answer(own, name)
        if call_id is None:  # answers no call: its own id, else one made up for it alone
            call_id = own or f"gemini_response_{index}_{k}"
        if own is None:
            extras["gemini_no_id"] = True
            if index >= 0:
                self._made_up.setdefault(call_id, f"function_response {name!r}")
        elif own != call_id:  # a response id answering a call without one, by name
            extras["gemini_response_id"] = own
        extras.update(
            {f: plain(v) for f, v in fr.items() if f not in ("id", "name", "response", "parts")}
        )
        rest = part_extras(pf, ("function_response",))
        if rest:
            extras["gemini_part"] = rest
        media = [media_part(_fields(p), p) for p in fr.get("parts", [])]
        content: str | tuple[Part, ...] = (TextPart(text), *media) if media else text
        return Message("tool", content, tool_call_id=call_id, name=name, extras=extras)

    def _part_carrier(self, part: Any, message: Message) -> dict[str, Any]:
        """The carrier a function_response ``part`` needs to load as ``message``."""
        loaded = self._tool(part, _PROBE, 0, Calls(), "messages[?].parts[?]")
        return carrier_for(message, loaded)

    # ---- back

    def rebuild(
        self, native: Any, originals: Sequence[Message], now: Sequence[Message | None]
    ) -> list[Any]:
        """The turn with its messages' new text, every other part kept (see the module
        docstring). A message cut to blank text never leaves a turn without parts (see
        :func:`~agent_adapter.context.formats._patch.never_blank`)."""
        return never_blank(self._rebuild, _no_parts, native, originals, now)

    def _rebuild(
        self, native: Any, originals: Sequence[Message], now: Sequence[Message | None]
    ) -> list[Any]:
        cf = _fields(native)
        parts = list(cf.get("parts", []))
        own, results = _carrier(native, "native")
        carried = isinstance(native, Mapping) and RESERVED_KEY in native
        blocks = text_blocks(native)
        if cf.get("role", "user") == "model":
            message = now[0]
            if message is None:
                return []
            if message.text == originals[0].text:
                return [native]
            new = with_parts(native, patch_text_blocks(parts, message.text, blocks))
            return [self._carry(new, message) if carried else new]
        out, new_results, user = self._rebuild_parts(parts, results, blocks, originals, now)
        if not out:
            return []
        new = with_parts(native, out)
        if not carried:
            return [new]
        carrier = self._user_carrier(new, own, user, originals)
        if new_results:
            carrier["results"] = new_results
        return [with_carrier(new, carrier)]

    def _rebuild_parts(
        self,
        parts: Sequence[Any],
        results: Mapping[int, Any],
        blocks: Any,
        originals: Sequence[Message],
        now: Sequence[Message | None],
    ) -> tuple[list[Any], dict[str, Any], Message | None]:
        """A user turn's parts back: each ``function_response`` part (a tool message) and
        each run of other parts (a user message) as it was or with its new text; with the
        carriers of the response parts (by their new index) and the turn's user message as
        it is now."""
        out: list[Any] = []
        new_results: dict[str, Any] = {}
        user: Message | None = None
        k = 0  # index of the message the current part belongs to
        run: list[Any] = []
        for i, part in enumerate(parts):
            pf = _fields(part)
            if "function_response" not in pf:
                run.append(part)
                continue
            if run:
                user = now[k]
                out.extend(_run_back(run, originals[k], user, blocks))
                run = []
                k += 1
            if now[k] is originals[k]:
                out.append(part)
                if i in results:
                    new_results[str(len(out) - 1)] = results[i]
            elif (msg := now[k]) is not None:
                out.append(self._patch_response(part, pf, msg))
                patch = self._part_carrier(out[-1], msg) if i in results else None
                if patch:
                    new_results[str(len(out) - 1)] = patch
            k += 1
        if run or k == 0:
            user = now[k]
            out.extend(_run_back(run, originals[k], user, blocks))
        return out, new_results, user

    def _user_carrier(
        self,
        new: dict[str, Any],
        own: dict[str, Any] | None,
        user: Message | None,
        originals: Sequence[Message],
    ) -> dict[str, Any]:
        """The carrier of a rebuilt user turn ``new`` for its user message (``own``: the one
        it had)."""
        carrier: dict[str, Any] = {}
        if own is None or user is None:
            return carrier
        if any(user is o for o in originals):
            carrier.update(own)
            return carrier
        bare = {key: v for key, v in new.items() if key != RESERVED_KEY}
        plain_msgs = [m for m in self.load(bare, _PROBE) if m.role != "tool"]
        if len(plain_msgs) == 1:
            carrier.update(carrier_for(user, plain_msgs[0]))
        return carrier

    def _patch_response(self, part: Any, pf: Mapping[str, Any], message: Message) -> Any:
        fr_native = pf["function_response"]
        response = new_response(_fields(fr_native).get("response"), message.text)
        if isinstance(part, Mapping):
            fr_key = key_of(part, "function_response")
            fr_dict = dict(part[fr_key])
            fr_dict[key_of(fr_dict, "response")] = response
            return {**part, fr_key: fr_dict}
        return part.model_copy(
            update={"function_response": fr_native.model_copy(update={"response": response})}
        )

    def _carry(
        self, native: dict[str, Any], message: Message, rendered: Sequence[int] | None = None
    ) -> dict[str, Any]:
        """``native`` (one non-tool message's content) carrying what it gets wrong."""
        bare = {k: v for k, v in native.items() if k != RESERVED_KEY}
        plain_msgs = self.load(bare, _PROBE)
        if len(plain_msgs) != 1:  # pragma: no cover - dumps never write a result part here
            raise ConfigError(f"cannot dump this {message.role} message losslessly")
        return with_carrier(bare, carrier_for(message, plain_msgs[0], rendered))

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
        return to_object(native) if objects else native

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
        return [to_object(c) for c in out] if objects else out

    def _dump_dict(self, message: Message, *, carry: bool) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        rendered: list[int] = []
        for i, part in enumerate(message.parts):
            dumped = dump_part(part)
            if dumped is not None:
                parts.append(dumped)
                rendered.append(i)
        parts.extend(dump_call(call) for call in message.tool_calls)
        if not parts and message.content == "" and not message.tool_calls:
            parts = [{"text": ""}]
        native: dict[str, Any] = {
            "role": "model" if message.role == "assistant" else "user",
            "parts": parts,
        }
        if not carry:
            return native
        return self._carry(native, message, None if isinstance(message.content, str) else rendered)

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
            carrier = self._part_carrier(part, m) if carry else None
            if carrier:
                by_part[str(k)] = carrier
        return with_carrier(
            {"role": "user", "parts": parts}, {"results": by_part} if by_part else {}
        )

    def _tool_part(self, message: Message) -> dict[str, Any]:
        extras = message.extras
        text = message.text
        fr: dict[str, Any] = {}
        own = extras.get("gemini_response_id")
        if isinstance(own, str):
            fr["id"] = own
        elif not extras.get("gemini_no_id"):
            fr["id"] = message.tool_call_id
        fr["name"] = message.name or ""
        shape = extras.get("gemini_response")
        if shape == "json":
            parsed = parse_json(text)
            fr["response"] = parsed if isinstance(parsed, dict) else {"output": text}
        elif shape != "none" or text:
            key = "error" if extras.get("is_error") is True else "output"
            fr["response"] = {str(extras.get("gemini_response_key", key)): text}
        for k in ("will_continue", "scheduling"):
            if k in extras:
                fr[k] = extras[k]
        media = [
            d
            for d in (dump_part(p) for p in message.parts if isinstance(p, ImagePart | FilePart))
            if d is not None
        ]
        if media:
            fr["parts"] = media
        part: dict[str, Any] = {"function_response": fr}
        more = extras.get("gemini_part")
        if isinstance(more, Mapping):
            part.update({k: v for k, v in known_fields(more).items() if k not in part})
        return part


def _check_parts(parts: Sequence[Any], where: str) -> None:
    """Raises a ConfigError for a part that is no part, or whose text is not a str."""
    for k, part in enumerate(parts):
        if not isinstance(part, Mapping) and not is_model(part):
            raise ConfigError(f"{where}.parts[{k}] must be a part, not {type(part).__name__}")
        text = _fields(part).get("text")
        if text is not None and not isinstance(text, str):
            raise ConfigError(
                f"{where}.parts[{k}].{key_of(part, 'text')} must be a str, "
                f"not {type(text).__name__}"
            )


def _run_back(run: list[Any], original: Message, message: Message | None, blocks: Any) -> list[Any]:
    """A run of a user turn's other parts (one user message) as it was or with its new text."""
    if message is original:
        return run
    if message is not None:
        return patch_text_blocks(run, message.text, blocks)
    return []
