"""Skill dispatch by the model: the catalog text and the FindSkills / ActivateSkill /
ReadSkillFile tools.

Progressive disclosure, as cliver-core 0.3.0a5's ``cliver_core.skill_tools`` (names,
descriptions, parameter schemas and result texts are its, since the model sees them): the
system prompt carries a short catalog (:func:`format_skill_catalog`), ``FindSkills``
searches every skill, ``ActivateSkill`` returns one skill's body as its result (and records
it in the run's :class:`SkillRunState`), and once a skill with bundled files is active
``ReadSkillFile`` reads those files, confined to the skill's folder. The application may
rank the catalog (:data:`SkillSelector`) or replace the search (:data:`SkillSearch`), sync
or async. The public module is :mod:`cliver_core.skill_tools`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from agent_adapter._sync import run_sync
from cliver_core._skills import Skill, SkillError, SkillManager
from cliver_core._tools import CLIverTool

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

FIND_SKILLS_TOOL = "FindSkills"
ACTIVATE_SKILL_TOOL = "ActivateSkill"
READ_SKILL_FILE_TOOL = "ReadSkillFile"
SKILL_TOOL_NAMES = frozenset({FIND_SKILLS_TOOL, ACTIVATE_SKILL_TOOL, READ_SKILL_FILE_TOOL})
"""The names reserved for the skill tools (0.3.0a5's AgentCore refuses a regular tool of
one of them while dispatch is on)."""

DEFAULT_SEARCH_LIMIT = 5
MAX_SEARCH_LIMIT = 20
MAX_SKILL_FILE_BYTES = 256 * 1024
"""The largest file ``ReadSkillFile`` returns."""
MAX_LISTED_SKILL_FILES = 50
"""How many bundled files ``ActivateSkill``'s result names (the rest are counted)."""

_SHORT_DESCRIPTION = 120

SkillSelector: TypeAlias = Callable[
    [Sequence[Skill], str], Sequence[Skill] | Awaitable[Sequence[Skill]]
]
"""Ranks the catalog: ``(skills, user_input) -> skills`` (or an awaitable of them); the
first ``skill_summary_limit`` are listed in the system prompt."""

SkillSearch: TypeAlias = Callable[
    [str, Sequence[Skill]], Sequence[Skill] | Awaitable[Sequence[Skill]]
]
"""Replaces ``FindSkills``'s search: ``(query, skills) -> matches`` (or an awaitable of
them), best first."""


@dataclass
class SkillRunState:
    """The skill state of one run (as 0.3.0a5's).

    Attributes:
        active: the skill ``ActivateSkill`` activated (one per run).
        narrowed: whether the run's tools were already narrowed to its ``allowed-tools``.
    """

    active: Skill | None = None
    narrowed: bool = False


def _short(description: str) -> str:
    """A description of at most 120 characters: up to its first sentence end when that
    fits, else cut with ``...``."""
    if len(description) <= _SHORT_DESCRIPTION:
        return description
    end = description.find(". ")
    if 0 < end <= _SHORT_DESCRIPTION:
        return description[: end + 1]
    return description[: _SHORT_DESCRIPTION - 3] + "..."


def format_skill_catalog(skills: Sequence[Skill], total: int) -> str:
    """The ``## Skills`` section of the system prompt (text as 0.3.0a5's).

    Args:
        skills: the skills to list (possibly none), in order.
        total: how many skills there are in all, so the model knows the list is partial.
    """
    if skills:
        count = f"This summary lists {len(skills)} of {total} available skill(s)."
    else:
        count = f"The summary currently lists no skills ({total} available)."
    intro = (
        "Skills are reusable instruction packs for specific tasks, separate from tools. "
        "Tools are the primary way to act: if an available tool can do the task, use the "
        "tool instead of a skill. Activate a skill only when no tool can do the task, or "
        f"when the task needs the skill's specific procedure. {count} Call "
        f"{FIND_SKILLS_TOOL}(query=...) to search the full catalogue (an empty query lists "
        f"every name), and {ACTIVATE_SKILL_TOOL}(name=...) to load a skill's full "
        "instructions when it is the right choice."
    )
    parts = ["## Skills", "", intro]
    if skills:
        parts.append("")
        parts.extend(f"- {s.name}: {_short(s.description)}" for s in skills)
    return "\n".join(parts)


