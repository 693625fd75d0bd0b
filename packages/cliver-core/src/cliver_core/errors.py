"""``cliver_core.errors``: the exceptions (0.3.0a5's module holds ``CapabilityNotSupported``;
this version adds the compaction, skill and timeout errors)."""

from cliver_core._compaction import CompactionError
from cliver_core._errors import CapabilityNotSupported, RunTimeout
from cliver_core._skills import SkillError, SkillNotFoundError

__all__ = [
    "CapabilityNotSupported",
    "CompactionError",
    "RunTimeout",
    "SkillError",
    "SkillNotFoundError",
]
