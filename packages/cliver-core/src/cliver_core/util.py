"""``cliver_core.util``: the small helpers of 0.3.0a5 that library code imports.

Kept (same names and behaviour as 0.3.0a5): :func:`drop_none`, the timezone helpers,
:func:`url_request` and :func:`get_config_dir`. Left out: 0.3.0a5's terminal helpers for the
cliver CLI (reading piped stdin, confirmation prompts, context files), which belong to the
application, not the agent library; :func:`get_app_user_agent` returns ``"CLIver"`` (this
version has no cliver configuration profiles to read one from).
"""

from __future__ import annotations

import os
import platform
import urllib.request
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from cliver_core.constants import APP_NAME, CONFIG_DIR

__all__ = [
    "BROWSER_USER_AGENT",
    "configure_timezone",
    "drop_none",
    "format_datetime",
    "get_app_user_agent",
    "get_config_dir",
    "get_effective_timezone",
    "url_request",
]

#: A desktop browser's User-Agent, for sites that refuse unknown clients.
BROWSER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36"
)

_timezone: ZoneInfo | None = None


def drop_none(**kwargs: Any) -> dict[str, Any]:
    """The keyword arguments whose value is not ``None`` (unset options are left out, not
    sent as ``null``)."""
    return {key: value for key, value in kwargs.items() if value is not None}


def configure_timezone(tz_name: str | None) -> None:
    """Set the timezone :func:`format_datetime` uses (``None``: the system's).

    Args:
        tz_name: an IANA name such as ``"Europe/Paris"``, or ``None``.
    """
    global _timezone
    _timezone = ZoneInfo(tz_name) if tz_name else None


def get_effective_timezone() -> tzinfo | None:
    """The configured timezone, else the system's local one."""
    if _timezone is not None:
        return _timezone
    return datetime.now().astimezone().tzinfo


def format_datetime(dt: datetime | None = None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """``dt`` (default: now) in the effective timezone, formatted with ``fmt``."""
    moment = dt if dt is not None else datetime.now(UTC)
    return moment.astimezone(get_effective_timezone()).strftime(fmt)


def get_app_user_agent() -> str:
    """The User-Agent of the library's own HTTP requests: ``"CLIver"``."""
    return "CLIver"


def url_request(
    url: str,
    *,
    data: bytes | None = None,
    headers: dict[str, str] | None = None,
    user_agent: str | None = None,
    timeout: int = 30,
) -> urllib.request.Request:
    """A :class:`urllib.request.Request` for ``url`` with the app's User-Agent.

    Args:
        url: the address.
        data: a body (the request is then a POST).
        headers: more headers, over the defaults.
        user_agent: another User-Agent.
        timeout: unused here (0.3.0a5 keeps it in the signature): pass it to ``urlopen``.
    """
    merged = {"User-Agent": user_agent or get_app_user_agent(), **(headers or {})}
    return urllib.request.Request(url, data=data, headers=merged)


def get_config_dir() -> Path:
    """cliver's configuration folder: ``$CLIVER_CONF_DIR``, else ``%APPDATA%/cliver`` on
    Windows, else ``~/.cliver``."""
    configured = os.getenv(CONFIG_DIR)
    if configured is not None:
        return Path(configured)
    if platform.system() == "Windows":
        return Path(os.getenv("APPDATA") or Path.home()) / APP_NAME
    return Path.home() / f".{APP_NAME}"
