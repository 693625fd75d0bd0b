"""``cliver_core.util``: the helpers of 0.3.0a5's ``cliver_core.util``, same names, signatures
and behaviour.

:func:`drop_none`, the timezone helpers, :func:`url_request` and :func:`get_config_dir`; the
terminal helpers a CLI built on the library uses (:func:`stdin_is_piped`,
:func:`read_piped_input`, :func:`retry_with_confirmation` and its async twin with
:func:`set_cli_instance` for the prompts, :func:`read_context_files`,
:func:`parse_key_value_options`, :func:`read_file_content`). :func:`get_app_user_agent`
returns ``"CLIver"`` (this version has no cliver configuration profiles to read one from).
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import select
import stat
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from cliver_core.constants import APP_NAME, CONFIG_DIR

__all__ = [
    "BROWSER_USER_AGENT",
    "MAX_CONTEXT_FILE_CHARS",
    "configure_timezone",
    "drop_none",
    "format_datetime",
    "get_app_user_agent",
    "get_config_dir",
    "get_effective_timezone",
    "parse_key_value_options",
    "read_context_files",
    "read_file_content",
    "read_piped_input",
    "retry_with_confirmation",
    "retry_with_confirmation_async",
    "set_cli_instance",
    "stdin_is_piped",
    "url_request",
]

logger = logging.getLogger(__name__)

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


# -- Terminal helpers (0.3.0a5's, for a CLI built on the library) ----------------------------


def stdin_is_piped() -> bool:
    """Whether stdin is a pipe (``echo x | app``); ``True`` when stdin cannot be inspected,
    as 0.3.0a5."""
    try:
        fd = sys.stdin.fileno()
        return not os.isatty(fd) and stat.S_ISFIFO(os.fstat(fd).st_mode)
    except Exception:
        return True


def read_piped_input(timeout: float = 5.0) -> str | None:
    """All of stdin if data arrives within ``timeout`` seconds, else ``None`` (``select`` on
    stdin: POSIX only, as 0.3.0a5)."""
    if select.select([sys.stdin], [], [], timeout)[0]:
        return sys.stdin.read()
    return None


_cli_instance: Any | None = None


def set_cli_instance(instance: Any | None) -> None:
    """Install the host application used for the retry prompts (``None``: uninstall it, and
    the builtin ``input()`` asks).

    The instance is duck-typed: it needs a ``ui`` with ``ask_input(prompt, choices=[...])``.
    """
    global _cli_instance
    _cli_instance = instance


def _confirm(prompt: str) -> bool:
    """Ask yes/no through the host's UI when one is installed, else ``input()`` (end of
    input or Ctrl-C: no)."""
    if _cli_instance is not None:
        answer = _cli_instance.ui.ask_input(prompt, choices=["y", "yes", "n", "no"])
        return str(answer).lower() in ("y", "yes")
    try:
        answer = input(prompt).strip()
    except (EOFError, KeyboardInterrupt):
        return False
    return answer.lower() in ("y", "yes")


def retry_with_confirmation(
    func: Callable[..., Any],
    *args: Any,
    max_retries: int = 3,
    retry_delay: float = 1.0,
    confirm_on_retry: bool = True,
    confirmation_prompt: str = "Operation failed. Retry?",
    **kwargs: Any,
) -> Any:
    """``func(*args, **kwargs)``, tried again up to ``max_retries`` times when it raises.

    Args:
        func: what to call.
        *args: its positional arguments.
        max_retries: retries after the first attempt.
        retry_delay: seconds to wait before each retry.
        confirm_on_retry: ask ``"<confirmation_prompt> (y/n): "`` before each retry (a
            "no" re-raises the error at once).
        confirmation_prompt: the question.
        **kwargs: its keyword arguments.

    Returns:
        What ``func`` returned.

    Raises:
        Exception: the last error when every attempt failed or a retry was declined.
    """
    last: Exception | None = None
    for attempt in range(max_retries + 1):
        try:
            return func(*args, **kwargs)
        except Exception as e:
            last = e
            logger.debug("Attempt %d failed with error: %s", attempt + 1, e)
            if attempt == max_retries:
                break
            if confirm_on_retry and not _confirm(f"{confirmation_prompt} (y/n): "):
                raise
            if retry_delay > 0:
                time.sleep(retry_delay)
    assert last is not None
    raise last


async def retry_with_confirmation_async(
    func: Callable[..., Awaitable[Any]],
    *args: Any,
    max_retries: int = 3,
    retry_delay: float = 1.0,
    confirm_on_retry: bool = True,
    confirmation_prompt: str = "Operation failed. Retry?",
    **kwargs: Any,
) -> Any:
    """:func:`retry_with_confirmation` for an async ``func`` (awaited; the delay is an
    ``asyncio.sleep``). Same arguments, result and errors."""
    last: Exception | None = None
    for attempt in range(max_retries + 1):
        try:
            return await func(*args, **kwargs)
        except Exception as e:
            last = e
            logger.debug("Attempt %d failed with error: %s", attempt + 1, e)
            if attempt == max_retries:
                break
            if confirm_on_retry and not _confirm(f"{confirmation_prompt} (y/n): "):
                raise
            if retry_delay > 0:
                await asyncio.sleep(retry_delay)
    assert last is not None
    raise last


#: the context files read by default, the first found wins (``CLAUDE.md`` the fallback)
_DEFAULT_CONTEXT_FILES = ("Cliver.md", "CLAUDE.md")
#: the most characters kept of one context file
MAX_CONTEXT_FILE_CHARS = 4000


def _context_dirs(base_path: str) -> list[str]:
    """``base_path`` and its parents up to the git root (a folder holding ``.git``) or the
    filesystem's root, at most 10."""
    dirs = []
    current = os.path.abspath(base_path)
    for _ in range(10):
        dirs.append(current)
        if os.path.isdir(os.path.join(current, ".git")):
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return dirs


