"""Recall on by default where it can be (issue 34, item 3).

A :class:`Compactor` holds an embedded store by default and gives it to the steps of its
policy that can save, so every text its compactions shorten or remove can be read back, the
long assistant texts ``CutLongMessages`` cuts included; ``save_to=None`` turns it off; pure
``compress_for`` stays storeless.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from agent_adapter._errors import ConfigError
from agent_adapter.context import (
    Compactor,
    CompressionPolicy,
    CutLongMessages,
    MemoryStore,
    RemoveOldMessages,
    ShrinkToolResults,
    SQLiteStore,
    compress_for_sync,
    recall_tool,
)
from agent_adapter.context._compactor import with_store
from agent_adapter.context._stores._default import (
    FOLDER_ENV,
    MAX_TOTAL_CHARS,
    default_store_path,
)

RECALL = re.compile(r"recall_context\(id='([0-9a-f]{32})'\)")
LONG = "\n".join(
    f"Step {i}: I looked at src/pkg/module_{i}.py and the fix is to change line {i}." * 3
    for i in range(400)
)


def _history() -> list[dict[str, Any]]:
    """A task, one very long assistant text, then short turns (the recency window)."""
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the bug in src/pkg."},
        {"role": "assistant", "content": LONG},
    ]
    for i in range(5):
        out += [
            {"role": "user", "content": f"Go on with part {i}."},
            {"role": "assistant", "content": f"Done with part {i}."},
        ]
    return [*out, {"role": "user", "content": "Now finish."}]


def _policy() -> CompressionPolicy:
    return CompressionPolicy(
        threshold_tokens=8000,
        target_tokens=6000,
        steps=[CutLongMessages(max_tokens_per_message=2000)],
    )


async def _recall(store: Any, id_: str) -> str:
    return str(await recall_tool(store)({"id": id_}, None))


async def test_a_long_assistant_text_cut_by_a_compactor_is_read_back() -> None:
    store = MemoryStore()
    history = _history()
    request, report = await Compactor(_policy(), save_to=store).compress(history)
    assert report.tokens_after < report.tokens_before
    cut = request[2]["content"]
    assert len(cut) < len(LONG)
    found = RECALL.findall(cut)
    assert len(found) == 1, cut[-400:]
    assert await _recall(store, found[0]) == LONG  # the caller's text, byte for byte


def test_save_to_none_turns_recall_off_and_compress_for_stays_storeless() -> None:
    history = _history()
    request, _ = Compactor(_policy(), save_to=None).compress_sync(history)
    assert len(request[2]["content"]) < len(LONG)
    assert "recall_context" not in request[2]["content"]
    alone, _ = compress_for_sync(history, _policy(), states=False)
    assert alone == request  # the storeless Compactor's first compaction is compress_for's
    default, _ = compress_for_sync(history, CompressionPolicy(threshold_tokens=8000))
    assert "recall_context" not in str(default)


def test_the_default_is_an_embedded_sqlite_store_in_the_user_cache() -> None:
    compactor = Compactor(CompressionPolicy(threshold_tokens=8000))
    store = compactor.save_to
    assert isinstance(store, SQLiteStore)
    assert Path(store.path).name == "recall.sqlite3"
    assert Path(store.path).parent == Path(os.environ[FOLDER_ENV])  # conftest's: hermetic
    assert store.max_total_chars == MAX_TOTAL_CHARS == 100_000_000  # bounded
    assert Compactor(CompressionPolicy(threshold_tokens=8000)).save_to is store  # one a process


def test_the_default_folder_is_the_variable_s_else_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FOLDER_ENV, str(tmp_path / "recall"))
    assert default_store_path() == tmp_path / "recall" / "recall.sqlite3"
    assert (tmp_path / "recall").stat().st_mode & 0o777 == 0o700
    monkeypatch.delenv(FOLDER_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_store_path() == tmp_path / "cache" / "agent-adapter" / "recall.sqlite3"


def test_the_store_goes_to_the_steps_that_were_given_none() -> None:
    mine, default = MemoryStore(), MemoryStore()
    policy = CompressionPolicy(
        threshold_tokens=8000,
        steps=[ShrinkToolResults(save_to=mine), CutLongMessages(), RemoveOldMessages()],
        if_still_too_long=ShrinkToolResults(),
    )
    given = with_store(policy, default)
    assert given.steps is not None
    stores = [step.save_to for step in given.steps]  # type: ignore[attr-defined]
    assert stores[0] is mine and stores[1] is default and stores[2] is default
    assert given.if_still_too_long.save_to is default  # type: ignore[union-attr]
    assert policy.steps is not None and policy.steps[1].save_to is None  # type: ignore[attr-defined]
    defaults = with_store(CompressionPolicy(threshold_tokens=8000), default).resolved_steps()
    assert all(getattr(s, "save_to", default) is default for s in defaults)
    assert with_store(policy, None) is policy


def test_a_bad_save_to_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="save_to"):
        Compactor(CompressionPolicy(threshold_tokens=8000), save_to="redis")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="save_to"):
        CutLongMessages(save_to=object())
