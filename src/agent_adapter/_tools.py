"""Function tools: a name, a JSON-schema for the arguments, and an async function."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FunctionTool"]


@dataclass(frozen=True)
class FunctionTool:
    """A tool the model can call.

    Attributes:
        name: the tool name the model sees.
        description: what it does, for the model.
        parameters: JSON schema of the arguments object.
        fn: ``async fn(args: dict, ctx) -> str``, the result text.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[[dict[str, Any], Any], Awaitable[str]] = field(repr=False)

    async def __call__(self, args: dict[str, Any], ctx: Any = None) -> str:
        """Run the tool with ``args`` under ``ctx``."""
        return await self.fn(args, ctx)

    def openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI Chat Completions ``tools`` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def anthropic_schema(self) -> dict[str, Any]:
        """The tool as an Anthropic Messages ``tools`` entry."""
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}