def read_context_files(
    base_path: str = ".",
    file_filter: list[str] | None = None,
    max_chars: int = MAX_CONTEXT_FILE_CHARS,
) -> str:
    """The project's context files, for a system prompt.

    Without ``file_filter``: the first non-empty ``Cliver.md`` or ``CLAUDE.md`` found in
    ``base_path`` or a parent (up to the git root); with it, every named file found (each
    name once, the nearest). Each is cut to ``max_chars`` (``"\n...(truncated)"`` added)
    and introduced by ``# Content from <name>:``.

    Args:
        base_path: where to start looking.
        file_filter: the file names to read (``None``: the defaults, first one only).
        max_chars: the most characters kept of one file.

    Returns:
        The text (``""`` when nothing was found).
    """
    use_defaults = file_filter is None
    names = _DEFAULT_CONTEXT_FILES if file_filter is None else file_filter
    context = ""
    seen: set[str] = set()
    for folder in _context_dirs(base_path):
        for name in names:
            if name in seen:
                continue
            path = os.path.join(folder, name)
            if not os.path.exists(path):
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    content = f.read()
            except Exception as e:
                logger.warning("Could not read %s: %s", name, e)
                continue
            if not content.strip():
                continue
            if len(content) > max_chars:
                content = content[:max_chars] + "\n...(truncated)"
            context += f"\n# Content from {name}:\n{content}\n"
            seen.add(name)
            if use_defaults:
                return context.strip()
    return context.strip()


def parse_key_value_options(option_list: tuple[str, ...], console: Any = None) -> dict[str, Any]:
    """``("k=v", ...)`` as a dict: digits an ``int``, digits with a dot a ``float``, anything
    else the string; an item without ``=`` is skipped (with a warning printed on
    ``console`` when one is given).

    Args:
        option_list: the ``key=value`` strings.
        console: an object with ``print`` (a rich ``Console``), or ``None``.
    """
    options: dict[str, Any] = {}
    for option in option_list or ():
        if "=" not in option:
            if console:
                console.print(f"Warning: Invalid option format '{option}', expected key=value")
            continue
        key, value = option.split("=", 1)
        parsed: Any = value
        try:
            if "." not in value and value.isdigit():
                parsed = int(value)
            elif "." in value and all(c.isdigit() or c == "." for c in value):
                parsed = float(value)
        except ValueError:
            parsed = value
        options[key] = parsed
    return options


def read_file_content(file_path: str, max_size: int = 100000) -> str:
    """A text file's content, read as UTF-8, else UTF-16, else Latin-1.

    Args:
        file_path: the file.
        max_size: the largest size read, in bytes.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is larger than ``max_size``, or cannot be read.
    """
    if not os.path.exists(file_path):
        raise FileNotFoundError(f"File not found: {file_path}")
    size = os.path.getsize(file_path)
    if size > max_size:
        raise ValueError(
            f"File is too large ({size} bytes). Maximum allowed size is {max_size} bytes."
        )
    encodings = ["utf-8", "utf-16", "latin-1"]
    for encoding in encodings:
        try:
            with open(file_path, encoding=encoding) as f:
                return f.read()
        except UnicodeDecodeError:
            continue
        except Exception as e:
            raise ValueError(f"Error reading file {file_path}: {e}") from e
    raise ValueError(
        f"Unable to read file {file_path} with any of the supported encodings: {encodings}"
    )
