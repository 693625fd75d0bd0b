"""The library's layering, measured: import cycles (counting imports inside functions),
``_private`` names imported across packages, what ``import agent_adapter.providers`` loads,
and what ``import agent_adapter.context`` costs (time, numpy).

    python tools/layering.py
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the source folders of the repository's distributions: agent-adapter and those of packages/
#: (agent-adapter-cli, cliver-core)
SRCS = [ROOT / "src", *sorted((ROOT / "packages").glob("*/src"))]


def _modules() -> dict[str, Path]:
    out = {}
    for path in (p for src in SRCS for p in src.rglob("*.py")):
        src = next(s for s in SRCS if path.is_relative_to(s))
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module: str, node: ast.ImportFrom, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_pkg else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def edges() -> tuple[dict[str, set[str]], list[tuple[str, str, str]]]:
    mods = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    private: list[tuple[str, str, str]] = []
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets: list[tuple[str, list[str]]] = []
            if isinstance(node, ast.Import):
                targets = [(a.name, []) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, node, path.name == "__init__.py")
                targets = [(base, [a.name for a in node.names])]
                for a in node.names:
                    if f"{base}.{a.name}" in mods:
                        targets.append((f"{base}.{a.name}", []))
            for target, names in targets:
                if target in mods and target != name:
                    graph[name].add(target)
                    pkg_from = name.rsplit(".", 1)[0] if path.name != "__init__.py" else name
                    pkg_to = target.rsplit(".", 1)[0]
                    related = pkg_from.startswith(pkg_to) or pkg_to.startswith(pkg_from)
                    for n in names:
                        if n.startswith("_") and not n.startswith("__") and not related:
                            private.append((name, target, n))
    return graph, private


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def _probe(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def main() -> int:
    graph, private = edges()
    found = cycles(graph)
    print(f"modules: {len(_modules())}")
    print(f"import cycles (function-level imports counted): {len(found)}")
    for comp in found:
        print(f"  {len(comp)} modules: {', '.join(comp[:8])}{' ...' if len(comp) > 8 else ''}")
    print(f"_private names imported across packages: {len(private)}")
    loaded = _probe(
        "import sys, agent_adapter.providers; "
        "print(sum(m.startswith(('agent_adapter', 'cliver_core')) for m in sys.modules))"
    )
    print(f"modules loaded by import agent_adapter.providers: {loaded}")
    timing = _probe(
        "import time, sys; t = time.perf_counter(); import agent_adapter.context; "
        "print(f'{time.perf_counter() - t:.3f}', 'numpy' in sys.modules)"
    )
    seconds, numpy = timing.split()
    print(f"import agent_adapter.context: {seconds} s, numpy loaded: {numpy}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
