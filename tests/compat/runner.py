"""Run a compatibility program (``programs/<name>.py``) as a subprocess against a fresh
ProviderServer and AuxServer holding the scripted replies, with either cliver_core: the
0.3.0a5 wheel (``PYTHONPATH=<ref_dir>``) or ours (the venv's editable install), and collect
what can be compared: the program's JSON, and what the servers received.

:func:`normalize` replaces what differs from run to run by nature (the servers' ports, the
run's folders, uuids), :func:`differences` lists where two outcomes part, path by path.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_adapter.testing import ProviderServer, Reply
from compat.aux_server import AuxServer

PROGRAMS = Path(__file__).with_name("programs")
ROOT = Path(__file__).resolve().parents[2]
#: environment a program's result must not depend on (keys, endpoints, a PYTHONPATH)
_DROPPED_ENV = re.compile(
    r"^(PYTHONPATH|OPENAI_.*|ANTHROPIC_.*|GEMINI_.*|GOOGLE_.*|DEEPSEEK_.*"
    r"|MINIMAX_.*|GLM_.*|ZHIPUAI_.*|SEEDANCE_.*|CLIVER_.*)$"
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class Outcome:
    """One run of a program."""

    which: str  # "0.3.0a5" or "ours"
    cliver_core: str  # where cliver_core was imported from
    returncode: int
    output: Any  # the program's JSON (None when it printed none)
    stdout: str
    stderr: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    aux_requests: list[dict[str, Any]] = field(default_factory=list)
    pending_replies: int = 0

    def comparable(self) -> dict[str, Any]:
        """What is compared between the two runs."""
        return {
            "exit": self.returncode,
            "output": self.output,
            "requests": self.requests,
            "aux_requests": self.aux_requests,
            "pending_replies": self.pending_replies,
        }


def _env(pythonpath: Path | None, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _DROPPED_ENV.match(k)}
    env.update(extra)
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def _which_cliver_core(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import cliver_core; print(cliver_core.__file__)"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    return done.stdout.strip() or f"(import failed: {done.stderr.strip()[-300:]})"


def run_program(
    name: str,
    replies: Sequence[Reply],
    *,
    pythonpath: Path | None,
    which: str,
    timeout_s: float = 120.0,
) -> Outcome:
    """Run ``programs/<name>.py`` once, with ``PYTHONPATH=pythonpath`` (the folder of the
    0.3.0a5 wheel) or, ``None``, with the venv's cliver_core (ours); ``which`` labels it."""
    script = PROGRAMS / f"{name}.py"
    with (
        tempfile.TemporaryDirectory(prefix=f"cliver-compat-{name}-") as work,
        ProviderServer(list(replies)) as server,
        AuxServer() as aux,
    ):
        substitutions = {
            server.url: "<SERVER>",
            aux.url: "<AUX>/v1",
            str(Path(work).resolve()): "<WORKDIR>",
            work: "<WORKDIR>",
            str(ROOT): "<ROOT>",
        }
        env = _env(
            pythonpath,
            {
                "CLIVER_COMPAT_OPENAI_URL": server.openai_url,
                "CLIVER_COMPAT_ANTHROPIC_URL": server.url,
                "CLIVER_COMPAT_AUX_URL": aux.url,
                "CLIVER_COMPAT_WORKDIR": work,
            },
        )
        origin = _which_cliver_core(env)
        try:
            done = subprocess.run(
                [sys.executable, str(script)],
                capture_output=True, text=True, env=env, cwd=work, timeout=timeout_s,
                check=False,
            )  # fmt: skip
            returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as e:
            returncode = -1
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            stderr = f"timed out after {timeout_s}s\n" + (
                e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            )
        requests = [{"path": r.path, "stream": r.stream, "body": r.body} for r in server.requests]
        aux_requests = list(aux.requests)
        pending = server.pending
    try:
        output = json.loads(stdout) if stdout.strip() else None
    except json.JSONDecodeError:
        output = {"<not JSON>": stdout[-2000:]}
    outcome = Outcome(
        which=which,
        cliver_core=origin,
        returncode=returncode,
        output=normalize(output, substitutions),
        stdout=stdout,
        stderr=normalize(stderr, substitutions),
        requests=normalize(requests, substitutions),
        aux_requests=normalize(aux_requests, substitutions),
        pending_replies=pending,
    )
    return outcome


