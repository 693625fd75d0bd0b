"""cliver_core.policy: the permission shapes, the ambient ExecutionPolicy (a context variable:
threads from asyncio.to_thread and tasks see it, concurrent runs keep their own), the path
scopes, and the builtin tools under a policy (read/write scopes, the env spec of Bash and
Exec, the pinned cwd). The comparisons run cliver-core 0.3.0a5 in a subprocess
(``PYTHONPATH=$CLIVER_REF_DIR``, default ``/tmp/cc/x``) and skip when it is not there."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import cliver_core
from cliver_core import tool
from cliver_core._tools import run_tool
from cliver_core.policy import (
    SAFE_ENV_VARS,
    Decision,
    DecisionAction,
    EnvSpec,
    ExecutionPolicy,
    ToolCallContext,
    ToolCategory,
    current_policy,
    pinned_cwd,
    policy_scope,
    scope_violation,
)
from cliver_core.tools.execute_code import execute_code
from cliver_core.tools.grep_search import grep_search
from cliver_core.tools.list_directory import list_directory
from cliver_core.tools.read_file import read_file
from cliver_core.tools.run_shell_command import run_shell_command
from cliver_core.tools.write_file import write_file

REF_DIR = Path(os.environ.get("CLIVER_REF_DIR", "/tmp/cc/x"))
needs_ref = pytest.mark.skipif(
    not (REF_DIR / "cliver_core" / "__init__.py").is_file(),
    reason=f"cliver-core 0.3.0a5 not extracted at {REF_DIR} (set CLIVER_REF_DIR)",
)
OURS_DIR = Path(cliver_core.__file__).resolve().parents[1]


def run_python(script: str, *args: str, ref: bool, cwd: Path) -> Any:
    """Run ``script`` on 0.3.0a5 (``ref``) or on ours; its last stdout line, as JSON (the
    first line is ``cliver_core.__file__``, checked to be the package asked for)."""
    home = REF_DIR if ref else OURS_DIR
    env = {**os.environ, "PYTHONPATH": str(home), "CLIVER_SECRET": "s3cret"}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    origin, *_, last = done.stdout.splitlines()
    assert Path(origin).resolve().is_relative_to(home.resolve())
    return json.loads(last)


# -- the shapes ---------------------------------------------------------------------------


def test_shapes_fields_defaults_and_values() -> None:
    assert [(f.name, f.default) for f in dataclasses.fields(Decision)] == [
        ("action", dataclasses.MISSING),
        ("reason", None),
    ]
    assert Decision.allow() == Decision(DecisionAction.ALLOW, None)
    assert Decision.deny("no") == Decision(action=DecisionAction.DENY, reason="no")
    assert [m.value for m in DecisionAction] == ["allow", "deny"]
    assert [m.value for m in ToolCategory] == ["safe", "ask"]
    assert ToolCategory("ask") is ToolCategory.ASK and isinstance(ToolCategory.SAFE, str)
    assert [f.name for f in dataclasses.fields(ToolCallContext)] == [
        "tool_name",
        "args",
        "server",
        "category",
    ]
    policy = ExecutionPolicy()
    assert policy == ExecutionPolicy(EnvSpec("inherit", set()), None, None, None)
    assert policy.env is not ExecutionPolicy().env  # a fresh EnvSpec each
    assert "PATH" in SAFE_ENV_VARS and len(SAFE_ENV_VARS) == 12


def test_env_spec_builds_by_exact_names() -> None:
    source = {"PATH": "/bin", "HOME": "/h", "PATHEXT": "x"}
    assert EnvSpec().build(source) == source and EnvSpec().build(source) is not source
    assert EnvSpec("allowlist", {"PATH"}).build(source) == {"PATH": "/bin"}
    assert EnvSpec("denylist", {"PATH"}).build(source) == {"HOME": "/h", "PATHEXT": "x"}


SHAPES = r"""
import dataclasses, json, cliver_core
from cliver_core import policy as p
print(cliver_core.__file__)
def fields(cls):
    missing = dataclasses.MISSING
    return [[f.name, "-" if f.default is missing else repr(f.default),
             f.default_factory is not missing] for f in dataclasses.fields(cls)]
