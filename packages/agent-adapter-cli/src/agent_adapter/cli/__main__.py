"""``python -m agent_adapter.cli``: the same as the ``agent-adapter`` command."""

import sys

from agent_adapter.cli import main

sys.exit(main())
