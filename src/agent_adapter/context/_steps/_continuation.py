"""A summary request that continues the conversation, so the provider reads it from its cache.

Peers send the compaction request as a continuation of the cached conversation rather than as
a fresh prompt: Codex appends its summarization prompt to the conversation's own input, and
Claude Code's compaction "reuses the main conversation's prompt cache prefix to keep the
summary query cheap". Prompt caches match exact prefixes: Anthropic's "Cache prefixes are
created in the following order: tools, system, then messages" and any change to them (tool
definitions, tool choice) invalidates what follows (prompt caching guide, *What invalidates
the cache*); OpenAI's "Cache hits are only possible for exact prefix matches within a prompt"
(prompt caching guide). So the summary request is the conversation's request byte for byte
(the same system, tools, tool choice, response format and messages) with the instruction as
one more user message; only what the cache does not key on changes (``stage``,
``max_output_tokens``, ``temperature``).

A :class:`Continuation` is made by whoever owns the conversation's request (a
``CompressingModel``: the request it is compressing; ``cliver_core``'s ``PolicyCompactor``:
the run's last request, through its ``CompactionContext``) and reaches the steps as
:attr:`StepContext.continuation <agent_adapter.context._steps._base.StepContext>`. A
``Summarize`` step whose model is the conversation's own (:meth:`Continuation.serves`) sends
its summary request through it; a reply that is no summary (a tool call, no JSON), or a
context overflow, falls back to the usual fresh request of the span's transcript.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from agent_adapter._messages import Message
from agent_adapter._model import LLMPort, ModelRequest, ModelResponse

__all__ = ["Continuation", "continuing"]

#: ``send(messages, instruction, max_output_tokens) -> response``: the conversation's request
#: over ``messages`` (the compression's input) with ``instruction`` as one more user message.
Send = Callable[[Sequence[Message], str, int], Awaitable[ModelResponse]]


@dataclass(frozen=True, eq=False)
class Continuation:
    """The conversation's own request, which a summary request may continue.

    Attributes:
        models: the conversation's own model, as the objects a step's ``model`` may be
            (a ``CompressingModel`` and the port it wraps).
        send: ``send(messages, instruction, max_output_tokens)``: the conversation's
            request over ``messages`` plus ``instruction`` as a last user message, sent to
            the conversation's model.
        messages: the compression's input (set by the engine when the compression starts):
            the conversation as it would go out uncompressed, whose prefix is the request sent
            last time (what the provider has cached).
        sent: the request sent last time, when the conversation's state knows it (a prefix
            of ``messages``): "the conversation's last request", which the summary request
            continues when it holds the span to summarize.
        sent_natives: the request sent last time as the caller's own natives (a
            ``CLIverMessage`` list), when the conversation's owner knows it: where the
            compression converts a native list that starts with them (by identity), their
            messages become ``sent``.
    """

    models: tuple[object, ...]
    send: Send
    messages: tuple[Message, ...] = ()
    sent: tuple[Message, ...] = ()
    sent_natives: tuple[object, ...] = ()

    def serves(self, model: object) -> bool:
        """True when ``model`` is the conversation's own model (by identity)."""
        return any(model is own for own in self.models)

    def over(self, messages: Sequence[Message]) -> Continuation:
        """This continuation over ``messages`` (the compression's input)."""
        return dataclasses.replace(self, messages=tuple(messages))

    def after_sent(self, sent: Sequence[Message]) -> Continuation:
        """This continuation knowing ``sent``, the request sent last time (as this call's
        objects: a prefix of the compression's input when the conversation extends it)."""
        return dataclasses.replace(self, sent=tuple(sent))

    def after_sent_natives(self, natives: Sequence[object]) -> Continuation:
        """This continuation knowing ``natives``, the request sent last time in the caller's
        own format (see :attr:`sent_natives`)."""
        return dataclasses.replace(self, sent_natives=tuple(natives))

    def base(self, span: Sequence[Message]) -> tuple[tuple[Message, ...], int] | None:
        """The messages a summary request of ``span`` continues, and how many of them follow
        the last one ``span`` came from (by provenance, ``Message.origin``): the request sent
        last time when it is the compression input's prefix (by identity) and holds the
        whole span (what the provider has cached, as it was sent), else the compression's
        input; ``None`` when no message of ``span`` is in it."""
        origins = {m.origin for m in span}
        sent, given = self.sent, self.messages
        if (
            sent
            and len(sent) <= len(given)
            and all(a is b for a, b in zip(sent, given, strict=False))
            and origins <= {m.origin for m in sent}
        ):
            given = sent
        for i in range(len(given) - 1, -1, -1):
            if given[i].origin in origins:
                return given, len(given) - 1 - i
        return None


def continuing(
    request: ModelRequest,
    model: LLMPort,
    *also: object,
    wire: Callable[[Sequence[Message]], Sequence[Message]] | None = None,
) -> Continuation:
    """A :class:`Continuation` of ``request``, sent to ``model`` (``also``: other objects
    that stand for it, such as the ``CompressingModel`` wrapping it): its summary requests are
    ``request`` with the compression's input as messages and the instruction appended,
    ``stage="summary"``, ``precompressed`` (a ``CompressingModel`` passes it straight on),
    temperature 0 and the summarizer's ``max_output_tokens``. ``wire``: how the request's
    owner turns the compression's messages into its request's messages, when they are not
    sent as they are (``cliver_core``'s run puts its system message first and sends tool
    results under their wire names)."""

    async def send(
        messages: Sequence[Message], instruction: str, max_output_tokens: int
    ) -> ModelResponse:
        sent = messages if wire is None else wire(messages)
        summary_request = dataclasses.replace(
            request,
            messages=[*sent, Message("user", instruction)],
            stage="summary",
            precompressed=True,
            temperature=0.0,
            max_output_tokens=max_output_tokens,
        )
        return await model.generate(summary_request)

    return Continuation((model, *also), send)
