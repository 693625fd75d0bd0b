"""Model profiles: the context window and output limit of the models users run today.

``CompressingModel`` learns a window here when its policy gives none, and the Anthropic
adapter its default ``max_tokens``. The window is the figure the provider calls the context
window (for Gemini the input token limit, per https://ai.google.dev/gemini-api/docs/tokens).
Each group names the provider page that states its figures, as read in December 2026; a figure
marked ``unverified`` was written from memory and no provider page reachable then stated it.
With ``genai-prices`` installed (extra ``prices``), its maintained context windows replace
those (:func:`model_profile`; the output limits stay this table's: it has none) and give the
window of models this table lacks (:func:`known_window`); this table is the documented
fallback (precedence: :mod:`agent_adapter._maintained`).
Limits change: override or add one with :func:`register_model_profile`, or give the port a
``context_window`` attribute; self-hosted models (Llama, Qwen behind vLLM, Ollama, llama.cpp)
get the window the server was started with, so set it there when it is smaller.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from agent_adapter._errors import ConfigError

__all__ = ["ModelProfile", "known_window", "model_profile", "register_model_profile"]


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What a model can take and give.

    Attributes:
        context_window: the tokens the model accepts in one call, as the provider states its
            context window (input plus output; for Gemini the input token limit).
        max_output_tokens: the most tokens one reply may have.
        source: where the figures come from.
        max_input_tokens: the most tokens a request may have, when the provider caps the
            input below the window (GPT-5: "Maximum input tokens: 272,000" in a 400,000
            window); ``None``: the window.

    Raises:
        ConfigError: a limit is not an int > 0, or the output or input limit exceeds the
            window.
    """

    context_window: int
    max_output_tokens: int
    source: str = ""
    max_input_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in ("context_window", "max_output_tokens", "max_input_tokens"):
            v = getattr(self, name)
            if v is None and name == "max_input_tokens":
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ConfigError(f"ModelProfile.{name} must be an int > 0, got {v!r}")
        if self.max_output_tokens > self.context_window:
            raise ConfigError("ModelProfile.max_output_tokens exceeds context_window")
        if self.max_input_tokens is not None and self.max_input_tokens > self.context_window:
            raise ConfigError("ModelProfile.max_input_tokens exceeds context_window")

    @property
    def input_limit(self) -> int:
        """The most tokens a request may carry: ``max_input_tokens``, else the window. What
        compression budgets against (a request over it is a provider 400)."""
        return self.context_window if self.max_input_tokens is None else self.max_input_tokens


_OPENAI = "https://developers.openai.com/api/docs/models"
_ANTHROPIC = "https://platform.claude.com/docs/en/models"
_CLAUDE = f"{_ANTHROPIC}/overview"
_GEMINI = "https://ai.google.dev/gemini-api/docs/models"
_DEEPSEEK = "https://api-docs.deepseek.com/quick_start/pricing"
_LLAMA31 = "https://www.llama.com/docs/model-cards-and-prompt-formats/llama3_1/"
_LLAMA4 = "https://www.llama.com/docs/model-cards-and-prompt-formats/llama4/"
_QWEN25 = "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct"
_QWEN3 = "https://huggingface.co/Qwen/Qwen3-8B"

