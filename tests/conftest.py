from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from _redis_server import shared_server
from agent_adapter.context import MemoryStore, RedisStore, SQLiteStore
from agent_adapter.context._stores._default import FOLDER_ENV

# Hermetic recall: the embedded store a Compactor takes by default (made on first use, after
# this import) lives in a temporary folder of this process, never in the user's cache; one
# folder a process, so pytest-xdist's workers each have their own. Its own variable, not
# XDG_CACHE_HOME, which the CI caches (.ci/run) and the programs the tests start read.
RECALL_DIR = tempfile.mkdtemp(prefix="agent-adapter-recall-")
os.environ[FOLDER_ENV] = RECALL_DIR
atexit.register(shutil.rmtree, RECALL_DIR, ignore_errors=True)


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


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real Redis server's URL (``$AGENT_ADAPTER_REDIS_URL``, else one started here)."""
    with shared_server() as url:
        yield url


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """Each store kind in turn: memory, SQLite in a temporary file, Redis with a key prefix of
    its own (closed after the test)."""
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        with SQLiteStore(tmp_path / "saved.sqlite3") as s:
            yield s
    else:
        s = RedisStore(request.getfixturevalue("redis_url"), prefix=f"t:{uuid.uuid4().hex}:")
        try:
            yield s
        finally:
            await s.aclose()