def normalize(value: Any, substitutions: dict[str, str]) -> Any:
    """``value`` with run-specific strings replaced (longest first) and uuids masked; strings
    holding JSON (the stream's trace sentinel) are normalized the same way."""
    order = sorted(substitutions, key=len, reverse=True)

    def text(s: str) -> str:
        for old in order:
            s = s.replace(old, substitutions[old])
        return _UUID.sub("<uuid>", s)

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return text(v)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {text(str(k)): walk(x) for k, x in v.items()}
        return v

    return walk(value)


ABSENT = "<absent>"


@dataclass(frozen=True)
class Difference:
    """One place where ours parts from 0.3.0a5: a JSON path (``a.b[2].c``), and the value on
    each side (:data:`ABSENT` where that side has none)."""

    path: str
    ref: Any
    ours: Any


def differences(ref: Any, ours: Any, path: str = "") -> list[Difference]:
    """Where ``ours`` parts from ``ref``, leaf by leaf. Lists of unequal length are aligned
    first (difflib), so one inserted item reads as one insertion, not a shifted tail."""
    if isinstance(ref, dict) and isinstance(ours, dict):
        out: list[Difference] = []
        for key in list(ref) + [k for k in ours if k not in ref]:
            sub = f"{path}.{key}" if path else str(key)
            out += differences(ref.get(key, ABSENT), ours.get(key, ABSENT), sub)
        return out
    if isinstance(ref, list) and isinstance(ours, list):
        if len(ref) == len(ours):
            return [
                d
                for i, (a, b) in enumerate(zip(ref, ours, strict=True))
                for d in differences(a, b, f"{path}[{i}]")
            ]
        keys_a = [json.dumps(x, sort_keys=True, default=str) for x in ref]
        keys_b = [json.dumps(x, sort_keys=True, default=str) for x in ours]
        out = []
        matcher = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            pairs = min(i2 - i1, j2 - j1)
            for k in range(pairs):
                out += differences(ref[i1 + k], ours[j1 + k], f"{path}[{i1 + k}]")
            for k in range(i1 + pairs, i2):
                out.append(Difference(f"{path}[{k}]", ref[k], ABSENT))
            for k in range(j1 + pairs, j2):
                out.append(Difference(f"{path}[+{k}]", ABSENT, ours[k]))
        return out
    if ref == ours and type(ref) is type(ours):
        return []
    return [Difference(path, ref, ours)]


def format_differences(found: Sequence[Difference], limit: int = 80) -> list[str]:
    """The differences as lines, those repeating one change at several indices (the same
    tool schema in every request) grouped under their first path."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for d in found:
        key = (re.sub(r"\[\+?\d+\]", "[*]", d.path), _short(d.ref), _short(d.ours))
        groups.setdefault(key, []).append(d.path)
    lines = []
    for (_, ref, ours), paths in list(groups.items())[:limit]:
        shown = ", ".join(paths[1:4]) + (", ..." if len(paths) > 4 else "")
        more = f"  (and {len(paths) - 1} more: {shown})"
        lines.append(
            f"{paths[0]}{more if len(paths) > 1 else ''}\n"
            f"      0.3.0a5: {ref}\n      ours:    {ours}"
        )
    if len(groups) > limit:
        lines.append(f"... and {len(groups) - limit} more groups of differences")
    return lines


def _short(value: Any, limit: int = 600) -> str:
    text = value if value == ABSENT else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 20] + f"... ({len(text)} chars)"
