from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared real-data folder (see ``../shared/data/README.md``).

    ``$AGENT_ADAPTER_DATA`` if set, else ``<project root>/../shared/data``. Missing data fails
    the test when ``CI=true`` and skips it otherwise.
    """
    env = os.environ.get("AGENT_ADAPTER_DATA")
    path = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"
    if not path.is_dir():
        message = f"shared data folder not found: {path} (set AGENT_ADAPTER_DATA)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path