print(json.dumps({
    "all": sorted(p.__all__),
    "fields": {c.__name__: fields(c) for c in (p.Decision, p.ToolCallContext, p.EnvSpec,
                                                p.ExecutionPolicy)},
    "enums": {e.__name__: [[m.name, m.value, str(m)] for m in e]
              for e in (p.DecisionAction, p.ToolCategory)},
    "safe": sorted(p.SAFE_ENV_VARS),
    "reprs": [repr(p.Decision.allow()), repr(p.Decision.deny("x")), repr(p.ExecutionPolicy())],
    "none": [p.current_policy(), p.pinned_cwd(), p.scope_violation("/x", write=True)],
}))
"""


@needs_ref
def test_shapes_equal_0_3_0a5s(tmp_path: Path) -> None:
    ref = run_python(SHAPES, ref=True, cwd=tmp_path)
    assert run_python(SHAPES, ref=False, cwd=tmp_path) == ref
    assert ref["enums"]["ToolCategory"][0] == ["SAFE", "safe", "ToolCategory.SAFE"]


# -- the ambient policy -------------------------------------------------------------------


def test_policy_scope_sets_and_resets(tmp_path: Path) -> None:
    outer, inner = ExecutionPolicy(cwd=tmp_path), ExecutionPolicy(cwd=tmp_path / "in")
    assert current_policy() is None and pinned_cwd() is None
    with policy_scope(outer):
        assert current_policy() is outer and pinned_cwd() == tmp_path
        with policy_scope(None):
            assert current_policy() is outer  # None changes nothing
        with pytest.raises(KeyError), policy_scope(inner):
            assert pinned_cwd() == tmp_path / "in"
            raise KeyError
        assert current_policy() is outer
    assert current_policy() is None


async def test_threads_and_tasks_see_their_own_policy(tmp_path: Path) -> None:
    @tool(description="Where am I pinned?")
    def where() -> str:
        return str(pinned_cwd())

    @tool(description="Where am I pinned, async?")
    async def awhere() -> str:
        await asyncio.sleep(0.01)
        return str(pinned_cwd())

    async def run(name: str) -> list[Any]:
        with policy_scope(ExecutionPolicy(cwd=tmp_path / name)):
            await asyncio.sleep(0.01)
            return [
                await asyncio.to_thread(pinned_cwd),
                await run_tool(where, {}),
                await run_tool(awhere, {}),
                await asyncio.to_thread(awhere.execute),
            ]

    a, b = await asyncio.gather(run("a"), run("b"))
    assert a == [tmp_path / "a", *[str(tmp_path / "a")] * 3]
    assert b == [tmp_path / "b", *[str(tmp_path / "b")] * 3]
    assert await run_tool(where, {}) == "None"


def test_scope_violation(tmp_path: Path) -> None:
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    (inside / "link").symlink_to(outside)
    assert scope_violation(outside / "f", write=True) is None  # no policy
    with policy_scope(ExecutionPolicy(cwd=inside, read_paths=[inside])):
        assert scope_violation(outside / "f", write=True) is None  # writes unrestricted
        assert scope_violation("f.txt", write=False) is None  # relative to the pin
        assert scope_violation(inside / "sub" / ".." / "f", write=False) is None
        assert scope_violation("../out/f", write=False) == (
            f"{outside / 'f'} is outside the allowed read paths ({inside})"
        )
        assert scope_violation("link/f", write=False) == (
            f"{outside / 'f'} is outside the allowed read paths ({inside})"
        )
    with policy_scope(ExecutionPolicy(write_paths=[inside, tmp_path / "x"])):
        assert scope_violation(outside, write=True) == (
            f"{outside} is outside the allowed write paths ({inside}, {tmp_path / 'x'})"
        )


# -- the builtin tools under a policy -----------------------------------------------------


def test_file_tools_resolve_against_the_pin_and_keep_to_the_scopes(tmp_path: Path) -> None:
    pin, other = tmp_path / "pin", tmp_path / "other"
    pin.mkdir()
    other.mkdir()
    (pin / "a.txt").write_text("pinned\n")
    (other / "b.txt").write_text("elsewhere\n")
    policy = ExecutionPolicy(cwd=pin, read_paths=[pin], write_paths=[pin / "out"])
    denied_read = f"{other / 'b.txt'} is outside the allowed read paths ({pin})"
    with policy_scope(policy):
        assert read_file.execute(file_path="a.txt") == [{"text": "     1\tpinned"}]
        assert read_file.execute(file_path=str(other / "b.txt")) == [{"error": denied_read}]
        assert read_file.execute(file_path="../other/b.txt") == [{"error": denied_read}]
        assert list_directory.execute() == [{"text": f"Directory: {pin} (1 entries)\n  a.txt (7B)"}]
        assert list_directory.execute(path=str(other)) == [
            {"error": f"{other} is outside the allowed read paths ({pin})"}
        ]
        assert grep_search.execute(pattern="pinned") == [{"text": f"{pin / 'a.txt'}:1:pinned"}]
        assert grep_search.execute(pattern="x", path=str(other)) == [
            {"error": f"{other} is outside the allowed read paths ({pin})"}
        ]
        assert write_file.execute(file_path="a.txt", content="x") == [
            {"error": f"{pin / 'a.txt'} is outside the allowed write paths ({pin / 'out'})"}
        ]
        assert write_file.execute(file_path="out/n.txt", content="new") == [
            {"text": f"Created file: {pin / 'out' / 'n.txt'} (1 lines written)"}
        ]
    assert (pin / "a.txt").read_text() == "pinned\n" and (pin / "out" / "n.txt").is_file()


def _env_names(result: list[dict[str, str]]) -> set[str]:
    return {line.split("=", 1)[0] for line in result[0]["text"].splitlines() if "=" in line}


def test_bash_builds_its_env_from_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLIVER_SECRET", "s3cret")
    monkeypatch.setenv("CLIVER_OTHER", "1")
    printenv = {"command": "env"}
    assert {"CLIVER_SECRET", "CLIVER_OTHER"} <= _env_names(run_shell_command.execute(**printenv))
    with policy_scope(ExecutionPolicy(env=EnvSpec("allowlist", {"PATH", "CLIVER_OTHER"}))):
        names = _env_names(run_shell_command.execute(**printenv))
    # bash itself adds a few (PWD, SHLVL, _); nothing else of ours gets through
    assert "CLIVER_OTHER" in names and "PATH" in names and "CLIVER_SECRET" not in names
    assert names - {"PATH", "CLIVER_OTHER"} <= {"PWD", "SHLVL", "_", "OLDPWD"}
    with policy_scope(ExecutionPolicy(env=EnvSpec("denylist", {"CLIVER_SECRET"}))):
        names = _env_names(run_shell_command.execute(**printenv))
    assert "CLIVER_OTHER" in names and "CLIVER_SECRET" not in names


def test_bash_runs_in_the_pinned_cwd_over_directory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pin, other = tmp_path / "pin", tmp_path / "other"
    pin.mkdir()
    other.mkdir()
    assert run_shell_command.execute(command="pwd", directory=str(other)) == [
        {"text": f"{other}\n"}
    ]
    with caplog.at_level(logging.INFO), policy_scope(ExecutionPolicy(cwd=pin)):
        assert run_shell_command.execute(command="pwd", directory=str(other)) == [
            {"text": f"{pin}\n"}
        ]
        assert run_shell_command.execute(command="pwd") == [{"text": f"{pin}\n"}]
    assert f"execution policy pins cwd to {pin}, ignoring directory={other}" in caplog.text


def test_exec_filters_its_env_and_runs_in_the_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLIVER_SECRET", "s3cret")
    code = "import os, json; print(json.dumps([os.getcwd(), sorted(os.environ)]))"
    cwd, names = json.loads(execute_code.execute(code=code)[0]["text"])
    assert cwd == os.getcwd() and {"CLIVER_SECRET", "PYTHONIOENCODING"} <= set(names)
    policy = ExecutionPolicy(env=EnvSpec("allowlist", {"PATH", "PYTHONIOENCODING"}), cwd=tmp_path)
    with policy_scope(policy):
        cwd, names = json.loads(execute_code.execute(code=code)[0]["text"])
    assert cwd == str(tmp_path) and set(names) - {"LC_CTYPE"} == {"PATH", "PYTHONIOENCODING"}
    with policy_scope(ExecutionPolicy(env=EnvSpec("denylist", {"PYTHONIOENCODING"}))):
        _, names = json.loads(execute_code.execute(code=code)[0]["text"])
    assert "PYTHONIOENCODING" not in names and "CLIVER_SECRET" in names


UNDER_POLICY = r"""
import json, sys, cliver_core
from pathlib import Path
from cliver_core.policy import EnvSpec, ExecutionPolicy, policy_scope, scope_violation
from cliver_core.tool import discover_builtin_tools
print(cliver_core.__file__)
root = Path(sys.argv[1])
tools = {t.name: t for t in discover_builtin_tools()}
policies = {
    "pinned": ExecutionPolicy(cwd=root / "pin", read_paths=[root / "pin"],
                              write_paths=[root / "pin" / "out"]),
    "env": ExecutionPolicy(env=EnvSpec("allowlist", {"PATH", "CLIVER_SECRET"}), cwd=root),
    "deny": ExecutionPolicy(env=EnvSpec("denylist", {"CLIVER_SECRET"})),
}
out = []
for policy, name, args in json.loads(sys.argv[2]):
    with policy_scope(policies[policy]):
        if name == "scope":
            out.append(scope_violation(args["path"], write=args["write"]))
        else:
            out.append(tools[name].execute(**args))
