"""main(): the entry point; imports typer and rich only when it runs."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from agent_adapter._errors import MissingDependency

__all__ = ["main"]

#: What the command line imports beyond the library (the ``cli`` extra and typer's own).
_CLI_PACKAGES = frozenset({"typer", "rich", "click"})


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); the exit code.

    Args:
        argv: the arguments after the program name.

    Returns:
        0 on success; 1 when the target was not reached with ``--strict`` (or
        ``--if-still-too-long raise`` raised); 2 for bad usage or bad input, and when typer or
        rich is not installed (the message names ``pip install "agent-adapter[cli]"``).
    """
    try:
        from agent_adapter.cli._app import run
    except ModuleNotFoundError as exc:
        package = (exc.name or "").partition(".")[0]
        if package not in _CLI_PACKAGES:
            raise
        error = MissingDependency(package, "cli", "the agent-adapter command line")
        sys.stderr.write(f"agent-adapter: error: {error}\n")
        return 2
    return run(argv)
