"""The hypothesis property tests of ``roundtrip_report.py``: read from the test files, not
run.
"""

from __future__ import annotations

import ast
from pathlib import Path

from _roundtrip_output import render

HYPOTHESIS_FILES = (
    "tests/test_formats_openai_lossless.py",
    "tests/test_formats_openai.py",
    "tests/test_formats_openai_responses.py",
    "tests/test_formats_openai_responses_lists.py",
    "tests/test_formats_anthropic_alternation.py",
    "tests/test_formats_anthropic_compression.py",
    "tests/test_formats_anthropic.py",
    "tests/test_check.py",
    "tests/test_formats_gemini_properties.py",
    "tests/test_formats_langchain.py",
    "tests/test_engine_properties.py",
)
HYPOTHESIS_DEFAULT_EXAMPLES = 100


# ----------------------------------------------------------------------------------------------
# the hypothesis tests (read, not run)


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _max_examples(call: ast.Call) -> int | None:
    for kw in call.keywords:
        if kw.arg == "max_examples" and isinstance(kw.value, ast.Constant):
            return int(kw.value.value)
    return None


def hypothesis_tests(root: Path) -> list[tuple[str, str, int | None]]:
    """(file, test, max_examples) of every ``@given`` test; ``None`` when no settings say."""
    out: list[tuple[str, str, int | None]] = []
    for rel in HYPOTHESIS_FILES:
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        named: dict[str, int | None] = {}
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and _call_name(node.value) == "settings"
            ):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        named[t.id] = _max_examples(node.value)
        found = False
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            decorators = node.decorator_list
            if not any(_call_name(d) == "given" for d in decorators):
                continue
            n: int | None = None
            for d in decorators:
                if isinstance(d, ast.Call) and _call_name(d) == "settings":
                    n = _max_examples(d)
                elif isinstance(d, ast.Name) and d.id in named:
                    n = named[d.id]
            out.append((rel, node.name, n))
            found = True
        if not found:
            out.append((rel, "(no hypothesis test)", 0))
    return out


def hypothesis_table(root: Path) -> str:
    rows = []
    total = 0
    for rel, name, n in hypothesis_tests(root):
        count = HYPOTHESIS_DEFAULT_EXAMPLES if n is None else n
        total += count
        shown = "-" if name.startswith("(") else f"{count}" + (" (default)" if n is None else "")
        rows.append([Path(rel).name, name, shown])
    rows.append(["total", "", f"{total:,}"])
    return render(["file", "hypothesis test", "max_examples"], rows, left=2)
