"""Shared by the ``test_formats_gemini*`` modules: converters, signatures, the forms of a
contents list (snake_case, camelCase, Content objects) and the weather conversation.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from typing import Any

from google.genai import types

from agent_adapter.context.formats._gemini import GeminiConverter

DICTS = GeminiConverter(objects=False)
OBJECTS = GeminiConverter(objects=True)
SIG = base64.b64encode(bytes(range(250, 256)) * 5).decode()  # has '+' and '/'
SIG2 = base64.b64encode(b"second signature").decode()


def _objects(contents: Sequence[dict[str, Any]]) -> list[types.Content]:
    return [types.Content.model_validate(c) for c in contents]


def _camel(value: Any) -> Any:
    """snake_case keys as the REST API's camelCase."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            head, *rest = k.split("_")
            key = head + "".join(w.title() for w in rest)
            out[key] = v if key in ("args", "response") else _camel(v)
        return out
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _weather() -> list[dict[str, Any]]:
    """A conversation with parallel calls (one signed), a thought and a final answer."""
    return [
        {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Two lookups.", "thought": True},
                {
                    "function_call": {"id": "c1", "name": "weather", "args": {"city": "Paris"}},
                    "thought_signature": SIG,
                },
                {"function_call": {"id": "c2", "name": "weather", "args": {"city": "Rome"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "function_response": {
                        "id": "c2",
                        "name": "weather",
                        "response": {"output": "sun"},
                    }
                },
                {
                    "function_response": {
                        "id": "c1",
                        "name": "weather",
                        "response": {"output": "rain"},
                    }
                },
            ],
        },
        {
            "role": "model",
            "parts": [{"text": "Rain in Paris, sun in Rome.", "thought_signature": SIG2}],
        },
    ]
