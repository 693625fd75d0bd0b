"""``cliver_core.constants``: the two names 0.3.0a5 defines (the app name and the environment
variable naming its configuration folder)."""

from __future__ import annotations

__all__ = ["APP_NAME", "CONFIG_DIR"]

#: The application name (the configuration folder is ``~/.cliver``).
APP_NAME = "cliver"
#: The environment variable that overrides the configuration folder.
CONFIG_DIR = "CLIVER_CONF_DIR"
