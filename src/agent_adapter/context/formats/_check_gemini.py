"""Former home of the Gemini checker; it lives in
:mod:`agent_adapter.context.formats.checks` now (this module re-exports it for existing
imports)."""

from agent_adapter.context.formats.checks import check_gemini, check_thought_signatures

__all__ = ["check_gemini", "check_thought_signatures"]
