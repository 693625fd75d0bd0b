"""Standalone model calls on a :class:`~cliver_core.ModelBinding` (0.3.0a5's
``cliver_core.capabilities``): no AgentCore needed; ``AgentCore``'s ``embed`` / ``rerank`` /
``image``... pass their binding here.

In scope: :func:`embed` and :func:`rerank`, through the binding's provider (an agent_adapter
port, a 0.3.0a5 ``Provider``, or the one the binding builds for its endpoint). Out of scope:
:func:`generate_image`, :func:`generate_video`, :func:`text_to_speech` and
:func:`transcribe_audio` keep 0.3.0a5's signatures and raise
:class:`~cliver_core.CapabilityNotSupported` naming the capability, unless the binding's
``provider=`` is a 0.3.0a5 ``Provider`` of yours implementing it (then it is called as 0.3.0a5
calls it).

Example::

    result = await embed(
        texts=["hello", "world"],
        binding=ModelBinding.embed(model="text-embedding-3-small", api_key="sk-...",
                                   base_url="https://api.openai.com/v1"),
    )
    result.vectors
"""

from cliver_core.capabilities.asr import transcribe_audio
from cliver_core.capabilities.embed import embed
from cliver_core.capabilities.image import generate_image
from cliver_core.capabilities.rerank import rerank
from cliver_core.capabilities.tts import text_to_speech
from cliver_core.capabilities.video import generate_video

__all__ = [
    "embed",
    "generate_image",
    "generate_video",
    "rerank",
    "text_to_speech",
    "transcribe_audio",
]
