"""One import name, two distributions (issue 21): ``agent-adapter`` installs ``cliver_core``
as ``cliver-core`` 0.3.0a5 does. The built wheel holds every 0.3.0a5 module; installed, the
import name maps to ``agent-adapter`` in ``importlib.metadata``; and importing ``cliver_core``
with a ``cliver-core`` distribution installed beside it warns how to get a clean install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: 0.3.0a5's public modules (its wheel's RECORD, the private and transport ones left out)
MODULES = [
    "agent",
    "bindings",
    "capabilities",
    "constants",
    "errors",
    "events",
    "local",
    "mcp",
    "media",
    "media_jobs",
    "messages",
    "pipeline",
    "policy",
    "presets",
    "provider",
    "provider.providers",
    "skill",
    "skill_tools",
    "tool",
    "tools",
    "util",
]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(out)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("agent_adapter-*.whl")
    return built


def _run(code: str, path: list[Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    # -I would drop PYTHONPATH: -s -E is not wanted either (the venv's packages are needed);
    # the editable install's own path comes after PYTHONPATH, so the given dirs win
    return subprocess.run(
        [sys.executable, "-W", "always::RuntimeWarning", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )


def test_the_wheel_holds_every_0_3_0a5_module(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for module in MODULES:
        as_path = module.replace(".", "/")
        assert f"cliver_core/{as_path}.py" in names or f"cliver_core/{as_path}/__init__.py" in (
            names
        ), module


def test_installed_the_import_name_maps_to_agent_adapter(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target"]
    subprocess.run([*install, str(target), str(wheel)], check=True, capture_output=True)
    code = (
        "import importlib.metadata as m, json, cliver_core;"
        "print(json.dumps([cliver_core.__file__, m.packages_distributions()['cliver_core'],"
        " m.version('agent-adapter')]))"
    )
    done = _run(code, [target], tmp_path)
    assert done.returncode == 0, done.stderr
    where, dists, version = json.loads(done.stdout)
    assert where.startswith(str(target)) and dists == ["agent-adapter"] and version
    assert "RuntimeWarning" not in done.stderr


def _fake_dist(folder: Path, name: str, requires: list[str]) -> Path:
    info = folder / f"{name.replace('-', '_')}-0.3.0a5.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.4", f"Name: {name}", "Version: 0.3.0a5"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    return folder


def test_importing_with_cliver_core_installed_too_warns(tmp_path: Path) -> None:
    other = _fake_dist(tmp_path / "other", "cliver-core", ["pydantic>=2.0.0"])
    done = _run("import cliver_core", [other, ROOT / "src"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "RuntimeWarning: cliver-core 0.3.0a5 is installed beside agent-adapter" in done.stderr
    assert "pip uninstall -y cliver-core agent-adapter" in done.stderr


def test_a_cliver_core_that_depends_on_agent_adapter_is_not_a_second_copy(
    tmp_path: Path,
) -> None:
    shim = _fake_dist(tmp_path / "shim", "cliver-core", ["agent-adapter>=0.1"])
    done = _run("import cliver_core", [shim, ROOT / "src"], tmp_path)
    assert done.returncode == 0 and "RuntimeWarning" not in done.stderr, done.stderr
