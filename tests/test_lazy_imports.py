"""Pay for what you use: the packages load their modules on first use, numpy and rank-bm25
load only for the features that need them (and name the extra when missing), and a request's
compression is checked without importing the policy."""

from __future__ import annotations

import subprocess
import sys

import pytest

import agent_adapter
from agent_adapter import ConfigError, Message, ModelRequest

LAZY = (
    "agent_adapter",
    "agent_adapter.context",
    "agent_adapter.context._steps",
    "agent_adapter.context._stores",
    "agent_adapter.providers",
)


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.mark.parametrize("package", LAZY)
def test_every_exported_name_resolves_in_a_fresh_interpreter(package: str) -> None:
    code = (
        f"import importlib, {package} as p\n"
        "for name in p.__all__:\n"
        "    value = getattr(p, name)\n"
        "    module = getattr(value, '__module__', '')\n"
        "    if module.startswith('agent_adapter.'):\n"
        "        assert getattr(importlib.import_module(module), name) is value, name\n"
        "    exec(f'from {p.__name__} import {name}')\n"
        "print(sorted(set(p.__all__) - set(dir(p))))\n"
    )
    assert _run(code) == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import agent_adapter.context as context

    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = context.nope  # type: ignore[attr-defined]


def test_importing_the_context_loads_no_numpy_nor_the_engine() -> None:
    code = (
        "import sys, agent_adapter.context\n"
        "print(sorted(m for m in ('numpy', 'rank_bm25', 'agent_adapter.context._engine', "
        "'agent_adapter.context._stores.redis', 'agent_adapter.context._scorers') "
        "if m in sys.modules))\n"
    )
    assert _run(code) == "[]"


def test_compressing_with_the_default_steps_loads_no_numpy() -> None:
    code = (
        "import sys\n"
        "from agent_adapter.context import CompressionPolicy, compress_for_sync\n"
        "messages = [{'role': 'user', 'content': 'hello world ' * 300}, "
        "{'role': 'assistant', 'content': 'hi ' * 300}, {'role': 'user', 'content': 'next'}]\n"
        "compress_for_sync(messages, CompressionPolicy(threshold_tokens=100, target_tokens=50))\n"
        "print('numpy' in sys.modules)\n"
    )
    assert _run(code) == "False"


def test_the_providers_package_loads_only_what_it_uses() -> None:
    code = (
        "import sys, agent_adapter.providers\n"
        "print(sum(m.startswith('agent_adapter') for m in sys.modules))\n"
    )
    assert int(_run(code)) <= 45


def test_without_numpy_the_relevance_features_name_their_extra() -> None:
    code = (
        "import asyncio, sys\n"
        "sys.modules['numpy'] = None\n"
        "sys.modules['rank_bm25'] = None\n"
        "from agent_adapter import MissingDependency\n"
        "from agent_adapter.context import BM25Scorer, EmbeddingScorer, CompressionPolicy, "
        "KeepMostRelevant, compress_for_sync\n"
        "class Embedder:\n"
        "    async def embed(self, texts, *, ctx=None):\n"
        "        return [[1.0, 0.0] for _ in texts]\n"
        "out = []\n"
        "for scorer in (BM25Scorer(), EmbeddingScorer(Embedder())):\n"
        "    try:\n"
        "        asyncio.run(scorer.score('q', ['a', 'b']))\n"
        "    except MissingDependency as e:\n"
        "        out.append(str(e).endswith('pip install \"agent-adapter[relevance]\"'))\n"
        "messages = [m for i in range(12) for m in (\n"
        "    {'role': 'user', 'content': f'topic{i} ' * 60},\n"
        "    {'role': 'assistant', 'content': f'answer{i} ' * 80})]\n"
        "messages.append({'role': 'user', 'content': 'topic3?'})\n"
        "policy = CompressionPolicy(threshold_tokens=1000, target_tokens=800, recent_turns=0, "
        "steps=[KeepMostRelevant()], on_step_error='raise')\n"
        "try:\n"
        "    compress_for_sync(messages, policy)\n"
        "except MissingDependency as e:\n"
        "    out.append(e.extra == 'relevance')\n"
        "print(out)\n"
    )
    assert _run(code) == "[True, True, True]"


def test_a_request_checks_its_compression_without_importing_the_policy() -> None:
    code = (
        "import sys\n"
        "from agent_adapter import ConfigError, Message, ModelRequest\n"
        "try:\n"
        "    ModelRequest(messages=[Message('user', 'hi')], compression=object())\n"
        "except ConfigError as e:\n"
        "    print(e, 'agent_adapter.context._policy' in sys.modules)\n"
    )
    assert _run(code) == (
        "ModelRequest.compression must be a CompressionPolicy or None, got object False"
    )


def test_a_policy_is_a_request_compression() -> None:
    from agent_adapter.context import CompressionPolicy

    class Policy(CompressionPolicy):
        pass

    for policy in (CompressionPolicy(threshold_tokens=10), Policy(threshold_tokens=10)):
        assert ModelRequest(messages=[Message("user", "hi")], compression=policy).compression
    with pytest.raises(ConfigError, match="must be a CompressionPolicy or None, got dict"):
        ModelRequest(messages=[Message("user", "hi")], compression={})  # type: ignore[arg-type]


def test_the_tool_loop_is_exported_lazily() -> None:
    from agent_adapter._loop import run_tool_loop

    assert agent_adapter.run_tool_loop is run_tool_loop