print(json.dumps(out))
"""


def _policy_calls(root: Path) -> list[tuple[str, str, dict[str, Any]]]:
    (root / "pin" / "sub").mkdir(parents=True)
    (root / "pin" / "a.txt").write_text("pinned\n")
    (root / "other").mkdir()
    (root / "other" / "b.txt").write_text("elsewhere\n")
    (root / "pin" / "link").symlink_to(root / "other")
    other = str(root / "other")
    shell_env = "env | grep -E '^(PATH|CLIVER_SECRET)=' | sort"
    return [
        ("pinned", "scope", {"path": "../other/x", "write": False}),
        ("pinned", "scope", {"path": "link/b.txt", "write": False}),
        ("pinned", "scope", {"path": "out/x", "write": True}),
        ("pinned", "scope", {"path": "x", "write": True}),
        ("pinned", "Read", {"file_path": "a.txt"}),
        ("pinned", "Read", {"file_path": "link/b.txt"}),
        ("pinned", "Read", {"file_path": other + "/b.txt"}),
        ("pinned", "Write", {"file_path": "a.txt", "content": "x"}),
        ("pinned", "Write", {"file_path": "out/new.txt", "content": "x\ny\n"}),
        ("pinned", "LS", {}),
        ("pinned", "LS", {"path": other}),
        ("pinned", "Grep", {"pattern": "pinned"}),
        ("pinned", "Grep", {"pattern": "e", "path": other}),
        ("pinned", "Bash", {"command": "pwd; ls", "directory": other}),
        ("pinned", "Exec", {"code": "import os; print(sorted(os.listdir()))"}),
        ("env", "Bash", {"command": shell_env}),
        ("env", "Exec", {"code": "import os; print(sorted(os.environ), os.getcwd())"}),
        ("deny", "Bash", {"command": "echo ${CLIVER_SECRET:-unset}"}),
        ("deny", "Exec", {"code": "import os; print(os.environ.get('CLIVER_SECRET'))"}),
    ]


@needs_ref
def test_tools_under_a_policy_equal_0_3_0a5s(tmp_path: Path) -> None:
    runs, calls = [], []
    for flag in (True, False):
        root = tmp_path / ("ref" if flag else "ours")
        root.mkdir()
        calls = _policy_calls(root)
        out = run_python(UNDER_POLICY, str(root), json.dumps(calls), ref=flag, cwd=tmp_path)
        runs.append(json.loads(json.dumps(out).replace(str(root), "<root>")))
    ref, ours = runs
    for call, want, got in zip(calls, ref, ours, strict=True):
        assert got == want, call
    assert ref[0] == "<root>/other/x is outside the allowed read paths (<root>/pin)"
    assert ref[-1] == [{"text": "None\n"}]
