"""The public names of agent_adapter.providers and agent_adapter.testing: exactly these, each
documented, and each provider a real LLMPort."""

from __future__ import annotations

import inspect

import agent_adapter.providers as providers
import agent_adapter.testing as testing
from agent_adapter import LLMPort

PROVIDERS = {
    "AnthropicModel",
    "DeepSeekModel",
    "GeminiModel",
    "LlamaCppModel",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
}
HELPERS = {"packaged_gguf"}
TESTING = {"CacheHit", "PromptCache", "ProviderServer", "RecordedRequest", "Reply", "prompt_tokens"}


def test_exactly_the_pinned_names() -> None:
    assert set(providers.__all__) == PROVIDERS | HELPERS
    assert set(testing.__all__) == TESTING
    assert providers.__all__ == sorted(providers.__all__)
    assert testing.__all__ == sorted(testing.__all__)


def test_every_public_name_is_documented() -> None:
    for module in (providers, testing):
        assert inspect.getdoc(module)
        for name in module.__all__:
            obj = getattr(module, name)
            assert inspect.getdoc(obj), f"{module.__name__}.{name} has no docstring"
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not callable(member):
                    continue
                assert inspect.getdoc(member), f"{name}.{attr} has no docstring"


def test_every_provider_is_an_llm_port() -> None:
    model = providers.OpenAIChatModel("gpt-4o", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert isinstance(model, LLMPort)
    for name in PROVIDERS:
        cls = getattr(providers, name)
        for method in ("generate", "stream", "cache_key_fields", "aclose"):
            assert callable(getattr(cls, method))
        assert inspect.isasyncgenfunction(cls.stream)
        assert inspect.iscoroutinefunction(cls.generate)
