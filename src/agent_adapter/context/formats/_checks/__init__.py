"""Provider acceptance checks: would the provider accept this message list?

:func:`check` returns the :class:`Violation` s of a native list (empty when the provider would
accept it, as far as message structure goes). Each rule names its source; the checks are
structural (pairing, order, required fields, text that is valid UTF-8), never about what
the content says or model limits. Tool
pairing is the one rule of :mod:`agent_adapter.context._pairing` in every checker, so
``check()`` and ``compress()``'s input validation agree.

Rules common to every dict format:

* ``reserved_key``: a native holds the reserved carrier key ``"_agent_adapter"`` (see
  :mod:`agent_adapter.context.formats._openai`); OpenAI rejects unknown parameters ("Unknown
  parameter") and Anthropic unknown fields ("Extra inputs are not permitted"). Remove it with
  :func:`strip_reserved`.
* ``not_a_message`` / ``not_an_item``: an item the API reference does not describe.
* ``mixed_formats``: Chat Completions dicts and Responses items in one list.

Rule common to every format (``check()`` applies it, whichever checker runs):

* ``invalid_utf8``: a string that is not valid UTF-8 (a lone surrogate such as ``"\\ud800"``,
  left by a model reply or a lossy decoder); JSON cannot carry it to a provider. Named by
  index, field (``messages[1].content[0].text``) and character, never by text.

Layout: one private module per format, each registering its checker at import
(``_chat``: ``"openai"``, picking ``_responses`` for Responses items; ``_anthropic``;
``_gemini``; ``_messages``: ``"agent_adapter"``); ``_thinking`` compares thinking before and
after; ``_common`` holds :class:`Violation`, the checks registry and the pairing-to-violation
mapping; ``_dispatch`` holds :func:`check`, which gives a format without a checker (a
registered integration's, ``"langchain"``) the Message-level pairing check through
:func:`~agent_adapter.context.formats.convert`.
"""

from agent_adapter.context.formats._checks._anthropic import check_anthropic
from agent_adapter.context.formats._checks._chat import check_openai_chat
from agent_adapter.context.formats._checks._common import Violation, strip_reserved
from agent_adapter.context.formats._checks._dispatch import check
from agent_adapter.context.formats._checks._gemini import check_gemini, check_thought_signatures
from agent_adapter.context.formats._checks._messages import check_messages
from agent_adapter.context.formats._checks._responses import check_responses
from agent_adapter.context.formats._checks._thinking import check_thinking_unchanged

__all__ = [
    "Violation",
    "check",
    "check_anthropic",
    "check_gemini",
    "check_messages",
    "check_openai_chat",
    "check_responses",
    "check_thinking_unchanged",
    "check_thought_signatures",
    "strip_reserved",
]
