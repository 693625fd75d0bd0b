"""The ``pydantic_ai`` message format: pydantic-ai's own ``ModelMessage`` list.

Shapes follow pydantic-ai 2.x (``pydantic_ai.messages``). A ``ModelRequest`` holds request
parts, one :class:`~agent_adapter.Message` each, in order:

* ``SystemPromptPart`` -> a ``system`` message;
* ``UserPromptPart`` -> a ``user`` message (a ``str`` content as it is; a sequence: its strings
  :class:`~agent_adapter.TextPart` s, every other item, an ``ImageUrl`` or ``BinaryContent``, an
  :class:`~agent_adapter.OpaquePart` holding the very object);
* ``ToolReturnPart`` -> a ``tool`` message answering ``tool_call_id``, named ``tool_name``, whose
  text is the content as the model sees it (a ``str`` as it is, anything else
  ``model_response_str()``); an ``outcome`` other than ``"success"`` (``"retried"``,
  ``"failed"``, ``"denied"``, ...) flags it ``extras["is_error"]``;
* ``RetryFeedbackPart`` (a retry answering no call, e.g. output validation) -> a ``user``
  message with its ``model_response()``;
* ``RetryPromptPart`` (deprecated in pydantic-ai 2, still read): with a ``tool_name`` a
  ``tool`` message answering its call, flagged ``extras["is_error"]``, text
  ``model_response()``; without one a ``user`` message with that text;
* any other request part (instruction parts, capability deltas) -> a ``system`` message
  holding the part opaque: protected, never changed or dropped.

A ``ModelResponse`` is one ``assistant`` message: ``TextPart`` s are text parts,
``ThinkingPart`` s thinking parts with their ``signature`` (so thinking rules apply),
``ToolCallPart`` s tool calls (``tool_call_id``, ``tool_name``, ``args_as_json_str()``), and every
other part (files, native tool calls and returns) an opaque part.

Lossless: natives no step changed come back as the very same objects, and a changed one is a
``dataclasses.replace`` copy with only the changed text (and the removed parts) different: a
request keeps its ``instructions``, ``timestamp``, ``run_id`` and every other field, a part its
``timestamp``, ``tool_call_id``, ``metadata``; a changed ``ToolReturnPart`` gets the shortened
text as its ``content``. A request whose parts all went is dropped (steps drop whole tool
rounds, so its calls went with it). New messages (summaries) are a ``ModelRequest`` with one
``UserPromptPart`` (``SystemPromptPart`` for system, ``ToolReturnPart`` for tool) or a
``ModelResponse`` with a ``TextPart`` and its calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic_ai import messages as pm

from agent_adapter._errors import ConfigError
from agent_adapter._messages import Message, OpaquePart, Part, TextPart, ThinkingPart, ToolCall
from agent_adapter.context.formats import Converter
from agent_adapter.context.formats._patch import TextBlocks, patch_text_blocks

__all__ = ["PydanticAIConverter", "is_pydantic_ai"]

_PROVIDER = "pydantic_ai"

#: ``UserPromptPart`` sequence content: strings are the text blocks.
_USER_TEXT = TextBlocks(
    is_text=lambda b: isinstance(b, str),
    text_of=str,
    with_text=lambda b, text: text,
    new=lambda text: text,
    keyed=lambda b: False,
)
#: ``ModelResponse.parts``: ``TextPart`` s are the text blocks (one with an id or provider
#: details keeps them in place).
_RESPONSE_TEXT = TextBlocks(
    is_text=lambda p: isinstance(p, pm.TextPart),
    text_of=lambda p: str(p.content),
    with_text=lambda p, text: dataclasses.replace(p, content=text),
    new=lambda text: pm.TextPart(content=text),
    keyed=lambda p: p.id is not None or bool(p.provider_details),
)


def is_pydantic_ai(messages: Sequence[Any]) -> bool:
    """True when every item is a pydantic-ai ``ModelRequest`` or ``ModelResponse``."""
    return bool(messages) and all(
        isinstance(m, pm.ModelRequest | pm.ModelResponse) for m in messages
    )


def _user_content(content: Any) -> str | tuple[Part, ...]:
    if isinstance(content, str):
        return content
    return tuple(
        TextPart(item) if isinstance(item, str) else OpaquePart(_PROVIDER, item) for item in content
    )


def _request_message(part: Any, index: int, k: int) -> Message:
    if isinstance(part, pm.SystemPromptPart):
        return Message(role="system", content=part.content)
    if isinstance(part, pm.UserPromptPart):
        return Message(role="user", content=_user_content(part.content))
    if isinstance(part, pm.ToolReturnPart):
        text = part.content if isinstance(part.content, str) else part.model_response_str()
        flags = {} if part.outcome == "success" else {"is_error": True}
        return Message(
            role="tool",
            content=text,
            tool_call_id=part.tool_call_id,
            name=part.tool_name,
            extras=flags,
        )
    if isinstance(part, pm.RetryFeedbackPart):
        return Message(role="user", content=part.model_response())
    if isinstance(part, pm.RetryPromptPart):
        if part.tool_name is None:
            return Message(role="user", content=part.model_response())
        return Message(
            role="tool",
            content=part.model_response(),
            tool_call_id=part.tool_call_id,
            name=part.tool_name,
            extras={"is_error": True},
        )
    if not hasattr(part, "part_kind"):
        raise ConfigError(
            f"messages[{index}].parts[{k}]: {type(part).__name__} is not a pydantic-ai request part"
        )
    return Message(role="system", content=(OpaquePart(_PROVIDER, part),))


def _response_message(native: Any, index: int) -> Message:
    content: list[Part] = []
    calls: list[ToolCall] = []
    for k, part in enumerate(native.parts):
        if isinstance(part, pm.ToolCallPart):
            calls.append(ToolCall(part.tool_call_id, part.tool_name, part.args_as_json_str()))
        elif isinstance(part, pm.TextPart):
            content.append(TextPart(part.content))
        elif isinstance(part, pm.ThinkingPart):
            # the provider says which thinking rule applies (see opens_turn)
            provider = getattr(part, "provider_name", None)
            extras = {"provider_name": provider} if isinstance(provider, str) else {}
            content.append(ThinkingPart(part.content, signature=part.signature, extras=extras))
        elif hasattr(part, "part_kind"):
            content.append(OpaquePart(_PROVIDER, part))
        else:
            raise ConfigError(
                f"messages[{index}].parts[{k}]: {type(part).__name__} is not a pydantic-ai "
                "response part"
            )
    return Message(role="assistant", content=tuple(content), tool_calls=tuple(calls))


def _changed_request_part(part: Any, now: Message) -> Any:
    text = now.text
    if isinstance(part, pm.UserPromptPart) and not isinstance(part.content, str):
        return dataclasses.replace(
            part, content=patch_text_blocks(list(part.content), text, _USER_TEXT)
        )
    if isinstance(part, pm.SystemPromptPart | pm.UserPromptPart | pm.ToolReturnPart):
        return dataclasses.replace(part, content=text)
    if isinstance(part, pm.RetryPromptPart | pm.RetryFeedbackPart):
        return dataclasses.replace(part, content=text)
    return part  # opaque parts are protected: never changed


class PydanticAIConverter(Converter[Any]):
    """pydantic-ai ``ModelMessage`` lists (see the module docstring for the mapping)."""

    name: ClassVar[str] = "pydantic_ai"
    call_terms: ClassVar[tuple[str, str]] = ("ToolCallPart", "ToolReturnPart")

    def kind(self, item: Any) -> str | None:
        """``"sure"`` for a ``ModelRequest`` or ``ModelResponse``."""
        return "sure" if isinstance(item, pm.ModelRequest | pm.ModelResponse) else None

    def load(self, native: Any, index: int) -> list[Message]:
        """One message per request part; one assistant message per response.

        Raises:
            ConfigError: ``native`` is not a pydantic-ai message, or holds a part that is not
                a pydantic-ai part (naming the index).
        """
        if isinstance(native, pm.ModelResponse):
            return [_response_message(native, index)]
        if isinstance(native, pm.ModelRequest):
            return [_request_message(p, index, k) for k, p in enumerate(native.parts)]
        raise ConfigError(
            f"messages[{index}]: {type(native).__name__} is not a pydantic-ai ModelRequest or "
            "ModelResponse"
        )

    def rebuild(
        self, native: Any, originals: Sequence[Message], now: Sequence[Message | None]
    ) -> list[Any]:
        """``native`` with removed parts gone and changed texts replaced; ``[]`` when nothing
        of it is left."""
        if isinstance(native, pm.ModelResponse):
            new = now[0]
            if new is None:
                return []
            ids = {c.id for c in new.tool_calls}
            parts = [
                p
                for p in native.parts
                if not isinstance(p, pm.ToolCallPart) or p.tool_call_id in ids
            ]
            if new.text != originals[0].text:
                parts = patch_text_blocks(parts, new.text, _RESPONSE_TEXT)
            return [dataclasses.replace(native, parts=parts)]
        kept = [
            part if m is o else _changed_request_part(part, m)
            for part, o, m in zip(native.parts, originals, now, strict=True)
            if m is not None
        ]
        return [dataclasses.replace(native, parts=kept)] if kept else []

    def dump(self, message: Message) -> Any:
        """A new ``ModelRequest`` / ``ModelResponse`` for an added message."""
        text = message.text
        if message.role == "assistant":
            calls = [
                pm.ToolCallPart(tool_name=c.name, args=c.arguments, tool_call_id=c.id)
                for c in message.tool_calls
            ]
            return pm.ModelResponse(parts=[*([pm.TextPart(content=text)] if text else []), *calls])
        if message.role == "system":
            return pm.ModelRequest(parts=[pm.SystemPromptPart(content=text)])
        if message.role == "tool":
            part: Any = pm.ToolReturnPart(
                tool_name=message.name or "", content=text, tool_call_id=message.tool_call_id or ""
            )
            return pm.ModelRequest(parts=[part])
        return pm.ModelRequest(parts=[pm.UserPromptPart(content=text)])
