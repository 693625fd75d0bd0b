"""Tool policy: who may run a tool, and what a running tool may touch.

Two independent axes, as in cliver-core 0.3.0a5 (same names, fields, defaults and enum
values):

* the **permission axis**: each tool has a :class:`ToolCategory`; ``SAFE`` tools run
  directly, ``ASK`` tools go through the application's :data:`PermissionCallback`, which
  gets a :class:`ToolCallContext` and returns a :class:`Decision`;
* the **environment axis**: an :class:`ExecutionPolicy` says how a subprocess environment
  is built (:class:`EnvSpec`), which working directory is pinned, and which paths may be
  read or written. It is *ambient*: :func:`policy_scope` sets it on a
  :class:`~contextvars.ContextVar` around tool execution, and the builtin tools read it
  with :func:`current_policy`, :func:`pinned_cwd` and :func:`scope_violation`. A tool run
  through :func:`asyncio.to_thread` (or in a task) sees the policy of the code that
  started it, since both copy the current context.

Nothing is restricted unless a policy is set: with no policy in scope every path is
allowed and subprocesses inherit the environment.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "SAFE_ENV_VARS",
    "Decision",
    "DecisionAction",
    "EnvSpec",
    "ExecutionPolicy",
    "PermissionCallback",
    "ToolCallContext",
    "ToolCategory",
    "current_policy",
    "policy_scope",
    "scope_violation",
]


# -- permission axis ----------------------------------------------------------------------


class DecisionAction(str, Enum):  # noqa: UP042 - str() and format() as 0.3.0a5's
    """What a permission callback decided: ``"allow"`` or ``"deny"``.

    A ``(str, Enum)`` as in 0.3.0a5 (not a ``StrEnum``): ``str(DecisionAction.ALLOW)`` is
    ``"DecisionAction.ALLOW"``, ``.value`` is ``"allow"``.
    """

    ALLOW = "allow"
    DENY = "deny"


@dataclass
class Decision:
    """A permission callback's verdict on one tool call.

    Attributes:
        action: allow or deny.
        reason: why it was denied; the model sees it in the tool result.
    """

    action: DecisionAction
    reason: str | None = None

    @classmethod
    def allow(cls) -> Decision:
        """A verdict letting the call run."""
        return cls(action=DecisionAction.ALLOW)

    @classmethod
    def deny(cls, reason: str) -> Decision:
        """A verdict refusing the call.

        Args:
            reason: the reason, shown to the model.
        """
        return cls(action=DecisionAction.DENY, reason=reason)


class ToolCategory(str, Enum):  # noqa: UP042 - as DecisionAction
    """A tool's permission category.

    ``SAFE`` (``"safe"``) runs without asking; ``ASK`` (``"ask"``) is decided by the
    permission callback (and runs when there is none, as in 0.3.0a5).
    """

    SAFE = "safe"
    ASK = "ask"


@dataclass
class ToolCallContext:
    """The tool call a permission callback is asked about.

    Attributes:
        tool_name: the tool's name.
        args: the arguments the model gave.
        server: the MCP server's name for an ``mcp__<server>__<tool>`` tool, else None.
        category: the tool's category (``ASK`` whenever the callback is asked).
    """

    tool_name: str
    args: dict[str, Any]
    server: str | None
    category: ToolCategory


#: ``await callback(context)`` decides whether an ``ASK`` tool call may run.
PermissionCallback = Callable[[ToolCallContext], Awaitable[Decision]]


# -- environment axis ---------------------------------------------------------------------


@dataclass
class EnvSpec:
    """How a subprocess environment is built from the parent's (exact names, no patterns).

    Attributes:
        mode: ``"inherit"`` keeps everything, ``"allowlist"`` keeps only ``names``,
            ``"denylist"`` drops ``names``.
        names: the variable names the mode applies to.
    """

    mode: Literal["inherit", "allowlist", "denylist"] = "inherit"
    names: set[str] = field(default_factory=set)

    def build(self, source: Mapping[str, str]) -> dict[str, str]:
        """The environment for a subprocess, from ``source`` (a new dict).

        Args:
            source: the parent environment, usually ``os.environ``.
        """
        if self.mode == "allowlist":
            return {key: value for key, value in source.items() if key in self.names}
        if self.mode == "denylist":
            return {key: value for key, value in source.items() if key not in self.names}
        return dict(source)


#: A starting set for an allowlist :class:`EnvSpec` (only a constant: nothing uses it
#: unless the application does).
SAFE_ENV_VARS = frozenset(
    {
        "PATH",
        "HOME",
        "TMPDIR",
        "TEMP",
        "TMP",
        "LANG",
        "LC_ALL",
        "TZ",
        "SHELL",
        "USER",
        "TERM",
        "PWD",
    }
)


@dataclass
class ExecutionPolicy:
    """What a tool may touch while the policy is in scope.

    Attributes:
        env: how subprocess environments are built.
        cwd: the pinned working directory (relative paths resolve against it), or None.
        read_paths: the roots that may be read; None means anywhere.
        write_paths: the roots that may be written; None means anywhere.
    """

    env: EnvSpec = field(default_factory=EnvSpec)
    cwd: Path | None = None
    read_paths: list[Path] | None = None
    write_paths: list[Path] | None = None


# -- the ambient policy -------------------------------------------------------------------

_policy: ContextVar[ExecutionPolicy | None] = ContextVar("cliver_execution_policy", default=None)


def current_policy() -> ExecutionPolicy | None:
    """The execution policy in scope for this call, or None when there is none."""
    return _policy.get()


def pinned_cwd() -> Path | None:
    """The pinned working directory of the policy in scope, or None.

    The file tools join a relative path to it, so the scope check and the access see the
    same file (as a subprocess started in the pinned directory would).
    """
    policy = _policy.get()
    return None if policy is None else policy.cwd


@contextlib.contextmanager
def policy_scope(policy: ExecutionPolicy | None) -> Iterator[None]:
    """Make ``policy`` the ambient policy inside the ``with`` block.

    ``None`` changes nothing (an outer policy stays in scope). The policy lives on a
    context variable, so threads started with :func:`asyncio.to_thread` and tasks created
    inside the block see it, and concurrent runs each keep their own.

    Args:
        policy: the policy, or None.

    Example:
        >>> with policy_scope(ExecutionPolicy(cwd=Path("/srv"))):
        ...     pinned_cwd()
        PosixPath('/srv')
        >>> pinned_cwd() is None
        True
    """
    if policy is None:
        yield
        return
    token = _policy.set(policy)
    try:
        yield
    finally:
        _policy.reset(token)


def scope_violation(path: str | Path, *, write: bool) -> str | None:
    """Why ``path`` may not be read (or written) under the ambient policy, or None.

    None when no policy is in scope, when its ``read_paths`` (``write_paths`` for a
    write) is None, or when the path, resolved against ``policy.cwd`` (else the process
    cwd) with symlinks followed, lies inside one of the roots. The message is 0.3.0a5's:
    ``"<resolved> is outside the allowed read paths (<root>, <root>)"``.

    Args:
        path: the path the tool is about to touch.
        write: whether it is a write.
    """
    policy = _policy.get()
    if policy is None:
        return None
    roots = policy.write_paths if write else policy.read_paths
    if roots is None:
        return None
    resolved = ((policy.cwd or Path.cwd()) / path).resolve()
    for root in roots:
        if resolved.is_relative_to(root.resolve()):
            return None
    kind = "write" if write else "read"
    listed = ", ".join(str(root) for root in roots)
    return f"{resolved} is outside the allowed {kind} paths ({listed})"