_PROFILES: dict[str, ModelProfile] = {
    # OpenAI model pages ("context window" / "max output tokens"); the GPT-5 pages add
    # "Maximum input tokens: 272,000" inside the 400,000 window
    "openai:gpt-4o": ModelProfile(128_000, 16_384, f"{_OPENAI}/gpt-4o"),  # unverified
    "openai:gpt-4o-mini": ModelProfile(128_000, 16_384, f"{_OPENAI}/gpt-4o-mini"),  # unverified
    "openai:gpt-4.1": ModelProfile(1_047_576, 32_768, f"{_OPENAI}/gpt-4.1"),  # unverified
    "openai:gpt-4.1-mini": ModelProfile(1_047_576, 32_768, f"{_OPENAI}/gpt-4.1-mini"),  # unverified
    "openai:gpt-4.1-nano": ModelProfile(1_047_576, 32_768, f"{_OPENAI}/gpt-4.1-nano"),
    "openai:gpt-5": ModelProfile(400_000, 128_000, f"{_OPENAI}/gpt-5", 272_000),  # unverified
    "openai:gpt-5-mini": ModelProfile(400_000, 128_000, f"{_OPENAI}/gpt-5-mini", 272_000),
    "openai:gpt-5-nano": ModelProfile(400_000, 128_000, f"{_OPENAI}/gpt-5-nano", 272_000),
    "openai:o3": ModelProfile(200_000, 100_000, f"{_OPENAI}/o3"),  # unverified
    "openai:o3-mini": ModelProfile(200_000, 100_000, f"{_OPENAI}/o3-mini"),  # unverified
    "openai:o4-mini": ModelProfile(200_000, 100_000, f"{_OPENAI}/o4-mini"),  # unverified
    # Anthropic model pages (200k window; the 1M-token window is a beta header)
    "anthropic:claude-opus-4-5": ModelProfile(200_000, 64_000, f"{_ANTHROPIC}/opus-4-5/overview"),
    "anthropic:claude-opus-4-1": ModelProfile(200_000, 32_000, _CLAUDE),  # unverified
    "anthropic:claude-opus-4": ModelProfile(200_000, 32_000, _CLAUDE),  # unverified
    "anthropic:claude-sonnet-4-5": ModelProfile(
        200_000, 64_000, f"{_ANTHROPIC}/sonnet-4-5/overview"
    ),
    "anthropic:claude-sonnet-4": ModelProfile(200_000, 64_000, _CLAUDE),  # unverified
    "anthropic:claude-3-7-sonnet": ModelProfile(200_000, 64_000, _CLAUDE),  # unverified
    "anthropic:claude-3-5-sonnet": ModelProfile(200_000, 8_192, _CLAUDE),  # unverified
    "anthropic:claude-haiku-4-5": ModelProfile(200_000, 64_000, f"{_ANTHROPIC}/haiku-4-5/overview"),
    "anthropic:claude-3-5-haiku": ModelProfile(200_000, 8_192, _CLAUDE),  # unverified
    "anthropic:claude-3-haiku": ModelProfile(200_000, 4_096, _CLAUDE),  # unverified
    # Gemini model pages (input token limit, output token limit). 2.5: unverified on
    # ai.google.dev; Google's Vertex AI pages give 1,048,576 in and 65,535 (Pro) or 65,536 out.
    "gemini:gemini-2.5-pro": ModelProfile(1_048_576, 65_536, f"{_GEMINI}/gemini-2.5-pro"),
    "gemini:gemini-2.5-flash": ModelProfile(1_048_576, 65_536, f"{_GEMINI}/gemini-2.5-flash"),
    "gemini:gemini-2.5-flash-lite": ModelProfile(
        1_048_576, 65_536, f"{_GEMINI}/gemini-2.5-flash-lite"
    ),
    "gemini:gemini-2.0-flash": ModelProfile(1_048_576, 8_192, f"{_GEMINI}/gemini-2.0-flash"),
    "gemini:gemini-2.0-flash-lite": ModelProfile(
        1_048_576, 8_192, f"{_GEMINI}/gemini-2.0-flash-lite"
    ),
    # DeepSeek: both names are modes of deepseek-v4-flash ("CONTEXT LENGTH 1M", "MAX OUTPUT
    # MAXIMUM: 384K"; read as decimal, the smaller reading)
    "deepseek:deepseek-v4-flash": ModelProfile(1_000_000, 384_000, _DEEPSEEK),
    "deepseek:deepseek-chat": ModelProfile(1_000_000, 384_000, _DEEPSEEK),
    "deepseek:deepseek-reasoner": ModelProfile(1_000_000, 384_000, _DEEPSEEK),
    # open-weight models as their cards give them (any provider name serving them); all
    # unverified on the cards themselves: Llama 3.x 128K (131,072 in the GGUF metadata), output
    # limit = window (no card states one); Llama 4 Scout 10M, Maverick 1M (Meta's launch
    # figures); Qwen2.5 generates up to 8,192 (its card), 32,768 is its default config window
    # (131,072 with YaRN); Qwen3 32,768 natively (131,072 with YaRN)
    "*:llama-3.1": ModelProfile(131_072, 131_072, _LLAMA31),
    "*:llama-3.2": ModelProfile(131_072, 131_072, _LLAMA31),
    "*:llama-3.3": ModelProfile(131_072, 131_072, _LLAMA31),
    "*:llama3.1": ModelProfile(131_072, 131_072, _LLAMA31),  # Ollama's names
    "*:llama3.2": ModelProfile(131_072, 131_072, _LLAMA31),
    "*:llama3.3": ModelProfile(131_072, 131_072, _LLAMA31),
    "*:llama-4-scout": ModelProfile(10_000_000, 10_000_000, _LLAMA4),
    "*:llama-4-maverick": ModelProfile(1_000_000, 1_000_000, _LLAMA4),
    "*:qwen2.5": ModelProfile(32_768, 8_192, _QWEN25),
    "*:qwen3": ModelProfile(32_768, 32_768, _QWEN3),
}
#: The built-in profiles, and those written from memory (see the module docstring): a
#: window from genai-prices goes before these.
_BUILTIN = dict(_PROFILES)
_UNVERIFIED = frozenset(
    {
        "openai:gpt-4o",
        "openai:gpt-4o-mini",
        "openai:gpt-4.1",
        "openai:gpt-4.1-mini",
        "openai:gpt-5",
        "openai:o3",
        "openai:o3-mini",
        "openai:o4-mini",
        "anthropic:claude-opus-4-1",
        "anthropic:claude-opus-4",
        "anthropic:claude-sonnet-4",
        "anthropic:claude-3-7-sonnet",
        "anthropic:claude-3-5-sonnet",
        "anthropic:claude-3-5-haiku",
        "anthropic:claude-3-haiku",
        "gemini:gemini-2.5-pro",
        "gemini:gemini-2.5-flash",
        "gemini:gemini-2.5-flash-lite",
    }
)
_lock = threading.Lock()
_VERSION_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest|-preview(-[\w-]+)?|-\d{3})$")
_VENDOR_PREFIX = re.compile(r"^(?:[\w.-]+/)+")  # meta-llama/Llama-3.3-70B, models/gemini-2.5-pro


