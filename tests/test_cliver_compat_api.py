"""cliver_core keeps the public API of cliver-core 0.3.0a5 (a program written against 0.3.0a5
must run unchanged on ours): every name, signature, field, enum member and builtin tool of the
committed snapshot (``tests/compat/api_0.3.0a5.json``, generated from the 0.3.0a5 wheel by
``tests/compat/api_snapshot.py``) is checked against ours by the rules in that script's
docstring: ours may add, never drop, rename, reorder or re-default.

The second test regenerates the snapshot from the wheel (``$CLIVER_REF_DIR``: the unzipped
wheel, which ``.ci/run`` downloads) in a subprocess and checks it equals the committed one;
without ``CLIVER_REF_DIR`` it skips, under ``CI=true`` it fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compat import api_snapshot

SNAPSHOT = json.loads(api_snapshot.SNAPSHOT.read_text(encoding="utf-8"))


def _ref_dir() -> Path:
    value = os.environ.get("CLIVER_REF_DIR")
    if not value:
        message = "CLIVER_REF_DIR is not set (the unzipped cliver-core 0.3.0a5 wheel)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    path = Path(value)
    if not (path / "cliver_core" / "__init__.py").is_file():
        pytest.fail(f"CLIVER_REF_DIR={value} holds no cliver_core package")
    return path


def test_ours_is_tested_not_the_wheel() -> None:
    import cliver_core

    ref = os.environ.get("CLIVER_REF_DIR")
    origin = Path(cliver_core.__file__).resolve()
    assert not (ref and origin.is_relative_to(Path(ref).resolve())), origin
    assert SNAPSHOT["version"] == api_snapshot.REF_VERSION


@pytest.mark.parametrize("module", list(SNAPSHOT["modules"]))
def test_ours_keeps_the_module_api(module: str) -> None:
    problems = api_snapshot.check_module(module, SNAPSHOT["modules"][module], SNAPSHOT["modules"])
    assert not problems, (
        f"{len(problems)} incompatibilities with cliver-core {api_snapshot.REF_VERSION} in "
        f"{module}:\n  " + "\n  ".join(problems)
    )


def test_the_snapshot_is_the_wheels() -> None:
    ref = _ref_dir()
    script = Path(api_snapshot.__file__)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(script), "--ref-dir", str(ref)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    committed = api_snapshot.SNAPSHOT.read_text(encoding="utf-8")
    assert done.stdout == committed, (
        "the committed snapshot differs from the wheel's; regenerate it with "
        f"python {script.relative_to(Path.cwd()) if script.is_relative_to(Path.cwd()) else script}"
        f" --ref-dir {ref} --out {api_snapshot.SNAPSHOT}"
    )


def test_the_wheel_passes_its_own_check() -> None:
    """The check itself: 0.3.0a5 compared with its own snapshot shows no problem."""
    ref = _ref_dir()
    tests = Path(__file__).parent
    code = (
        "import json, cliver_core\n"
        "from compat import api_snapshot as a\n"
        "snap = json.loads(a.SNAPSHOT.read_text(encoding='utf-8'))\n"
        "print(cliver_core.__file__)\n"
        "for m, e in snap['modules'].items():\n"
        "    for p in a.check_module(m, e, snap['modules']):\n"
        "        print(p)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ref), str(tests)])}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    origin, *problems = done.stdout.splitlines()
    assert Path(origin).resolve().is_relative_to(ref.resolve()), origin
    assert problems == []


def test_the_check_rules() -> None:
    """The signature rules on small cases: additions with defaults pass, the rest fail."""

    def p(name: str, kind: str = "positional_or_keyword", default: str | None = None) -> dict:
        entry = {"name": name, "kind": kind}
        if default is not None:
            entry["default"] = default
        return entry

    ref = [p("a"), p("b", default="1"), p("c", "keyword_only", "None"), p("kw", "var_keyword")]
    check = api_snapshot.check_params
    assert check("f", ref, [*ref, p("d", "keyword_only", "2")]) == []
    assert check("f", ref, [p("a"), p("b", default="1"), p("x", default="0"), *ref[2:]]) == []
    assert check("f", ref, [p("a", default="0"), *ref[1:]]) == []  # required → optional is fine
    assert check("f", ref, [p("b", default="1"), p("a"), *ref[2:]])  # reordered
    assert check("f", ref, [p("a"), p("b", default="2"), *ref[2:]])  # default changed
    assert check("f", ref, [p("a"), p("b"), *ref[2:]])  # made required
    assert check("f", ref, [p("a"), p("b", default="1"), ref[2]])  # **kw dropped
    assert check("f", ref, [p("a"), p("b", default="1"), p("kw", "var_keyword")])  # c dropped
    assert check("f", ref, [*ref, p("z", "keyword_only")])  # a new required keyword
    assert check("f", ref, [p("a", "positional_only"), *ref[1:]])  # a by keyword breaks


def test_an_exception_gaining_a_builtin_base_is_refused() -> None:
    """0.3.0a5's ``SkillError(Exception)`` made a ``ValueError`` would be caught by a 0.3.0a5
    program's ``except ValueError``: the check refuses it; a base of cliver_core's own is
    fine."""
    ref = {"kind": "class", "bases": ["Exception", "BaseException"]}
    ref.update(methods={}, attributes={})

    class AsValueError(ValueError):
        pass

    class Own(Exception):
        pass

    class AsOwn(Own):
        pass

    for cls in (AsValueError, Own, AsOwn):
        cls.__module__ = "cliver_core._fake"
    assert api_snapshot._check_class("E", ref, AsValueError) == [
        "E: ours adds the builtin exception bases ['ValueError']"
    ]
    assert api_snapshot._check_class("E", ref, AsOwn) == []
