"""LangChain's token counters and chat models as a policy's ``token_counter``.

A LangChain user has a counter at hand: ``count_tokens_approximately`` (langchain-core's, what
``trim_messages`` and ``SummarizationMiddleware`` use), a ``functools.partial`` of it, or a
chat model (``model.get_num_tokens_from_messages``; ``SummarizationMiddleware`` takes the
model's own counter too). Each takes LangChain messages, while a
:data:`~agent_adapter.context.TokenCounter` takes :class:`~agent_adapter.Message` s: given as
they are, they would fail at the first count with LangChain's own error. So a counter known
to be LangChain's is adapted: the messages are written as LangChain messages (system, human,
AI with its tool calls, tool results; text content, reasoning left out as LangChain's
counters leave it) and counted by it.

Known, never guessed: a chat model is an instance of langchain-core's
``BaseLanguageModel`` (looked up only when langchain-core is already imported, so this
costs nothing to anyone else); a function (or a ``partial`` of one, or a bound method of a
chat model) is LangChain's when the module that defines it is ``langchain_core`` /
``langchain`` / a ``langchain_*`` partner package.
"""

from __future__ import annotations

import functools
import json
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

from agent_adapter._messages import Message

__all__ = ["is_langchain_counter", "langchain_counter"]

_ADAPTED: weakref.WeakKeyDictionary[Any, Callable[[list[Message]], int]] = (
    weakref.WeakKeyDictionary()
)
_LOCK = threading.Lock()


def _model_class() -> type | None:
    module = sys.modules.get("langchain_core.language_models")
    found = getattr(module, "BaseLanguageModel", None) if module is not None else None
    return found if isinstance(found, type) else None


def _langchain_module(name: Any) -> bool:
    return isinstance(name, str) and (
        name == "langchain_core"
        or name.startswith(("langchain_core.", "langchain.", "langchain_"))
        or name == "langchain"
    )


def _function(counter: Any) -> Any:
    """The function behind ``counter`` (a partial's, a bound method's)."""
    while isinstance(counter, functools.partial):
        counter = counter.func
    return getattr(counter, "__func__", counter)


def is_langchain_counter(counter: Any) -> bool:
    """Whether ``counter`` is a LangChain chat model, or a function (a partial, a bound
    method) defined by LangChain."""
    model = _model_class()
    if model is None:
        return False
    if isinstance(counter, model) or isinstance(getattr(counter, "__self__", None), model):
        return True
    return _langchain_module(getattr(_function(counter), "__module__", None))


def _langchain_messages(messages: list[Message]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    for m in messages:
        text = m.text
        if m.role == "system":
            out.append(SystemMessage(text))
        elif m.role == "user":
            out.append(HumanMessage(text))
        elif m.role == "tool":
            out.append(ToolMessage(text, tool_call_id=m.tool_call_id or "", name=m.name))
        else:
            calls = []
            for call in m.tool_calls:
                try:
                    args = json.loads(call.arguments) if call.arguments.strip() else {}
                except ValueError:
                    args = {"arguments": call.arguments}
                args = args if isinstance(args, dict) else {"arguments": args}
                calls.append({"name": call.name, "args": args, "id": call.id})
            out.append(AIMessage(text, tool_calls=calls))
    return out


def _name(counter: Any) -> str:
    function = _function(counter)
    qualname = getattr(function, "__qualname__", None) or type(counter).__qualname__
    module = getattr(function, "__module__", None) or type(counter).__module__
    return f"{module}.{qualname}"


def langchain_counter(counter: Any) -> Callable[[list[Message]], int]:
    """``counter`` (LangChain's: see :func:`is_langchain_counter`) as a
    :data:`~agent_adapter.context.TokenCounter`; the same adapter for the same counter (so
    token counts stay cached across calls).

    A chat model counts with ``get_num_tokens_from_messages``; a function is called with
    the LangChain messages. What it returns must be an int (a count of tokens).
    """
    model = _model_class()
    key = counter
    self_ = getattr(counter, "__self__", None)
    if model is not None and isinstance(self_, model):
        key = self_  # a bound method is a new object at each access: key by its model
    try:
        hit = _ADAPTED.get(key)
    except TypeError:  # not weakly referenceable: adapted afresh
        hit, key = None, None
    if hit is not None and getattr(hit, "_langchain_source", None) == _function(counter):
        return hit
    count_with: Callable[[list[Any]], Any] = (
        getattr(counter, "get_num_tokens_from_messages")  # noqa: B009 (a chat model's)
        if model is not None and isinstance(counter, model)
        else counter
    )

    def count(messages: list[Message]) -> int:
        return int(count_with(_langchain_messages(list(messages))))

    name = _name(counter)
    count.__name__ = f"langchain:{name}"
    count._langchain_source = _function(counter)  # type: ignore[attr-defined]
    if not (model is not None and (isinstance(counter, model) or isinstance(self_, model))):
        # a module-level function: the same in every process (a partial adds its arguments)
        args = counter.keywords if isinstance(counter, functools.partial) else {}
        try:
            identity = f"langchain:{name}:{json.dumps(args, sort_keys=True)}"
        except (TypeError, ValueError):
            identity = None
        if identity is not None and not (isinstance(counter, functools.partial) and counter.args):
            count.config_identity = lambda: identity  # type: ignore[attr-defined]
    if key is not None:
        with _LOCK:
            _ADAPTED[key] = count
    return count
