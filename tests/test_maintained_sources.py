"""Prices and context windows from a maintained source (issue 37): ``genai-prices`` (read
offline from the data its package ships) replaces the library's entries written from memory;
the caller's entries and the entries read from a provider's page come first; the library's
table is the fallback without it (``AGENT_ADAPTER_GENAI_PRICES=0`` or not installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("genai_prices")

from agent_adapter import Price, PriceTable, Usage, model_profile
from agent_adapter._maintained import source
from agent_adapter._profiles import known_window


def test_an_entry_written_from_memory_gives_way_to_genai_prices() -> None:
    # gpt-4.1-mini's window was written from memory (1,047,576); genai-prices states 1,000,000
    profile = model_profile("openai", "gpt-4.1-mini")
    assert profile is not None
    assert (profile.context_window, profile.source) == (1_000_000, source())
    assert profile.max_output_tokens == 32_768  # no maintained output limit: the table's
    assert source().startswith("genai-prices ")


def test_models_the_table_lacks_are_priced_and_windowed() -> None:
    table = PriceTable()
    assert table.find("openai", "gpt-5.2") == Price(1.75, 14.0, 0.175)
    assert model_profile("openai", "gpt-5.2") is None  # no output limit known: no profile
    assert known_window("openai", "gpt-5.2") == 400_000
    # a dated audio model is its own entry there, not gpt-4o-mini's by prefix
    assert table.find("openai", "gpt-4o-mini-audio-preview") == Price(0.15, 0.60)
    assert table.find("gemini", "gemini-2.5-pro") == Price(1.25, 10.0, 0.125)  # gemini=google


def test_the_callers_and_the_provider_pages_entries_come_first() -> None:
    # DeepSeek's pricing page (read Dec 2026): $0.14 / $0.28 and 1M; genai-prices 0.2.5 still
    # has the V3 prices and a 64K window
    table = PriceTable({"openai:gpt-5.2": Price(9.0, 9.0)})
    assert table.find("deepseek", "deepseek-chat") == Price(0.14, 0.28, 0.0028)
    assert model_profile("deepseek", "deepseek-chat").context_window == 1_000_000  # type: ignore[union-attr]
    assert table.cost("openai", "gpt-5.2", Usage(input_tokens=1_000_000)) == 9.0
    assert PriceTable(defaults=False).find("openai", "gpt-5.2") is None
    assert PriceTable().find("vllm", "llama-3.1-8b") is None  # a server of one's own: unknown


_PROBE = """
import json, socket
def refuse(*a, **k):
    raise OSError("network used")
socket.socket.connect = refuse  # offline: any connection fails
socket.create_connection = refuse
from agent_adapter import PriceTable, model_profile
from agent_adapter._profiles import known_window
t = PriceTable()
print(json.dumps([
    t.find("openai", "gpt-4.1").input if t.find("openai", "gpt-4.1") else None,
    t.find("openai", "gpt-5.2") is not None,
    model_profile("openai", "gpt-4.1-mini").context_window,
    known_window("openai", "gpt-5.2"),
]))
"""


@pytest.mark.parametrize("switch", ["1", "0"])
def test_offline_and_the_fallback_table(switch: str) -> None:
    env = {**os.environ, "AGENT_ADAPTER_GENAI_PRICES": switch}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    if switch == "1":  # genai-prices, with no network
        assert found == [2.0, True, 1_000_000, 400_000]
    else:  # the library's own table: the unverified entries, nothing for gpt-5.2
        assert found == [2.0, False, 1_047_576, None]
