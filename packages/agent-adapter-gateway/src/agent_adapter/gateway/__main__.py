"""``python -m agent_adapter.gateway``: the same as ``agent-adapter gateway``."""

import sys

from agent_adapter.gateway import main

sys.exit(main())
