"""``agent-adapter gateway``: a context gateway for every agent, any language, no code change.

An HTTP proxy between an agent and its provider. Point the agent's base URL at it
(``ANTHROPIC_BASE_URL=http://127.0.0.1:8787``, ``OPENAI_BASE_URL=http://127.0.0.1:8787/v1``);
each request's conversation goes through the conversation's
:class:`~agent_adapter.context.Compactor` (compact once, then append) and up to the provider,
and the reply comes back as the provider sent it, streams chunk by chunk::

    agent-adapter gateway --port 8787 --threshold 80% --target 60%
    ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude
    curl -s http://127.0.0.1:8787/metrics

Routes: ``POST /v1/chat/completions`` and ``/v1/responses`` (to ``--openai-upstream``),
``POST /v1/messages`` (to ``--anthropic-upstream``; ``/v1/messages/count_tokens`` passes
through), ``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent`` (to
``--gemini-upstream``); anything else passes through; ``GET /healthz`` and ``GET /metrics``.
See :mod:`agent_adapter.gateway._wire` (routes, the conversation's key),
:mod:`agent_adapter.gateway._app` (transparency, fail open, the overflow retry) and
:mod:`agent_adapter.gateway._compaction` (the checker, and why nothing dropped is kept).

The distribution ``agent-adapter-gateway`` (this folder, in the repository's workspace)
ships this package into the ``agent_adapter`` namespace (whose ``__path__`` takes in every
``agent_adapter`` folder on ``sys.path``, as ``agent_adapter.cli`` does) and depends on
``agent-adapter-cli``: the ``agent-adapter`` command's ``gateway`` subcommand imports this
package when it runs and hands it its arguments (without this distribution the subcommand
says ``pip install agent-adapter-gateway``). ``agent-adapter-gateway`` and
``python -m agent_adapter.gateway`` are the same command.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from collections.abc import Sequence

from agent_adapter._errors import ConfigError
from agent_adapter.gateway._app import NoDelayH11Protocol, create_app
from agent_adapter.gateway._config import CONFIG_ENV, DEFAULT_UPSTREAMS, GatewayConfig, parse_args
from agent_adapter.gateway._wire import CONVERSATION_HEADER

__all__ = [
    "CONVERSATION_HEADER",
    "DEFAULT_UPSTREAMS",
    "GatewayConfig",
    "create_app",
    "main",
    "serve",
]


def serve(config: GatewayConfig) -> None:
    """Serve ``config`` until stopped (SIGINT / SIGTERM).

    With ``workers > 1`` uvicorn starts that many processes, each building the app from
    ``config`` (carried in the environment); without ``--state`` they then share a SQLite
    file in a temporary folder, so a conversation keeps one prefix whichever worker serves
    it (each process alone would compress fresh: never a wrong request, but a cache miss).
    """
    import uvicorn

    logging.basicConfig(level=config.log_level.upper(), format="%(name)s: %(message)s")
    for chatty in ("httpx", "httpcore"):  # they log each request's URL (a Gemini ?key=)
        logging.getLogger(chatty).setLevel(logging.WARNING)
    common = {
        "http": NoDelayH11Protocol,
        "host": config.host,
        "port": config.port,
        "log_level": config.log_level,
        "access_log": False,  # the access log would hold a Gemini ?key= query
        "ws": "none",
        "timeout_graceful_shutdown": 5,
    }
    if config.workers == 1:
        uvicorn.run(create_app(config), **common)  # type: ignore[arg-type]
        return
    if config.state is None:
        folder = tempfile.mkdtemp(prefix="agent-adapter-gateway-")
        config = GatewayConfig(**{**config.__dict__, "state": f"sqlite:///{folder}/states.sqlite3"})
    os.environ[CONFIG_ENV] = config.to_env()
    uvicorn.run(
        "agent_adapter.gateway._app:create_app",
        factory=True,
        workers=config.workers,
        **common,  # type: ignore[arg-type]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agent-adapter gateway`` with ``argv`` (default ``sys.argv[1:]``); the exit code.

    Returns:
        0 when stopped; 2 for bad usage (one line on stderr).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        config = parse_args(args)
    except ConfigError as exc:
        sys.stderr.write(f"agent-adapter gateway: error: {exc}\n")
        return 2
    except SystemExit as exc:  # argparse: --help (0) or bad usage (2)
        return exc.code if isinstance(exc.code, int) else 2
    serve(config)
    return 0
