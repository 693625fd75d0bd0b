"""Gemini, the ``gemini`` format: ``contents`` as dicts or ``google.genai`` objects.

Where its rules live: :mod:`._converter` (converter), :mod:`._parts` (part mappers, function
responses, Content objects), :mod:`._fields` (reading snake_case, camelCase and SDK objects
alike) and :mod:`._checks` (its checker, and thought signatures compared before and after).
"""

from agent_adapter.context.formats._gemini._checks import check_gemini, check_thought_signatures
from agent_adapter.context.formats._gemini._converter import GeminiConverter

__all__ = ["GeminiConverter", "check_gemini", "check_thought_signatures"]
