"""DeepSeek: an OpenAI-compatible vendor is a provider name, a base URL and a key variable.

DeepSeek's API speaks Chat Completions (``https://api.deepseek.com``, API docs "Your First API
Call"); its context window and output limits are the ``deepseek:*`` model profiles and its
prices the ``deepseek:*`` entries of the price table. The reasoner's ``reasoning_content``
stream deltas arrive as :class:`~agent_adapter.ThinkingDelta` s, and a tool-call turn's goes
back as ``reasoning_content`` on later requests (``reasoning_back``; the Thinking Mode guide:
"For turns that do perform tool calls, the reasoning_content must be fully passed back to the
API in all subsequent requests").
"""

from __future__ import annotations

from agent_adapter.providers._openai_chat import OpenAIChatModel

__all__ = ["DeepSeekModel"]


class DeepSeekModel(OpenAIChatModel):
    """A DeepSeek model (``deepseek-chat``, ``deepseek-reasoner``).

    Example::

        model = DeepSeekModel("deepseek-chat")                 # DEEPSEEK_API_KEY

    Args:
        model: the model name.
        **kwargs: as :class:`OpenAIChatModel` (``base_url`` overrides DeepSeek's).

    Raises:
        ConfigError: no API key (``api_key`` or ``DEEPSEEK_API_KEY``), or a bad setting.
        MissingDependency: ``openai`` is not installed (extra ``openai``).
    """

    default_provider = "deepseek"
    default_base_url = "https://api.deepseek.com"
    api_key_env = "DEEPSEEK_API_KEY"
    #: DeepSeek's thinking mode (on by default for deepseek-v4-*) wants a tool-call turn's
    #: ``reasoning_content`` back in every later request (Thinking Mode guide, "Tool Calls").
    reasoning_back = True
