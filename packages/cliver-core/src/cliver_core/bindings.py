"""``cliver_core.bindings``: 0.3.0a5's public module of model bindings.

:class:`ModelBinding` (with its per-purpose factories ``llm`` / ``embed`` / ``rerank`` /
``image`` / ``video`` / ``tts`` / ``asr``, ``call_defaults``, ``get_provider``, ``aclose``),
:class:`ModelBindings` (with ``get``, ``bound_purposes``, ``aclose`` and this version's llm
failover chain), :data:`PURPOSES` and :class:`~cliver_core.CapabilityNotSupported` (the class
:mod:`cliver_core.errors` holds). See :mod:`cliver_core._bindings` for what each purpose's
provider may be and what is out of scope.
"""

from cliver_core._bindings import PROTOCOLS, PURPOSES, ModelBinding
from cliver_core._errors import CapabilityNotSupported
from cliver_core._model_bindings import ModelBindings

__all__ = ["PROTOCOLS", "PURPOSES", "CapabilityNotSupported", "ModelBinding", "ModelBindings"]
