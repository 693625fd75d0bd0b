"""The optional peers of ``quality.py``: headroom-ai and litellm's ``compress()``.

They run in a worker process (``_peers_worker.py``) under a Python that has them: the one
named by ``$AGENT_ADAPTER_PEERS_PYTHON``, else ``/work/venvs/peers/bin/python`` or
``<repo>/../venvs/peers/bin/python`` when one exists, else this Python. Their pins clash with
ours, so a separate venv is the usual way::

    python -m venv ../venvs/peers && ../venvs/peers/bin/pip install headroom-ai==0.42.0 litellm

A peer that is not installed there is skipped, and ``quality.py`` says so.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PEERS = ("headroom", "litellm")
_HERE = Path(__file__).resolve().parent


def _python() -> str:
    env = os.environ.get("AGENT_ADAPTER_PEERS_PYTHON")
    if env:
        return env
    for venv in (Path("/work/venvs/peers"), _HERE.parent.parent / "venvs" / "peers"):
        if (venv / "bin" / "python").exists():
            return str(venv / "bin" / "python")
    return sys.executable


class Peers:
    """One worker process answering compress requests (see ``_peers_worker.py``)."""

    def __init__(self) -> None:
        self.python = _python()
        self.proc: subprocess.Popen[str] | None = subprocess.Popen(
            [self.python, str(_HERE / "_peers_worker.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        hello = self.proc.stdout.readline()
        self.versions: dict[str, str] = json.loads(hello)["peers"] if hello else {}

    @property
    def available(self) -> list[str]:
        return [p for p in PEERS if p in self.versions]

    def missing_line(self) -> str:
        """What was skipped, and why (``""`` when nothing was)."""
        missing = [p for p in PEERS if p not in self.versions]
        if not missing:
            return ""
        return (
            f"peers skipped (not installed in {self.python}): {', '.join(missing)}; "
            "see bench/_quality_peers.py"
        )

    def compress(
        self, peer: str, natives: list[Any], fmt: str, target: int, share: float, repeat: int
    ) -> tuple[list[Any] | None, float, str]:
        """``(output natives or None, milliseconds, error)``."""
        assert self.proc is not None and self.proc.stdin and self.proc.stdout
        req = {
            "peer": peer,
            "fmt": fmt,
            "messages": natives,
            "target": target,
            "share": share,
            "repeat": repeat,
        }
        self.proc.stdin.write(json.dumps(req, default=str) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline() or '{"error": "worker died"}')
        if "error" in answer:
            return None, 0.0, str(answer["error"])
        return answer["messages"], float(answer["ms"]), ""

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=30)
            self.proc = None
