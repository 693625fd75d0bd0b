"""The formats' place in the layers: below the engine, one folder a provider."""

from __future__ import annotations

import ast
from pathlib import Path

import agent_adapter.context.formats as formats

FORMATS_DIR = Path(formats.__file__).parent
PROVIDERS = ("_anthropic", "_gemini", "_langchain", "_openai")
# what the formats may import from agent_adapter besides themselves: messages, errors and the
# rules they share with the engine (pairing, provenance, the library's own text)
BELOW = {
    "agent_adapter._errors",
    "agent_adapter._messages",
    "agent_adapter._ranges",  # a bottom module: it imports nothing of the library
    "agent_adapter.context._own",
    "agent_adapter.context._pairing",
    "agent_adapter.context._provenance",
}


def _imports(path: Path) -> set[str]:
    """The agent_adapter modules ``path`` imports at module level (a function's imports are
    loaded on use: formats/__init__'s lazy compress_for)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If):  # if TYPE_CHECKING: names for the type checker only
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return {m for m in found if m.startswith("agent_adapter")}


def test_the_formats_import_nothing_of_the_engine() -> None:
    for path in FORMATS_DIR.rglob("*.py"):
        outside = {m for m in _imports(path) if not m.startswith(formats.__name__)}
        assert outside <= BELOW, f"{path.relative_to(FORMATS_DIR)}: {sorted(outside - BELOW)}"


def test_a_provider_imports_no_other_provider() -> None:
    for provider in PROVIDERS:
        for path in (FORMATS_DIR / provider).glob("*.py"):
            others = {
                m
                for m in _imports(path)
                for other in PROVIDERS
                if other != provider and m.startswith(f"{formats.__name__}.{other}")
            }
            assert not others, f"{provider}/{path.name}: {sorted(others)}"


def test_compress_for_is_still_exported_here() -> None:
    from agent_adapter.context import _compress_for

    assert formats.compress_for is _compress_for.compress_for
    assert formats.compress_for_sync is _compress_for.compress_for_sync
    assert {"compress_for", "compress_for_sync"} <= set(dir(formats))
