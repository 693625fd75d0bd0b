#!/usr/bin/env bash
# The real agent CLI the gateway tests drive (tests/test_gateway_agent_cli.py): Claude Code from
# npm, pinned, installed once into a cache folder (no global install, no sudo). Prints the
# folder holding the `claude` binary; export it as AGENT_ADAPTER_AGENT_CLI_BIN (the test also
# finds it at the default cache path). Needs node >= 18 and npm; re-running is a no-op.
#
#     bin_dir="$(.ci/install-agent-clis.sh)" && export AGENT_ADAPTER_AGENT_CLI_BIN="$bin_dir"
set -euo pipefail
CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.332}"
prefix="${AGENT_ADAPTER_AGENT_CLI_DIR:-$HOME/.cache/agent-adapter-ci/agent-clis}/claude-code-$CLAUDE_CODE_VERSION"
if [ ! -x "$prefix/node_modules/.bin/claude" ]; then
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2
fi
echo "$prefix/node_modules/.bin"
