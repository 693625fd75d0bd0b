"""``cliver_core.agent``: :class:`AgentCore` and its selector types (0.3.0a5's module)."""

from cliver_core._agent import AgentCore
from cliver_core._candidates import CandidateSelector, ToolSelector

__all__ = ["AgentCore", "CandidateSelector", "ToolSelector"]
