"""0.3.0a5 AgentCore's embedded model APIs, as a mixin: ``embed``, ``rerank`` and the media
calls with their ``submit_*`` background forms.

Each method takes the binding of its purpose from ``self.bindings`` (a missing one raises
:class:`~cliver_core.CapabilityNotSupported` with 0.3.0a5's message) and passes it, with the
call-site parameters only, to :mod:`cliver_core.capabilities`. ``embed`` and ``rerank`` work;
``image``, ``video``, ``tts``, ``audio`` and ``asr`` are out of this version's scope and raise
``CapabilityNotSupported`` naming the capability (unless the binding's ``provider=`` is a
0.3.0a5 ``Provider`` of yours implementing it). A ``submit_*()`` call checks both at once,
before anything is scheduled, and otherwise returns a :class:`~cliver_core.MediaJob`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import cliver_core.capabilities as capabilities
from cliver_core._errors import CapabilityNotSupported
from cliver_core._messages import CLIverResponse
from cliver_core.capabilities._base import media_provider
from cliver_core.media import MediaContent
from cliver_core.media_jobs import MediaJob
from cliver_core.provider import EmbeddingsResult, RerankItem

if TYPE_CHECKING:
    from cliver_core._bindings import ModelBinding
    from cliver_core._model_bindings import ModelBindings

__all__ = ["EmbeddedModelsMixin"]


class EmbeddedModelsMixin:
    """AgentCore's embedded model APIs (0.3.0a5's names, signatures and messages); needs a
    ``bindings`` attribute (:class:`~cliver_core.ModelBindings`)."""

    bindings: ModelBindings

    async def image(
        self,
        prompt: str,
        *,
        media: list[MediaContent] | None = None,
        output_dir: str | None = None,
        **options: Any,
    ) -> CLIverResponse:
        """Generate an image with ``bindings.image`` (out of scope: see the module
        docstring)."""
        return await capabilities.generate_image(
            prompt=prompt,
            binding=self._require_binding("image"),
            media=media,
            output_dir=output_dir,
            **options,
        )

    def submit_image(self, prompt: str, **kwargs: Any) -> MediaJob[CLIverResponse]:
        """:meth:`image` in the background."""
        return self._submit("image", lambda: self.image(prompt, **kwargs))

    async def video(
        self,
        prompt: str,
        *,
        media: list[MediaContent] | None = None,
        output_dir: str | None = None,
        **options: Any,
    ) -> CLIverResponse:
        """Generate a video with ``bindings.video`` (out of scope)."""
        return await capabilities.generate_video(
            prompt=prompt,
            binding=self._require_binding("video"),
            media=media,
            output_dir=output_dir,
            **options,
        )

    def submit_video(self, prompt: str, **kwargs: Any) -> MediaJob[CLIverResponse]:
        """:meth:`video` in the background."""
        return self._submit("video", lambda: self.video(prompt, **kwargs))

    async def tts(
        self, prompt: str, *, output_dir: str | None = None, **options: Any
    ) -> CLIverResponse:
        """Speak ``prompt`` with ``bindings.tts`` (out of scope)."""
        return await capabilities.text_to_speech(
            text=prompt, binding=self._require_binding("tts"), output_dir=output_dir, **options
        )

    def submit_tts(self, prompt: str, **kwargs: Any) -> MediaJob[CLIverResponse]:
        """:meth:`tts` in the background."""
        return self._submit("tts", lambda: self.tts(prompt, **kwargs))

    async def audio(
        self, prompt: str, *, output_dir: str | None = None, **options: Any
    ) -> CLIverResponse:
        """0.3.0a5's legacy alias of :meth:`tts`, on ``bindings.audio`` (out of scope)."""
        return await capabilities.text_to_speech(
            text=prompt,
            binding=self._require_binding("audio"),
            output_dir=output_dir,
            **options,
        )

    def submit_audio(self, prompt: str, **kwargs: Any) -> MediaJob[CLIverResponse]:
        """:meth:`audio` in the background."""
        return self._submit("audio", lambda: self.audio(prompt, **kwargs))

    async def asr(
        self,
        audio: MediaContent | bytes | str,
        *,
        language: str | None = None,
        **options: Any,
    ) -> CLIverResponse:
        """Transcribe ``audio`` with ``bindings.asr`` (out of scope)."""
        return await capabilities.transcribe_audio(
            audio=audio, binding=self._require_binding("asr"), language=language, **options
        )

    def submit_asr(self, audio: MediaContent | bytes | str, **kwargs: Any) -> MediaJob[Any]:
        """:meth:`asr` in the background."""
        return self._submit("asr", lambda: self.asr(audio, **kwargs))

    async def rerank(
        self,
        query: str,
        documents: list[str],
        *,
        top_k: int | None = None,
        **options: Any,
    ) -> list[RerankItem]:
        """Rerank ``documents`` against ``query`` with ``bindings.rerank``, best first
        (:func:`cliver_core.capabilities.rerank`; ``top_k=None`` keeps the binding's)."""
        return await capabilities.rerank(
            query=query,
            documents=documents,
            binding=self._require_binding("rerank"),
            top_k=top_k,
            **options,
        )

    async def embed(self, texts: str | list[str], **options: Any) -> EmbeddingsResult:
        """Embed ``texts`` with ``bindings.embed`` (:func:`cliver_core.capabilities.embed`)."""
        return await capabilities.embed(
            texts=texts, binding=self._require_binding("embed"), **options
        )

    def _require_binding(self, purpose: str) -> ModelBinding:
        """The binding of ``purpose``.

        Raises:
            CapabilityNotSupported: none is bound (0.3.0a5's message).
            ConfigError: an unknown purpose, or a binding made for another one.
        """
        binding = self.bindings.get(purpose)
        if binding is None:
            example = "tts" if purpose == "audio" else purpose
            raise CapabilityNotSupported(
                f"No model bound for '{purpose}' — set bindings.{purpose} "
                f"(e.g. ModelBinding.{example}(model='...', api_key='...', base_url='...')) "
                "to enable it."
            )
        return binding

    def _submit(self, purpose: str, factory: Callable[[], Awaitable[Any]]) -> MediaJob[Any]:
        """Schedule ``factory()`` on the running loop and return its :class:`MediaJob`.

        Raises:
            CapabilityNotSupported: no binding, or its provider cannot serve ``purpose``
                (checked before anything is scheduled).
            RuntimeError: no running event loop (0.3.0a5's message).
        """
        binding = self._require_binding(purpose)
        media_provider(binding, purpose)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError as exc:
            raise RuntimeError(
                "submit_*() requires a running event loop — use the awaitable "
                f"form (agent.{purpose}(...)) outside async code."
            ) from exc

        async def run() -> Any:
            return await factory()

        return MediaJob(purpose, loop.create_task(run()))
