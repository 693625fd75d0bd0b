"""Test utilities: a local server that speaks the providers' wire protocols.

:class:`ProviderServer` listens on ``127.0.0.1`` and answers as OpenAI (Chat Completions and
Responses), Anthropic (Messages) and the Gemini API do, streaming included, with replies you
script as :class:`Reply` s: text, tool calls and usage, each provider's real context-overflow
error, 429 and 5xx, slow replies and malformed bodies. Point the official SDK (or the
providers of :mod:`agent_adapter.providers`) at it and test your agent over real HTTP::

    from agent_adapter.testing import ProviderServer, Reply

    with ProviderServer([Reply(text="done")]) as server:
        client = openai.OpenAI(base_url=server.openai_url, api_key="test")
        ...
        assert server.requests[0].body["messages"][-1]["role"] == "user"

Like the providers, the server caches prompt prefixes (:class:`PromptCache`): a request
that repeats an earlier one's prefix reports the cached part as the provider would
(``cached_tokens``, ``cache_read_input_tokens`` / ``cache_creation_input_tokens``,
``cachedContentTokenCount``); ``ProviderServer(prompt_cache=False)`` turns that off.

Needs the ``testing`` extra (``pip install "agent-adapter[testing]"``: starlette, uvicorn).
"""

from agent_adapter.testing._cache import CacheHit, PromptCache, prompt_tokens
from agent_adapter.testing._replies import Reply
from agent_adapter.testing._server import ProviderServer, RecordedRequest

__all__ = ["CacheHit", "PromptCache", "ProviderServer", "RecordedRequest", "Reply", "prompt_tokens"]
