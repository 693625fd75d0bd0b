"""Model-driven skill dispatch: the public names of cliver-core 0.3.0a5's
``cliver_core.skill_tools``.

:func:`format_skill_catalog` is the system prompt's ``## Skills`` section;
:func:`make_find_skills_tool`, :func:`make_activate_skill_tool` and
:func:`make_read_skill_file_tool` build the ``FindSkills``, ``ActivateSkill`` and
``ReadSkillFile`` tools of one run around its :class:`SkillRunState`;
:func:`format_skill_body` is how an activated (or ``run_skill``-pinned) skill reads to the
model. Names, descriptions, schemas and texts are 0.3.0a5's.
"""

from cliver_core._skill_tools import (
    ACTIVATE_SKILL_TOOL,
    DEFAULT_SEARCH_LIMIT,
    FIND_SKILLS_TOOL,
    MAX_LISTED_SKILL_FILES,
    MAX_SEARCH_LIMIT,
    MAX_SKILL_FILE_BYTES,
    READ_SKILL_FILE_TOOL,
    SKILL_TOOL_NAMES,
    SkillRunState,
    SkillSearch,
    SkillSelector,
    format_skill_body,
    format_skill_catalog,
    lexical_skill_search,
    make_activate_skill_tool,
    make_find_skills_tool,
    make_read_skill_file_tool,
)

__all__ = [
    "ACTIVATE_SKILL_TOOL",
    "DEFAULT_SEARCH_LIMIT",
    "FIND_SKILLS_TOOL",
    "MAX_LISTED_SKILL_FILES",
    "MAX_SEARCH_LIMIT",
    "MAX_SKILL_FILE_BYTES",
    "READ_SKILL_FILE_TOOL",
    "SKILL_TOOL_NAMES",
    "SkillRunState",
    "SkillSearch",
    "SkillSelector",
    "format_skill_body",
    "format_skill_catalog",
    "lexical_skill_search",
    "make_activate_skill_tool",
    "make_find_skills_tool",
    "make_read_skill_file_tool",
]