def format_skill_body(skill: Skill) -> str:
    """A skill's instructions as ``run_skill`` and ``ActivateSkill`` give them to the model
    (text as 0.3.0a5's): a ``# Active skill: <name>`` heading, the folder (so bundled
    scripts can be found), then the body."""
    return f"# Active skill: {skill.name}\n\nSkill location: {skill.base_dir}\n\n{skill.body}"


def lexical_skill_search(query: str, skills: Sequence[Skill]) -> list[Skill]:
    """``FindSkills``'s default search (as 0.3.0a5's).

    A skill scores one per query word (case-insensitive) found in its name or
    description; matches come by score, then name. An empty query gives every skill by
    name.

    Args:
        query: the words.
        skills: the catalog.
    """
    words = query.lower().split()
    if not words:
        return sorted(skills, key=lambda s: s.name)
    ranked: list[tuple[int, str, Skill]] = []
    for skill in skills:
        text = f"{skill.name} {skill.description}".lower()
        hits = sum(word in text for word in words)
        if hits:
            ranked.append((-hits, skill.name, skill))
    ranked.sort(key=lambda entry: entry[:2])
    return [skill for _, _, skill in ranked]


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def _settle(value: Any) -> Any:
    """``value``, or its result when it is awaitable (run on a loop of its own: the tool
    runs in a worker thread, as in 0.3.0a5)."""
    if not inspect.isawaitable(value):
        return value
    coro: Coroutine[Any, Any, Any] = value if inspect.iscoroutine(value) else _awaited(value)
    return run_sync(lambda: coro)


def _schema(*names: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
    }


_FIND_SKILLS_DESCRIPTION = (
    "Search available skills by keyword. A skill is a reusable instruction pack for a "
    "specific task, separate from tools. Use this to discover skills the system prompt "
    "does not list: pass keywords from the task, or an empty query to list every skill. "
    f"Returns up to limit matches (default {DEFAULT_SEARCH_LIMIT}, max {MAX_SEARCH_LIMIT}) "
    f"with names and descriptions; load one with {ACTIVATE_SKILL_TOOL}(name=...)."
)
_ACTIVATE_SKILL_DESCRIPTION = (
    "Load a skill's full instructions into the conversation, then follow them. Activate a "
    "skill only when no available tool can do the task, or when the task needs the skill's "
    "specific procedure; otherwise use the tools. Pick a skill from the system-prompt "
    f"summary or {FIND_SKILLS_TOOL}(query=...). After activation the skill's allowed-tools "
    "restrict which tools are available for the rest of the run; only one skill can be "
    "active per run."
)
_READ_SKILL_FILE_DESCRIPTION = (
    "Read a text file bundled with the active skill (references/, scripts/, assets/, ...). "
    "The path is relative to the skill directory and cannot escape it. "
    "Use this for the skill's own files; use Read for workspace files."
)


def make_find_skills_tool(manager: SkillManager, search: SkillSearch | None = None) -> CLIverTool:
    """The ``FindSkills`` tool (as 0.3.0a5's; ``safety="safe"``).

    Its arguments are ``query`` and ``limit`` (1 to 20, default 5; 0.3.0a5's schema calls
    it a string, and a string of digits is taken as the number here, where 0.3.0a5 fails).

    Args:
        manager: the skills to search.
        search: replaces :func:`lexical_skill_search` (sync, or async: then run to
            completion on a loop of its own in the tool's worker thread).
    """

    def find_skills(query: str, limit: int | str = DEFAULT_SEARCH_LIMIT) -> list[dict[str, str]]:
        """Search the skill catalogue.

        Args:
            query: Keywords matched against skill names and descriptions. An
                empty query lists every skill.
            limit: Maximum number of matches to return (default 5, max 20).
        """
        skills = manager.list_skills()
        if not skills:
            return [{"text": "No skills are available."}]
        try:
            count = max(1, min(int(limit), MAX_SEARCH_LIMIT))
        except (TypeError, ValueError):
            return [{"error": f"limit must be an integer, got {limit!r}"}]
        if search is None:
            matches = lexical_skill_search(query, skills)
        else:
            matches = list(_settle(search(query, skills)))
        if not matches:
            names = ", ".join(sorted(s.name for s in skills))
            return [{"text": f"No skills matched {query!r}. Available skills: {names}."}]
        shown = matches[:count]
        lines = [
            f"Matched {len(shown)} of {len(matches)} skill(s) "
            f"(call {ACTIVATE_SKILL_TOOL}(name=...) to load one):",
            *(f"- {s.name}: {_short(s.description)}" for s in shown),
        ]
        return [{"text": "\n".join(lines)}]

    parameters = _schema("query", "limit")
    parameters["required"] = ["query"]
    return CLIverTool(
        name=FIND_SKILLS_TOOL,
        description=_FIND_SKILLS_DESCRIPTION,
        long_description=inspect.getdoc(find_skills),
        parameters=parameters,
        execute=find_skills,
        safety="safe",
    )