def register_model_profile(key: str, profile: ModelProfile) -> None:
    """Add or replace the profile of ``key``: ``"provider:model"``, or ``"*:model"`` for a
    model under any provider. Longer model names win over their prefixes.

    Raises:
        ConfigError: a bad key, or ``profile`` is not a :class:`ModelProfile`.
    """
    if not isinstance(key, str) or ":" not in key or not all(key.split(":", 1)):
        raise ConfigError(f"profile keys are 'provider:model' or '*:model', got {key!r}")
    if not isinstance(profile, ModelProfile):
        raise ConfigError(f"the profile of {key!r} must be a ModelProfile")
    with _lock:
        _PROFILES[key] = profile


def model_profile(provider: str, model: str) -> ModelProfile | None:
    """The profile of ``model`` served by ``provider``, or ``None`` when unknown.

    Tries ``provider:model``, then the name without a dated-snapshot suffix or a vendor path
    (``models/gemini-2.5-pro``, ``meta-llama/Llama-3.3-70B-Instruct``, lower-cased), then
    the longest known name the model starts with, under ``provider`` first, then ``*``. A
    built-in profile written from memory takes its window from ``genai-prices`` when that
    is installed and knows the model (its output limit stays the table's, cut to the
    window).
    """
    key = _profile_key(provider, model)
    if key is None:
        return None
    profile = _PROFILES[key]
    if key in _UNVERIFIED and profile is _BUILTIN.get(key):
        from agent_adapter._maintained import maintained_window, source

        window = maintained_window(provider, model)
        if window is not None and window != profile.context_window:
            limit = profile.max_input_tokens
            return ModelProfile(
                window,
                min(profile.max_output_tokens, window),
                source(),
                None if limit is None else min(limit, window),
            )
    return profile


def known_window(provider: str, model: str) -> int | None:
    """The most tokens a request to ``model`` at ``provider`` may carry: its profile's
    :attr:`~ModelProfile.input_limit`, else the window ``genai-prices`` states (a model
    the table lacks), else ``None``."""
    profile = model_profile(provider, model)
    if profile is not None:
        return profile.input_limit
    from agent_adapter._maintained import maintained_window

    return maintained_window(provider, model)


def _profile_key(provider: str, model: str) -> str | None:
    """The key of the profile ``model`` at ``provider`` resolves to (see model_profile)."""
    name = _VENDOR_PREFIX.sub("", model).lower()
    base = _VERSION_SUFFIX.sub("", name)
    profiles = _PROFILES
    for p in (provider, "*"):
        for candidate in (model, name, base):
            if f"{p}:{candidate}" in profiles:
                return f"{p}:{candidate}"
    for p in (provider, "*"):
        prefix = f"{p}:"
        best = ""
        for key in list(profiles):
            if key.startswith(prefix):
                known = key[len(prefix) :]
                if (
                    name.startswith(known)
                    and name[len(known) : len(known) + 1] in ("", "-", ":", "@")
                    and len(known) > len(best)
                ):
                    best = known
        if best:
            return prefix + best
    return None
