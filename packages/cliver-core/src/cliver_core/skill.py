"""Agent Skills (``SKILL.md``) loading: the public names of cliver-core 0.3.0a5's
``cliver_core.skill``.

``SkillManager(sources=[...])`` reads the skills of the folders the application names (a
folder of skill folders, or one skill's folder); :class:`Skill` is one of them, with its
bundled files (:attr:`Skill.files`, :meth:`Skill.read_file`); :func:`validate_skill` checks
one against the Agent Skills spec (https://agentskills.io/specification). Model-driven
dispatch (the catalog and the FindSkills / ActivateSkill / ReadSkillFile tools) is in
:mod:`cliver_core.skill_tools`.
"""

# SKILL_FILENAME and logger: module attributes of 0.3.0a5's module outside its __all__
from cliver_core._skills import SKILL_FILENAME as SKILL_FILENAME
from cliver_core._skills import (
    Skill,
    SkillError,
    SkillManager,
    SkillNotFoundError,
    SkillValidationResult,
    validate_skill,
    validate_skill_name,
)
from cliver_core._skills import logger as logger

__all__ = [
    "Skill",
    "SkillError",
    "SkillManager",
    "SkillNotFoundError",
    "SkillValidationResult",
    "validate_skill",
    "validate_skill_name",
]