def _activation_text(skill: Skill) -> str:
    """The skill's body and the names of its bundled files (at most 50)."""
    text = format_skill_body(skill)
    files = skill.files
    if not files:
        return text
    listed = files[:MAX_LISTED_SKILL_FILES]
    lines = ["Bundled files (read with ReadSkillFile, not Read):"]
    lines.extend(f"- {name}" for name in listed)
    if len(files) > len(listed):
        lines.append(f"- ... and {len(files) - len(listed)} more")
    return text + "\n\n" + "\n".join(lines)


def make_activate_skill_tool(
    manager: SkillManager,
    state: SkillRunState,
    available_tool_names: Collection[str],
) -> CLIverTool:
    """The ``ActivateSkill`` tool of one run (as 0.3.0a5's; ``safety="safe"``).

    Activating sets ``state.active`` and returns the skill's body (and bundled file names);
    the run then narrows its tools (``state.narrowed``). A second activation, an unknown
    name, or an ``allowed-tools`` naming none of ``available_tool_names`` (``ReadSkillFile``
    counting when the skill bundles files) is an error result.

    Args:
        manager: the skills.
        state: the run's state.
        available_tool_names: the run's regular tools (the skill tools excluded).
    """

    def activate_skill(name: str) -> list[dict[str, str]]:
        """Activate one skill for the rest of the run.

        Args:
            name: The skill name (from the system-prompt summary, FindSkills,
                or the user).
        """
        if state.active is not None:
            return [
                {
                    "error": f"skill '{state.active.name}' is already active in this run; "
                    "only one skill can be activated per run"
                }
            ]
        skill = manager.get_skill(name)
        if skill is None:
            known = ", ".join(manager.get_skill_names()) or "(none)"
            return [{"error": f"skill '{name}' not found. Available skills: {known}"}]
        allowed = set(skill.allowed_tools or ())
        if allowed:
            offered = set(available_tool_names)
            if skill.files:
                offered.add(READ_SKILL_FILE_TOOL)
            if not allowed & offered:
                return [
                    {
                        "error": f"skill '{name}' allows only tools {sorted(allowed)}, none "
                        f"of which are available (available: {sorted(available_tool_names)})."
                        " Register the tools or connect the MCP servers the skill needs."
                    }
                ]
        state.active = skill
        return [{"text": _activation_text(skill)}]

    parameters = _schema("name")
    parameters["required"] = ["name"]
    return CLIverTool(
        name=ACTIVATE_SKILL_TOOL,
        description=_ACTIVATE_SKILL_DESCRIPTION,
        long_description=inspect.getdoc(activate_skill),
        parameters=parameters,
        execute=activate_skill,
        safety="safe",
    )


def make_read_skill_file_tool(state: SkillRunState) -> CLIverTool:
    """The ``ReadSkillFile`` tool of one run (as 0.3.0a5's; ``safety="safe"``).

    It reads a file of the active skill through :meth:`Skill.read_file` (at most
    :data:`MAX_SKILL_FILE_BYTES`, UTF-8, inside the skill's folder only), so it grants no
    other file access; every refusal is an error result.

    Args:
        state: the run's state (its ``active`` skill is the one read).
    """

    def read_skill_file(path: str) -> list[dict[str, str]]:
        """Read a file bundled with the active skill.

        Args:
            path: Path relative to the skill directory (e.g. references/api.md).
        """
        skill = state.active
        if skill is None:
            return [{"error": "No skill is active in this run — call ActivateSkill first."}]
        try:
            return [{"text": skill.read_file(path, max_bytes=MAX_SKILL_FILE_BYTES)}]
        except UnicodeDecodeError:
            return [{"error": f"'{path}' is not a UTF-8 text file"}]
        except SkillError as exc:
            return [{"error": str(exc)}]

    parameters = _schema("path")
    parameters["required"] = ["path"]
    return CLIverTool(
        name=READ_SKILL_FILE_TOOL,
        description=_READ_SKILL_FILE_DESCRIPTION,
        long_description=inspect.getdoc(read_skill_file),
        parameters=parameters,
        execute=read_skill_file,
        safety="safe",
    )
