"""Importing agent_adapter (and its integrations package) imports no framework; each
integration module names its extra when its framework is missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agent_adapter import integrations

FRAMEWORKS = ("langchain", "langgraph", "agents", "pydantic_ai", "google.adk", "opentelemetry")


def test_importing_the_package_imports_no_framework() -> None:
    code = (
        "import sys, agent_adapter, agent_adapter.context, agent_adapter.integrations\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r} "
        f"or m.startswith('google.adk')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_names_load_their_module_on_first_use() -> None:
    pytest.importorskip("langchain.agents")
    from agent_adapter.integrations.langchain import CompressionMiddleware

    assert integrations.CompressionMiddleware is CompressionMiddleware
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = integrations.nope  # type: ignore[attr-defined]


def test_a_bad_policy_fails_when_the_hook_is_made() -> None:
    pytest.importorskip("langchain.agents")
    from agent_adapter import ConfigError
    from agent_adapter.context import CompressionPolicy
    from agent_adapter.integrations.langchain import CompressionMiddleware
    from agent_adapter.integrations.langgraph import compression_hook

    with pytest.raises(ConfigError, match="CompressionPolicy"):
        CompressionMiddleware("60k")  # type: ignore[arg-type]
    percent = CompressionPolicy(threshold_percent=80)
    with pytest.raises(ConfigError):
        compression_hook(percent)  # no window known: fails now, not at the first model call
    CompressionMiddleware(percent, model_max_tokens=128_000)
