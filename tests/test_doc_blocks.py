"""Every ```python block of README.md and of the documentation (docs/**/*.md) runs as written,
each a program of its own, and prints what its page says it prints.

Each block runs in a fresh interpreter (``python -c``), from a copy of the project's place next
to the data: the working directory is ``<tmp>/main`` and ``<tmp>/shared/data`` is the data
folder (``$AGENT_ADAPTER_DATA`` or ``../shared/data``), so the pages' relative paths are the
ones a reader types in the repository. Connections to anything but this machine are refused
(a ``sitecustomize`` the subprocess loads), so a block that needs a key or the network fails
here: it must run against ``agent_adapter.testing.ProviderServer`` (or a local model), or open
with the line :data:`NOT_RUN` and say why (at most :data:`MAX_NOT_RUN` blocks in all).

**Figures cannot go stale.** A python block followed by a ```` ```text title="Output" ````
block must print exactly that text (lines compared after stripping trailing blanks; ``...``
stands for any text, as in doctest's ELLIPSIS): a figure on a page is either printed by its
program and checked here, or it is not on the page.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The pages whose blocks run: the README and every page of the documentation site.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: The first line of a block the tests do not run (followed by the reason).
NOT_RUN = "# not run:"
#: At most this many blocks may opt out (the examples are meant to run).
MAX_NOT_RUN = 2
#: The info string of a block that holds the expected output of the python block before it.
OUTPUT_FENCE = '```text title="Output"'
#: Seconds a block may take (the framework loops are the slowest, some seconds).
TIMEOUT_S = 600

#: Loaded by every block's interpreter: refuses connections that leave this machine.
_OFFLINE = textwrap.dedent(
    """
    import ipaddress
    import socket

    _connect = socket.socket.connect
    _connect_ex = socket.socket.connect_ex


    def _local(address):
        if not isinstance(address, tuple):  # a unix socket
            return True
        host = address[0]
        try:
            return ipaddress.ip_address(host.split("%")[0]).is_loopback
        except ValueError:
            return host == "localhost"


    def _refuse(address):
        raise ConnectionRefusedError(f"doc block: no network ({address!r} is not local)")


    def connect(self, address):
        if not _local(address):
            _refuse(address)
        return _connect(self, address)


    def connect_ex(self, address):
        if not _local(address):
            _refuse(address)
        return _connect_ex(self, address)


    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    """
)


@dataclass(frozen=True)
class Block:
    """One fenced python block: its page, the line its code starts on, its code and the output
    the page promises (``None``: no ``Output`` block follows it)."""

    page: str
    line: int
    code: str
    output: str | None = None

    @property
    def not_run(self) -> bool:
        return self.code.lstrip().startswith(NOT_RUN)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def _closing(lines: list[str], start: int, page: str, opening: int) -> int:
    j = start
    while j < len(lines) and lines[j].strip() != "```":
        j += 1
    if j == len(lines):
        raise AssertionError(f"{page}:{opening + 1}: a code block is never closed")
    return j


def python_blocks(text: str, page: str = "README.md") -> list[Block]:
    """The ```python blocks of ``text``, in order, with the line their code starts on and the
    ``Output`` block that follows each (blank lines between them allowed)."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if re.fullmatch(r"```python\s*", lines[i]):
            start = i + 1
            j = code_end = _closing(lines, start, page, i)
            output = None
            k = j + 1
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k < len(lines) and lines[k].strip() == OUTPUT_FENCE:
                end = _closing(lines, k + 1, page, k)
                output = "\n".join(lines[k + 1 : end]) + "\n"
                j = end
            code = "\n".join(lines[start:code_end]) + "\n"
            blocks.append(Block(page, start + 1, code, output))
            i = j
        i += 1
    return blocks


def _page_name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


BLOCKS = [
    block
    for page in PAGES
    for block in python_blocks(page.read_text(encoding="utf-8"), _page_name(page))
]


def output_matches(expected: str, actual: str) -> bool:
    """``actual`` is ``expected``, line ends stripped, ``...`` standing for any text."""

    def norm(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())

    pattern = ".*?".join(re.escape(piece) for piece in norm(expected).split("..."))
    return re.fullmatch(pattern, norm(actual), flags=re.DOTALL) is not None


