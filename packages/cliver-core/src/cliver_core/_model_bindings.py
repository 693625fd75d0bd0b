"""The models of an agent by purpose (0.3.0a5's :class:`ModelBindings`), with the llm's
failover chain; each one a :class:`~cliver_core._bindings.ModelBinding`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_adapter import ConfigError
from cliver_core._bindings import PURPOSES, ModelBinding

__all__ = ["ModelBindings", "misplaced"]


def misplaced(binding: ModelBinding | None, purpose: str, where: str) -> str | None:
    """0.3.0a5's message for ``binding`` mounted at ``where`` though it was made for another
    purpose than ``purpose`` (the ``audio`` and ``tts`` slots take each other's), else
    ``None``."""
    made = binding.purpose if binding is not None else None
    if made is None or made == purpose or {made, purpose} == {"audio", "tts"}:
        return None
    return f"{where} holds a '{made}' binding — mount it in bindings.{made} instead."


@dataclass(kw_only=True)
class ModelBindings:
    """The models of an agent, by purpose; ``llm`` (required by AgentCore) runs the loop.

    ``llm`` may be a list: its first binding is ``llm`` and the others the failover chain,
    tried in order when a call fails with a retryable error (429, 5xx, timeouts, connection
    errors). Authentication and bad-request errors are not retried.

    Attributes:
        llm: the chat binding (or a list, see above).
        llm_fallbacks: the bindings tried after ``llm``, in order.
        embed: the embeddings binding (``AgentCore.embed``, ``capabilities.embed``).
        rerank: the rerank binding (``AgentCore.rerank``, ``capabilities.rerank``).
        image, audio, video, tts, asr: 0.3.0a5's media slots (out of scope: using them raises
            ``CapabilityNotSupported``).

    Raises:
        ConfigError: an empty llm list, or an llm entry that is not a ModelBinding.
    """

    llm: ModelBinding | None = None
    llm_fallbacks: Sequence[ModelBinding] = ()
    embed: ModelBinding | None = None
    rerank: ModelBinding | None = None
    image: ModelBinding | None = None
    audio: ModelBinding | None = None
    video: ModelBinding | None = None
    tts: ModelBinding | None = None
    asr: ModelBinding | None = None

    def __post_init__(self) -> None:
        llm: Any = self.llm
        fallbacks = list(self.llm_fallbacks)
        if isinstance(llm, list | tuple):
            if not llm:
                raise ConfigError("ModelBindings.llm: an empty list has no model")
            llm, fallbacks = llm[0], [*llm[1:], *fallbacks]
            self.llm = llm
        for i, binding in enumerate([llm, *fallbacks]):
            if binding is not None and not isinstance(binding, ModelBinding):
                where = "llm" if i == 0 else f"llm_fallbacks[{i - 1}]"
                raise ConfigError(
                    f"ModelBindings.{where} must be a ModelBinding, got {type(binding).__name__}"
                )
        self.llm_fallbacks = tuple(fallbacks)

    @property
    def llm_chain(self) -> tuple[ModelBinding, ...]:
        """``llm`` then its fallbacks: the order failover tries them in."""
        return (self.llm, *self.llm_fallbacks) if self.llm is not None else ()

    def get(self, purpose: str) -> ModelBinding | None:
        """The binding for ``purpose`` (one of :data:`PURPOSES`), or ``None``.

        As 0.3.0a5, a binding made for another purpose fails fast (a
        ``ModelBinding.image(...)`` in ``bindings.embed``); the ``audio`` slot takes ``tts``
        bindings and the other way round.

        Raises:
            ValueError: an unknown purpose, or a binding made for another purpose (0.3.0a5's
                messages).
        """
        if purpose not in PURPOSES:
            raise ValueError(f"Unknown purpose '{purpose}'. Supported: {list(PURPOSES)}")
        binding: ModelBinding | None = getattr(self, purpose)
        wrong = misplaced(binding, purpose, f"bindings.{purpose}")
        if wrong is not None:
            raise ValueError(wrong)
        return binding

    def bound_purposes(self) -> list[str]:
        """Purposes that have a model bound."""
        return [p for p in PURPOSES if getattr(self, p) is not None]

    async def aclose(self) -> None:
        """Close the providers these bindings built (given ``provider=`` objects stay
        open)."""
        seen: set[int] = set()
        for binding in (*self.llm_chain, *(getattr(self, p) for p in PURPOSES[1:])):
            if binding is not None and id(binding) not in seen:
                seen.add(id(binding))
                await binding.aclose()
