"""The distributions of one repository (issue 33): the library ``agent-adapter`` (root),
its command line ``agent-adapter-cli`` (packages/agent-adapter-cli, only ``agent_adapter/cli``),
its context gateway ``agent-adapter-gateway`` (packages/agent-adapter-gateway, only
``agent_adapter/gateway``, issue 36) and ``cliver-core`` 0.4 (packages/cliver-core, the
successor of 0.3.0a5, every one of its modules). Installed, ``cliver_core`` comes from the
distribution ``cliver-core``, ``agent_adapter.cli`` from ``agent-adapter-cli``, and the
library's required dependencies hold neither httpx, typer, rich nor numpy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

#: one worker runs the whole module (pytest -n with --dist loadgroup, .ci/run), so its
#: module fixture (the packaging one, the slow part) is set up once, not once a worker
pytestmark = pytest.mark.xdist_group("packaging")

ROOT = Path(__file__).resolve().parents[1]
#: where each distribution's pyproject.toml is, and its wheel's name
PROJECTS = {
    "agent-adapter": (ROOT, "agent_adapter"),
    "agent-adapter-cli": (ROOT / "packages" / "agent-adapter-cli", "agent_adapter_cli"),
    "agent-adapter-gateway": (
        ROOT / "packages" / "agent-adapter-gateway",
        "agent_adapter_gateway",
    ),
    "cliver-core": (ROOT / "packages" / "cliver-core", "cliver_core"),
}
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
#: what a plain install of the library must not pull in
NOT_CORE = {"httpx", "typer", "rich", "numpy"}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    projects = [str(folder) for folder, _ in PROJECTS.values()]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *projects, "-w", str(out)],
        check=True,
        capture_output=True,
    )
    found = {}
    for name, (_, stem) in PROJECTS.items():
        (found[name],) = out.glob(f"{stem}-*.whl")
    return found


@pytest.fixture(scope="module")
def site(wheels: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target"]
    subprocess.run([*install, str(target), *map(str, wheels.values())], check=True)
    return target


def _names(wheel: Path) -> set[str]:
    return set(zipfile.ZipFile(wheel).namelist())


def _run(code: str, path: list[Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    # -I would drop PYTHONPATH: -s -E is not wanted either (the venv's packages are needed);
    # an editable install's own path comes after PYTHONPATH, so the given dirs win
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )


def test_the_cliver_core_wheel_holds_every_0_3_0a5_module(wheels: dict[str, Path]) -> None:
    names = _names(wheels["cliver-core"])
    for module in MODULES:
        as_path = module.replace(".", "/")
        assert f"cliver_core/{as_path}.py" in names or f"cliver_core/{as_path}/__init__.py" in (
            names
        ), module
    assert not any(n.startswith("agent_adapter/") for n in names)


def test_each_wheel_ships_only_its_own_modules(wheels: dict[str, Path]) -> None:
    core = {n for n in _names(wheels["agent-adapter"]) if not n.startswith("agent_adapter-")}
    assert "agent_adapter/__init__.py" in core and "agent_adapter/context/__init__.py" in core
    assert not [n for n in core if n.startswith(("cliver_core/", "agent_adapter/cli/"))]
    cli = {n for n in _names(wheels["agent-adapter-cli"]) if ".dist-info/" not in n}
    assert "agent_adapter/cli/__init__.py" in cli
    assert not [n for n in cli if not n.startswith("agent_adapter/cli/")]  # no __init__.py above
    gateway = {n for n in _names(wheels["agent-adapter-gateway"]) if ".dist-info/" not in n}
    assert "agent_adapter/gateway/__init__.py" in gateway
    assert not [n for n in gateway if not n.startswith("agent_adapter/gateway/")]


def test_cliver_core_comes_from_the_distribution_cliver_core(site: Path, tmp_path: Path) -> None:
    code = (
        "import importlib.metadata as m, json, cliver_core, agent_adapter.cli,"
        " agent_adapter.gateway;"
        "d = m.packages_distributions();"
        "print(json.dumps([cliver_core.__file__, agent_adapter.cli.__file__, d['cliver_core'],"
        " sorted(d['agent_adapter']), m.distribution('cliver-core').version,"
        " m.distribution('cliver-core').requires]))"
    )
    done = _run(code, [site], tmp_path)
    assert done.returncode == 0, done.stderr
    where, cli_where, dists, adapter_dists, version, requires = json.loads(done.stdout)
    assert where.startswith(str(site)) and cli_where.startswith(str(site))
    assert dists == ["cliver-core"]
    assert adapter_dists == ["agent-adapter", "agent-adapter-cli", "agent-adapter-gateway"]
    assert version.startswith("0.4.")
    assert any(r.startswith("agent-adapter") for r in requires)
    assert any(r.startswith("httpx") for r in requires)
    assert any(r.startswith("mcp") for r in requires)  # cliver_core.mcp, as 0.3.0a5


def test_the_library_requires_neither_httpx_typer_rich_nor_numpy(
    site: Path, tmp_path: Path
) -> None:
    code = (
        "import importlib.metadata as m, json;"
        "print(json.dumps({n: m.distribution(n).requires or [] for n in"
        " ('agent-adapter', 'agent-adapter-cli', 'agent-adapter-gateway')}))"
    )
    done = _run(code, [site], tmp_path)
    assert done.returncode == 0, done.stderr
    requires = json.loads(done.stdout)

    def required(name: str, extra: str = "") -> set[str]:
        # the requirements without a marker, or those of ``extra``
        out = set()
        for text in requires[name]:
            requirement = Requirement(text)
            marker = requirement.marker
            if extra:
                wanted = marker is not None and marker.evaluate({"extra": extra})
            else:
                wanted = marker is None
            if wanted:
                out.add(canonicalize_name(requirement.name))
        return out

    core = required("agent-adapter")
    assert {"pydantic", "tiktoken"} <= core and not core & NOT_CORE, core
    assert {"agent-adapter", "typer", "rich"} <= required("agent-adapter-cli")
    assert {"agent-adapter", "agent-adapter-cli", "starlette", "uvicorn", "httpx"} <= required(
        "agent-adapter-gateway"
    )
    assert required("agent-adapter", "relevance") == {"numpy", "rank-bm25", "snowballstemmer"}
    assert required("agent-adapter", "prices") == {"genai-prices"}


def test_each_wheel_and_sdist_ships_the_license(
    wheels: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The MIT LICENSE of the metadata is in each distribution's wheel and sdist (issue 37),
    the same text in all three; a report page the README's command wrote is in no sdist."""
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    out = tmp_path_factory.mktemp("sdists")
    for name, (folder, stem) in PROJECTS.items():
        assert (folder / "LICENSE").read_text(encoding="utf-8") == text, name
        wheel = zipfile.ZipFile(wheels[name])
        licenses = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert len(licenses) == 1, (name, wheel.namelist()[-8:])
        assert wheel.read(licenses[0]).decode() == text
        (folder / "report.html").write_text("<html></html>", encoding="utf-8")
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    f"import hatchling.build as b; print(b.build_sdist({str(out)!r}))",
                ],
                cwd=folder,
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            (folder / "report.html").unlink()
        assert done.returncode == 0, done.stderr
        import tarfile

        with tarfile.open(out / done.stdout.strip()) as sdist:
            members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
        assert "LICENSE" in members, (name, sorted(members)[:20])
        assert "report.html" not in members, name
        assert stem  # the wheel's stem names the same distribution


def test_the_all_extra_holds_every_optional_feature_without_a_contradiction() -> None:
    """``agent-adapter[all]`` is every extra of the library (a feature a line) but google-adk,
    whose google-genai<3 no release of ADK lifts while ``gemini`` needs google-genai 3.6;
    nothing in it contradicts another extra's bound (issue 37)."""
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    (everything,) = extras["all"]
    requirement = Requirement(everything)
    assert canonicalize_name(requirement.name) == "agent-adapter"  # the extras by name
    features = set(extras) - {"all", "dev", "bench", "google-adk"}
    assert requirement.extras == features
    pins: dict[str, list[Requirement]] = {}
    for extra in features:
        for text in extras[extra]:
            r = Requirement(text)
            pins.setdefault(canonicalize_name(r.name), []).append(r)
    for name, given in pins.items():
        versions = [str(r.specifier) for r in given if str(r.specifier)]
        assert len(set(versions)) <= 1, (name, versions)  # one bound a package