def _data_dir() -> Path:
    env = os.environ.get("AGENT_ADAPTER_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data"


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``<tmp>/main`` (the working directory) next to ``<tmp>/shared/data`` and the guard."""
    data = _data_dir()
    if not data.is_dir():
        message = f"shared data folder not found: {data} (set AGENT_ADAPTER_DATA)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    base = tmp_path_factory.mktemp("docs")
    (base / "shared").mkdir()
    (base / "shared" / "data").symlink_to(data.resolve(), target_is_directory=True)
    (base / "main").mkdir()
    (base / "site").mkdir()
    (base / "site" / "sitecustomize.py").write_text(_OFFLINE, encoding="utf-8")
    return base


def run_block(
    block: Block, sandbox: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``block`` in a fresh interpreter, offline, from ``<sandbox>/main`` (or ``cwd``)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and k not in ("PYTHONPATH", "PYTHONSTARTUP")
    }
    # the guard first; a PYTHONPATH given to the tests (a worktree's sources) stays behind it
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(sandbox / "site"), os.environ.get("PYTHONPATH", "")) if p
    )
    code = "\n" * (block.line - 1) + block.code  # tracebacks name the page's own lines
    return subprocess.run(
        [sys.executable, "-c", compile_check(code, block)],
        cwd=cwd or sandbox / "main",
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def compile_check(code: str, block: Block) -> str:
    """``code``, once it compiles as a module (a top-level ``await`` does not)."""
    try:
        compile(code, block.where, "exec")
    except SyntaxError as exc:
        raise AssertionError(
            f"{block.page}:{exc.lineno}: the block does not compile as a program: {exc.msg}"
        ) from None
    return code


def missing_modules(code: str) -> list[str]:
    """The modules ``code`` imports (anywhere in it) that are not installed."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    missing = []
    for name in sorted(names):
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # its parent package is not there
            found = False
        if not found:
            missing.append(name)
    return missing


def test_missing_modules_names_what_is_not_installed() -> None:
    code = "import json\nfrom no_such_package.sub import x\ndef f():\n    import no_such_two\n"
    assert missing_modules(code) == ["no_such_package.sub", "no_such_two"]


def test_the_pages_have_python_blocks_and_few_opt_outs() -> None:
    assert len([b for b in BLOCKS if b.page == "README.md"]) >= 1
    assert len(BLOCKS) >= 15
    skipped = [b for b in BLOCKS if b.not_run]
    assert len(skipped) <= MAX_NOT_RUN, [b.where for b in skipped]
    for b in skipped:
        reason = b.code.lstrip().splitlines()[0][len(NOT_RUN) :].strip()
        assert reason, f"{b.where}: '{NOT_RUN}' needs a reason"


def test_a_block_not_run_still_compiles_and_its_imports_exist() -> None:
    """What is not run is still a program whose imported names exist (none made up)."""
    for block in (b for b in BLOCKS if b.not_run):
        tree = ast.parse(compile_check(block.code, block))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), (
                        f"{block.where}: {node.module} has no {alias.name}"
                    )
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    importlib.import_module(alias.name)


#: The integration modules whose docstring opens with an ``Example::`` program.
EXAMPLE_MODULES = ["google_adk", "langchain", "langgraph", "openai_agents", "pydantic_ai"]


@pytest.mark.parametrize("name", EXAMPLE_MODULES)
def test_each_integration_docstring_example_runs(name: str, sandbox: Path) -> None:
    """Each integration module's docstring example builds its agent as written (no model is
    called: the examples construct, they do not run)."""
    module_name = {"openai_agents": "agents", "google_adk": "google.adk"}.get(name, name)
    if importlib.util.find_spec(module_name.split(".")[0]) is None or (
        "." in module_name and importlib.util.find_spec(module_name) is None
    ):
        pytest.skip(f"{module_name} is not installed")
    module = importlib.import_module(f"agent_adapter.integrations.{name}")
    doc = module.__doc__ or ""
    assert "::\n" in doc, f"{name}: no example in the docstring"
    example = textwrap.dedent(literal_block(doc.split("::\n", 1)[1]))
    done = run_block(Block(f"agent_adapter.integrations.{name}", 1, example), sandbox)
    assert done.returncode == 0, done.stderr


def literal_block(text: str) -> str:
    """The indented lines ``text`` opens with (a reStructuredText ``::`` block)."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("    "):
            break
        lines.append(line)
    return "\n".join(lines).strip("\n") + "\n"


def test_literal_block_ends_at_the_first_unindented_line() -> None:
    assert literal_block("\n    a = 1\n\n    b = 2\nprose\n    c\n") == "    a = 1\n\n    b = 2\n"


def test_the_block_parser_finds_blocks_their_lines_and_outputs() -> None:
    text = (
        "intro\n```python\nx = 1\n```\n```bash\nls\n```\n```python\n# not run: a key\ny\n```\n"
        '```python\nprint(2)\n```\n\n```text title="Output"\n2\n```\n'
    )
    blocks = python_blocks(text, "p.md")
    assert [(b.line, b.code, b.not_run, b.output) for b in blocks] == [
        (3, "x = 1\n", False, None),
        (9, "# not run: a key\ny\n", True, None),
        (13, "print(2)\n", False, "2\n"),
    ]
    with pytest.raises(AssertionError, match="never closed"):
        python_blocks("```python\nx = 1\n")


def test_output_matching_strips_line_ends_and_takes_ellipses() -> None:
    assert output_matches("a 1\nb ...\n", "a 1  \nb 2, 3\n")
    assert output_matches("[1, ...]", "[1, 2, 3]\n")
    assert not output_matches("a 1\n", "a 2\n")
    assert not output_matches("a\n", "a\nb\n")


def test_a_top_level_await_is_refused() -> None:
    with pytest.raises(AssertionError, match="does not compile"):
        compile_check("result = await run()\n", Block("p.md", 7, "result = await run()\n"))


def test_the_sandbox_refuses_the_network(sandbox: Path) -> None:
    code = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('93.184.216.34', 80), timeout=5)\n"
        "except ConnectionRefusedError as e:\n"
        "    print('refused', e)\n"
    )
    done = run_block(Block("p.md", 1, code), sandbox)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused doc block: no network")


@pytest.mark.parametrize("block", [b for b in BLOCKS if not b.not_run], ids=lambda b: b.where)
def test_each_python_block_runs_as_written(block: Block, sandbox: Path) -> None:
    missing = missing_modules(block.code)
    if missing:  # every module a page imports is installed by .ci/run
        message = f"{block.where} imports what is not installed: {missing}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    done = run_block(block, sandbox)
    if done.returncode != 0:
        pytest.fail(f"{block.where} exits {done.returncode}\n{done.stdout}\n{done.stderr}")
    if block.output is not None:
        assert output_matches(block.output, done.stdout), (
            f"{block.where} prints\n{done.stdout}\nwhere its page says\n{block.output}"
        )
