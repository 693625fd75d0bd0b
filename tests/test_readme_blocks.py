"""Every ```python block of README.md runs as written, each a program of its own.

Each block runs in a fresh interpreter (``python -c``), from a copy of the project's place next
to the data: the working directory is ``<tmp>/main`` and ``<tmp>/shared/data`` is the data
folder (``$AGENT_ADAPTER_DATA`` or ``../shared/data``), so the README's relative paths are the
ones a reader types in the repository. Connections to anything but this machine are refused
(a ``sitecustomize`` the subprocess loads), so a block that needs a key or the network fails
here: it must run against ``agent_adapter.testing.ProviderServer`` (or a local model), or open
with the line :data:`NOT_RUN` and say why.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The first line of a block the tests do not run (followed by the reason).
NOT_RUN = "# not run:"
#: At most this many blocks may opt out (the README's examples are meant to run).
MAX_NOT_RUN = 1
#: Seconds a block may take (the local model's summary is the slowest, some seconds).
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
        raise ConnectionRefusedError(f"README block: no network ({address!r} is not local)")


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
    """One fenced python block: where it starts in README.md and its code."""

    line: int
    code: str

    @property
    def not_run(self) -> bool:
        return self.code.lstrip().startswith(NOT_RUN)


def python_blocks(text: str) -> list[Block]:
    """The ```python blocks of ``text``, in order, with the line their code starts on."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if re.fullmatch(r"```python\s*", lines[i]):
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                raise AssertionError(f"README.md:{i + 1}: a ```python block is never closed")
            blocks.append(Block(start + 1, "\n".join(lines[start:j]) + "\n"))
            i = j
        i += 1
    return blocks


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


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
    base = tmp_path_factory.mktemp("readme")
    (base / "shared").mkdir()
    (base / "shared" / "data").symlink_to(data.resolve(), target_is_directory=True)
    (base / "main").mkdir()
    (base / "site").mkdir()
    (base / "site" / "sitecustomize.py").write_text(_OFFLINE, encoding="utf-8")
    return base


def run_block(block: Block, sandbox: Path) -> subprocess.CompletedProcess[str]:
    """``block`` in a fresh interpreter, offline, from ``<sandbox>/main``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and k not in ("PYTHONPATH", "PYTHONSTARTUP")
    }
    env["PYTHONPATH"] = str(sandbox / "site")
    code = "\n" * (block.line - 1) + block.code  # tracebacks name the README's own lines
    return subprocess.run(
        [sys.executable, "-c", compile_check(code, block)],
        cwd=sandbox / "main",
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def compile_check(code: str, block: Block) -> str:
    """``code``, once it compiles as a module (a top-level ``await`` does not)."""
    try:
        compile(code, f"README.md:{block.line}", "exec")
    except SyntaxError as exc:
        raise AssertionError(
            f"README.md:{exc.lineno}: the block does not compile as a program: {exc.msg}"
        ) from None
    return code


def missing_modules(code: str) -> list[str]:
    """The modules ``code`` imports (anywhere in it) that are not installed."""
    import ast
    import importlib.util

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


def test_the_readme_has_python_blocks_and_few_opt_outs() -> None:
    assert len(BLOCKS) >= 8
    skipped = [b for b in BLOCKS if b.not_run]
    assert len(skipped) <= MAX_NOT_RUN, [b.line for b in skipped]
    for b in skipped:
        reason = b.code.lstrip().splitlines()[0][len(NOT_RUN) :].strip()
        assert reason, f"README.md:{b.line}: '{NOT_RUN}' needs a reason"


def test_a_block_not_run_still_compiles_and_its_imports_exist() -> None:
    """What is not run is still a program whose imported names exist (none made up)."""
    import ast
    import importlib

    for block in (b for b in BLOCKS if b.not_run):
        tree = ast.parse(compile_check(block.code, block))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), (
                        f"README.md:{block.line}: {node.module} has no {alias.name}"
                    )
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    importlib.import_module(alias.name)


def test_the_use_block_prints_what_it_says(sandbox: Path) -> None:
    """The ``## Use`` example's comment is its real output on the real trace."""
    (block,) = [b for b in BLOCKS if "compress_for_sync(trace.messages, policy)" in b.code]
    promised = re.search(r"print\(report\.explain\(\)\)\s+# (.*)", block.code)
    assert promised is not None, block.code
    done = run_block(block, sandbox)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == promised.group(1).strip()


def test_the_pydantic_ai_module_example_runs(sandbox: Path) -> None:
    """Its docstring's example imports what it calls (it once imported another name)."""
    pytest.importorskip("pydantic_ai")
    import agent_adapter.integrations.pydantic_ai as module

    doc = module.__doc__ or ""
    example = textwrap.dedent(doc.split("::\n", 1)[1])
    assert "compression_capability(policy)" in example
    done = run_block(Block(1, example), sandbox)
    assert done.returncode == 0, done.stderr


def test_the_block_parser_finds_blocks_and_their_lines() -> None:
    text = "intro\n```python\nx = 1\n```\n```bash\nls\n```\n```python\n# not run: a key\ny\n```\n"
    blocks = python_blocks(text)
    assert [(b.line, b.code, b.not_run) for b in blocks] == [
        (3, "x = 1\n", False),
        (9, "# not run: a key\ny\n", True),
    ]
    with pytest.raises(AssertionError, match="never closed"):
        python_blocks("```python\nx = 1\n")


def test_a_top_level_await_is_refused() -> None:
    with pytest.raises(AssertionError, match="does not compile"):
        compile_check("result = await run()\n", Block(7, "result = await run()\n"))


def test_the_sandbox_refuses_the_network(sandbox: Path) -> None:
    code = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('93.184.216.34', 80), timeout=5)\n"
        "except ConnectionRefusedError as e:\n"
        "    print('refused', e)\n"
    )
    done = run_block(Block(1, code), sandbox)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused README block: no network")


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if not b.not_run], ids=lambda b: f"README.md:{b.line}"
)
def test_each_python_block_runs_as_written(block: Block, sandbox: Path) -> None:
    missing = missing_modules(block.code)
    if missing:  # google-adk is not in the dev extra (.ci/run installs it)
        message = f"README.md:{block.line} imports what is not installed: {missing}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    done = run_block(block, sandbox)
    if done.returncode != 0:
        pytest.fail(f"README.md:{block.line} exits {done.returncode}\n{done.stdout}\n{done.stderr}")
