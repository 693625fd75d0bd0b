"""Former home of the acceptance checks; they live in
:mod:`agent_adapter.context.formats.checks` now (this module re-exports them for existing
imports)."""

from agent_adapter.context.formats.checks import (
    Violation,
    check,
    check_anthropic,
    check_messages,
    check_openai_chat,
    check_responses,
    check_thinking_unchanged,
    strip_reserved,
)

__all__ = [
    "Violation",
    "check",
    "check_anthropic",
    "check_messages",
    "check_openai_chat",
    "check_responses",
    "check_thinking_unchanged",
    "strip_reserved",
]
